"""Workload objects as the schedulers see them: the pods each object becomes (with both request
views, see ``podspec``), its gang, its network-topology constraint, queue and priority.

One reader for every caller: the policies read leniently (``Reader(strict=False)``: problems are
recorded, the workload is ``Unknown`` only when its pods cannot be worked out at all), the simulator
strictly (``InputError`` on the first mistake). Kinds: Volcano Job and CronJob, PodGroup, TrainJob +
(Cluster)TrainingRuntime (Trainer v2.3), PyTorchJob (training-operator v1), JobSet,
Deployment/StatefulSet/ReplicaSet, batch Job/CronJob and bare Pods.

Trainer v2.3 (kubeflow/trainer v2.3.0, ``pkg/runtime/core/trainingruntime.go`` and
``pkg/runtime/framework/plugins/jobset/builder.go``), decided once here:
- the trainer replicatedJob is the one whose template carries the label
  ``trainer.kubeflow.org/trainjob-ancestor-step: trainer``; its pod count is ``numNodes`` (the
  TrainJob's, else the runtime's ``mlPolicy``). The job *name* plays no part: a runtime with a
  labelled launcher and a job named ``node`` runs numNodes launchers and ``node`` at its own size.
- ``trainer.resourcesPerNode`` is merged, key by key, into the trainer job's container named
  ``node`` only; a trainer job without such a container gets nothing merged.
- the gang (the PodGroup's minMember, Trainer's Volcano plugin) sums each pod set's count: numNodes
  for the trainer job, ``parallelism`` for every other replicatedJob (its ``replicas`` are not counted).
- MPI (``mlPolicy.mpi``): the TrainJob's numNodes sizes the job *named* ``node``, one less with
  ``runLauncherAsNode`` (the launcher is a node); the trainer-labelled job keeps the runtime's
  numNodes (``mpi_node_count``).
- minResources carries the names its producer writes (``minresources.py``).
"""
from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Iterable, Mapping

from modules.core.vocabulary.resource_names import scheduler_view

from .minresources import pod_requests_of, pod_usage, training_operator_pod, volcano_gang_counts
from .partitions import PartitionPolicy, refused_field, task_min_available
from .podspec import PodRequests, Reader, amounts, container_requests, merge_resources, pod_requests
from .shapes import annotations, as_dict, as_int, as_list, is_kind, meta
from .volcano import BATCH, MIN_MEMBER_ANNOTATION, RUNTIME_KINDS, SCHEDULING, TRAINER

ANCESTOR_STEP = "trainer.kubeflow.org/trainjob-ancestor-step"
NODE = "node"
KUBEFLOW_V1 = "kubeflow.org"
JOBSET = "jobset.x-k8s.io"
QUEUE_ANNOTATION = "scheduling.volcano.sh/queue-name"


class Unknown(Exception):
    """The gang cannot be worked out (e.g. the TrainJob's runtime is not among the objects)."""


@dataclass(frozen=True)
class Topology:
    """A ``networkTopology`` spec as Volcano reads it: mode and at most one of the two tier fields."""

    mode: str = "hard"                # hard | soft
    tier: int | None = None           # highestTierAllowed
    tier_name: str | None = None      # highestTierName


@dataclass(frozen=True)
class PodSet:
    """Pods of one shape in a workload: how many, what each requests and where they are declared."""
    count: int
    requests: dict[str, Decimal]       # node fit (limits stand in for missing requests)
    what: str                          # e.g. "task workers", "node"
    quota: dict[str, Decimal] | None = None   # one pod's share of minResources, with the names its
    #                                           producer writes (minresources.py); None: requests
    name: str = ""                     # task / replicatedJob / role name
    path: str = ""                     # the pod spec's path in its object
    group: int = 1                     # pods per replica (a JobSet's parallelism), for pod names

    @property
    def admission(self) -> dict[str, Decimal]:
        return self.requests if self.quota is None else self.quota


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
        return _sum((s.requests, s.count) for s in self.sets)

    def min_resources(self) -> dict[str, Decimal]:
        """The PodGroup's minResources as its controller writes it, every resource name included
        (``requests.cpu``, ``count/pods``, ... for Volcano's controllers; see minresources.py)."""
        return _sum((s.admission, s.count) for s in self.sets)

    def scheduled_min_resources(self) -> dict[str, Decimal]:
        """The part of minResources Volcano's scheduler compares (enqueue, HyperNode eligibility)."""
        return scheduler_view(self.min_resources())


def _sum(parts: Iterable[tuple[dict[str, Decimal], int]]) -> dict[str, Decimal]:
    out: dict[str, Decimal] = {}
    for requests, count in parts:
        for name, amount in requests.items():
            out[name] = out.get(name, Decimal(0)) + amount * count
    return out


@dataclass(frozen=True)
class PartitionSpec:
    """A Volcano task's partitionPolicy: ``count`` SubJobs of ``size`` pods of set ``index``."""

    index: int
    count: int
    size: int
    topology: Topology | None
    path: str = ""                     # the task's partitionPolicy, for messages


