"""Read a what-if file: Volcano Jobs and TrainJobs (multi-document YAML), simulated in order, and an
optional file of resources already in use.

Only the fields that decide placement are read; a mistake in them is an InputError that names the
file, the document and the path (``jobs.yaml: document 2 (Job llm-a): spec.tasks[0].replicas:
expected ...``). Pod requests follow Kubernetes: a container's limits stand in for requests it
does not set, containers add up, and an init container counts when it asks for more than all
containers together. TrainJobs resolve against the stack's rendered (Cluster)TrainingRuntimes with
Trainer v2.3 semantics: ``trainer.numNodes`` overrides
``mlPolicy.numNodes``, ``trainer.resourcesPerNode`` is merged into the runtime's ``node``
container resources, the gang (PodGroup minMember) is every pod of every replicatedJob, and the
topology is the runtime's ``podGroupPolicy.volcano.networkTopology`` with the CRD's defaults
(mode hard, highestTierAllowed 1).
"""
from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any, Iterable, Mapping

from modules.core import yamlio
from modules.core.errors import InputError, show
from modules.core.quantity import parse_quantity
from modules.fabric import hostlist
from modules.fabric.model import Fabric

from modules.semantics.capacity import counted, not_counted_note
from modules.semantics.podspec import Reader
from modules.semantics.podspec import pod_requests as semantic_pod_requests
from modules.semantics.workloads import PodSet, Unknown, Workload, priority_values, trainer_workload, workload_of
from modules.semantics.workloads import volcano_job as semantic_volcano_job

from modules.semantics.volcano import BATCH as VOLCANO_GROUP, RUNTIME_KINDS, TRAINER as TRAINER_GROUP
from modules.semantics.volcano import effective_constraints, enforced_spec, job_constraint

from . import admitted
from .jobs import Job, Partition, Pod, Topology

MAX_PODS = 1_000_000   # pods in one workloads file, all jobs together (docs/reliability.md)


@dataclass
class PodBudget:
    """The pods one workloads file may still build: each is counted before it is built (10^7
    replicas is a typo), over every job of the file."""
    left: int = MAX_PODS

    def take(self, doc: Reader, path: str, count: int) -> None:
        if count > self.left:
            raise doc.error(path, f"the workloads would hold more than {MAX_PODS:,} pods (the documented maximum)")
        self.left -= count


def pod_requests(doc: Reader, spec: Any, path: str) -> dict[str, Decimal]:
    """A pod's requests as node fit counts them (``modules.semantics.podspec``)."""
    return semantic_pod_requests(doc, spec, path).fit


def gpu_count(requests: Mapping[str, Decimal], gpu_resources: Iterable[str]) -> int:
    return int(sum(requests.get(r, Decimal(0)) for r in set(gpu_resources)))


# --- workloads ------------------------------------------------------------------------------------

def pod_names(workload: Workload, pod_set: PodSet) -> list[str]:
    """Pod names as the controllers write them: ``job-task-i`` (Volcano), ``job-rjob-r-i`` (JobSet,
    TrainJob), ``job-role-i`` (PyTorchJob), ``name-i`` (replicas)."""
    name = workload.name
    if workload.kind == "Job":
        return [f"{name}-{pod_set.name}-{i}" for i in range(pod_set.count)]
    if workload.kind in ("TrainJob", "JobSet") + RUNTIME_KINDS:
        per = max(pod_set.group, 1)
        return [f"{name}-{pod_set.name}-{i // per}-{i % per}" for i in range(pod_set.count)]
    if workload.kind == "PyTorchJob":
        return [f"{name}-{pod_set.name.lower()}-{i}" for i in range(pod_set.count)]
    return [f"{name}-{i}" for i in range(pod_set.count)]


def topology_of_object(obj: dict, objects: Iterable[dict] = ()) -> Topology | None:
    """The job-level network topology Volcano enforces for ``obj``, read by the same function as the
    rules (``modules.semantics.volcano``): its own networkTopology, its runtime's (TrainJobs, among
    ``objects``), or its pod template's ``volcano.sh/network-topology-*`` annotations."""
    spec = enforced_spec(job_constraint(effective_constraints(obj, objects)))
    return None if spec is None else Topology(*spec)


