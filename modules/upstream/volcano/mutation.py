"""An object as the API server stores it at CREATE: what happens to a request before any validating
admission runs, decided once for the rules, the renderers' views and the upstream-table runner.

Order (the API server's admission chain):
1. ``as_created`` drops ``.status`` of a kind whose CRD has the status subresource (apiextensions-
   apiserver ``PrepareForCreate`` resets it; no validating policy or webhook ever sees it).
2. The mutating webhooks the Volcano chart enables apply their defaults (``mutate``): the job webhook
   (volcano-sh/volcano v1.15.1 ``pkg/webhooks/admission/jobs/mutate/mutate_job.go``) and the queue
   webhook (``pkg/webhooks/admission/queues/mutate/mutate_queue.go``), both on CREATE only; the
   PodGroup webhook (``pkg/webhooks/admission/podgroups/mutate/mutate_podgroup.go``) when enabled.
3. Validation (``modules/upstream/volcano/webhooks.py``, the CEL policies, the CRD rules) judges
   the result.

Every function returns a new object and never changes its argument.
"""
from __future__ import annotations

import copy
from typing import Callable

from modules.upstream.volcano.partitions import task_min_available
from modules.semantics.shapes import api_group, as_dict, as_int, as_list

# Kinds whose CRD declares ``subresources.status`` (the upstream CRDs: Volcano Job, Queue, PodGroup,
# HyperNode, CronJob, JobFlow/JobTemplate; Trainer TrainJob; JobSet; Training Operator jobs;
# prometheus-operator and Flux kinds) and the built-in kinds with a status subresource: on CREATE the
# API server keeps none of ``.status``.
STATUS_SUBRESOURCE = frozenset({
    ("batch.volcano.sh", "Job"), ("batch.volcano.sh", "CronJob"), ("scheduling.volcano.sh", "Queue"),
    ("scheduling.volcano.sh", "PodGroup"), ("topology.volcano.sh", "HyperNode"), ("flow.volcano.sh", "JobFlow"),
    ("flow.volcano.sh", "JobTemplate"), ("trainer.kubeflow.org", "TrainJob"), ("jobset.x-k8s.io", "JobSet"),
    ("kubeflow.org", "PyTorchJob"), ("kubeflow.org", "MPIJob"), ("kubeflow.org", "TFJob"),
    ("kubeflow.org", "XGBoostJob"), ("kubeflow.org", "PaddleJob"), ("kubeflow.org", "JAXJob"),
    ("monitoring.coreos.com", "PrometheusRule"), ("monitoring.coreos.com", "ServiceMonitor"),
    ("monitoring.coreos.com", "PodMonitor"),
    ("", "Pod"), ("", "Service"), ("", "PersistentVolumeClaim"), ("", "Namespace"), ("", "Node"),
    ("apps", "Deployment"), ("apps", "StatefulSet"), ("apps", "DaemonSet"), ("apps", "ReplicaSet"),
    ("batch", "Job"), ("batch", "CronJob"), ("autoscaling", "HorizontalPodAutoscaler"),
    ("policy", "PodDisruptionBudget"),
})

DEFAULT_QUEUE = "default"            # mutate_job.go DefaultQueue
DEFAULT_SCHEDULER = "volcano"        # the chart's scheduler name (GenerateSchedulerName of the default list)
DEFAULT_MAX_RETRY = 3                # DefaultMaxRetry (job) and defaultMaxRetry (task)
DEFAULT_TASK_PREFIX = "default"      # v1alpha1.DefaultTaskSpec: an unnamed task i becomes default<i>
# Job plugins that need the svc plugin, and the one that also needs ssh (patchDefaultPlugins).
PLUGINS_NEEDING_SVC = ("tensorflow", "mpi", "pytorch", "ray")
HIERARCHY, HIERARCHY_WEIGHTS = "volcano.sh/hierarchy", "volcano.sh/hierarchy-weights"


def as_created(obj: dict) -> dict:
    """``obj`` as the API server hands it to admission on CREATE: ``.status`` dropped for a kind with
    the status subresource (so a Queue created with ``status.state: Closing`` is judged without it)."""
    if "status" in obj and (api_group(obj), obj.get("kind")) in STATUS_SUBRESOURCE:
        return {k: v for k, v in obj.items() if k != "status"}
    return obj


def mutate_volcano_job(obj: dict) -> dict:
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


def mutate_volcano_queue(obj: dict) -> dict:
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


def mutate_volcano_podgroup(obj: dict, namespaces: dict[str, dict] | None = None) -> dict:
    """The Volcano PodGroup webhook (mutate_podgroup.go, off in the chart's defaults): a PodGroup in
    queue ``default`` (the CRD's default when absent) whose namespace carries the
    ``scheduling.volcano.sh/queue-name`` annotation moves to that queue."""
    out = copy.deepcopy(obj)
    spec = out.get("spec")
    if not isinstance(spec, dict) or spec.get("queue", DEFAULT_QUEUE) != DEFAULT_QUEUE:
        return out
    namespace = (namespaces or {}).get(as_dict(out.get("metadata")).get("namespace"))
    queue = as_dict(as_dict(as_dict(namespace).get("metadata")).get("annotations")).get(
        "scheduling.volcano.sh/queue-name")
    if isinstance(queue, str) and queue:
        spec["queue"] = queue
    return out


# (API group, kind) -> (the chart's enabled_admissions path, the mutation)
MUTATIONS: dict[tuple[str, str], tuple[str, Callable[[dict], dict]]] = {
    ("batch.volcano.sh", "Job"): ("/jobs/mutate", mutate_volcano_job),
    ("scheduling.volcano.sh", "Queue"): ("/queues/mutate", mutate_volcano_queue),
}


def mutate(obj: dict, enabled: frozenset[str] | None = None) -> dict:
    """``obj`` as created and defaulted by the mutating webhooks the chart enables (``enabled``:
    its ``enabled_admissions`` paths; None: the chart's defaults), ready for validation."""
    obj = as_created(obj)
    entry = MUTATIONS.get((api_group(obj), obj.get("kind")))
    if entry is None:
        return obj
    path, fn = entry
    if enabled is not None and path not in enabled:
        return obj
    return fn(obj)
