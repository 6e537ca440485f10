"""The shipped stacks: golden output, determinism, schema conformance and the Pulumi program."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from modules.core.bundle import ChartRelease, Overlay, Prerequisite, Resource
from modules.core.config import load_project, load_stack, pulumi_config_map
from modules.core.preview_engine import run_program
from modules.core.output import bundle_files, stale_files
from modules.core.render import render
from tests.support import crds
from tests.support.cli import ROOT, run

PROJECT = load_project(ROOT)
STACKS = PROJECT.stacks()


def test_three_stacks_ship():
    assert {"dev", "staging", "prod"} <= set(STACKS)


@pytest.fixture(scope="module", params=STACKS)
def rendered(request):
    stack = load_stack(PROJECT, request.param)
    return stack, render(stack)


def test_golden_output_is_committed_and_current(rendered):
    stack, bundle = rendered
    stale = stale_files(bundle_files(bundle, stack.file), ROOT / "deploy" / stack.name)
    assert stale == [], f"deploy/{stack.name} is stale; run `make golden` and review the diff: {stale[:10]}"


def test_render_twice_is_byte_identical(tmp_path):
    first, second = tmp_path / "a", tmp_path / "b"
    assert run("render", "--all", "--out", str(first)).code == 0
    assert run("render", "--all", "--out", str(second)).code == 0
    files = sorted(p.relative_to(first) for p in first.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(second) for p in second.rglob("*") if p.is_file())
    for rel in files:
        assert (first / rel).read_bytes() == (second / rel).read_bytes(), rel


def test_output_does_not_depend_on_hash_seed(tmp_path):
    """Set iteration order varies with PYTHONHASHSEED; the output must not."""
    outs = []
    for seed in ("1", "2"):
        out = tmp_path / seed
        env = dict(os.environ, PYTHONHASHSEED=seed, PYTHONPATH=str(ROOT))
        subprocess.run([sys.executable, "-m", "modules.cli", "render", "prod", "--out", str(out)],
                       cwd=ROOT, env=env, check=True, capture_output=True)
        outs.append({p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()})
    assert outs[0] == outs[1]


def test_check_flags_stale_output(tmp_path):
    out = tmp_path / "deploy"
    assert run("render", "dev", "--out", str(out)).code == 0
    victim = next((out / "dev" / "nccl").iterdir())
    victim.write_text(victim.read_text() + "# edited\n")
    (out / "dev" / "extra.yaml").write_text("kind: Stray\n")
    result = run("render", "dev", "--out", str(out), "--check")
    assert result.code == 1
    assert f"changed  nccl/{victim.name}" in result.out and "extra    extra.yaml" in result.out


def test_core_kinds_validate_with_kubernetes_validate(rendered):
    _, bundle = rendered
    core = [r.obj for r in bundle.resources if not crds.is_custom(r.obj)]
    assert core
    for obj in core:
        crds.validate_core(obj)


def test_custom_resources_validate_against_upstream_crds(rendered):
    _, bundle = rendered
    custom = [r.obj for r in bundle.resources if crds.is_custom(r.obj)]
    assert custom
    for obj in custom:
        crds.validate_cr(obj)


def test_releases_are_pinned(rendered):
    _, bundle = rendered
    for release in bundle.releases:
        assert release.version and release.version[0].isdigit() and "*" not in release.version, release
        assert release.repository.startswith(("https://", "oci://")), release


def test_claims_and_crds_are_retained(rendered):
    _, bundle = rendered
    for resource in bundle.resources:
        if resource.kind in ("PersistentVolumeClaim", "CustomResourceDefinition", "Namespace"):
            assert resource.retain, resource.key


def test_namespaces_come_first(rendered):
    _, bundle = rendered
    kinds = [i.key.split("/")[0] for i in bundle.items]   # prerequisites are keyed as the CRDs they read
    first_other = next(i for i, k in enumerate(kinds) if k not in ("CustomResourceDefinition", "Namespace"))
    assert "Namespace" not in kinds[first_other:]


def test_program_registers_exactly_the_rendered_objects(rendered):
    stack, bundle = rendered
    registrations = run_program(ROOT, stack.name, pulumi_config_map(stack))
    by_name = {r.name: r for r in registrations}
    providers = [r for r in registrations if r.type == "pulumi:providers:kubernetes"]
    assert len(providers) == 1 and providers[0].inputs.get("context") == stack.kube_context
    assert providers[0].inputs.get("enableServerSideApply") in (True, "true")   # provider config travels as strings
    stack_urn = f"urn:pulumi:{stack.name}::trainstack::pulumi:pulumi:Stack::trainstack-{stack.name}"
    components = {r.name: r for r in registrations if r.type.startswith("trainstack:index:")}
    assert set(components) == {i.module for i in bundle.items}         # one component per module
    assert {r.parent for r in components.values()} | {providers[0].parent} == {stack_urn}
    for item in bundle.items:                                           # every object under its module
        assert by_name[item.key].parent == components[item.module].urn, item.key
    expected_names = {i.key for i in bundle.items if not isinstance(i, Prerequisite)}
    registered = {r.name for r in registrations if r.type != "pulumi:providers:kubernetes" and not r.read
                  and r.name not in components}
    assert registered == expected_names
    reads = {r.name: r for r in registrations if r.read}   # prerequisites are read, never created
    assert set(reads) == {p.key for p in bundle.prerequisites}
    for item in bundle.items:
        record = by_name[item.key]
        assert record.provider == providers[0].urn
        if isinstance(item, Resource):
            assert record.inputs == item.obj, item.key
            assert record.retain_on_delete == item.retain
        elif isinstance(item, ChartRelease):
            assert record.type == "kubernetes:helm.sh/v3:Release"
            assert record.inputs["version"] == item.version and record.inputs["values"] == item.values
            assert record.inputs["name"] == item.name and record.inputs["namespace"] == item.namespace
        elif isinstance(item, Overlay):
            assert record.type.startswith("kubernetes:kustomize")
        elif isinstance(item, Prerequisite):
            assert record.read and record.type == "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition"
        wanted = {by_name[d].urn for d in bundle.dependencies[item.key]}
        assert set(record.dependencies) == wanted, item.key
