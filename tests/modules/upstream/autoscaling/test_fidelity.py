"""The HPA model against Kubernetes' own podautoscaler tests (ported as data), plus planted faults
that those cases must catch, and the controller's sync on the cases the tables do not cover."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from modules.upstream.autoscaling import behavior as bh
from modules.upstream.autoscaling import controller, fidelity, replicas
from modules.upstream.autoscaling.controller import History, Observation, Options, sync
from modules.upstream.autoscaling.replicas import Pod, PodMetric, Tolerances

CASES = fidelity.load_cases()
ROOT = Path(__file__).resolve().parents[4]


@pytest.mark.parametrize("case", CASES, ids=[f"{c.test}/{c.name}" for c in CASES])
def test_upstream_case_reproduces(case):
    result = fidelity.run_case(case)
    assert result.reproduced, f"expected {case.data['expect']}, got {result.got}"


def test_every_case_names_its_upstream_source():
    assert len(CASES) >= 40
    for case in CASES:
        assert case.source == {"repo": "kubernetes/kubernetes", "tag": "v1.35.0", "path": case.source["path"]}
        assert case.source["path"].startswith("pkg/controller/podautoscaler/")
        assert case.test.startswith("Test") and case.name


def test_benchmark_prints_cases_and_reproduced():
    run = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "upstream_autoscaling.py"), "--json"],
                         capture_output=True, text=True, check=True, cwd=ROOT)
    out = json.loads(run.stdout)
    assert out["cases"] == len(CASES) and out["reproduced"] >= 0.95 * out["cases"]
    assert "TestNormalizeDesiredReplicasWithBehavior/simple scale down stabilization" in out["case_names"]
    assert set(out["by_upstream_test"]) >= {"TestReplicaCalcScaleUp", "TestScalingWithRules", "TestStoreScaleEvents"}


def _failing(monkeypatch, target, name, fault) -> set[str]:
    monkeypatch.setattr(target, name, fault)
    return {f"{c.test}/{c.name}" for c in CASES if not fidelity.run_case(c).reproduced}


def test_a_planted_fault_in_the_tolerance_fails_upstream_cases(monkeypatch):
    failing = _failing(monkeypatch, Tolerances, "within", lambda self, ratio: False)
    assert "TestReplicaCalcTolerance/TestReplicaCalcTolerance" in failing
    assert "TestReplicaCalcToleranceCMObject/TestReplicaCalcToleranceCMObject" in failing


def test_a_planted_fault_in_the_policies_fails_upstream_cases(monkeypatch):
    real = bh.changes_in_period
    failing = _failing(monkeypatch, bh, "changes_in_period", lambda period, events, now: real(period, [], now))
    assert "TestScalingWithRules/scaleUp with pod policy and previous scale up events" in failing


def test_a_planted_fault_in_missing_pods_fails_upstream_cases(monkeypatch):
    failing = _failing(monkeypatch, replicas, "_adjusted", lambda metrics, grouping, ratio, value: dict(metrics))
    assert "TestReplicaCalcMissingMetrics/TestReplicaCalcMissingMetrics" in failing


# --- one sync: what the tables do not cover ---------------------------------------------------------

def _pods(n: int) -> tuple[Pod, ...]:
    return tuple(Pod(f"p{i}") for i in range(n))


def _external(value: str, target_type: str = "Value") -> dict:
    key = "value" if target_type == "Value" else "averageValue"
    return {"type": "External", "external": {"metric": {"name": "fabric_busbw_gbps"},
                                             "target": {"type": target_type, key: value}}}


def test_value_target_multiplies_the_replicas_by_metric_over_target():
    spec = {"minReplicas": 2, "maxReplicas": 8, "behavior": {}, "metrics": [_external("100")]}
    seen = [Observation(pods=_pods(2), values=(300_000,))]
    decision = sync(spec, 2, seen, History(), 0.0)
    assert sync({**spec, "behavior": None}, 2, seen, History(), 0.0).replicas == 4   # older limit: max(2x2, 4)
    assert decision.replicas == 6 and decision.reason == "external metric fabric_busbw_gbps above target"


def test_average_value_target_divides_the_total_by_the_target():
    spec = {"minReplicas": 2, "maxReplicas": 8, "metrics": [_external("100", "AverageValue")]}
    decision = sync(spec, 2, [Observation(values=(300_000,))], History(), 0.0)
    assert decision.replicas == 3


def test_the_largest_proposal_of_several_metrics_wins():
    pods = _pods(2)
    spec = {"minReplicas": 1, "maxReplicas": 10, "metrics": [
        {"type": "Pods", "pods": {"metric": {"name": "q"}, "target": {"type": "AverageValue", "averageValue": "10"}}},
        _external("100", "AverageValue")]}
    samples = {p.name: PodMetric(20_000) for p in pods}
    decision = sync(spec, 2, [Observation(pods=pods, samples=samples), Observation(values=(700_000,))], History(), 0.0)
    assert [p[1] for p in decision.proposals] == [4, 7] and decision.replicas == 4   # older limit: max(2x2, 4)


def test_scale_down_waits_for_the_default_stabilization_window():
    spec = {"minReplicas": 1, "maxReplicas": 10, "behavior": {}, "metrics": [_external("100", "AverageValue")]}
    history, replicas, timeline = History(), 8, {}
    for t in range(0, 601, 15):   # 800 until t=60, then 200: the recommendations of 8 hold for 300 s
        decision = sync(spec, replicas, [Observation(values=(800_000 if t <= 60 else 200_000,))], history, float(t))
        history, replicas = decision.history, decision.replicas
        timeline[t] = replicas
    assert timeline[345] == 8 and timeline[360] == 2


def test_per_behavior_tolerance_is_honoured():
    spec = {"minReplicas": 1, "maxReplicas": 10, "metrics": [_external("100")],
            "behavior": {"scaleUp": {"tolerance": "0.01"}}}
    seen = [Observation(pods=_pods(4), values=(105_000,))]
    assert sync(spec, 4, seen, History(), 0.0).replicas == 5
    assert sync({**spec, "behavior": None}, 4, seen, History(), 0.0).replicas == 4
    assert controller.tolerances_of(spec, Options(configurable_tolerance=False)) == Tolerances(0.1, 0.1)


def test_disabled_select_policy_never_scales_that_way():
    spec = {"minReplicas": 1, "maxReplicas": 10, "metrics": [_external("100")],
            "behavior": {"scaleUp": {"selectPolicy": "Disabled"}}}
    decision = sync(spec, 2, [Observation(pods=_pods(2), values=(900_000,))], History(), 0.0)
    assert decision.replicas == 2 and decision.limited == "ScaleUpLimit"


def test_replicas_outside_min_max_are_brought_back_first():
    spec = {"minReplicas": 3, "maxReplicas": 5, "metrics": [_external("100")]}
    assert sync(spec, 1, [], History(), 0.0).reason == "Current number of replicas below Spec.MinReplicas"
    assert sync(spec, 1, [], History(), 0.0).replicas == 3
    assert sync({**spec, "minReplicas": 1}, 0, [], History(), 0.0).replicas == 0   # scaling disabled at zero
