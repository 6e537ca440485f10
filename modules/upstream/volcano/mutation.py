"""Volcano v1.15.1's mutating webhooks for Jobs and Queues (volcano-sh/volcano
``pkg/webhooks/admission/jobs/mutate/mutate_job.go`` and ``queues/mutate/mutate_queue.go``), our own
code. Both run on CREATE only; the registry (``modules/upstream/registry.py``) applies them, with the
PodGroup mutation (``podgroup.py``), before any validation (``modules/upstream/chain.py``), and the
Volcano renderer writes Jobs and Queues as they leave them (``settle_webhook_defaults``), so the
first diff after apply is empty.

Every function returns a new object and never changes its argument.
"""
from __future__ import annotations

import copy

from modules.semantics.partitions import task_min_available
from modules.semantics.shapes import api_group, as_dict, as_int, as_list
from modules.upstream.cluster import Cluster

DEFAULT_QUEUE = "default"            # mutate_job.go DefaultQueue
DEFAULT_SCHEDULER = "volcano"        # the chart's scheduler name (GenerateSchedulerName of the default list)
DEFAULT_MAX_RETRY = 3                # DefaultMaxRetry (job) and defaultMaxRetry (task)
DEFAULT_TASK_PREFIX = "default"      # v1alpha1.DefaultTaskSpec: an unnamed task i becomes default<i>
# Job plugins that need the svc plugin, and the one that also needs ssh (patchDefaultPlugins).
PLUGINS_NEEDING_SVC = ("tensorflow", "mpi", "pytorch", "ray")
HIERARCHY, HIERARCHY_WEIGHTS = "volcano.sh/hierarchy", "volcano.sh/hierarchy-weights"


def mutate_volcano_job(obj: dict, operation: str = "CREATE", old: dict | None = None,
                       cluster: Cluster | None = None) -> dict:
    """The Volcano job webhook's defaults on CREATE (mutate_job.go ``createPatch``): queue
    ``default``, schedulerName ``volcano``, maxRetry 3 when 0; per task a name ``default<i>``,
    ``dnsPolicy: ClusterFirstWithHostNet`` under hostNetwork, minAvailable (``task_min_available``) and
    maxRetry 3; the job's minAvailable, when 0, the sum of the tasks' minAvailable so defaulted; the
    svc plugin with tensorflow/mpi/pytorch/ray and ssh with mpi."""
    out = copy.deepcopy(obj)
    if not isinstance(out.get("spec"), dict):
        return out
    spec = out["spec"]
    if not spec.get("queue"):
        spec["queue"] = DEFAULT_QUEUE
    if not spec.get("schedulerName"):
        spec["schedulerName"] = DEFAULT_SCHEDULER
    if not as_int(spec.get("maxRetry")):
        spec["maxRetry"] = DEFAULT_MAX_RETRY
    tasks = as_list(spec.get("tasks"))
    for i, task in enumerate(tasks):
        if not isinstance(task, dict):
            continue
        if not task.get("name"):
            task["name"] = f"{DEFAULT_TASK_PREFIX}{i}"
        pod = as_dict(as_dict(task.get("template")).get("spec"))
        if pod.get("hostNetwork") is True and not pod.get("dnsPolicy"):
            pod["dnsPolicy"] = "ClusterFirstWithHostNet"
        if task.get("minAvailable") is None:
            task["minAvailable"] = task_min_available(task)
        if not as_int(task.get("maxRetry")):
            task["maxRetry"] = DEFAULT_MAX_RETRY
    if not as_int(spec.get("minAvailable")):
        # patchDefaultMinAvailable runs after mutateSpec has set each task's minAvailable in place
        # (the same slice), so it sums the defaulted values.
        spec["minAvailable"] = sum(as_int(t.get("minAvailable")) or 0 for t in tasks if isinstance(t, dict))
    plugins = spec.get("plugins")
    if isinstance(plugins, dict):
        plugins = dict(plugins)
        if any(name in plugins for name in PLUGINS_NEEDING_SVC):
            plugins.setdefault("svc", [])
        if "mpi" in plugins:
            plugins.setdefault("ssh", [])
        spec["plugins"] = plugins
    return out


def mutate_volcano_queue(obj: dict, operation: str = "CREATE", old: dict | None = None,
                         cluster: Cluster | None = None) -> dict:
    """The Volcano queue webhook's defaults on CREATE (mutate_queue.go ``createQueuePatch``): a
    hierarchy not starting with ``root`` (with weights) gets ``root/`` and ``1/`` prefixed;
    ``reclaimable: true`` when absent; ``weight: 1`` when 0 or absent."""
    out = copy.deepcopy(obj)
    annotations = as_dict(as_dict(out.get("metadata")).get("annotations"))
    hierarchy, weights = annotations.get(HIERARCHY), annotations.get(HIERARCHY_WEIGHTS)
    if isinstance(hierarchy, str) and isinstance(weights, str) and hierarchy and weights \
            and not hierarchy.startswith("root"):
        annotations[HIERARCHY] = f"root/{hierarchy}"
        annotations[HIERARCHY_WEIGHTS] = f"1/{weights}"
    spec = out.setdefault("spec", {}) if isinstance(out.get("spec", {}), dict) else None
    if spec is None:
        return out
    if spec.get("reclaimable") is None:
        spec["reclaimable"] = True
    if not as_int(spec.get("weight")):
        spec["weight"] = 1
    return out


# What the webhooks would change, as the renderers apply it (the same code the admission chain runs).
WEBHOOK_DEFAULTS = {("batch.volcano.sh", "Job"): mutate_volcano_job,
                    ("scheduling.volcano.sh", "Queue"): mutate_volcano_queue}


def as_webhook_leaves(obj: dict) -> dict:
    """``obj`` with the defaults the mutating webhook of its kind applies on CREATE (unchanged for a
    kind without one), so the first diff after apply is empty."""
    mutation = WEBHOOK_DEFAULTS.get((api_group(obj), obj.get("kind")))
    return mutation(obj) if mutation is not None else copy.deepcopy(obj)


def settle_webhook_defaults(objects: list[dict]) -> list[dict]:
    """Render each object of a kind with a mutating webhook as the webhook leaves it on CREATE
    (``as_webhook_leaves``), in place; returns the objects that changed."""
    changed = []
    for obj in objects:
        if (api_group(obj), obj.get("kind")) not in WEBHOOK_DEFAULTS:
            continue
        settled = as_webhook_leaves(obj)
        if settled != obj:
            obj.clear()
            obj.update(settled)
            changed.append(obj)
    return changed
