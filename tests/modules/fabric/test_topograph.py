"""Every topograph model in ../shared/fabrics/topograph imports through a stack file and renders
HyperNodes that match the upstream CRD, cover each node once, and equal the golden output."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from modules.core import yamlio
from modules.core.config import load_project, load_stack
from modules.core.render import render
from tests.modules.fabric.helpers import TOPOGRAPH_MODELS, build, check_tree, project, topograph_dir
from tests.support.cli import run

GOLDEN = Path(__file__).resolve().parent / "golden" / "topograph"
UPDATE = os.environ.get("TRAINSTACK_UPDATE_GOLDEN") == "1"


def expected_hosts(model: str) -> list[str]:
    """Host names straight from the model's blocks, expanded independently of trainstack."""
    import re

    data = yaml.safe_load((topograph_dir() / f"{model}.yaml").read_text())
    hosts = []
    for block in data["blocks"]:
        for expr in block["nodes"]:
            m = re.fullmatch(r"(.*)\[(\d+)-(\d+)\](.*)", expr)
            if m:
                width = len(m.group(2))
                hosts += [f"{m.group(1)}{i:0{width}d}{m.group(4)}" for i in range(int(m.group(2)), int(m.group(3)) + 1)]
            else:
                hosts.append(expr)
    return [h.lower() for h in hosts]


@pytest.mark.parametrize("model", TOPOGRAPH_MODELS)
def test_model_renders_valid_tree(model):
    path = topograph_dir() / f"{model}.yaml"
    fabric, objs, _ = build({"source": "topograph", "path": str(path)})
    hosts = expected_hosts(model)
    assert sorted(fabric.nodes) == sorted(hosts)
    check_tree(objs, hosts)
    assert len(objs) == len(fabric.switches) == sum(1 for s in fabric.switches.values() if fabric.node_count(s.name))
    text = f"# HyperNodes rendered by trainstack from topograph model {model}.yaml\n" + yamlio.dump_all(objs)
    golden = GOLDEN / f"{model}.yaml"
    if UPDATE:
        golden.write_text(text)
    assert golden.read_text() == text, f"{golden} is stale; rerun with TRAINSTACK_UPDATE_GOLDEN=1 and review"


@pytest.mark.parametrize("model", TOPOGRAPH_MODELS)
def test_model_through_stack_file_and_cli(tmp_path, model):
    """The way a user does it: a stack file naming the model by a path relative to stacks/."""
    model_text = (topograph_dir() / f"{model}.yaml").read_text()   # paths stay under stacks/
    root = project(tmp_path, {"source": "topograph", "path": f"fabrics/{model}.yaml"},
                   {f"fabrics/{model}.yaml": model_text})
    bundle = render(load_stack(load_project(root), "test"))
    assert {r.kind for r in bundle.resources if r.module == "fabric"} == {"HyperNode"}
    result = run("render", "test", "--project", str(root), "--out", str(tmp_path / "deploy"))
    assert result.code == 0, result.err
    written = sorted((tmp_path / "deploy" / "test" / "fabric").glob("hypernode.*.yaml"))
    assert len(written) == len([r for r in bundle.resources if r.kind == "HyperNode"])


def test_small_tree_names_and_domains():
    fabric, objs, _ = build({"source": "topograph", "path": str(topograph_dir() / "small-tree.yaml")})
    assert list(fabric.nodes) == ["i21", "i22", "i25", "i34", "i35", "i36"]      # I21 -> i21, as kwok-nodes
    assert {s.name: s.hypernode for s in fabric.switches.values()} == {"S1": "s1", "S2": "s2", "S3": "s3"}
    assert fabric.accelerator_domains() == {"nvl2": ["i21", "i22", "i25"], "nvl3": ["i34", "i35", "i36"]}
    by_name = {o["metadata"]["name"]: o["spec"] for o in objs}
    assert by_name["s3"]["members"] == [{"type": "Node", "selector": {"regexMatch": {"pattern": "^i3[4-6]$"}}}]
    assert [m["selector"]["exactMatch"]["name"] for m in by_name["s2"]["members"]] == ["i21", "i22", "i25"]
    assert by_name["s1"] == {"tier": 2, "tierName": "spine", "members": [
        {"type": "HyperNode", "selector": {"exactMatch": {"name": "s2"}}},
        {"type": "HyperNode", "selector": {"exactMatch": {"name": "s3"}}}]}


def test_medium_bare_number_ranges_and_labels():
    fabric, _, _ = build({"source": "topograph", "path": str(topograph_dir() / "medium.yaml")})
    assert fabric.switches["sw11"].nodes == ["1101", "1102"]
    assert fabric.tiers == [1, 2, 3] and fabric.switches["sw3"].tier == 3
    # labels are inherited down the switch path, as topograph derives node labels
    assert fabric.nodes["1101"].labels == {"topology.kubernetes.io/region": "us-west",
                                           "topology.kubernetes.io/zone": "zone1"}


def test_irregular_racks_without_nodes_and_uneven_blocks():
    fabric, objs, _ = build({"source": "topograph", "path": str(topograph_dir() / "dual-xclr-irregular.yaml")})
    assert fabric.empty_switches == ["rack-1-03", "rack-1-13"]
    names = {o["metadata"]["name"] for o in objs}
    assert "rack-1-03" not in names and "rack-2-15" in names
    assert fabric.node_count("rack-2-15") == 5 and fabric.node_count("rack-1-04") == 7
    assert fabric.node_count("sw-01") == 124 and fabric.node_count("core") == 255
    rack4 = next(o for o in objs if o["metadata"]["name"] == "rack-1-04")["spec"]["members"]
    assert len(rack4) == 7 and all("exactMatch" in m["selector"] for m in rack4)   # holes: no single range
    domains = fabric.accelerator_domains()
    assert sorted(domains) == ["domain-01", "domain-02"] and len(domains["domain-01"]) == 124
    assert fabric.nodes["node0001"].subdomain == "rack-1-01"


def test_nvl72_capacity():
    fabric, _, _ = build({"source": "topograph", "path": str(topograph_dir() / "nvl72.yaml"),
                          "nodePools": [{"name": "gb200", "gpus": 4}]})
    assert fabric.largest_domain(1).nodes == 18 and fabric.largest_domain(1).gpus == 72
    assert fabric.largest_domain(3).gpus == 288
    assert fabric.gpu_count("spine-2") == 144