@dataclass(frozen=True)
class Workload:
    """A job as Volcano schedules it: its pods, its gang and its network topology."""
    kind: str
    name: str
    namespace: str | None
    sets: tuple[PodSet, ...]           # every pod, in spec order (gang() picks the minResources pods)
    min_member: int                    # the gang: this many pods or none
    how: str
    topology: Topology | None = None   # the job-level networkTopology; None: none
    partitions: tuple[PartitionSpec, ...] = ()
    queue: str | None = None
    priority_class: str | None = None
    explicit_min_resources: dict[str, Decimal] | None = field(default=None)   # a PodGroup's own; {}: no gate
    sub_groups: tuple[SubGroupSpec, ...] = ()     # a PodGroup's subGroupPolicy
    sizes_unknown: str | None = None   # why the pods' requests are unknown (a PodGroup without minResources)
    # Per set, (its own minimum, PriorityClass value), which pick the gang's pods
    # (minresources.volcano_gang_counts): a Volcano Job's tasks' defaulted minAvailable; a TrainJob's
    # pod-set counts (priority 0: exactly those pods). Empty: the first min_member pods, set by set.
    task_order: tuple[tuple[int, int], ...] = ()

    @property
    def pods(self) -> int:
        return sum(s.count for s in self.sets)

    def gang(self) -> Gang:
        """The pods whose requests the PodGroup's minResources sums: a Volcano Job's as its job
        controller picks them (``volcano_gang_counts``), else the first ``min_member`` pods, set by set."""
        if not self.task_order:
            return self.first_pods()
        return self._taking(volcano_gang_counts([(s.count, m, p) for s, (m, p) in zip(self.sets, self.task_order)],
                                                self.min_member))

    def first_pods(self) -> Gang:
        """The first ``min_member`` pods in spec order, set by set."""
        counts, left = [], self.min_member
        for s in self.sets:
            counts.append(min(s.count, left))
            left -= counts[-1]
        return self._taking(counts)

    def _taking(self, counts: list[int]) -> Gang:
        return Gang(tuple(dataclasses.replace(s, count=n) for s, n in zip(self.sets, counts) if n > 0), self.how)

    def min_resources(self) -> dict[str, Decimal]:
        if self.explicit_min_resources is not None:
            return dict(self.explicit_min_resources)
        return self.gang().min_resources()


# --- small readers ----------------------------------------------------------------------------

def topology_of(reader: Reader, obj: object, path: str, tier_default: int | None = None) -> Topology | None:
    """A networkTopology mapping; ``tier_default`` for the runtime CRD's default highestTierAllowed.
    Absent (None): no constraint."""
    if obj is None:
        return None
    if not isinstance(obj, dict):
        reader.wrong(path, "a mapping with mode and highestTierAllowed or highestTierName", obj)
        return None
    mode = reader.get(obj, "mode", path, str, "hard or soft", "hard")
    if mode not in ("hard", "soft"):
        reader.wrong(f"{path}.mode", "hard or soft", mode)
        mode = "hard"                  # Volcano treats anything but soft as hard
    tier = reader.integer(obj, "highestTierAllowed", path, 0, "an integer >= 0", None)
    name = reader.get(obj, "highestTierName", path, str, "a tier name", None)
    if tier is not None and name is not None:
        reader.problem(path, "highestTierAllowed and highestTierName are mutually exclusive (Volcano's "
                       "webhook rejects both)")
    if tier is None and name is None:
        tier = tier_default
    return Topology(mode=mode, tier=tier, tier_name=name)


def _requests_set(reader: Reader, spec: object, path: str, count: int, what: str, name: str,
                  overrides: dict | None = None, group: int = 1, usage: str = "requests") -> PodSet:
    """``usage``: who writes the PodGroup's minResources and so which names one pod adds to it:
    ``requests`` (Trainer: the template's requests), ``template`` (Volcano's job controller: quota
    usage of the undefaulted template), ``pod`` (Volcano's PodGroup controller: quota usage of the
    created, defaulted Pod). See minresources.py."""
    got: PodRequests = pod_requests(reader, spec, path, overrides)
    share = {"requests": got.quota, "template": pod_usage(got.quota, got.limits),
             "pod": pod_usage(got.fit, got.limits)}[usage]
    return PodSet(count, got.fit, what, share, name, path, group)


def _queue(obj: dict, *candidates: object) -> str | None:
    for value in (*candidates, annotations(obj).get(QUEUE_ANNOTATION)):
        if isinstance(value, str) and value:
            return value
    return None


def _count(reader: Reader, obj: dict, key: str, path: str, default: int) -> int:
    value = reader.integer(obj, key, path, 0, "an integer >= 0", default)
    return default if value is None else value


# --- Volcano ----------------------------------------------------------------------------------

