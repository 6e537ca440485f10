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
    assert previews[stack] == doc


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
