"""A stack the renderer refuses for a mistake a rule also catches: `render` exits 2 with the
InputError, while `check` and `preview` report the rule's id and exit 1 (the policy issue's contract)."""
from __future__ import annotations

import json
import shutil

import pytest

from tests.support.cli import ROOT, run

FABRIC = "  trainstack:fabric: {source: generated, generated: {leaves: 2, nodesPerLeaf: 4}}\n"
CASES = [
    ("nccl-env-valid", "  trainstack:nccl: {env: {NCCL_NTHREADS: 4}}\n", "NCCL_NTHREADS"),
    ("topology-tier-exists", "  trainstack:runtimes: {runtimes: [{topology: {mode: hard, highestTierAllowed: 5}}]}\n",
     "highestTierAllowed"),
    ("topology-satisfiable",
     "  trainstack:runtimes: {runtimes: [{numNodes: 5, topology: {mode: hard, highestTierAllowed: 1}}]}\n",
     "Pending forever"),
    ("image-pinned", "  trainstack:runtimes: {runtimes: [{image: 'pytorch/pytorch:latest'}]}\n", "pinned image"),
]


@pytest.mark.parametrize("rule,section,fragment", CASES, ids=[c[0] for c in CASES])
def test_render_refuses_and_check_reports_the_rule(tmp_path, rule, section, fragment):
    shutil.copy(ROOT / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    (tmp_path / "stacks").mkdir()
    (tmp_path / "stacks" / "Pulumi.bad.yaml").write_text("config:\n" + FABRIC + section)
    rendered = run("render", "bad", "--project", str(tmp_path))
    assert rendered.code == 2 and fragment in rendered.err
    for command in ("check", "preview"):
        result = run(command, "bad", "--project", str(tmp_path), "--format", "json")
        assert result.code == 1, (command, result)
        violations = json.loads(result.out)["stacks"]["bad"]["violations"]
        assert [v["rule"] for v in violations] == [rule]
        assert fragment in violations[0]["message"] and violations[0]["level"] == "mandatory"
    assert not (tmp_path / "deploy").exists()


SCHEMA_CASES = [   # mistakes the stack's schema refuses, tagged with the rule that catches them in manifests
    ("scheduler-args-typed", "  trainstack:volcano: {networkTopologyAware: {weight: '10'}}\n", "weight"),
    ("nccl-env-valid", "  trainstack:nccl: {nthreads: 4}\n", "nthreads"),
    ("hpa-target-scalable",
     "  trainstack:autoscaling:\n    hpas: [{namespace: training, target: {kind: TrainJob, name: t}, "
     "maxReplicas: 2, metrics: [{name: gpu_utilization, averageValue: 80}]}]\n", "scale subresource"),
]


@pytest.mark.parametrize("rule,section,fragment", SCHEMA_CASES, ids=[c[0] for c in SCHEMA_CASES])
def test_schema_errors_carry_their_rule(tmp_path, rule, section, fragment):
    test_render_refuses_and_check_reports_the_rule(tmp_path, rule, section, fragment)