def job_from(workload: Workload, doc: Reader, gpu_resources: set[str], obj: dict | None = None,
             objects: Iterable[dict] = (), budget: PodBudget | None = None) -> Job:
    """The simulator's Job for a workload: every pod with its node-fit requests, the gang, the
    PodGroup's minResources where it differs from the gang's node-fit total (limits-only containers).
    Pods are counted against ``budget`` (the file's; else the job's own) before they are built. With
    ``obj`` (the object the workload was read from), the topology is ``topology_of_object``'s."""
    budget = budget or PodBudget()
    pods: list[Pod] = []
    firsts: list[int] = []
    for pod_set in workload.sets:
        budget.take(doc, _count_path(workload, pod_set), pod_set.count)
        firsts.append(len(pods))
        gpus = gpu_count(pod_set.requests, gpu_resources)
        pods.extend(Pod(n, pod_set.requests, gpus) for n in pod_names(workload, pod_set))
    partitions = [Partition(f"{workload.sets[p.index].name}-{k}",
                            tuple(range(firsts[p.index] + k * p.size, firsts[p.index] + (k + 1) * p.size)),
                            p.topology)
                  for p in workload.partitions for k in range(p.count)]
    gang = workload.gang()
    # What Volcano's scheduler reads of the PodGroup's minResources (bare names: requests.cpu,
    # limits.* and count/pods are ignored, nvidia.com/gpu counts); pod slots are not modelled here.
    min_resources = gang.scheduled_min_resources()
    min_resources.pop("pods", None)
    # Without one the scheduler sums the first minAvailable pods in list (spec) order; keep the
    # gang's own where its pods differ (a Volcano Job's priority order and task minAvailable).
    fit = workload.first_pods().total()
    topology = workload.topology if obj is None else topology_of_object(obj, objects)
    return Job(workload.name, workload.kind, pods, workload.min_member, topology, partitions, doc.where,
               min_resources=min_resources if min_resources != fit else None)


def _count_path(workload: Workload, pod_set: PodSet) -> str:
    """The field that sets a pod set's count, for the bound's message."""
    if workload.kind == "TrainJob" and (pod_set.what == "node" or pod_set.what.startswith("trainer ")):
        return "spec.trainer.numNodes"
    if pod_set.path.endswith(".template.spec") and ".tasks[" in pod_set.path:
        return pod_set.path[:-len(".template.spec")] + ".replicas"
    return pod_set.path


def volcano_job(doc: Reader, obj: dict, gpu_resources: set[str], priorities: Mapping[str, int] | None = None,
                budget: PodBudget | None = None) -> Job:
    """``priorities``: the PriorityClass values given alongside (they order the tasks in minResources)."""
    return job_from(semantic_volcano_job(doc, obj, priorities=priorities), doc, gpu_resources, obj, budget=budget)


def runtimes_in(objects: Iterable[dict]) -> dict[tuple[str, str | None, str], dict]:
    """(kind, namespace, name) -> runtime object, for every (Cluster)TrainingRuntime given."""
    out = {}
    for obj in objects:
        if obj.get("kind") in RUNTIME_KINDS and str(obj.get("apiVersion", "")).startswith(TRAINER_GROUP + "/"):
            meta = obj.get("metadata") or {}
            namespace = (meta.get("namespace") or "default") if obj["kind"] == "TrainingRuntime" else None
            out[(obj["kind"], namespace, meta.get("name"))] = obj
    return out