def volcano_job(reader: Reader, obj: dict, spec_path: str = "spec",
                priorities: Mapping[str, int] | None = None) -> Workload:
    """A Volcano Job (or a CronJob's jobTemplate at ``spec_path``). ``priorities``: the PriorityClass
    values known (name -> value); a task template's class that is not among them counts 0, as upstream's
    failed lister lookup does (``calcPGMinResources`` logs and keeps priority 0)."""
    spec = reader.get(obj, "spec", "", dict, "a mapping with tasks") if spec_path == "spec" else \
        as_dict(as_dict(as_dict(obj.get("spec")).get("jobTemplate")).get("spec"))
    spec = spec or {}
    tasks = reader.get(spec, "tasks", spec_path, list, "a non-empty list of tasks") or []
    if not tasks:
        reader.wrong(f"{spec_path}.tasks", "a non-empty list of tasks", tasks)
    sets: list[PodSet] = []
    order: list[tuple[int, int]] = []
    partitions: list[PartitionSpec] = []
    names: set[str] = set()
    for t, task in enumerate(tasks):
        path = f"{spec_path}.tasks[{t}]"
        if not isinstance(task, dict):
            reader.wrong(path, "a task with name, replicas and template", task)
            continue
        task_name = reader.get(task, "name", path, str, "a task name", f"default{t}")
        if task_name in names:
            reader.problem(f"{path}.name", f"task name {task_name!r} is used twice")
        names.add(task_name)
        replicas = reader.integer(task, "replicas", path, 0, "an integer >= 0 (the task's pod count)")
        replicas = max(replicas or 0, 0)
        template = reader.get(task, "template", path, dict, "a pod template") or {}
        sets.append(_requests_set(reader, template.get("spec"), f"{path}.template.spec", replicas,
                                  f"task {task_name}", task_name, usage="template"))
        order.append((task_min_available(task), _task_priority(template, priorities)))
        part = _partition(reader, task, path, len(sets) - 1, replicas)
        if part is not None:
            partitions.append(part)
    pods = sum(s.count for s in sets)
    if tasks and not pods:
        reader.problem(f"{spec_path}.tasks", "the job has no pods: every task has replicas 0")
    min_available = reader.integer(spec, "minAvailable", spec_path, 0, "an integer >= 0", None)
    if min_available is not None and min_available > pods:
        reader.problem(f"{spec_path}.minAvailable", f"{min_available} is more than the {pods} replicas of all "
                       "tasks; Volcano's webhook rejects the job")
    if not min_available:     # absent or 0: Volcano's mutating webhook sums the tasks' (defaulted) minAvailable
        default = sum(own for own, _ in order)
        how = f"the sum of the tasks' minAvailable ({default})" if default != pods else \
            f"the sum of task replicas ({pods})"
        min_available = None if default == pods else default
    else:
        how = f"minAvailable {min_available}"
    raw = spec.get("networkTopology")
    topology = topology_of(reader, raw, f"{spec_path}.networkTopology") if raw is not None else None
    name, namespace = _name(reader, obj)
    return Workload("Job", name, namespace, tuple(sets), pods if min_available is None else min_available, how,
                    topology, tuple(partitions), _queue(obj, spec.get("queue")), _str(spec.get("priorityClassName")),
                    task_order=tuple(order))


def _task_priority(template: dict, priorities: Mapping[str, int] | None) -> int:
    """The value of a task template's own priorityClassName (the job's is not read); none or unknown: 0."""
    name = as_dict(template.get("spec")).get("priorityClassName")
    value = (priorities or {}).get(name) if isinstance(name, str) and name else None
    return value if isinstance(value, int) else 0


def priority_values(objects: Iterable[dict]) -> dict[str, int]:
    """name -> value of every scheduling.k8s.io PriorityClass among ``objects``."""
    return {str(meta(o).get("name")): o["value"] for o in objects if isinstance(o, dict)
            and is_kind(o, "PriorityClass", "scheduling.k8s.io") and isinstance(o.get("value"), int)}


def _partition(reader: Reader, task: dict, path: str, index: int, replicas: int) -> PartitionSpec | None:
    policy = reader.get(task, "partitionPolicy", path, dict, "a partitionPolicy mapping", None)
    if policy is None:
        return None
    where = f"{path}.partitionPolicy"
    count = reader.integer(policy, "totalPartitions", where, 1, "an integer >= 1")
    size = reader.integer(policy, "partitionSize", where, 1, "an integer >= 1")
    least = reader.integer(policy, "minPartitions", where, 0, "an integer >= 0", 0) or 0
    if count is None or size is None:
        return None
    own = reader.integer(task, "minAvailable", path, 0, "an integer >= 0", None)
    failed = refused_field(PartitionPolicy("", path, replicas, own, count, size, least))
    if failed == "replicas":
        reader.problem(where, f"totalPartitions x partitionSize ({count} x {size}) must equal the task's "
                       f"replicas ({replicas}); Volcano's webhook rejects the job otherwise")
        return None
    if failed == "minAvailable":
        reader.problem(f"{path}.minAvailable", f"the task's minAvailable ({own}) must equal minPartitions x "
                       f"partitionSize ({least} x {size}); Volcano's webhook rejects the job otherwise")
        return None
    raw = policy.get("networkTopology")
    topology = topology_of(reader, raw, f"{where}.networkTopology") if raw is not None else None
    return PartitionSpec(index, count, size, topology, where)


def partition_gangs(workload: Workload) -> dict[str, Gang]:
    """Each partitionPolicy's gang (``partitionSize`` pods of its task, placed together), by the path
    of the policy's networkTopology."""
    out = {}
    for p in workload.partitions:
        s = workload.sets[p.index]
        out[f"{p.path}.networkTopology"] = Gang((PodSet(p.size, s.requests, s.what, s.quota, s.name, s.path),),
                                                f"partitionSize {p.size}")
    return out


