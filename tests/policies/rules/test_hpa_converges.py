"""hpa-converges: the HPA model refuses targets that cannot converge; its setting names more
metrics the scaled workload does not drive; the existing hpa-target-scalable is unchanged by it."""
from __future__ import annotations

from policies.framework import CheckContext
from policies.rules import BY_ID


def _hpa(name: str, target: dict) -> dict:
    return {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "serve", "namespace": "training"},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "serve"},
                     "minReplicas": 1, "maxReplicas": 10,
                     "metrics": [{"type": "External", "external": {"metric": {"name": name}, "target": target}}]}}


def _findings(obj: dict, **config) -> list:
    rule = BY_ID["hpa-converges"]
    return list(rule.check(obj, CheckContext(config={**rule.config_defaults, **config})))


def test_value_on_a_probe_gauge_is_refused_with_the_model_walk():
    [finding] = _findings(_hpa("trainstack_probe_busbw_gbps", {"type": "Value", "value": "100"}))
    assert finding.path == "spec.metrics[0].external.target.value"
    assert "1 -> 2 -> 3 -> 5 -> 8 -> 10 (maxReplicas)" in finding.message


def test_setting_names_more_replica_independent_metrics():
    hpa = _hpa("site_power_kw", {"type": "Value", "value": "3"})
    assert _findings(hpa) == []
    assert len(_findings(hpa, replicaIndependentMetrics=["site_power_kw"])) == 1


def test_malformed_specs_are_left_to_api_validation():
    hpa = _hpa("fabric_busbw_gbps", {"type": "Value", "value": "lots"})
    assert _findings(hpa) == []
    hpa["spec"]["metrics"] = "nope"
    assert _findings(hpa) == []
