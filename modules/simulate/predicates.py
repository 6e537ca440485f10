"""The node filters of Volcano's predicates plugin that a pod's spec decides, resources aside (v1.15.1
``pkg/scheduler/plugins/predicates``, running the Kubernetes filters NodeUnschedulable, NodeAffinity
and TaintToleration): cordoned nodes unless tolerated, ``nodeSelector``, required node affinity
(``nodeSelectorTerms``: any term, every expression of it), and NoSchedule/NoExecute taints every one
of which a toleration must tolerate (``modules.core.selectors.tolerates``)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from modules.core.selectors import tolerates
from modules.semantics.shapes import as_dict, as_list

UNSCHEDULABLE_TAINT = ("node.kubernetes.io/unschedulable", "", "NoSchedule")


def _expression_holds(expr: dict, value: Any, present: bool) -> bool:
    op, values = expr.get("operator"), [str(v) for v in as_list(expr.get("values"))]
    if op == "In":
        return present and str(value) in values
    if op == "NotIn":
        return not present or str(value) not in values
    if op == "Exists":
        return present
    if op == "DoesNotExist":
        return not present
    if op in ("Gt", "Lt") and present and len(values) == 1:
        try:
            mine, theirs = int(str(value)), int(values[0])
        except ValueError:
            return False
        return mine > theirs if op == "Gt" else mine < theirs
    return False


def _term_holds(term: dict, node: Any) -> bool:
    """A nodeSelectorTerm: all its expressions and fields hold; an empty term selects nothing."""
    exprs, fields = as_list(term.get("matchExpressions")), as_list(term.get("matchFields"))
    if not exprs and not fields:
        return False
    for expr in map(as_dict, exprs):
        key = expr.get("key")
        if not _expression_holds(expr, node.labels.get(key), key in node.labels):
            return False
    for expr in map(as_dict, fields):
        if expr.get("key") != "metadata.name" or not _expression_holds(expr, node.name, True):
            return False
    return True


@dataclass(frozen=True)
class PodFit:
    """What the predicates plugin reads of a pod to filter nodes: its nodeSelector, required node
    affinity (nodeSelectorTerms, any of them) and tolerations."""
    node_selector: tuple[tuple[str, str], ...] = ()
    terms: tuple[dict, ...] | None = None
    tolerations: tuple[dict, ...] = ()

    def allows(self, node: Any) -> bool:
        if node.unschedulable and not any(tolerates(t, UNSCHEDULABLE_TAINT) for t in self.tolerations):
            return False
        if any(node.labels.get(k) != v for k, v in self.node_selector):
            return False
        if self.terms is not None and not any(_term_holds(t, node) for t in self.terms):
            return False
        return all(any(tolerates(t, taint) for t in self.tolerations) for taint in node.taints)

    def describe(self) -> str:
        parts = [f"nodeSelector {dict(self.node_selector)}"] if self.node_selector else []
        if self.terms is not None:
            parts.append("required node affinity")
        if self.tolerations:
            parts.append(f"{len(self.tolerations)} toleration(s)")
        return ", ".join(parts) or "no node constraints"


def pod_fit(spec: dict) -> PodFit:
    """A pod spec's node constraints (``PodFit``)."""
    selector = tuple(sorted((str(k), str(v)) for k, v in as_dict(spec.get("nodeSelector")).items()))
    required = as_dict(as_dict(as_dict(spec.get("affinity")).get("nodeAffinity"))
                       .get("requiredDuringSchedulingIgnoredDuringExecution"))
    terms = tuple(as_dict(t) for t in as_list(required.get("nodeSelectorTerms"))) if required else None
    return PodFit(selector, terms, tuple(as_dict(t) for t in as_list(spec.get("tolerations"))))


def pod_fits(pods: Iterable[Any]) -> dict[str, PodFit]:
    """Pod uid -> its node constraints, for the cluster model's pods (``model.ClusterModel.pods``)."""
    return {f"{pod.namespace or 'default'}/{pod.name}": pod_fit(pod.spec) for pod in pods}
