"""Kubernetes label selectors (``matchLabels`` and ``matchExpressions``), read leniently: a part of
the wrong shape counts as empty, so rules over hand-written manifests report instead of crashing.
One reader for the admission engine's object and namespace selectors, the simulator's node
selectors and the HyperNode members that `hypernode-tree-valid` resolves."""
from __future__ import annotations

from typing import Any


def selector_matches(selector: Any, labels: Any) -> bool:
    """Whether ``labels`` satisfy a LabelSelector; an absent or empty selector matches everything."""
    selector = selector if isinstance(selector, dict) else {}
    labels = labels if isinstance(labels, dict) else {}
    match_labels = selector.get("matchLabels")
    for key, value in (match_labels if isinstance(match_labels, dict) else {}).items():
        if labels.get(key) != value:
            return False
    expressions = selector.get("matchExpressions")
    for expr in expressions if isinstance(expressions, list) else []:
        expr = expr if isinstance(expr, dict) else {}
        key, op, values = expr.get("key"), expr.get("operator"), expr.get("values")
        values = values if isinstance(values, list) else []
        present = isinstance(key, str) and key in labels
        if op == "In" and not (present and labels[key] in values):
            return False
        if op == "NotIn" and present and labels[key] in values:
            return False
        if op == "Exists" and not present:
            return False
        if op == "DoesNotExist" and present:
            return False
    return True