def train_job(doc: Reader, obj: dict, runtimes: Mapping, gpu_resources: set[str], runtimes_from: str,
              budget: PodBudget | None = None) -> Job:
    """``runtimes_from``: where the runtimes were read, as messages name it (`stack dev`, `the snapshot`)."""
    doc.get(doc.get(obj, "metadata", "", dict, "a mapping with name"), "name", "metadata", str, "a name")
    namespace = doc.get(obj["metadata"], "namespace", "metadata", str, "a namespace", None)
    spec = doc.get(obj, "spec", "", dict, "a mapping with runtimeRef")
    ref = doc.get(spec, "runtimeRef", "spec", dict, "a mapping with the runtime's name")
    runtime_name = doc.get(ref, "name", "spec.runtimeRef", str, "a runtime name")
    kind = doc.get(ref, "kind", "spec.runtimeRef", str, "ClusterTrainingRuntime or TrainingRuntime",
                   "ClusterTrainingRuntime")
    if kind not in RUNTIME_KINDS:
        raise doc.expected("spec.runtimeRef.kind", "ClusterTrainingRuntime or TrainingRuntime", kind)
    key = (kind, (namespace or "default") if kind == "TrainingRuntime" else None, runtime_name)
    runtime = runtimes.get(key)
    if runtime is None:
        known = sorted(n for k, _, n in runtimes if k == kind)
        raise doc.error("spec.runtimeRef.name", f"no {kind} {runtime_name!r} in {runtimes_from} (it has: "
                        f"{', '.join(known) if known else 'none'})")
    rdoc = Reader(doc.file, f"{doc.where}: runtimeRef {kind} {runtime_name}")
    try:       # semantics reads the runtime (rdoc) and the TrainJob's numNodes and resourcesPerNode (doc)
        workload = trainer_workload(rdoc, obj, runtime, job_reader=doc)
    except Unknown as exc:        # unreachable in strict mode: the reader raised already
        raise rdoc.error("spec.template.spec.replicatedJobs", str(exc)) from None
    return job_from(workload, doc, gpu_resources, obj, [runtime], budget)


def other_workload(doc: Reader, obj: dict, gpu_resources: set[str], budget: PodBudget | None = None) -> Job | None:
    """Deployments, StatefulSets, ReplicaSets, PyTorchJobs and JobSets: what the semantic core makes
    of them (None for other kinds; bare Pods belong in a snapshot, not a what-if file)."""
    if obj.get("kind") in ("Job", "CronJob", "TrainJob", "PodGroup", "Pod") + RUNTIME_KINDS:
        return None
    try:
        workload = workload_of(obj, [], doc)
    except Unknown as exc:
        raise doc.error("", str(exc)) from None
    if workload is None:
        return None
    if not workload.pods:
        raise doc.error("spec", "the workload has no pods")
    return job_from(workload, doc, gpu_resources, obj, budget=budget)


def _simulated(obj: dict) -> bool:
    """Whether ``load_workloads`` simulates ``obj`` (and so admits it first)."""
    kind, api = obj.get("kind"), str(obj.get("apiVersion", ""))
    if kind in ("Job", "TrainJob"):
        return api.startswith((VOLCANO_GROUP + "/", TRAINER_GROUP + "/"))
    return kind not in ("CronJob", "PodGroup", "Pod") + RUNTIME_KINDS


# --- files --------------------------------------------------------------------------------------