def pod_group(reader: Reader, obj: dict) -> Workload:
    """A PodGroup: ``minMember`` pods (default 1). ``minResources`` is Volcano's enqueue and HyperNode
    gate; absent (or empty) there is none (``JobInfo.GetMinResources`` is empty, v1.15.1
    ``pkg/scheduler/api/job_info.go``): Volcano checks only minMember, and the size of the pods is
    not known from the PodGroup (``sizes_unknown``)."""
    spec = reader.get(obj, "spec", "", dict, "a PodGroup spec with minMember", {})
    members = reader.integer(spec, "minMember", "spec", 0, "an integer >= 0", 1)
    members = 1 if members is None else members
    total = amounts(reader, spec.get("minResources"), "spec.minResources")
    # A hand-written minResources may carry quota names (requests.cpu, count/pods): size the
    # members by the requests they stand for; the scheduler compares only scheduler_view's names.
    per_member = pod_requests_of(total)
    per_pod = {k: v / members for k, v in per_member.items()} if members else per_member
    topology = topology_of(reader, spec.get("networkTopology"), "spec.networkTopology")
    name, namespace = _name(reader, obj)
    how = f"minMember {members} sharing minResources" if total else f"minMember {members} (no minResources)"
    unknown = None if total else "it sets no minResources (Volcano then checks only minMember), so the size of " \
        "its pods is unknown"
    return Workload("PodGroup", name, namespace, (PodSet(members, per_pod, "member"),), members, how, topology,
                    queue=_queue(obj, spec.get("queue")), priority_class=_str(spec.get("priorityClassName")),
                    explicit_min_resources=total, sub_groups=_sub_groups(reader, spec), sizes_unknown=unknown)


@dataclass(frozen=True)
class SubGroupSpec:
    """One ``subGroupPolicy`` of a PodGroup: the pods ``label_selector`` picks, grouped by their values
    of ``match_label_keys``, form SubJobs of ``size`` pods; ``min_sub_groups`` of them must be ready."""

    name: str
    match_label_keys: tuple[str, ...]
    size: int
    min_sub_groups: int
    topology: Topology | None          # None: the SubJob inherits the job's networkTopology
    label_selector: dict | None = None


def _sub_groups(reader: Reader, spec: dict) -> tuple[SubGroupSpec, ...]:
    out = []
    for p, policy in enumerate(reader.get(spec, "subGroupPolicy", "spec", list, "a list of sub-group policies", [])):
        where = f"spec.subGroupPolicy[{p}]"
        name = reader.get(policy, "name", where, str, "a policy name")
        keys = reader.get(policy, "matchLabelKeys", where, list, "a list of label keys", [])
        size = reader.integer(policy, "subGroupSize", where, 1, "an integer >= 1", 1)
        least = reader.integer(policy, "minSubGroups", where, 0, "an integer >= 0", 0)
        raw = as_dict(policy).get("networkTopology")
        selector = as_dict(policy).get("labelSelector")
        out.append(SubGroupSpec(name if isinstance(name, str) else str(p), tuple(keys), 1 if size is None else size,
                                least or 0, topology_of(reader, raw, f"{where}.networkTopology"),
                                selector if isinstance(selector, dict) else None))
    return tuple(out)


# --- Trainer v2 -------------------------------------------------------------------------------

def find_runtime(trainjob: dict, objects: Iterable[dict]) -> dict | None:
    """The (Cluster)TrainingRuntime a TrainJob's runtimeRef names, among ``objects``."""
    ref = as_dict(as_dict(trainjob.get("spec")).get("runtimeRef"))
    name = ref.get("name")
    kind = ref.get("kind") or "ClusterTrainingRuntime"
    if not isinstance(name, str) or kind not in RUNTIME_KINDS:
        return None
    namespace = meta(trainjob).get("namespace") or "default"
    for obj in objects:
        if obj.get("kind") != kind or meta(obj).get("name") != name or not _is_trainer(obj):
            continue
        if kind == "TrainingRuntime" and (meta(obj).get("namespace") or "default") != namespace:
            continue
        return obj
    return None


def _is_trainer(obj: dict) -> bool:
    return str(obj.get("apiVersion", "")).startswith(f"{TRAINER}/")


def runtime_ref_name(trainjob: dict) -> str:
    ref = as_dict(as_dict(trainjob.get("spec")).get("runtimeRef"))
    return f"{ref.get('kind') or 'ClusterTrainingRuntime'} {ref.get('name')!r}"


def replicated_jobs(runtime: dict) -> list[dict]:
    return [as_dict(rj) for rj in as_list(as_dict(as_dict(as_dict(runtime.get("spec")).get("template"))
                                                  .get("spec")).get("replicatedJobs"))]


def trainer_job_index(runtime: dict) -> int | None:
    """The replicatedJob labelled ``trainjob-ancestor-step: trainer`` (Trainer v2.3 applies numNodes,
    resourcesPerNode and the trainer's image only there), or None."""
    for i, rj in enumerate(replicated_jobs(runtime)):
        if as_dict(as_dict(as_dict(rj.get("template")).get("metadata")).get("labels")).get(ANCESTOR_STEP) == "trainer":
            return i
    return None


def job_pod_spec(rj: dict) -> dict:
    return as_dict(as_dict(as_dict(as_dict(rj.get("template")).get("spec")).get("template")).get("spec"))


def node_container_index(pod_spec: dict) -> int | None:
    """The container named ``node``: where Trainer merges resourcesPerNode. No fallback."""
    for i, c in enumerate(as_list(pod_spec.get("containers"))):
        if as_dict(c).get("name") == NODE:
            return i
    return None


def trainer_settings(trainjob: dict | None) -> tuple[int | None, dict | None]:
    """``(trainer.numNodes, trainer.resourcesPerNode)`` as the TrainJob sets them, None where unset
    (Trainer's webhooks tell an empty resourcesPerNode from an absent one)."""
    trainer = as_dict(as_dict((trainjob or {}).get("spec")).get("trainer"))
    per_node = trainer.get("resourcesPerNode")
    return as_int(trainer.get("numNodes")), (as_dict(per_node) if per_node is not None else None)


