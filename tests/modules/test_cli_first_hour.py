"""A new user's first hour: --version, help with exit codes and examples, a stack file path where a
stack name goes, `init` output that validates, renders and checks at once, `probe` outside a project."""
from __future__ import annotations

import shutil
import subprocess

import pytest

from modules.cli import parser, version
from modules.core.commands import project_for
from modules.core.config import load_project
from tests.support.cli import ROOT, run


def test_version_and_help():
    result = run("--version")
    assert result.code == 0 and result.out.strip() == f"trainstack {version()}" and version()[0].isdigit()
    help_text = parser().format_help()
    assert "exit codes:" in help_text and "examples:" in help_text
    for line in ("  0    success", "  1    check/preview found a mandatory violation", "  2    bad input",
                 "trainstack init east", "trainstack diff"):
        assert line in help_text, line


def test_a_stack_file_path_is_accepted_where_a_name_is(tmp_path):
    result = run("validate", "stacks/Pulumi.dev.yaml", cwd=ROOT)
    assert result.code == 0 and "stacks/Pulumi.dev.yaml: valid" in result.out
    result = run("validate", str(ROOT / "stacks" / "Pulumi.staging.yaml"), cwd=tmp_path)   # finds its project
    assert result.code == 0 and "stacks/Pulumi.staging.yaml: valid" in result.out
    result = run("validate", "stacks/Pulumi.nope.yaml", cwd=ROOT)
    assert result.code == 2 and "stacks/Pulumi.nope.yaml: no such file" in result.err
    stray = tmp_path / "Pulumi.dev.yaml"
    stray.write_text("config: {}\n")
    result = run("validate", str(stray), "--project", str(ROOT), cwd=tmp_path)
    assert result.code == 2 and "not a stack file of the project" in result.err


def test_probe_needs_no_project_and_says_what_it_does(tmp_path, monkeypatch):
    args = parser().parse_args(["probe", "--sizes", "1MiB"])
    assert project_for(args) is None
    import importlib.util

    from modules.probe import commands

    launched = []
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: object())   # torch "installed"
    monkeypatch.setattr(commands.subprocess, "run",
                        lambda cmd, **kw: launched.append(cmd) or subprocess.CompletedProcess(cmd, 0, stderr=""))
    result = run("probe", "--json", "out.json", cwd=tmp_path)
    assert result.code == 0 and launched, result.err
    assert "4 collectives x 11 sizes (1MiB-1GiB)" in result.err and "about 220 s" in result.err
    assert f"JSON in {tmp_path / 'out.json'}" in result.err and f"wrote {tmp_path / 'out.json'}" in result.err
    result = run("probe", "--sizes", "1MiB-64MiB", cwd=tmp_path)
    assert "nothing is written to disk" in result.err


@pytest.fixture(scope="module")
def scaffolded(tmp_path_factory):
    root = tmp_path_factory.mktemp("init")
    shutil.copy(ROOT / "Pulumi.yaml", root / "Pulumi.yaml")
    shutil.copytree(ROOT / "stacks", root / "stacks")
    load_project.cache_clear()
    return root


@pytest.mark.parametrize("argv", [
    ["east", "--nodes", "64", "--tiers", "3", "--leaf-size", "8", "--profile", "production", "--gpu-type", "H100-SXM"],
    ["west", "--nodes", "20", "--leaf-size", "8", "--transport", "ethernet", "--gpus-per-node", "4"],
])
def test_init_output_validates_renders_and_checks(scaffolded, argv):
    name = argv[0]
    result = run("init", *argv, "--project", str(scaffolded))
    assert result.code == 0, result.err
    assert (scaffolded / "stacks" / f"Pulumi.{name}.yaml").is_file()
    assert (scaffolded / "stacks" / "fabrics" / f"{name}.yaml").is_file()
    for command in ("validate", "render", "check"):
        result = run(command, name, "--project", str(scaffolded))
        assert result.code == 0, (command, result.out, result.err)
        assert "warning" not in result.err, result.err
    assert "0 mandatory, 0 advisory" in result.out
    result = run("fabric", name, "--format", "json", "--project", str(scaffolded))
    assert result.code == 0 and '"capacityKnown": true' in result.out
    again = run("init", *argv, "--project", str(scaffolded))
    assert again.code == 2 and "already exists; pass --force" in again.err


def test_a_one_node_init_passes_check_with_the_tiers_it_cannot_probe_named(scaffolded):
    """One node under one leaf: the probe measures the node alone; its leaf and spine jobs, gangs of
    two that could never start, are not rendered, and a warning names each tier."""
    result = run("init", "solo", "--nodes", "1", "--project", str(scaffolded))
    assert result.code == 0, result.err
    result = run("check", "solo", "--project", str(scaffolded))
    assert result.code == 0, (result.out, result.err)
    assert "0 mandatory" in result.out
    assert "tier leaf cannot be probed" in result.err and "tier spine cannot be probed" in result.err
    assert run("render", "solo", "--project", str(scaffolded)).code == 0
    jobs = sorted(path.name for path in (scaffolded / "deploy" / "solo" / "probe").glob("job.*"))
    assert jobs == ["job.training.fabric-probe-node.yaml"], jobs


def test_init_profile_follows_the_name_and_bad_input_is_one_error(scaffolded):
    from modules.core.config import load_stack

    assert run("init", "prod2", "--project", str(scaffolded)).code == 0
    load_project.cache_clear()
    assert load_stack(load_project(scaffolded), "prod2").profile == "development"
    result = run("init", "bad/name", "--project", str(scaffolded))
    assert result.code == 2 and "expected a stack name" in result.err
    result = run("init", "x", "--nodes", "0", "--project", str(scaffolded))
    assert result.code == 2 and "--nodes: expected a number from 1 to 1,000,000" in result.err


@pytest.mark.parametrize("options, refused", [
    (["--transport", "infiniband", "--hcas", ",,,"], "trainstack:nccl.hcas"),
    (["--transport", "infiniband", "--hcas", 'mlx5_0,"x'], "trainstack:nccl.hcas[1]"),
    (["--transport", "infiniband", "--hcas", "mlx5_0,[x]"], "trainstack:nccl.hcas[1]"),
    (["--transport", "ethernet", "--socket-ifname", "eth0'"], "trainstack:nccl.socketIfname"),
    (["--transport", "ethernet", "--socket-ifname", "]x["], "trainstack:nccl.socketIfname"),
    (["--node-prefix", "a" * 300], "node name"),
    (["--nodes", "1000000", "--leaf-size", "1000"], "1,000,000 nodes"),
], ids=["hcas-empty", "hca-quote", "hca-brackets", "ifname-quote", "ifname-brackets", "long-prefix", "million-nodes"])
def test_init_writes_nothing_validate_would_refuse(tmp_path, options, refused):
    (tmp_path / "Pulumi.yaml").write_text("name: trainstack\nstackConfigDir: stacks\n")
    result = run("init", "e", *options, "--project", str(tmp_path))
    assert result.code == 2, result.err
    assert "validate` refuses" in result.err and refused in result.err and "nothing was written" in result.err
    assert len(result.err.strip().splitlines()) == 1
    assert not (tmp_path / "stacks").exists() or not any((tmp_path / "stacks").rglob("*.yaml"))