def load_workloads(path: Path, shown: str, fabric: Fabric, runtimes: Mapping, runtimes_from: str,
                   warnings: list[str] | None = None, context: Iterable[dict] | None = None,
                   stack: bool = False) -> list[Job]:
    """Every Volcano Job and TrainJob in the file, in order; other objects are skipped with a warning.
    Each goes through the API server's admission first (``admitted.py``) against ``context``, the
    cluster's objects (a stack's rendered ones when ``stack``; by default the runtimes alone, a
    cluster whose Queues are unknown): it is read as the webhooks default it, and what they refuse
    is a line of ``warnings``."""
    docs = yamlio.load_all(yamlio.read_text(path, shown), shown)
    known = list(runtimes.values()) if context is None else list(context)
    admission = (admitted.of_stack if stack else admitted.of_snapshot)(known, [d for d in docs if isinstance(d, dict)])
    budget = PodBudget()
    gpu_resources = {p.gpu_resource for p in fabric.pools.values()} | {"nvidia.com/gpu"}
    jobs: list[Job] = []
    seen: dict[str, str] = {}
    priorities = priority_values(d for d in docs if isinstance(d, dict))
    for i, obj in enumerate(docs, start=1):
        where = f"document {i}"
        if not isinstance(obj, dict) or not isinstance(obj.get("kind"), str):
            raise InputError(shown, where, f"expected a Volcano Job or a TrainJob, got {show(obj)}")
        kind, api = obj.get("kind"), str(obj.get("apiVersion", ""))
        label = (obj.get("metadata") or {}).get("name") if isinstance(obj.get("metadata"), dict) else None
        doc = Reader(shown, f"{where} ({kind} {label})" if label else where)   # strict
        obj, refused = admission.admit(obj) if _simulated(obj) else (obj, [])
        if kind == "Job" and api.startswith(VOLCANO_GROUP + "/"):
            job = volcano_job(doc, obj, gpu_resources, priorities, budget)
        elif kind == "TrainJob" and api.startswith(TRAINER_GROUP + "/"):
            job = train_job(doc, obj, runtimes, gpu_resources, runtimes_from, budget)
        else:
            job = other_workload(doc, obj, gpu_resources, budget)
        if job is None:
            if warnings is not None:
                warnings.append(f"{shown}: {where}: skipped {api} {kind}: only Volcano Jobs ({VOLCANO_GROUP}), "
                                f"TrainJobs ({TRAINER_GROUP}), PyTorchJobs, JobSets, Deployments, StatefulSets "
                                "and ReplicaSets are simulated")
            continue
        refusal = admitted.refusal(refused, doc, obj)   # after the reader: a shape mistake is said in its words
        if refusal is not None and warnings is not None:
            warnings.append(refusal)
        if job.name in seen:
            raise doc.error("metadata.name", f"job {job.name!r} is already defined in {seen[job.name]}; "
                            "give each job its own name")
        seen[job.name] = where
        jobs.append(job)
    if not jobs:
        raise InputError(shown, "", f"no Volcano Job ({VOLCANO_GROUP}/v1alpha1) or TrainJob "
                          f"({TRAINER_GROUP}/v1alpha1) in the file")
    declared = {name for pool in fabric.pools.values() for name in pool.allocatable()}
    uncounted = {name for job in jobs for pod in job.pods for name, amount in pod.requests.items()
                 if amount > 0 and not counted(name, declared)}
    if uncounted and warnings is not None:
        warnings.append(f"{shown}: {not_counted_note(uncounted)}")
    return jobs


def load_usage(path: Path, shown: str, fabric: Fabric) -> dict[str, dict[str, Decimal]]:
    """Resources already in use, per node: ``nodes: {gpu-0001: {nvidia.com/gpu: 8}, "gpu-[0002-0004]": ...}``."""
    data = yamlio.load_file(path, shown)
    if not isinstance(data, dict) or set(data) != {"nodes"} or not isinstance(data["nodes"], dict):
        raise InputError(shown, "(document)", "expected a mapping with one key, nodes: {NODE or host range: "
                          f"{{resource: quantity}}}}, got {show(data)}")
    out: dict[str, dict[str, Decimal]] = {}
    for expr, used in data["nodes"].items():
        where = f"nodes.{expr}"
        try:
            names = hostlist.expand(str(expr))
        except hostlist.HostlistError as exc:
            raise InputError(shown, where, str(exc)) from None
        if not isinstance(used, dict):
            raise InputError(shown, where, f"expected a mapping of resource name to quantity, got {show(used)}")
        for node in names:
            if node not in fabric.nodes:
                raise InputError(shown, where, f"node {node!r} is not in the stack's fabric")
            if node in out:
                raise InputError(shown, where, f"node {node!r} is listed twice")
            alloc = fabric.nodes[node].pool.allocatable()
            amounts = {}
            for resource, value in used.items():
                try:
                    amount = parse_quantity(value)
                except ValueError:
                    raise InputError(shown, f"{where}.{resource}", f"expected a Kubernetes quantity, got "
                                      f"{show(value)}") from None
                if amount < 0 or amount > alloc.get(str(resource), Decimal(0)):
                    raise InputError(shown, f"{where}.{resource}", f"expected a quantity between 0 and what "
                                      f"node {node} can allocate ({alloc.get(str(resource), 0)}), got {show(value)}")
                amounts[str(resource)] = amount
            out[node] = amounts
    return out
