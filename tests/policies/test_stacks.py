"""The shipped stacks: no mandatory violation, and `check` and `preview` (program under mocks plus the
real pack over gRPC) report exactly the same thing for each, in every format."""
from __future__ import annotations

import json

import pytest

from tests.support.cli import Started, run, run_processes, start_process

SHIPPED = ("dev", "staging", "prod", "legacy")   # legacy: the Training Operator v1 overlay


EARLY: list[Started] = []


def start_early() -> None:
    """tests/conftest.py calls this once the run is collected: `preview --all` (the program under mocks
    for every stack, each resource through the pack over gRPC) then runs beside the other tests."""
    if not EARLY:
        EARLY.append(start_process("preview", "--all", "--format", "json"))


def stop_early() -> None:
    for started in EARLY:
        started.stop()
    EARLY.clear()


@pytest.fixture(scope="module")
def previews():
    start_early()      # a no-op when the session started it
    result = EARLY.pop().result(timeout=300)
    assert result.code == 0, result.out + result.err
    assert "Traceback" not in result.err
    return json.loads(result.out)["stacks"]


@pytest.mark.parametrize("stack", SHIPPED)
def test_shipped_stack_has_no_mandatory_violation_and_runners_agree(stack, previews):
    checked = run("check", stack, "--format", "json")
    assert checked.code == 0, checked.out
    doc = json.loads(checked.out)["stacks"][stack]
    assert doc["mandatory"] == 0
    assert {k: v for k, v in previews[stack].items() if k != "plan"} == doc   # the plan is preview's own


def test_preview_plan_names_every_object_render_writes(previews):
    """`preview dev` lists, per component, every object `render dev` writes into deploy/dev (and each
    chart release, whose values render writes under charts/), with counts per component and kind."""
    from modules.core import yamlio
    from modules.core.output import bundle_files
    from tests.support.stacks import shipped, shipped_bundle

    written = set()
    for path, data in bundle_files(shipped_bundle("dev"), shipped("dev").file).items():
        if "/" not in path or path.startswith("charts/"):   # kustomization, marker, chart values
            continue
        obj = yamlio.loads(data.decode(), path)
        meta = obj["metadata"]
        written.add("/".join(p for p in (obj["kind"], meta.get("namespace"), meta["name"]) if p))
    plan = previews["dev"]["plan"]
    listed = {r["name"] for c in plan["components"] for r in c["resources"]}
    assert len(written) == 32 and written <= listed, written - listed
    releases = {r.name for r in shipped_bundle("dev").releases}
    assert {n.rsplit("/", 1)[-1] for n in listed if n.startswith("release/")} == releases
    assert sum(c["count"] for c in plan["components"]) == plan["resources"] == sum(plan["kinds"].values())
    assert {c["name"] for c in plan["components"]} >= {"core", "fabric", "nccl", "volcano"}


def test_preview_cli_reports_like_check(tmp_path):
    manifest = tmp_path / "jobs.yaml"
    manifest.write_text(
        "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: big, namespace: training}\n"
        "spec:\n  minAvailable: 40\n  networkTopology: {mode: hard, highestTierAllowed: 1}\n"
        "  tasks:\n  - name: w\n    replicas: 40\n    template:\n      spec:\n        containers:\n"
        "        - name: w\n          image: registry.example.com/w:1.0\n"
        "          resources: {requests: {cpu: '8', memory: 64Gi, nvidia.com/gpu: 8}, limits: {nvidia.com/gpu: 8}}\n")
    previewed, checked = run_processes(("preview", "prod", "--manifests", str(manifest), "--format", "junit"),
                                       ("check", "prod", "--manifests", str(manifest), "--format", "junit"))
    assert previewed.code == checked.code == 1
    assert "Traceback" not in previewed.err
    assert previewed.out == checked.out and 'name="topology-satisfiable"' in previewed.out


def test_preview_of_a_broken_stack_is_a_config_error(tmp_path):
    (tmp_path / "Pulumi.yaml").write_text("name: trainstack\nruntime: python\nstackConfigDir: stacks\n")
    (tmp_path / "stacks").mkdir()
    (tmp_path / "stacks" / "Pulumi.bad.yaml").write_text("config:\n  trainstack:fabric: {source: nowhere}\n")
    result = run("preview", "bad", "--project", str(tmp_path))
    assert result.code == 2 and "trainstack:fabric.source" in result.err
