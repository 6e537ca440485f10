"""Volcano v1.15.1's JobFlow validating webhook (volcano-sh/volcano ``pkg/webhooks/admission/jobflows/validate``
``validate_jobflow.go``; ``/jobflows/validate`` is off in the chart's ``enabled_admissions``)."""
from __future__ import annotations

from modules.semantics.shapes import as_dict, as_list
from modules.upstream.cluster import Cluster
from modules.upstream.field import FieldError
from modules.upstream.volcano.common import key
from modules.upstream.webhook_error import refuse


def validate_jobflow(jobflow: dict, operation: str = "CREATE", old: dict | None = None,
                     cluster: Cluster | None = None) -> list[FieldError]:
    """``validateJobFlowDAG``: every ``dependsOn.targets`` names a flow, and the flows form a DAG."""
    flows = [as_dict(f) for f in as_list(as_dict(jobflow.get("spec")).get("flows"))]
    graph = {key(f.get("name")): [key(t) for t in as_list(as_dict(f.get("dependsOn")).get("targets"))]
             for f in flows}
    for targets in graph.values():
        for target in targets:
            if target not in graph:
                return [refuse("spec.flows", "jobflow.target", f"jobflow Flow is not DAG: vertex is not defined: "
                                                               f"{target}")]
    # Kahn's algorithm: the flows form a DAG when every flow can be removed once its targets are.
    waiting = {name: len(set(targets)) for name, targets in graph.items()}
    needed_by: dict = {}
    for name, targets in graph.items():
        for target in set(targets):
            needed_by.setdefault(target, []).append(name)
    ready = [name for name, count in waiting.items() if count == 0]
    done = 0
    while ready:
        done += 1
        for name in needed_by.get(ready.pop(), ()):
            waiting[name] -= 1
            if waiting[name] == 0:
                ready.append(name)
    if done != len(graph):
        return [refuse("spec.flows", "jobflow.not-dag", "jobflow Flow is not DAG")]
    return []
