"""Review fixes in modules/monitoring: the metrics the stack's HPAs read are scraped too (the
adapter asks the same Prometheus), from the Volcano component that serves them."""
from __future__ import annotations

from pathlib import Path

import pytest

from modules.core.config import build_stack, load_project
from modules.core.render import render

ROOT = Path(__file__).resolve().parents[3]


def monitors(hpa_metric: dict | None, gpu_alerts: bool = True) -> dict[str, dict]:
    given = {"environment": "staging",
             "fabric": {"source": "generated", "generated": {"topology": "spine-leaf", "leaves": 2, "nodesPerLeaf": 2},
                        "nodePools": [{"name": "h100", "gpus": 8, "gpuType": "H100-SXM"}]},
             "nccl": {"transport": "infiniband"}, "probe": {"enabled": False},
             "monitoring": {"enabled": True, "gpu": {"enabled": gpu_alerts}},
             "autoscaling": {"hpas": [] if hpa_metric is None else [
                 {"namespace": "training", "target": {"kind": "Deployment", "name": "x"}, "maxReplicas": 4,
                  "metrics": [hpa_metric]}]}}
    stack = build_stack(load_project(ROOT), "review", {f"trainstack:{k}": v for k, v in given.items()},
                        "stacks/Pulumi.review.yaml")
    return {r.name: r.obj for r in render(stack).resources if r.kind == "ServiceMonitor"}


@pytest.fixture(scope="module")
def without_hpas() -> dict[str, dict]:
    return monitors(None)


def test_pending_podgroups_hpa_scrapes_the_volcano_controllers(without_hpas):
    assert "volcano-controllers" not in without_hpas          # no alert reads a controller metric
    got = monitors({"name": "volcano_pending_podgroups", "value": 1, "selector": {"queue_name": "default"}})
    controllers = got["volcano-controllers"]                 # was missing: the HPA never got a value
    assert controllers["spec"]["selector"] == {"matchLabels": {"app": "volcano-controller"}}
    assert controllers["spec"]["endpoints"][0]["port"] == "metrics"
    assert controllers["spec"]["namespaceSelector"] == without_hpas["volcano-scheduler"]["spec"]["namespaceSelector"]
    assert "volcano-scheduler" in got                         # the alerts still read the scheduler's


def test_gpu_utilization_hpa_scrapes_dcgm_without_gpu_alerts():
    assert "dcgm-exporter" not in monitors(None, gpu_alerts=False)
    got = monitors({"name": "gpu_utilization", "averageValue": 80}, gpu_alerts=False)
    assert "dcgm-exporter" in got                             # was missing with the GPU alerts off
