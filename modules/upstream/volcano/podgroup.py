"""Volcano v1.15.1's PodGroup webhooks (volcano-sh/volcano ``pkg/webhooks/admission/podgroups``), our own
code: ``validatePodGroup`` (``/podgroups/validate``) and ``createPodGroupPatch`` (``/podgroups/mutate``,
off in the chart's defaults)."""
from __future__ import annotations

import copy

from modules.semantics.shapes import annotations, as_dict, as_list
from modules.semantics.workloads import QUEUE_ANNOTATION
from modules.upstream.cluster import Cluster
from modules.upstream.field import FieldError
from modules.upstream.volcano.common import BOTH_TIERS, topology_both
from modules.upstream.volcano.mutation import DEFAULT_QUEUE
from modules.upstream.webhook_error import refuse

def _queue_errors(name: str, cluster: Cluster) -> list[FieldError]:
    queue = cluster.find("Queue", name)
    if queue is None:
        return [refuse("spec.queue", "podgroup.queue-not-found", f"unable to find queue: queue.scheduling.volcano.sh "
                                                                 f"\"{name}\" not found")] if cluster.known else []
    state = as_dict(queue.get("status")).get("state")
    if state != "Open":
        return [refuse("spec.queue", "podgroup.queue-not-open", f"can only submit PodGroup to queue with state "
                                                                f"`Open`, queue `{name}` status is `{state or ''}`.")]
    return []


def validate_podgroup(podgroup: dict, operation: str, old: dict | None, cluster: Cluster) -> list[FieldError]:
    """``validatePodGroup``: its queue exists and is Open; no networkTopology (its own or a
    subGroupPolicy's) sets both highestTierAllowed and highestTierName."""
    spec = as_dict(podgroup.get("spec"))
    name = spec.get("queue") or ""
    out = _queue_errors(name, cluster) if name else []
    if topology_both(spec.get("networkTopology")):
        out.append(refuse("spec.networkTopology", "podgroup.network-topology-both", BOTH_TIERS + "."))
    for i, policy in enumerate(map(as_dict, as_list(spec.get("subGroupPolicy")))):
        if topology_both(policy.get("networkTopology")):
            out.append(refuse(f"spec.subGroupPolicy[{i}].networkTopology", "podgroup.network-topology-both",
                              f"in subGroupPolicy '{policy.get('name')}': {BOTH_TIERS}."))
            break
    return out


def mutate_podgroup(obj: dict, operation: str, old: dict | None, cluster: Cluster) -> dict:
    """``createPodGroupPatch``: a PodGroup in queue ``default`` (the CRD's default when absent) whose
    namespace carries the ``scheduling.volcano.sh/queue-name`` annotation moves to that queue."""
    out = copy.deepcopy(obj)
    spec = out.get("spec")
    if not isinstance(spec, dict) or spec.get("queue", DEFAULT_QUEUE) != DEFAULT_QUEUE:
        return out
    namespace = cluster.namespaces().get(as_dict(out.get("metadata")).get("namespace"))
    queue = annotations(as_dict(namespace)).get(QUEUE_ANNOTATION)
    if isinstance(queue, str) and queue:
        spec["queue"] = queue
    return out
