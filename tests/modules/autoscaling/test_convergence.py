"""Targets that cannot converge, judged with the HPA model: render refuses them in a stack, the rule
hpa-converges in manifests, and the shipped stacks have none."""
from __future__ import annotations

import pytest

from modules.autoscaling import convergence
from modules.core.errors import InputError
from modules.core.render import render
from modules.probe import measure

from .test_review_fixes import autoscaling_stack


def _hpa(metric: dict, **extra) -> dict:
    return {"namespace": "training", "target": {"kind": "Deployment", "name": "x"}, "minReplicas": 2,
            "maxReplicas": 8, "metrics": [metric], **extra}


def _manifest(target: dict, name: str = "fabric_busbw_gbps", kind: str = "External", **spec) -> dict:
    source = {"metric": {"name": name}, "target": target}
    return {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "h"},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "x"},
                     "minReplicas": 2, "maxReplicas": 8, "metrics": [{"type": kind, kind.lower(): source}], **spec}}


def test_the_probe_gauges_are_the_ones_the_probe_exposes():
    text = measure.exposition([measure.record("all_reduce", 1 << 20, 2, 0.001, 0.001)], "spine", 0.0, "nccl")
    exposed = {line.split("{")[0] for line in text.splitlines() if not line.startswith("#")}
    assert exposed == {f"{measure.METRIC_PREFIX}_{g}" for g in ("busbw_gbps", "algbw_gbps", "time_seconds",
                       "world_size", "nodes", "last_success_timestamp_seconds", "info")}
    assert exposed | {"fabric_busbw_gbps"} == convergence.replica_independent()


def test_a_gauge_the_probe_starts_exporting_is_known_as_replica_independent(monkeypatch):
    """convergence reads the probe's gauges from the probe's own exposition: a gauge added there is
    judged like the others, with no list to edit."""
    exposition = measure.exposition

    def with_a_new_gauge(*args, **kwargs) -> str:
        return exposition(*args, **kwargs) + ("# HELP trainstack_probe_jitter_seconds New.\n"
                                              "# TYPE trainstack_probe_jitter_seconds gauge\n")

    hpa = _manifest({"type": "Value", "value": "100"}, "trainstack_probe_jitter_seconds")
    assert convergence.problems(hpa) == []
    monkeypatch.setattr(measure, "exposition", with_a_new_gauge)
    [problem] = convergence.problems(hpa)
    assert problem.metric == "trainstack_probe_jitter_seconds" and "does not change with the target's replicas" \
        in problem.message


def test_a_value_target_on_fabric_busbw_is_pinned_at_min_or_max():
    [problem] = convergence.problems(_manifest({"type": "Value", "value": "100"}))
    assert problem.path == "spec.metrics[0].external.target.value"
    assert "2 -> 3 -> 5 -> 8 (maxReplicas)" in problem.message and "8 -> 4 -> 2 (minReplicas)" in problem.message
    assert "AverageValue" in problem.message


@pytest.mark.parametrize("target, name, kind", [
    ({"type": "AverageValue", "averageValue": "50"}, "fabric_busbw_gbps", "External"),     # replicas = busbw / 50
    ({"type": "Value", "value": "10"}, "volcano_pending_podgroups", "External"),          # not a fabric metric
    ({"type": "AverageValue", "averageValue": "80"}, "gpu_utilization", "Pods"),
])
def test_targets_that_converge_pass(target, name, kind):
    assert convergence.problems(_manifest(target, name, kind)) == []


def test_a_bounded_metric_with_an_unreachable_target_only_scales_down():
    [problem] = convergence.problems(_manifest({"type": "AverageValue", "averageValue": "95"}, "gpu_utilization",
                                               "Pods"))
    assert problem.path == "spec.metrics[0].pods.target.averageValue" and "only scale down" in problem.message
    # a per-behavior scale-up tolerance of 1 % makes 95 reachable (100 / 95 > 1.01)
    assert convergence.problems(_manifest({"type": "AverageValue", "averageValue": "95"}, "gpu_utilization", "Pods",
                                          behavior={"scaleUp": {"tolerance": "0.01"}})) == []


def test_more_replica_independent_metrics_can_be_named():
    hpa = _manifest({"type": "Value", "value": "3"}, "cluster_power_kw")
    assert convergence.problems(hpa) == [] and len(convergence.problems(hpa, {"cluster_power_kw"})) == 1


def test_render_refuses_a_value_target_on_fabric_busbw():
    with pytest.raises(InputError) as err:
        render(autoscaling_stack([_hpa({"name": "fabric_busbw_gbps", "value": 100, "selector": {"tier": "leaf"}})]))
    assert err.value.rule == "hpa-converges"
    assert "trainstack:autoscaling.hpas[0].metrics[0].value" in str(err.value)


def test_render_refuses_an_unreachable_gpu_utilization_target():
    with pytest.raises(InputError) as err:
        render(autoscaling_stack([_hpa({"name": "gpu_utilization", "averageValue": 99})]))
    assert err.value.rule == "hpa-converges" and "metrics[0].averageValue" in str(err.value)
