"""What ``simulate --submit FILE`` submits: every training kind, read by the same semantic reader the
rules use (``modules.semantics.workloads.workload_of``), turned into the PodGroup and pending Pods
the kind's controller creates, keeping what Volcano's predicates read of each pod template
(nodeSelector, affinity, tolerations) and the job's network topology
(``modules.semantics.volcano``, as the rules read it).

* Volcano Jobs (``batch.volcano.sh``): the job controller's PodGroup (minMember: minAvailable;
  minTaskMember: each task's minAvailable as the webhook defaults it, ``getMinTaskMember``).
* TrainJobs (``trainer.kubeflow.org``): through their (Cluster)TrainingRuntime, from the submission
  file, the snapshot or the stack (numNodes, resourcesPerNode, podGroupPolicy, network topology);
  a runtime that is in none of them is an input error.
* Training Operator v1 jobs (PyTorchJob, ``kubeflow.org``): the PodGroup the operator creates
  (``runPolicy.schedulingPolicy``: minAvailable, queue, priorityClass).
* Deployments, StatefulSets, ReplicaSets: the PodGroup Volcano's PodGroup controller creates
  (``scheduling.volcano.sh/group-min-member``; pod-template ``volcano.sh/network-topology-*``).
* PodGroups with their Pods, as written.
"""
from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, Iterable

from modules.core.errors import InputError
from modules.semantics.controllers import controller_podgroup, quantity_text
from modules.semantics.podspec import Reader
from modules.semantics.session import GROUP_ANNOTATION
from modules.semantics.shapes import as_dict, is_kind, meta, pod_templates
from modules.semantics.workloads import (RUNTIME_KINDS, Unknown, Workload, find_runtime, priority_values,
                                         runtime_ref_name, workload_of)

from . import admitted
from .eviction import PENDING, TASK_SPEC
from .objects import read_objects
from .workloads import MAX_PODS, pod_names

KINDS = ("a Volcano Job, a TrainJob, a PyTorchJob, a Deployment, StatefulSet or ReplicaSet (Volcano's PodGroup "
         "controller groups its pods), or a PodGroup with its Pods")
PREDICATE_FIELDS = ("nodeSelector", "affinity", "tolerations", "priorityClassName", "schedulerName",
                    "preemptionPolicy")
NOT_SUBMITTED = ("JobSet", "CronJob", "Service", "ConfigMap")


def _template_specs(obj: dict) -> dict[str, dict]:
    """Pod spec path -> pod spec, for every pod template ``obj`` carries."""
    return {f"{path}.spec" if path else "spec": as_dict(t.get("spec")) for path, t in pod_templates(obj)}


def workload_objects(workload: Workload, obj: dict, context: list[dict], queue: str | None) -> list[dict]:
    """The PodGroup and pending Pods a workload's controller creates for it."""
    name = workload.name
    namespace = workload.namespace or "default"
    group = controller_podgroup(workload, obj, context, queue)
    specs = _template_specs(obj)
    runtime = find_runtime(obj, context) if obj.get("kind") == "TrainJob" else None
    if runtime is not None:
        specs.update({k: v for k, v in _template_specs(runtime).items() if k not in specs})
    classes = priority_values(context)
    pods = []
    for pod_set in workload.sets:
        template = specs.get(pod_set.path, {})
        spec: dict[str, Any] = {k: copy.deepcopy(template[k]) for k in PREDICATE_FIELDS if k in template}
        if workload.priority_class:
            spec.setdefault("priorityClassName", workload.priority_class)
        named = spec.get("priorityClassName")
        if isinstance(named, str) and isinstance(classes.get(named), int):
            spec["priority"] = classes[named]     # what admission resolves
        spec["containers"] = [{"name": "main", "resources": {
            "requests": {k: quantity_text(v) for k, v in pod_set.requests.items()}}}]
        for pod_name in pod_names(workload, pod_set):
            notes = {GROUP_ANNOTATION: name}
            if workload.kind == "Job":
                notes[TASK_SPEC] = pod_set.name
            pods.append({"apiVersion": "v1", "kind": "Pod",
                         "metadata": {"name": pod_name, "namespace": namespace, "annotations": notes},
                         "spec": copy.deepcopy(spec), "status": {"phase": PENDING}})
    return [group, *pods]


