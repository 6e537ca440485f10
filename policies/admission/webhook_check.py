"""Upstream's Go-only admission checks (the webhook registry) applied to manifests, as the API
server's admission chain meets an object on CREATE: ``.status`` of a status-subresource kind dropped,
the mutating webhooks' defaults applied (modules/semantics/mutation.py), then every registered
validating check whose webhook the Volcano chart enables (the stacks keep the chart's defaults:
custom.admission_enable true, custom.enabled_admissions without /jobflows/validate and the pod
webhooks)."""
from __future__ import annotations

from typing import Iterator

from modules.semantics.mutation import as_created, mutate
from modules.semantics.shapes import api_group, as_dict

from .webhooks import CHART_DEFAULT_ADMISSIONS, CREATE, VALIDATE, Request, Webhook, webhooks


def cluster_of(manifests: list[dict]) -> tuple[dict, ...]:
    """What the webhooks look up among the manifests, as the cluster holds them once applied: each
    Queue Open (the queue controller opens a new queue), plus Volcano's own ``default`` queue."""
    out = []
    names = set()
    for obj in manifests:
        if obj.get("kind") == "Queue" and api_group(obj) == "scheduling.volcano.sh":
            queue = dict(as_created(obj))
            queue["status"] = {"state": "Open"}
            out.append(queue)
            names.add(as_dict(obj.get("metadata")).get("name"))
        elif obj.get("kind") == "Namespace":
            out.append(obj)
    if "default" not in names:
        out.append({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "default"},
                    "spec": {"weight": 1, "reclaimable": True}, "status": {"state": "Open"}})
    return tuple(out)


def judge(obj: dict, cluster: tuple[dict, ...], enabled: frozenset[str] = CHART_DEFAULT_ADMISSIONS
          ) -> Iterator[tuple[Webhook, str, str]]:
    """(webhook, path, upstream's message) for each refusal of ``obj`` at CREATE."""
    hooks = webhooks(api_group(obj), str(obj.get("kind")), VALIDATE, enabled=enabled)
    if not hooks:
        return
    created = mutate(obj, enabled)
    request = Request(CREATE, created, None, cluster, cluster_known=False)
    for hook in hooks:
        for path, message in hook.check(request):
            yield hook, path, message