def per_node_resources(trainjob: dict | None) -> dict:
    """The TrainJob's ``trainer.resourcesPerNode``; {} when unset."""
    return trainer_settings(trainjob)[1] or {}


def _trainer_sizes(reader: Reader, job_reader: Reader, trainjob: dict | None, runtime: dict
                   ) -> tuple[int, str, dict, int]:
    """``(numNodes, where it came from, resourcesPerNode, the runtime's numNodes)``: the TrainJob's
    ``trainer.numNodes``, else the runtime's ``mlPolicy.numNodes`` (default 1). ``job_reader`` reads
    the TrainJob, ``reader`` the runtime: strict, the first mistake is an InputError at its own object's path."""
    nodes, per_node = None, {}
    if trainjob is not None:
        spec = job_reader.get(trainjob, "spec", "", dict, "a mapping with runtimeRef", {})
        trainer = job_reader.get(spec, "trainer", "spec", dict, "a trainer mapping", {})
        nodes = job_reader.integer(trainer, "numNodes", "spec.trainer", 1, "an integer >= 1", None)
        per_node = job_reader.get(trainer, "resourcesPerNode", "spec.trainer", dict,
                                  "a mapping with requests and limits", {})
        container_requests(job_reader, per_node, "spec.trainer.resourcesPerNode")   # its quantities, on the TrainJob
    rspec = reader.get(runtime, "spec", "", dict, "a runtime spec", {})
    policy = reader.get(rspec, "mlPolicy", "spec", dict, "an mlPolicy mapping", {})
    default = reader.integer(policy, "numNodes", "spec.mlPolicy", 1, "an integer >= 1", 1)
    default = 1 if default is None else default
    if nodes is not None:
        return nodes, "trainer.numNodes", per_node, default
    return default, "mlPolicy.numNodes", per_node, default


def effective_node_pod(trainjob: dict | None, runtime: dict) -> tuple[dict, str] | None:
    """The trainer pod spec after the TrainJob is applied, and the path of its node container's
    resources in the runtime (for messages); None when the runtime has no trainer job."""
    index = trainer_job_index(runtime)
    if index is None:
        return None
    pod_spec = copy.deepcopy(job_pod_spec(replicated_jobs(runtime)[index]))
    c = node_container_index(pod_spec)
    base = f"spec.template.spec.replicatedJobs[{index}].template.spec.template.spec"
    path = f"{base}.containers[{c}].resources" if c is not None else base
    per_node = per_node_resources(trainjob)
    if c is not None and per_node:
        container = as_dict(pod_spec["containers"][c])
        pod_spec["containers"][c] = {**container, "resources": merge_resources(container.get("resources"), per_node)}
    return pod_spec, path


def _runtime_shape(reader: Reader, runtime: dict) -> None:
    """The runtime's JobSet template down to each pod spec, so that a strict reader names the first
    missing piece (a lenient one records it; the readers here skip what is missing)."""
    spec = reader.get(runtime, "spec", "", dict, "a runtime spec") or {}
    jobset = reader.get(reader.get(spec, "template", "spec", dict, "a JobSet template") or {}, "spec",
                        "spec.template", dict, "a JobSet spec") or {}
    for j, rj in enumerate(reader.get(jobset, "replicatedJobs", "spec.template.spec", list,
                                      "a list of replicatedJobs") or []):
        path = f"spec.template.spec.replicatedJobs[{j}]"
        reader.get(rj, "name", path, str, "a replicatedJob name")
        job = reader.get(reader.get(rj, "template", path, dict, "a Job template") or {}, "spec", f"{path}.template",
                         dict, "a Job spec") or {}
        reader.get(reader.get(job, "template", f"{path}.template.spec", dict, "a pod template") or {}, "spec",
                   f"{path}.template.spec.template", dict, "a pod spec")


def is_mpi(runtime: dict) -> bool:
    return isinstance(as_dict(as_dict(runtime.get("spec")).get("mlPolicy")).get("mpi"), dict)


def launcher_as_node(runtime: dict) -> bool:
    """``mlPolicy.mpi.runLauncherAsNode``: the launcher runs training too (kubeflow/trainer v2.3.0
    ``pkg/apis/trainer/v1alpha1/trainingruntime_types.go``; the shipped ``deepspeed-distributed``
    runtime sets it, with the trainer label on ``launcher`` and an unlabelled ``node`` job)."""
    mpi = as_dict(as_dict(as_dict(runtime.get("spec")).get("mlPolicy")).get("mpi"))
    return mpi.get("runLauncherAsNode") is True


def mpi_node_count(trainjob_nodes: int | None, runtime: dict) -> int | None:
    """The pod count Trainer's MPI plugin gives the replicatedJob *named* ``node``, or None when it
    sets none (``trainjob_nodes``: the TrainJob's ``trainer.numNodes``, None when unset). kubeflow/trainer
    v2.3.0 ``pkg/runtime/framework/plugins/mpi/mpi.go`` ``EnforceMLPolicy``:
    only when the TrainJob sets ``trainer.numNodes``; ``max(numNodes - 1, 1)`` with runLauncherAsNode
    (the launcher is one of the nodes), else ``numNodes`` (``mpi_test.go`` ``TestMPI``, case
    "runLauncherAsNode is true": numNodes 10 -> launcher 1, node 9). The trainer-labelled job keeps the
    runtime's ``mlPolicy.numNodes`` (``pkg/runtime/core/trainingruntime.go`` ``newRuntimeInfo``); the
    JobSet's parallelism follows the count (``plugins/jobset`` ``SyncParallelCount``) and the PodGroup's
    minMember and minResources sum every pod set (``plugins/volcano`` ``Build``)."""
    if not is_mpi(runtime) or trainjob_nodes is None:
        return None
    return max(trainjob_nodes - 1, 1) if launcher_as_node(runtime) else trainjob_nodes