def _read_workload(obj: dict, where: str, shown: str, context: list[dict], context_name: str) -> Workload:
    kind = str(obj.get("kind"))
    if kind == "TrainJob" and find_runtime(obj, context) is None:
        raise InputError(shown, f"{where}: spec.runtimeRef", f"{runtime_ref_name(obj)} is not in {context_name} "
                         "or the submission file "
                         "(add kubectl get clustertrainingruntimes,trainingruntimes -A -o yaml to the snapshot)")
    if kind in NOT_SUBMITTED or kind in RUNTIME_KINDS:
        raise InputError(shown, f"{where}: kind", f"expected {KINDS}, got {kind!r}")
    try:
        workload = workload_of(obj, context, Reader(shown, where))
    except Unknown as exc:
        raise InputError(shown, where, str(exc)) from None
    if workload is None:
        raise InputError(shown, f"{where}: kind", f"expected {KINDS}, got {kind!r}")
    if not workload.pods:
        raise InputError(shown, f"{where}: spec", "the workload has no pods to submit")
    return workload


def _note(notes: list[str] | None, line: str | None) -> None:
    if line is not None and notes is not None:
        notes.append(line)


def submitted(path: Path, shown: str, queue: str | None, context: Iterable[dict] = (),
              context_name: str = "the cluster", stack: bool = False, notes: list[str] | None = None
              ) -> tuple[list[tuple[str, dict]], list[str]]:
    """The submitted objects (PodGroups and Pods) and the PodGroups they make, ``namespace/name``.
    ``context``: the cluster's objects (a TrainJob's runtime, PriorityClasses, Queues), a stack's
    rendered ones when ``stack``, else a snapshot's. Each object goes through the API server's
    admission first (``admitted.py``): what the webhooks default is read, what they refuse is a line
    of ``notes``."""
    docs = read_objects(path, shown)
    cluster = [o for o in context if isinstance(o, dict)]
    context = [o for _, o in docs] + cluster
    admission = (admitted.of_stack if stack else admitted.of_snapshot)(cluster, [o for _, o in docs])
    out: list[tuple[str, dict]] = []
    groups: list[str] = []
    pods = 0
    for where, obj in docs:
        if obj.get("kind") in RUNTIME_KINDS:
            continue          # a runtime given alongside its TrainJob
        obj, refused = admission.admit(admitted.with_queue(obj, queue))
        if is_kind(obj, "PodGroup", "scheduling.volcano.sh"):
            obj = copy.deepcopy(obj)
            obj["status"] = {"phase": "Pending"}
            out.append((where, obj))
            groups.append(f"{meta(obj).get('namespace') or 'default'}/{meta(obj).get('name')}")
        elif is_kind(obj, "Pod", ""):
            out.append((where, obj))
        else:
            workload = _read_workload(obj, where, shown, context, context_name)
            pods += sum(s.count for s in workload.sets)   # the workloads files' budget, before a pod is built
            if pods > MAX_PODS:
                raise InputError(shown, f"{where}: spec", f"the submitted jobs would hold more than {MAX_PODS:,} pods")
            made = workload_objects(workload, obj, context, queue)
            if refused == []:     # the job is created; its controller then creates the PodGroup, admitted too
                made[0], refused_group = admission.admit(made[0])
                _note(notes, admitted.refusal(refused_group, Reader(
                    shown, f"{where}: the PodGroup {workload.name} its controller creates"), made[0]))
            out += [(where, o) for o in made]
            groups.append(f"{workload.namespace or 'default'}/{workload.name}")
        _note(notes, admitted.refusal(refused, Reader(shown, where), obj))
    if not groups:
        raise InputError(shown, "", f"nothing to submit: expected {KINDS}")
    return out, groups
