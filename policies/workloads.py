"""Training workloads as the schedulers see them: a TrainJob resolved against its runtime, and the
gang (how many pods of what size must be placed together) of every kind that can carry a Volcano
topology constraint. Facts: reference/kubeflow.md §3, reference/volcano.md §7.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass
from decimal import Decimal
from typing import Iterable

from .framework import as_dict, as_int, as_list, annotations, is_kind, meta
from .k8s import pod_requests, quantity
from .volcano import BATCH, MIN_MEMBER_ANNOTATION, RUNTIME_KINDS, SCHEDULING, TRAINER

ANCESTOR_STEP = "trainer.kubeflow.org/trainjob-ancestor-step"
NODE = "node"


# --- Trainer v2 -------------------------------------------------------------------------------

def find_runtime(trainjob: dict, objects: Iterable[dict]) -> dict | None:
    """The (Cluster)TrainingRuntime a TrainJob's runtimeRef names, among ``objects``."""
    ref = as_dict(as_dict(trainjob.get("spec")).get("runtimeRef"))
    name = ref.get("name")
    kind = ref.get("kind") or "ClusterTrainingRuntime"
    if not isinstance(name, str) or kind not in RUNTIME_KINDS:
        return None
    namespace = meta(trainjob).get("namespace")
    for obj in objects:
        if obj.get("kind") != kind or meta(obj).get("name") != name:
            continue
        if kind == "TrainingRuntime" and namespace and meta(obj).get("namespace") not in (None, namespace):
            continue
        return obj
    return None


def runtime_ref_name(trainjob: dict) -> str:
    ref = as_dict(as_dict(trainjob.get("spec")).get("runtimeRef"))
    return f"{ref.get('kind') or 'ClusterTrainingRuntime'} {ref.get('name')!r}"


def replicated_jobs(runtime: dict) -> list[dict]:
    return [as_dict(rj) for rj in as_list(as_dict(as_dict(as_dict(runtime.get("spec")).get("template"))
                                                  .get("spec")).get("replicatedJobs"))]


def trainer_job_index(runtime: dict) -> int | None:
    """The replicatedJob the TrainJob's trainer settings apply to: the one labelled
    ``trainjob-ancestor-step: trainer``, else the one named ``node``."""
    jobs = replicated_jobs(runtime)
    for i, rj in enumerate(jobs):
        if as_dict(as_dict(as_dict(rj.get("template")).get("metadata")).get("labels")).get(ANCESTOR_STEP) == "trainer":
            return i
    for i, rj in enumerate(jobs):
        if rj.get("name") == NODE:
            return i
    return None


def job_pod_spec(rj: dict) -> dict:
    return as_dict(as_dict(as_dict(as_dict(rj.get("template")).get("spec")).get("template")).get("spec"))


def node_container_index(pod_spec: dict) -> int | None:
    """Container ``node`` (where Trainer injects the torch env and resourcesPerNode), else the first."""
    items = as_list(pod_spec.get("containers"))
    for i, c in enumerate(items):
        if as_dict(c).get("name") == NODE:
            return i
    return 0 if items else None


def merged_resources(runtime_container: dict, per_node: dict) -> dict:
    """Trainer v2.3 merges ``resourcesPerNode`` into the runtime container's resources key by key
    (kubeflow/trainer#3602); the TrainJob's values win."""
    base = as_dict(runtime_container.get("resources"))
    out = {}
    for part in ("requests", "limits"):
        merged = {**as_dict(base.get(part)), **as_dict(per_node.get(part))}
        if merged:
            out[part] = merged
    return out


def num_nodes(trainjob: dict | None, runtime: dict) -> int:
    if trainjob is not None:
        n = as_int(as_dict(as_dict(trainjob.get("spec")).get("trainer")).get("numNodes"))
        if n is not None:
            return n
    n = as_int(as_dict(as_dict(runtime.get("spec")).get("mlPolicy")).get("numNodes"))
    return n if n is not None else 1


def effective_node_pod(trainjob: dict | None, runtime: dict) -> tuple[dict, str] | None:
    """The trainer pod spec after the TrainJob is applied, and the path of its node container's
    resources in the runtime (for messages); None when the runtime has no trainer job."""
    index = trainer_job_index(runtime)
    if index is None:
        return None
    pod_spec = copy.deepcopy(job_pod_spec(replicated_jobs(runtime)[index]))
    c = node_container_index(pod_spec)
    path = (f"spec.template.spec.replicatedJobs[{index}].template.spec.template.spec.containers[{c}].resources"
            if c is not None else f"spec.template.spec.replicatedJobs[{index}].template.spec.template.spec")
    if trainjob is not None and c is not None:
        per_node = as_dict(as_dict(as_dict(trainjob.get("spec")).get("trainer")).get("resourcesPerNode"))
        container = as_dict(pod_spec["containers"][c])
        resources = merged_resources(container, per_node)
        pod_spec["containers"][c] = {**container, "resources": resources}
    return pod_spec, path


# --- gangs ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class PodSet:
    count: int
    requests: dict[str, Decimal]
    what: str            # e.g. "task workers", "node"


