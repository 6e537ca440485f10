"""Kubernetes label selectors (``matchLabels`` and ``matchExpressions``), read leniently: a part of
the wrong shape counts as empty, so rules over hand-written manifests report instead of crashing.
One reader for the admission engine's object and namespace selectors, the simulator's node
selectors and the HyperNode members that `hypernode-tree-valid` resolves; and which taints a
toleration tolerates (the simulator's snapshot reader)."""
from __future__ import annotations

from typing import Any, Mapping


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


def tolerates(toleration: Mapping, taint: tuple[str, str, str]) -> bool:
    """Whether a toleration tolerates a ``(key, value, effect)`` taint, as Kubernetes decides: the
    effect matches (or is empty), and Exists with no key, the same key with Exists, or the same key
    and value with Equal (the default operator)."""
    key, value, effect = taint
    if toleration.get("effect") not in (None, "", effect):
        return False
    operator = toleration.get("operator") or "Equal"
    if operator not in ("Equal", "Exists"):   # ToleratesTaint: any other operator tolerates nothing
        return False
    if not toleration.get("key"):
        return operator == "Exists"
    if toleration.get("key") != key:
        return False
    return operator == "Exists" or str(toleration.get("value") or "") == value