def trainer_workload(reader: Reader, trainjob: dict | None, runtime: dict, job_reader: Reader | None = None
                     ) -> Workload:
    """A TrainJob on its runtime (or the runtime alone, ``trainjob`` None): Trainer's Volcano plugin
    makes one PodGroup whose minMember and minResources sum every pod set's count (kubeflow.md §3.5,
    ``plugins/volcano`` ``Build``). A pod set's count is numNodes for the trainer job and the job's
    ``parallelism`` for the others: Trainer v2.3 does not count a replicatedJob's ``replicas``
    (``pkg/runtime/core/trainingruntime.go``, TODO kubeflow/trainer#2318), though the JobSet creates
    replicas x parallelism pods. ``job_reader`` reads the TrainJob's own fields (default: ``reader``)."""
    _runtime_shape(reader, runtime)
    index = trainer_job_index(runtime)
    if index is None:
        message = (f"{runtime.get('kind')} {meta(runtime).get('name')!r} has no trainer replicatedJob (label "
                   f"{ANCESTOR_STEP}: trainer): Trainer v2.3 applies numNodes and resourcesPerNode only there")
        reader.problem("spec.template.spec.replicatedJobs", message)
        raise Unknown(message)
    nodes, source, per_node, runtime_nodes = _trainer_sizes(reader, job_reader or reader, trainjob, runtime)
    mpi_nodes = mpi_node_count(nodes if source == "trainer.numNodes" else None, runtime)
    sets: list[PodSet] = []
    counted: list[int] = []            # Trainer's count of each pod set (what the PodGroup sums)
    for i, rj in enumerate(replicated_jobs(runtime)):
        job_name = rj.get("name") if isinstance(rj.get("name"), str) else str(i)
        path = f"spec.template.spec.replicatedJobs[{i}].template.spec.template.spec"
        spec = job_pod_spec(rj)
        c = node_container_index(spec)
        # resourcesPerNode: the trainer job, and the job named node when the MPI launcher is a node
        merge = i == index or (job_name == NODE and launcher_as_node(runtime))
        overrides = {c: per_node} if merge and c is not None and per_node else None
        if mpi_nodes is not None and job_name == NODE:
            sets.append(_requests_set(reader, spec, path, mpi_nodes, NODE, job_name, overrides, max(mpi_nodes, 1)))
            counted.append(mpi_nodes)
        elif i == index:
            count = runtime_nodes if is_mpi(runtime) else nodes
            sets.append(_requests_set(reader, spec, path, count, NODE if job_name == NODE else
                                      f"trainer replicatedJob {job_name}", job_name, overrides, max(count, 1)))
            counted.append(count)
        else:
            replicas = _count(reader, rj, "replicas", f"spec.template.spec.replicatedJobs[{i}]", 1)
            parallelism = _count(reader, as_dict(as_dict(rj.get("template")).get("spec")), "parallelism",
                                 f"spec.template.spec.replicatedJobs[{i}].template.spec", 1)
            sets.append(_requests_set(reader, spec, path, replicas * parallelism, f"replicatedJob {job_name}",
                                      job_name, overrides, group=parallelism))
            counted.append(parallelism)
    extra = sum(counted) - nodes
    how = f"{source} {nodes}" + (f" plus {extra} pod(s) of other replicatedJobs" if extra > 0 else "")
    if sum(counted) < sum(s.count for s in sets):
        how += " (Trainer counts a replicatedJob's parallelism, not its replicas)"
    if mpi_nodes is not None and launcher_as_node(runtime):
        how += f" (MPI runLauncherAsNode: the launcher is one of them, node runs {mpi_nodes})"
    rspec = as_dict(runtime.get("spec"))
    volcano = as_dict(as_dict(rspec.get("podGroupPolicy")).get("volcano"))
    raw = volcano.get("networkTopology")
    if isinstance(raw, dict) and "highestTierName" in raw:
        # Trainer v2.3's runtime CRD has no highestTierName: the API server prunes it, and the PodGroup
        # gets highestTierAllowed (default 1). The topology-tier-exists rule says so.
        raw = {k: v for k, v in raw.items() if k != "highestTierName"}
    topology = topology_of(reader, raw, "spec.podGroupPolicy.volcano.networkTopology", tier_default=1) \
        if raw is not None else None      # the runtime CRD defaults highestTierAllowed to 1
    owner = trainjob if trainjob is not None else runtime
    name, namespace = _name(reader, owner)
    queue = _str(jobset_annotations(trainjob, runtime).get(QUEUE_ANNOTATION))
    return Workload("TrainJob" if trainjob is not None else str(runtime.get("kind")), name, namespace, tuple(sets),
                    sum(counted), how, topology, queue=queue,
                    task_order=tuple((count, 0) for count in counted),   # exactly each set's count
                    priority_class=next((p for p in reversed([_str(job_pod_spec(rj).get("priorityClassName"))
                                                              for rj in replicated_jobs(runtime)]) if p), None))


