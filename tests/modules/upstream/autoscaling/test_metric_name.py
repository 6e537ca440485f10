"""One reading of what an HPA metric entry reads (``controller.metric_name``): the resource's name
for Resource and ContainerResource, ``metric.name`` for Pods, Object and External, None for a shape
the API server would refuse; the what-if, the convergence check and the controller's messages use it."""
from __future__ import annotations

import pytest

from modules.upstream.autoscaling.controller import metric_label, metric_name

CASES = [
    ({"type": "Resource", "resource": {"name": "cpu"}}, "cpu"),
    ({"type": "ContainerResource", "containerResource": {"name": "memory", "container": "main"}}, "memory"),
    ({"type": "Pods", "pods": {"metric": {"name": "tokens"}}}, "tokens"),
    ({"type": "Object", "object": {"metric": {"name": "queue_depth"}}}, "queue_depth"),
    ({"type": "External", "external": {"metric": {"name": "fabric_busbw_gbps"}}}, "fabric_busbw_gbps"),
    ({"type": "External", "external": {"metric": {}}}, None),
    ({"type": "External", "external": {"metric": "fabric_busbw_gbps"}}, None),
    ({"type": "External", "resource": {"name": "cpu"}}, None),   # the source under another type's key
    ({"type": "Pods", "pods": {"name": "tokens"}}, None),        # a resource's field on a Pods metric
    ({"type": "Unknown", "unknown": {"name": "x"}}, None),
    ({"type": "Resource", "resource": None}, None),
    ("cpu", None),
]


@pytest.mark.parametrize(("metric", "name"), CASES)
def test_metric_name(metric, name):
    assert metric_name(metric) == name


def test_the_controller_labels_a_metric_by_that_name():
    assert metric_label(CASES[0][0]) == "cpu resource"
    assert metric_label(CASES[1][0]) == "memory resource of container main"
    assert metric_label(CASES[4][0]) == "external metric fabric_busbw_gbps"