@dataclass(frozen=True)
class Gang:
    """Pods that must all be placed, together, for the workload to start."""

    sets: tuple[PodSet, ...]
    how: str             # how the size was worked out, for messages

    @property
    def pods(self) -> int:
        return sum(s.count for s in self.sets)

    @property
    def homogeneous(self) -> bool:
        return len({tuple(sorted(s.requests.items())) for s in self.sets if s.count}) <= 1

    def total(self) -> dict[str, Decimal]:
        out: dict[str, Decimal] = {}
        for s in self.sets:
            for name, amount in s.requests.items():
                out[name] = out.get(name, Decimal(0)) + amount * s.count
        return out


class Unknown(Exception):
    """The gang cannot be worked out (e.g. the TrainJob's runtime is not among the objects)."""


def _volcano_job_gang(obj: dict) -> Gang:
    spec = as_dict(obj.get("spec"))
    tasks = [as_dict(t) for t in as_list(spec.get("tasks"))]
    replicas = [max(as_int(t.get("replicas")) or 0, 0) for t in tasks]
    min_available = as_int(spec.get("minAvailable"))
    wanted = sum(replicas) if min_available is None else min_available
    how = (f"minAvailable {min_available}" if min_available is not None
           else f"the sum of task replicas ({sum(replicas)})")
    sets, left = [], wanted
    for task, count in zip(tasks, replicas):   # Volcano fills the gang task by task
        take = min(count, left)
        if take > 0:
            pod = pod_requests(as_dict(as_dict(task.get("template")).get("spec")))
            sets.append(PodSet(take, pod, f"task {task.get('name', '?')}"))
            left -= take
    return Gang(tuple(sets), how)


def _trainer_gang(trainjob: dict | None, runtime: dict) -> Gang:
    """Trainer's Volcano plugin: minMember = all pods of all replicatedJobs (kubeflow.md §3.5)."""
    nodes = num_nodes(trainjob, runtime)
    effective = effective_node_pod(trainjob, runtime)
    if effective is None:
        raise Unknown(f"{runtime.get('kind')} {meta(runtime).get('name')!r} has no trainer replicatedJob "
                      "(label trainer.kubeflow.org/trainjob-ancestor-step: trainer or name node)")
    node_spec, _ = effective
    index = trainer_job_index(runtime)
    sets = [PodSet(nodes, pod_requests(node_spec), "node")]
    for i, rj in enumerate(replicated_jobs(runtime)):
        if i == index:
            continue
        count = (as_int(rj.get("replicas")) or 1) * (as_int(as_dict(as_dict(rj.get("template")).get("spec"))
                                                            .get("parallelism")) or 1)
        sets.append(PodSet(count, pod_requests(job_pod_spec(rj)), f"replicatedJob {rj.get('name', i)}"))
    source = "trainer.numNodes" if trainjob is not None and \
        as_int(as_dict(as_dict(trainjob.get("spec")).get("trainer")).get("numNodes")) is not None \
        else "mlPolicy.numNodes"
    extra = sum(s.count for s in sets[1:])
    how = f"{source} {nodes}" + (f" plus {extra} pod(s) of other replicatedJobs" if extra else "")
    return Gang(tuple(sets), how)


def gang_of(obj: dict, objects: list[dict]) -> Gang | None:
    """The gang of a workload kind that Volcano places with topology, or None for other kinds.
    Raises Unknown when it cannot be worked out."""
    spec = as_dict(obj.get("spec"))
    kind = obj.get("kind")
    if is_kind(obj, "Job", BATCH):
        return _volcano_job_gang(obj)
    if kind == "TrainJob" and obj.get("apiVersion", "").startswith(f"{TRAINER}/"):
        runtime = find_runtime(obj, objects)
        if runtime is None:
            raise Unknown(f"its runtime {runtime_ref_name(obj)} is not in the stack or the given manifests")
        return _trainer_gang(obj, runtime)
    if kind in RUNTIME_KINDS:
        return _trainer_gang(None, obj)
    if is_kind(obj, "PodGroup", SCHEDULING):
        members = as_int(spec.get("minMember"))
        members = 1 if members is None else members
        total = {str(k): quantity(v) for k, v in as_dict(spec.get("minResources")).items()}
        total = {k: v for k, v in total.items() if v is not None}
        if not total:
            raise Unknown("it sets no minResources, so the size of its pods is unknown")
        per_pod = {k: v / members for k, v in total.items()} if members else total
        return Gang((PodSet(members, per_pod, "member"),), f"minMember {members} sharing minResources")
    if kind in ("Deployment", "StatefulSet", "ReplicaSet") and api_group_is(obj, "apps"):
        replicas = as_int(spec.get("replicas"))
        replicas = 1 if replicas is None else replicas
        min_member = as_int(_int_text(annotations(obj).get(MIN_MEMBER_ANNOTATION)))
        pods = max(replicas, min_member or 0)
        how = f"replicas {replicas}" + (f", {MIN_MEMBER_ANNOTATION} {min_member}" if min_member else "")
        template = as_dict(spec.get("template"))
        return Gang((PodSet(pods, pod_requests(as_dict(template.get("spec"))), "replica"),), how)
    if kind == "Pod" and api_group_is(obj, ""):
        return Gang((PodSet(1, pod_requests(spec), "pod"),), "a single pod")
    return None


def api_group_is(obj: dict, group: str) -> bool:
    return str(obj.get("apiVersion", "")).rpartition("/")[0] == group


def _int_text(value: object) -> object:
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            return None
    return value