# --- a TrainJob's runtimePatches (Trainer v2.3), walked once ------------------------------------

@dataclass(frozen=True)
class JobPatch:
    """One replicatedJob entry of a ``runtimePatches`` item: what it changes in that job's pods."""
    name: object              # the replicatedJob it patches, as written (None when absent)
    path: str                 # spec.runtimePatches[p].trainingRuntimeSpec.template.spec.replicatedJobs[j]
    template: dict            # its pod template (template.spec.template); {} when it sets none

    template_path = property(lambda self: f"{self.path}.template.spec.template")
    pod = property(lambda self: as_dict(self.template.get("spec")))

    def containers(self, field_name: str = "containers") -> list[tuple[str, dict]]:
        """``(path, container)`` of its ``containers`` or ``initContainers`` (an odd entry as {})."""
        return [(f"{self.template_path}.spec.{field_name}[{i}]", as_dict(c))
                for i, c in enumerate(as_list(self.pod.get(field_name)))]

    def envs(self) -> list[tuple[str, list]]:
        """``(path, env)`` of every container it patches, init containers first (as ``shapes`` walks)."""
        return [(f"{path}.env", as_list(c.get("env")))
                for field_name in ("initContainers", "containers") for path, c in self.containers(field_name)]


@dataclass(frozen=True)
class RuntimePatch:
    """One ``spec.runtimePatches`` item: its manager, JobSet template annotations and jobs' pod changes."""
    path: str                 # spec.runtimePatches[p]
    manager: object
    annotations: dict
    jobs: tuple[JobPatch, ...]


def runtime_patches(trainjob: dict | None) -> list[RuntimePatch]:
    """What a TrainJob's ``spec.runtimePatches`` change, item by item (kubeflow/trainer v2.3.0
    ``pkg/apis/trainer/v1alpha1/trainjob_types.go`` RuntimePatch; the JobSet plugin applies them)."""
    out = []
    for p, patch in enumerate(as_list(as_dict(as_dict(trainjob).get("spec")).get("runtimePatches"))):
        patch = as_dict(patch)
        template = as_dict(as_dict(patch.get("trainingRuntimeSpec")).get("template"))
        base = f"spec.runtimePatches[{p}]"
        jobs = tuple(JobPatch(as_dict(rj).get("name"),
                              f"{base}.trainingRuntimeSpec.template.spec.replicatedJobs[{j}]",
                              as_dict(as_dict(as_dict(as_dict(rj).get("template")).get("spec")).get("template")))
                     for j, rj in enumerate(as_list(as_dict(template.get("spec")).get("replicatedJobs"))))
        out.append(RuntimePatch(base, patch.get("manager"),
                                as_dict(as_dict(template.get("metadata")).get("annotations")), jobs))
    return out


def job_patches(trainjob: dict | None) -> list[JobPatch]:
    """Every replicated job's pod changes of every runtimePatches item, in order."""
    return [job for patch in runtime_patches(trainjob) for job in patch.jobs]


def jobset_annotations(trainjob: dict | None, runtime: dict) -> dict:
    """The JobSet's annotations: the runtime template's, each runtimePatches item's laid over them.
    Trainer's Volcano plugin takes the PodGroup's queue from there (v2.3.0 ``plugins/volcano``)."""
    notes = dict(as_dict(as_dict(as_dict(as_dict(runtime.get("spec")).get("template")).get("metadata"))
                         .get("annotations")))
    for patch in runtime_patches(trainjob):
        notes.update(patch.annotations)
    return notes


# --- Kubeflow v1, JobSet, core workloads --------------------------------------------------------

def pytorch_job(reader: Reader, obj: dict) -> Workload:
    """A training-operator v1 PyTorchJob: one pod per replica of each role (Master first); its
    Volcano PodGroup's minMember is ``runPolicy.schedulingPolicy.minAvailable``, else every pod."""
    spec = as_dict(obj.get("spec"))
    roles = as_dict(spec.get("pytorchReplicaSpecs"))
    order = sorted(roles, key=lambda r: (r != "Master", str(r)))
    sets = []
    for role in order:
        replica = as_dict(roles[role])
        path = f"spec.pytorchReplicaSpecs.{role}"
        count = _count(reader, replica, "replicas", path, 1)
        spec_of = as_dict(replica.get("template")).get("spec")
        got = _requests_set(reader, spec_of, f"{path}.template.spec", count, f"role {role}", str(role))
        # Training Operator's CalcPGMinResources: containers only, limits when requests are absent
        sets.append(dataclasses.replace(got, quota=training_operator_pod(Reader(strict=False), spec_of, got.path)))
    pods = sum(s.count for s in sets)
    policy = as_dict(as_dict(spec.get("runPolicy")).get("schedulingPolicy"))
    min_available = as_int(policy.get("minAvailable"))
    how = f"schedulingPolicy.minAvailable {min_available}" if min_available is not None else \
        f"the sum of replicas ({pods})"
    name, namespace = _name(reader, obj)
    return Workload("PyTorchJob", name, namespace, tuple(sets), pods if min_available is None else min_available,
                    how, queue=_queue(obj, policy.get("queue")), priority_class=_str(policy.get("priorityClass")))


