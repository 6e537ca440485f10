"""The PodGroup a workload's controller creates for it, modelled once: ``simulate --submit`` places
it (``modules/simulate/submit.py``) and the rule ``controller-podgroups-admitted`` sends it to
Volcano's PodGroup webhook, so the two cannot disagree on what the controller writes.

Who creates it (``podgroup_creator``):

* a Volcano Job (``batch.volcano.sh``): Volcano's job controller (minMember: the job's minAvailable,
  minTaskMember: each task's minAvailable as the webhook defaults it);
* a TrainJob whose (Cluster)TrainingRuntime sets ``podGroupPolicy.volcano``: Trainer's Volcano plugin
  (queue from the JobSet template's ``scheduling.volcano.sh/queue-name`` annotation, network topology
  from the runtime);
* a PyTorchJob (``kubeflow.org``): the Training Operator run with ``--gang-scheduler-name=volcano``
  (as ``modules/trainer`` renders it; ``runPolicy.schedulingPolicy``: minAvailable, queue,
  priorityClass);
* a Deployment, StatefulSet or ReplicaSet whose pod template names Volcano's scheduler and no PodGroup
  of its own (``scheduling.k8s.io/group-name``): Volcano's PodGroup controller (volcano v1.15.1
  ``pkg/controllers/podgroup/pg_controller_handler.go``: pods of another schedulerName, or already
  grouped, get none; queue from the pod's ``scheduling.volcano.sh/queue-name`` annotation).

The fields are those ``modules.semantics.workloads.workload_of`` reads; the network topology is the
one ``modules.semantics.volcano`` reads for the rules.
"""
from __future__ import annotations

from decimal import Decimal
from typing import Any, Iterable

from .session import GROUP_ANNOTATION
from .shapes import annotations, as_dict, as_int, is_kind
from .volcano import BATCH, effective_constraints, enforced_spec, job_constraint, uses_volcano_gang
from .workloads import KUBEFLOW_V1, Workload, find_runtime

REPLICAS_KINDS = ("Deployment", "StatefulSet", "ReplicaSet")


def quantity_text(value: Decimal) -> str:
    """A quantity as a pod's resource list writes it (``Decimal('2.50')`` -> ``2.5``)."""
    return format(value.normalize(), "f")


def network_topology(obj: dict, context: Iterable[dict]) -> dict | None:
    """The ``spec.networkTopology`` the controller writes for ``obj``: its own, its runtime's (a
    TrainJob's, among ``context``) or its pod template's ``volcano.sh/network-topology-*``
    annotations, as stored (``enforced_spec``); None: none."""
    spec = enforced_spec(job_constraint(effective_constraints(obj, context)))
    if spec is None:
        return None
    mode, tier, tier_name = spec
    out: dict[str, Any] = {"mode": mode}
    if tier is not None:
        out["highestTierAllowed"] = tier
    if tier_name is not None:
        out["highestTierName"] = tier_name
    return out


def controller_podgroup(workload: Workload, obj: dict, context: Iterable[dict], queue: str | None = None) -> dict:
    """The PodGroup ``obj``'s controller creates for it (``workload``: ``workload_of(obj, ...)``),
    Pending; ``queue`` (``simulate --queue``) overrides the one the workload names, else ``default``."""
    context = list(context)
    group: dict[str, Any] = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
                             "metadata": {"name": workload.name, "namespace": workload.namespace or "default"},
                             "spec": {"minMember": workload.min_member, "queue": queue or workload.queue or "default"},
                             "status": {"phase": "Pending"}}
    if workload.priority_class:
        group["spec"]["priorityClassName"] = workload.priority_class
    minres = workload.min_resources()
    if minres:
        group["spec"]["minResources"] = {k: quantity_text(v) for k, v in minres.items()}
    topology = network_topology(obj, context)
    if topology is not None:
        group["spec"]["networkTopology"] = topology
    if workload.kind == "Job" and workload.task_order:   # the job controller's minTaskMember (task minAvailable)
        group["spec"]["minTaskMember"] = {pod_set.name: own for pod_set, (own, _) in zip(workload.sets,
                                                                                         workload.task_order)}
    return group


def podgroup_creator(obj: dict, context: Iterable[dict], scheduler_name: str = "volcano") -> str | None:
    """Who creates a PodGroup Volcano schedules for ``obj`` (see the module's list), in words; None
    when nothing does (another kind, a TrainJob whose runtime is not among ``context`` or sets no
    ``podGroupPolicy.volcano``, replicas whose pods another scheduler places or that name their own
    PodGroup, or no replicas at all). ``scheduler_name``: the one Volcano's controllers serve."""
    kind = obj.get("kind")
    if is_kind(obj, "Job", BATCH):
        return "Volcano's job controller"
    if kind == "TrainJob":
        runtime = find_runtime(obj, context)
        return "Trainer's Volcano plugin" if runtime is not None and uses_volcano_gang(runtime) else None
    if is_kind(obj, "PyTorchJob", KUBEFLOW_V1):
        return "the Training Operator"
    if kind in REPLICAS_KINDS and is_kind(obj, str(kind), "apps"):
        spec = as_dict(obj.get("spec"))
        template = as_dict(spec.get("template"))
        replicas = 1 if spec.get("replicas") is None else as_int(spec.get("replicas"))   # the API server's default
        if (as_dict(template.get("spec")).get("schedulerName") != scheduler_name
                or annotations(template).get(GROUP_ANNOTATION) or not replicas):
            return None
        return "Volcano's PodGroup controller"
    return None
