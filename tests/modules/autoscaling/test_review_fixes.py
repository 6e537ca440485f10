"""Review fixes in modules/autoscaling: an External metric's selector must select series the
adapter can serve, one value per HPA (the HPA adds up every series it gets)."""
from __future__ import annotations

from pathlib import Path

import pytest

from modules.core.config import build_stack, load_project
from modules.core.errors import InputError
from modules.core.render import render

ROOT = Path(__file__).resolve().parents[3]


def autoscaling_stack(hpas: list[dict]):
    """A spine-leaf stack (tiers leaf and spine) with just these HPAs."""
    given = {"environment": "staging",
             "fabric": {"source": "generated", "generated": {"topology": "spine-leaf", "leaves": 2, "nodesPerLeaf": 2},
                        "nodePools": [{"name": "h100", "gpus": 8, "gpuType": "H100-SXM"}]},
             "nccl": {"transport": "infiniband"}, "probe": {"enabled": False}, "monitoring": {"enabled": False},
             "autoscaling": {"hpas": hpas}}
    return build_stack(load_project(ROOT), "review", {f"trainstack:{k}": v for k, v in given.items()},
                       "stacks/Pulumi.review.yaml")


def _hpa(metric: dict) -> dict:
    return {"namespace": "training", "target": {"kind": "Deployment", "name": "x"}, "maxReplicas": 4,
            "metrics": [metric]}


@pytest.mark.parametrize("metric, path, words", [
    # no tier: max by (tier) returns a series per tier and the HPA would sum their bandwidths
    ({"name": "fabric_busbw_gbps", "value": 100}, "metrics[0].selector", "expected a tier selector"),
    # a tier the probe never labels results with: no series, FailedGetExternalMetric forever
    ({"name": "fabric_busbw_gbps", "value": 100, "selector": {"tier": "core"}}, "metrics[0].selector.tier",
     "leaf, spine"),
    # a label the series does not carry
    ({"name": "volcano_pending_podgroups", "value": 1, "selector": {"queue": "default"}}, "metrics[0].selector",
     "expected only queue_name"),
    ({"name": "fabric_busbw_gbps", "value": 1, "selector": {"tier": "spine", "collective": "all_gather"}},
     "metrics[0].selector", "expected only tier"),
])
def test_external_selectors_must_select_served_series(metric, path, words):
    with pytest.raises(InputError) as err:
        render(autoscaling_stack([_hpa(metric)]))
    assert f"trainstack:autoscaling.hpas[0].{path}" in str(err.value) and words in str(err.value)


@pytest.mark.parametrize("metric", [
    {"name": "fabric_busbw_gbps", "averageValue": 100, "selector": {"tier": "leaf"}},
    {"name": "volcano_pending_podgroups", "value": 1},                     # all queues: a sum is meaningful
    {"name": "volcano_pending_podgroups", "value": 1, "selector": {"queue_name": "default"}},
])
def test_good_selectors_render(metric):
    hpas = [r for r in render(autoscaling_stack([_hpa(metric)])).resources
            if r.kind == "HorizontalPodAutoscaler"]
    assert hpas[0].obj["spec"]["metrics"][0]["external"]["metric"]["name"] == metric["name"]