def jobset(reader: Reader, obj: dict) -> Workload:
    sets = []
    for i, rj in enumerate(as_list(as_dict(obj.get("spec")).get("replicatedJobs"))):
        rj = as_dict(rj)
        path = f"spec.replicatedJobs[{i}]"
        replicas = _count(reader, rj, "replicas", path, 1)
        parallelism = _count(reader, as_dict(as_dict(rj.get("template")).get("spec")), "parallelism",
                             f"{path}.template.spec", 1)
        sets.append(_requests_set(reader, job_pod_spec(rj), f"{path}.template.spec.template.spec",
                                  replicas * parallelism, f"replicatedJob {rj.get('name', i)}", str(rj.get("name", i)),
                                  group=parallelism))
    pods = sum(s.count for s in sets)
    name, namespace = _name(reader, obj)
    return Workload("JobSet", name, namespace, tuple(sets), pods, f"every pod of every replicatedJob ({pods})",
                    queue=_queue(obj))


def replicas_workload(reader: Reader, obj: dict) -> Workload:
    """Deployment/StatefulSet/ReplicaSet: ``replicas`` pods; the group-min-member annotation makes
    them one gang of at least that many."""
    spec = as_dict(obj.get("spec"))
    replicas = _count(reader, spec, "replicas", "spec", 1)
    min_member = as_int(_int_text(annotations(obj).get(MIN_MEMBER_ANNOTATION)))
    pods = max(replicas, min_member or 0)
    how = f"replicas {replicas}" + (f", {MIN_MEMBER_ANNOTATION} {min_member}" if min_member else "")
    template = as_dict(spec.get("template"))
    name, namespace = _name(reader, obj)
    # Volcano's PodGroup controller takes the queue from the pod's annotation and the PriorityClass
    # from the pod's spec (v1.15.1 pkg/controllers/podgroup/pg_controller_handler.go:390,400): the
    # pod template's, not the owner's
    return Workload(str(obj.get("kind")), name, namespace,
                    (_requests_set(reader, template.get("spec"), "spec.template.spec", pods, "replica", "",
                                   usage="pod"),),
                    pods, how, queue=_queue(template),
                    priority_class=_str(as_dict(template.get("spec")).get("priorityClassName")))


def bare_pod(reader: Reader, obj: dict) -> Workload:
    name, namespace = _name(reader, obj)
    spec = as_dict(obj.get("spec"))
    return Workload("Pod", name, namespace, (_requests_set(reader, spec, "spec", 1, "pod", "", usage="pod"),), 1,
                    "a single pod",
                    queue=_queue(obj), priority_class=_str(spec.get("priorityClassName")))


def _name(reader: Reader, obj: dict) -> tuple[str, str | None]:
    m = reader.get(obj, "metadata", "", dict, "a mapping with name") or {}
    name = reader.get(m, "name", "metadata", str, "a name")
    namespace = reader.get(m, "namespace", "metadata", str, "a namespace", None)
    return (name if isinstance(name, str) else "?"), namespace


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _int_text(value: object) -> object:
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            return None
    return value


# --- one entry point ----------------------------------------------------------------------------

def workload_of(obj: dict, objects: Iterable[dict], reader: Reader | None = None) -> Workload | None:
    """The workload an object becomes, or None for kinds that run no pods Volcano places as a gang.
    Raises Unknown when it cannot be worked out (and InputError from a strict reader)."""
    reader = reader if reader is not None else Reader(strict=False)
    kind = obj.get("kind")
    if is_kind(obj, "Job", BATCH):
        return volcano_job(reader, obj, priorities=priority_values(objects))
    if is_kind(obj, "CronJob", BATCH):
        return volcano_job(reader, obj, "spec.jobTemplate.spec", priority_values(objects))
    if kind == "TrainJob" and _is_trainer(obj):
        runtime = find_runtime(obj, objects)
        if runtime is None:
            raise Unknown(f"its runtime {runtime_ref_name(obj)} is not in the stack or the given manifests")
        return trainer_workload(reader, obj, runtime)
    if kind in RUNTIME_KINDS and _is_trainer(obj):
        return trainer_workload(reader, None, obj)
    if is_kind(obj, "PodGroup", SCHEDULING):
        return pod_group(reader, obj)
    if is_kind(obj, "PyTorchJob", KUBEFLOW_V1):
        return pytorch_job(reader, obj)
    if is_kind(obj, "JobSet", JOBSET):
        return jobset(reader, obj)
    if kind in ("Deployment", "StatefulSet", "ReplicaSet") and is_kind(obj, kind, "apps"):
        return replicas_workload(reader, obj)
    if is_kind(obj, "Pod", ""):
        return bare_pod(reader, obj)
    return None


def gangs_of(obj: dict, objects: list[dict]) -> tuple[Gang | None, dict[str, Gang]]:
    """The gang of a workload kind Volcano places with topology (None for other kinds) and its
    partitions' gangs (``partition_gangs``), from one reading (the policies' view: lenient). Raises
    Unknown when the gang cannot be worked out."""
    if obj.get("kind") == "JobSet" or is_kind(obj, "CronJob", BATCH):
        return None, {}  # no PodGroup of their own / the rules judge the Jobs a CronJob stamps out
    workload = workload_of(obj, objects)
    if workload is None:
        return None, {}
    if workload.sizes_unknown:
        raise Unknown(workload.sizes_unknown)
    return workload.gang(), partition_gangs(workload)


def gang_of(obj: dict, objects: list[dict]) -> Gang | None:
    """The gang alone (see ``gangs_of``)."""
    return gangs_of(obj, objects)[0]
