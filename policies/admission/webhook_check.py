"""Upstream's Go-only admission checks (the webhook registry) applied to manifests, as the API
server's admission chain meets an object on CREATE: ``.status`` of a status-subresource kind dropped,
the mutating webhooks' defaults applied (modules/semantics/mutation.py), then every registered
validating check whose webhook the Volcano chart enables: ``enabled_admissions`` reads the Volcano
chart release among the manifests (``custom.admission_enable``, ``custom.enabled_admissions``), and
without one the chart's defaults hold (jobflows and pods webhooks off)."""
from __future__ import annotations

from typing import Iterator

from modules.semantics.mutation import as_created, mutate
from modules.semantics.scheduler_conf import is_volcano_release, release_values
from modules.semantics.shapes import api_group, as_dict
from modules.semantics.volcano_webhooks import job_of_cronjob

from .webhooks import CHART_DEFAULT_ADMISSIONS, CREATE, VALIDATE, Request, Webhook, webhooks


def enabled_admissions(manifests: list[dict]) -> frozenset[str]:
    """The Volcano webhooks the chart release among ``manifests`` installs (the first release): none
    when ``custom.admission_enable`` is false, else the comma-separated ``custom.enabled_admissions``
    (chart default when unset). No release: the chart's defaults."""
    for obj in manifests:
        if is_volcano_release(obj):
            custom = as_dict(release_values(obj).get("custom"))
            if custom.get("admission_enable") is False:
                return frozenset()
            listed = custom.get("enabled_admissions")
            if isinstance(listed, str):
                return frozenset(p.strip() for p in listed.split(",") if p.strip())
            return CHART_DEFAULT_ADMISSIONS
    return CHART_DEFAULT_ADMISSIONS


def declares_queues(manifests: list[dict]) -> bool:
    """Whether the manifests are a whole stack's: it installs Volcano (its chart release) and so
    declares every queue the cluster has besides Volcano's own ``root`` and ``default`` (a stack's
    workloads may only name the stack's queues). Bare manifests come with no such promise."""
    return any(is_volcano_release(o) for o in manifests)


def cluster_of(manifests: list[dict]) -> tuple[dict, ...]:
    """What the webhooks look up among the manifests, as the cluster holds them once applied: each
    Queue Open (the queue controller opens a new queue), plus Volcano's own ``root`` and ``default``."""
    out = []
    names = set()
    for obj in manifests:
        if obj.get("kind") == "Queue" and api_group(obj) == "scheduling.volcano.sh":
            queue = dict(as_created(obj))
            queue["status"] = {"state": "Open"}
            out.append(queue)
            name = as_dict(obj.get("metadata")).get("name")
            if isinstance(name, str):   # a name of another type is the schema's finding, not a lookup
                names.add(name)
        elif obj.get("kind") == "Namespace":
            out.append(obj)
    for name in ("root", "default"):   # Volcano's controllers create both
        if name not in names:
            out.append({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": name},
                        "spec": {"weight": 1, "reclaimable": True}, "status": {"state": "Open"}})
    return tuple(out)


def _without_descendants(cluster: tuple[dict, ...], name: object) -> tuple[dict, ...]:
    """The cluster a Queue meets at its own CREATE: its child queues name it as parent, so they can
    only be created after it (the queue webhook refuses a missing parent)."""
    children: dict[object, list[str]] = {}
    for q in cluster:
        queue = as_dict(q.get("metadata")).get("name") if q.get("kind") == "Queue" else None
        if isinstance(queue, str):
            children.setdefault(as_dict(q.get("spec")).get("parent"), []).append(queue)
    below, todo = set(), list(children.get(name, ()))   # one walk down from ``name``: linear, cycle-safe
    while todo:
        queue = todo.pop()
        if queue not in below:   # ``name`` itself only when its parents lead back to it (a cycle)
            below.add(queue)
            todo.extend(children.get(queue, ()))
    return tuple(o for o in cluster
                 if not (o.get("kind") == "Queue" and as_dict(o.get("metadata")).get("name") in below))


def judge(obj: dict, cluster: tuple[dict, ...], enabled: frozenset[str] = CHART_DEFAULT_ADMISSIONS,
          skip: frozenset[str] = frozenset(), cluster_known: bool = False) -> Iterator[tuple[Webhook, str, str]]:
    """(webhook, path, upstream's message) for each refusal of ``obj`` at CREATE; ``skip``: sources
    whose checks are left to another caller; ``cluster_known``: ``cluster`` holds every queue there
    is (see ``declares_queues``), so a queue missing from it is missing."""
    hooks = [h for h in webhooks(api_group(obj), str(obj.get("kind")), VALIDATE, enabled=enabled)
             if h.source not in skip]
    if not hooks:
        return
    created = mutate(obj, enabled)
    if obj.get("kind") == "Queue":
        cluster = _without_descendants(cluster, as_dict(obj.get("metadata")).get("name"))
    request = Request(CREATE, created, None, cluster, cluster_known=cluster_known)
    for hook in hooks:
        for path, message in hook.check(request):
            yield hook, path, message
    if obj.get("kind") == "CronJob" and api_group(obj) == "batch.volcano.sh":
        yield from _created_jobs(obj, cluster, enabled, skip, cluster_known)


def _created_jobs(cron: dict, cluster: tuple[dict, ...], enabled: frozenset[str], skip: frozenset[str],
                  cluster_known: bool) -> Iterator[tuple[Webhook, str, str]]:
    """The job webhook's refusals of the Job a Volcano CronJob creates at each run (the CronJob is
    admitted; every Job it creates is refused), on the CronJob's paths. The webhook is the job's:
    a caller tells these from the CronJob's own by ``hook.kind``."""
    job = job_of_cronjob(cron)
    for hook, path, message in judge(job, cluster, enabled, skip, cluster_known):
        if path.startswith(("spec.", "metadata.labels", "metadata.annotations")):
            path = f"spec.jobTemplate.{path}"
        yield hook, path, message
