"""The one LabelSelector reader: Kubernetes semantics, and lenient on odd shapes."""
from __future__ import annotations

import pytest

from modules.core.selectors import selector_matches, tolerates

LABELS = {"rack": "r1", "zone": "a"}


@pytest.mark.parametrize("selector, expected", [
    (None, True),
    ({}, True),
    ({"matchLabels": {"rack": "r1"}}, True),
    ({"matchLabels": {"rack": "r2"}}, False),
    ({"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "b"]}]}, True),
    ({"matchExpressions": [{"key": "gpu", "operator": "In", "values": ["a"]}]}, False),   # In needs the key
    ({"matchExpressions": [{"key": "zone", "operator": "NotIn", "values": ["a"]}]}, False),
    ({"matchExpressions": [{"key": "gpu", "operator": "NotIn", "values": ["a"]}]}, True),  # absent key: not in
    ({"matchExpressions": [{"key": "rack", "operator": "Exists"}]}, True),
    ({"matchExpressions": [{"key": "gpu", "operator": "Exists"}]}, False),
    ({"matchExpressions": [{"key": "gpu", "operator": "DoesNotExist"}]}, True),
    ({"matchExpressions": [{"key": "rack", "operator": "DoesNotExist"}]}, False),
    # both parts must hold (AND)
    ({"matchLabels": {"rack": "r1"}, "matchExpressions": [{"key": "zone", "operator": "In", "values": ["b"]}]},
     False),
])
def test_kubernetes_semantics(selector, expected):
    assert selector_matches(selector, LABELS) is expected


@pytest.mark.parametrize("selector", [
    [], "x", {"matchLabels": ["rack"]}, {"matchExpressions": {"key": "x"}},
    {"matchExpressions": ["x", {"key": ["x"], "operator": "In", "values": "a"}]},
])
def test_odd_shapes_do_not_crash(selector):
    assert selector_matches(selector, LABELS) in (True, False)
    assert selector_matches(selector, None) in (True, False)


@pytest.mark.parametrize("toleration, ok", [
    ({"operator": "Exists"}, True), ({"key": "k", "operator": "Exists", "effect": "NoSchedule"}, True),
    ({"key": "k", "value": "v"}, True), ({"key": "k", "value": "w"}, False),
    ({"key": "k", "value": "v", "effect": "NoExecute"}, False), ({"key": "other", "operator": "Exists"}, False),
])
def test_the_toleration_rule(toleration, ok):
    assert tolerates(toleration, ("k", "v", "NoSchedule")) is ok


@pytest.mark.parametrize("operator", ["Gt", "Lt", "exists", "In"])
def test_an_operator_kubernetes_does_not_know_tolerates_nothing(operator):
    """k8s.io/api core/v1 ``Toleration.ToleratesTaint``: only "" / Equal and Exists match; any other
    operator is false (Gt/Lt need the alpha TaintTolerationComparisonOperators gate, off by default)."""
    assert tolerates({"key": "k", "operator": operator, "value": "v"}, ("k", "v", "NoSchedule")) is False
