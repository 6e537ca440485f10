"""Read a what-if file: Volcano Jobs and TrainJobs (multi-document YAML), simulated in order, and an
optional file of resources already in use.

Only the fields that decide placement are read; a mistake in them is a ConfigError that names the
file, the document and the path (``jobs.yaml: document 2 (Job llm-a): spec.tasks[0].replicas:
expected ...``). Pod requests follow Kubernetes: a container's limits stand in for requests it
does not set, containers add up, and an init container counts when it asks for more than all
containers together. TrainJobs resolve against the stack's rendered (Cluster)TrainingRuntimes with
Trainer v2.3 semantics (reference/kubeflow.md §3): ``trainer.numNodes`` overrides
``mlPolicy.numNodes``, ``trainer.resourcesPerNode`` is merged into the runtime's ``node``
container resources, the gang (PodGroup minMember) is every pod of every replicatedJob, and the
topology is the runtime's ``podGroupPolicy.volcano.networkTopology`` with the CRD's defaults
(mode hard, highestTierAllowed 1).
"""
from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any, Iterable, Mapping

from modules.core import yamlio
from modules.core.errors import ConfigError, show
from modules.core.quantity import parse_quantity
from modules.fabric import hostlist
from modules.fabric.model import Fabric

from .jobs import Job, Partition, Pod, Topology

VOLCANO_GROUP = "batch.volcano.sh"
TRAINER_GROUP = "trainer.kubeflow.org"
RUNTIME_KINDS = ("ClusterTrainingRuntime", "TrainingRuntime")
_MISSING = object()
MAX_PODS = 1_000_000   # pods in one workloads file, all jobs together (docs/reliability.md)
_pods_left = [MAX_PODS]


def _take_pods(doc: "Doc", path: str, count: int) -> None:
    """Count pods against the file's budget before they are built (10^7 replicas is a typo)."""
    if count > _pods_left[0]:
        raise doc.error(path, f"the workloads would hold more than {MAX_PODS:,} pods (the documented maximum)")
    _pods_left[0] -= count


class Doc:
    """Typed access to one document, with errors that say where."""

    def __init__(self, file: str, where: str):
        self.file = file
        self.where = where

    def error(self, path: str, message: str) -> ConfigError:
        return ConfigError(self.file, f"{self.where}: {path}" if path else self.where, message)

    def expected(self, path: str, what: str, got: object) -> ConfigError:
        return self.error(path, f"expected {what}, got {show(got)}")

    def get(self, obj: Mapping, key: str, path: str, kind: type | tuple, what: str, default: Any = _MISSING) -> Any:
        full = yamlio.join_path(path, key)
        if not isinstance(obj, Mapping):
            raise self.expected(path, "a mapping", obj)
        if key not in obj or obj[key] is None:
            if default is _MISSING:
                raise self.error(full, f"missing; expected {what}")
            return default
        value = obj[key]
        if isinstance(value, bool) and bool not in (kind if isinstance(kind, tuple) else (kind,)):
            raise self.expected(full, what, value)
        if not isinstance(value, kind):
            raise self.expected(full, what, value)
        return value

    def integer(self, obj: Mapping, key: str, path: str, minimum: int, what: str, default: Any = _MISSING) -> Any:
        value = self.get(obj, key, path, int, what, default)
        if value is not default and value < minimum:
            raise self.expected(yamlio.join_path(path, key), what, value)
        return value


# --- pods ---------------------------------------------------------------------------------------

def container_requests(doc: Doc, resources: Any, path: str,
                       override: Mapping[str, Any] | None = None) -> dict[str, Decimal]:
    """Effective requests of one container: requests, with limits standing in for missing ones."""
    if resources is None:
        resources = {}
    if not isinstance(resources, dict):
        raise doc.expected(path, "a mapping with requests and limits", resources)
    merged: dict[str, dict] = {}
    for part in ("limits", "requests"):
        given = resources.get(part) or {}
        extra = (override or {}).get(part) or {}
        if not isinstance(given, dict):
            raise doc.expected(f"{path}.{part}", "a mapping of resource name to quantity", given)
        merged[part] = {**given, **extra}
    out: dict[str, Decimal] = {}
    for part in ("limits", "requests"):      # requests win over limits
        for name, value in merged[part].items():
            try:
                amount = parse_quantity(value)
            except ValueError:
                raise doc.expected(f"{path}.{part}.{name}", "a Kubernetes quantity such as 8 or 64Gi", value) from None
            if amount < 0:
                raise doc.expected(f"{path}.{part}.{name}", "a quantity >= 0", value)
            out[str(name)] = amount
    return out


def pod_requests(doc: Doc, spec: Any, path: str, override: tuple[str, Mapping] | None = None) -> dict[str, Decimal]:
    """A pod's requests: containers summed; an init container counts where it asks for more.

    ``override`` = (container name, {requests, limits}) merged into that container (Trainer's
    ``resourcesPerNode``).
    """
    if not isinstance(spec, dict):
        raise doc.expected(path, "a pod spec with containers", spec)
    containers = spec.get("containers")
    if not isinstance(containers, list) or not containers:
        raise doc.expected(f"{path}.containers", "a non-empty list of containers", containers)
    total: dict[str, Decimal] = {}
    for i, container in enumerate(containers):
        where = f"{path}.containers[{i}]"
        if not isinstance(container, dict):
            raise doc.expected(where, "a container", container)
        extra = override[1] if override and container.get("name") == override[0] else None
        for name, amount in container_requests(doc, container.get("resources"), f"{where}.resources", extra).items():
            total[name] = total.get(name, Decimal(0)) + amount
    inits = spec.get("initContainers") or []
    if not isinstance(inits, list):
        raise doc.expected(f"{path}.initContainers", "a list of containers", inits)
    for i, container in enumerate(inits):
        where = f"{path}.initContainers[{i}]"
        if not isinstance(container, dict):
            raise doc.expected(where, "a container", container)
        for name, amount in container_requests(doc, container.get("resources"), f"{where}.resources").items():
            total[name] = max(total.get(name, Decimal(0)), amount)
    return total


def gpu_count(requests: Mapping[str, Decimal], gpu_resources: Iterable[str]) -> int:
    return int(sum(requests.get(r, Decimal(0)) for r in set(gpu_resources)))


def topology_of(doc: Doc, obj: Any, path: str, tier_default: int | None = None) -> Topology:
    if not isinstance(obj, dict):
        raise doc.expected(path, "a mapping with mode and highestTierAllowed or highestTierName", obj)
    mode = doc.get(obj, "mode", path, str, "hard or soft", "hard")
    if mode not in ("hard", "soft"):
        raise doc.expected(f"{path}.mode", "hard or soft", mode)
    tier = doc.integer(obj, "highestTierAllowed", path, 0, "an integer >= 0", None)
    name = doc.get(obj, "highestTierName", path, str, "a tier name", None)
    if tier is not None and name is not None:
        raise doc.error(path, "highestTierAllowed and highestTierName are mutually exclusive (Volcano's "
                        "webhook rejects both)")
    if tier is None and name is None:
        tier = tier_default
    return Topology(mode=mode, tier=tier, tier_name=name)


def _name(doc: Doc, obj: dict) -> tuple[str, str | None]:
    meta = doc.get(obj, "metadata", "", dict, "a mapping with name")
    name = doc.get(meta, "name", "metadata", str, "a name")
    namespace = doc.get(meta, "namespace", "metadata", str, "a namespace", None)
    return name, namespace


# --- Volcano Job --------------------------------------------------------------------------------

def volcano_job(doc: Doc, obj: dict, gpu_resources: set[str]) -> Job:
    name, _ = _name(doc, obj)
    spec = doc.get(obj, "spec", "", dict, "a mapping with tasks")
    tasks = doc.get(spec, "tasks", "spec", list, "a non-empty list of tasks")
    if not tasks:
        raise doc.expected("spec.tasks", "a non-empty list of tasks", tasks)
    pods: list[Pod] = []
    partitions: list[Partition] = []
    task_names: set[str] = set()
    for t, task in enumerate(tasks):
        path = f"spec.tasks[{t}]"
        if not isinstance(task, dict):
            raise doc.expected(path, "a task with name, replicas and template", task)
        task_name = doc.get(task, "name", path, str, "a task name", f"default{t}")
        if task_name in task_names:
            raise doc.error(f"{path}.name", f"task name {task_name!r} is used twice")
        task_names.add(task_name)
        replicas = doc.integer(task, "replicas", path, 0, "an integer >= 0 (the task's pod count)")
        _take_pods(doc, f"{path}.replicas", replicas)
        template = doc.get(task, "template", path, dict, "a pod template")
        requests = pod_requests(doc, template.get("spec"), f"{path}.template.spec")
        first = len(pods)
        pods.extend(Pod(f"{name}-{task_name}-{i}", requests, gpu_count(requests, gpu_resources))
                    for i in range(replicas))
        policy = doc.get(task, "partitionPolicy", path, dict, "a partitionPolicy mapping", None)
        if policy is not None:
            where = f"{path}.partitionPolicy"
            count = doc.integer(policy, "totalPartitions", where, 1, "an integer >= 1")
            size = doc.integer(policy, "partitionSize", where, 1, "an integer >= 1")
            doc.integer(policy, "minPartitions", where, 0, "an integer >= 0", 0)
            if count * size != replicas:
                raise doc.error(where, f"totalPartitions x partitionSize ({count} x {size}) must equal the "
                                f"task's replicas ({replicas}); Volcano's webhook rejects the job otherwise")
            topo = policy.get("networkTopology")
            topology = topology_of(doc, topo, f"{where}.networkTopology") if topo is not None else None
            partitions.extend(Partition(f"{task_name}-{k}", tuple(range(first + k * size, first + (k + 1) * size)),
                                        topology) for k in range(count))
    if not pods:
        raise doc.error("spec.tasks", "the job has no pods: every task has replicas 0")
    min_available = doc.integer(spec, "minAvailable", "spec", 0, "an integer >= 0", len(pods))
    if min_available > len(pods):
        raise doc.error("spec.minAvailable", f"{min_available} is more than the {len(pods)} replicas of all "
                        "tasks; Volcano's webhook rejects the job")
    topo = spec.get("networkTopology")
    topology = topology_of(doc, topo, "spec.networkTopology") if topo is not None else None
    return Job(name, "Job", pods, min_available, topology, partitions, doc.where)


# --- TrainJob -----------------------------------------------------------------------------------

def runtimes_in(objects: Iterable[dict]) -> dict[tuple[str, str | None, str], dict]:
    """(kind, namespace, name) -> runtime object, for every (Cluster)TrainingRuntime given."""
    out = {}
    for obj in objects:
        if obj.get("kind") in RUNTIME_KINDS and str(obj.get("apiVersion", "")).startswith(TRAINER_GROUP + "/"):
            meta = obj.get("metadata") or {}
            namespace = meta.get("namespace") if obj["kind"] == "TrainingRuntime" else None
            out[(obj["kind"], namespace, meta.get("name"))] = obj
    return out


def train_job(doc: Doc, obj: dict, runtimes: Mapping, gpu_resources: set[str], stack: str) -> Job:
    name, namespace = _name(doc, obj)
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
        raise doc.error("spec.runtimeRef.name", f"no {kind} {runtime_name!r} in stack {stack} (it has: "
                        f"{', '.join(known) if known else 'none'})")
    trainer = doc.get(spec, "trainer", "spec", dict, "a trainer mapping", {})
    num_nodes = doc.integer(trainer, "numNodes", "spec.trainer", 1, "an integer >= 1", None)
    per_node = doc.get(trainer, "resourcesPerNode", "spec.trainer", dict, "a mapping with requests and limits", {})
    container_requests(doc, per_node, "spec.trainer.resourcesPerNode")           # validate it here

    rdoc = Doc(doc.file, f"{doc.where}: runtimeRef {kind} {runtime_name}")
    rspec = rdoc.get(runtime, "spec", "", dict, "a runtime spec")
    policy = rdoc.get(rspec, "mlPolicy", "spec", dict, "an mlPolicy mapping", {})
    if num_nodes is None:
        num_nodes = rdoc.integer(policy, "numNodes", "spec.mlPolicy", 1, "an integer >= 1", 1)
    template = rdoc.get(rspec, "template", "spec", dict, "a JobSet template")
    jobs = rdoc.get(rdoc.get(template, "spec", "spec.template", dict, "a JobSet spec"), "replicatedJobs",
                    "spec.template.spec", list, "a list of replicatedJobs")
    trainer_index = _trainer_job(jobs)
    if trainer_index is None:
        raise rdoc.error("spec.template.spec.replicatedJobs", "no replicatedJob named node (or labelled "
                         "trainer.kubeflow.org/trainjob-ancestor-step: trainer) to run the TrainJob's nodes")
    pods: list[Pod] = []
    for j, rjob in enumerate(jobs):
        path = f"spec.template.spec.replicatedJobs[{j}]"
        job_name = rdoc.get(rjob, "name", path, str, "a replicatedJob name")
        job_template = rdoc.get(rdoc.get(rjob, "template", path, dict, "a Job template"), "spec",
                                f"{path}.template", dict, "a Job spec")
        pod_spec = rdoc.get(rdoc.get(job_template, "template", f"{path}.template.spec", dict, "a pod template"),
                            "spec", f"{path}.template.spec.template", dict, "a pod spec")
        spec_path = f"{path}.template.spec.template.spec"
        if j == trainer_index:
            requests = pod_requests(rdoc, pod_spec, spec_path, ("node", per_node))
            count, prefix = num_nodes, f"{name}-{job_name}-0"
            _take_pods(doc, "spec.trainer.numNodes", count)
            pods.extend(Pod(f"{prefix}-{i}", requests, gpu_count(requests, gpu_resources)) for i in range(count))
            continue
        requests = pod_requests(rdoc, pod_spec, spec_path)
        replicas = rdoc.integer(rjob, "replicas", path, 0, "an integer >= 0", 1)
        parallelism = rdoc.integer(job_template, "parallelism", f"{path}.template.spec", 0, "an integer >= 0", 1)
        _take_pods(rdoc, f"{path}.replicas", replicas * parallelism)
        for r in range(replicas):
            pods.extend(Pod(f"{name}-{job_name}-{r}-{i}", requests, gpu_count(requests, gpu_resources))
                        for i in range(parallelism))
    volcano = (rspec.get("podGroupPolicy") or {}).get("volcano") if isinstance(rspec.get("podGroupPolicy"), dict) else None
    topology = None
    if isinstance(volcano, dict) and volcano.get("networkTopology") is not None:
        topology = topology_of(rdoc, volcano["networkTopology"], "spec.podGroupPolicy.volcano.networkTopology",
                               tier_default=1)   # the runtime CRD defaults highestTierAllowed to 1
    return Job(name, "TrainJob", pods, len(pods), topology, [], doc.where)


def _trainer_job(jobs: list) -> int | None:
    for j, rjob in enumerate(jobs):
        if isinstance(rjob, dict) and rjob.get("name") == "node":
            return j
    for j, rjob in enumerate(jobs):
        labels = (((rjob or {}).get("template") or {}).get("metadata") or {}).get("labels") or {}
        if isinstance(labels, dict) and labels.get("trainer.kubeflow.org/trainjob-ancestor-step") == "trainer":
            return j
    return None


# --- files --------------------------------------------------------------------------------------

def load_workloads(path: Path, shown: str, fabric: Fabric, runtimes: Mapping, stack: str,
                   warnings: list[str] | None = None) -> list[Job]:
    """Every Volcano Job and TrainJob in the file, in order; other objects are skipped with a warning."""
    docs = yamlio.load_all(yamlio.read_text(path, shown), shown)
    _pods_left[0] = MAX_PODS
    gpu_resources = {p.gpu_resource for p in fabric.pools.values()} | {"nvidia.com/gpu"}
    jobs: list[Job] = []
    seen: dict[str, str] = {}
    for i, obj in enumerate(docs, start=1):
        where = f"document {i}"
        if not isinstance(obj, dict) or not isinstance(obj.get("kind"), str):
            raise ConfigError(shown, where, f"expected a Volcano Job or a TrainJob, got {show(obj)}")
        kind, api = obj.get("kind"), str(obj.get("apiVersion", ""))
        label = (obj.get("metadata") or {}).get("name") if isinstance(obj.get("metadata"), dict) else None
        doc = Doc(shown, f"{where} ({kind} {label})" if label else where)
        if kind == "Job" and api.startswith(VOLCANO_GROUP + "/"):
            job = volcano_job(doc, obj, gpu_resources)
        elif kind == "TrainJob" and api.startswith(TRAINER_GROUP + "/"):
            job = train_job(doc, obj, runtimes, gpu_resources, stack)
        else:
            if warnings is not None:
                warnings.append(f"{shown}: {where}: skipped {api} {kind}: only Volcano Jobs ({VOLCANO_GROUP}) "
                                f"and TrainJobs ({TRAINER_GROUP}) are simulated")
            continue
        if job.name in seen:
            raise doc.error("metadata.name", f"job {job.name!r} is already defined in {seen[job.name]}; "
                            "give each job its own name")
        seen[job.name] = where
        jobs.append(job)
    if not jobs:
        raise ConfigError(shown, "", f"no Volcano Job ({VOLCANO_GROUP}/v1alpha1) or TrainJob "
                          f"({TRAINER_GROUP}/v1alpha1) in the file")
    return jobs


def load_usage(path: Path, shown: str, fabric: Fabric) -> dict[str, dict[str, Decimal]]:
    """Resources already in use, per node: ``nodes: {gpu-0001: {nvidia.com/gpu: 8}, "gpu-[0002-0004]": ...}``."""
    data = yamlio.load_file(path, shown)
    if not isinstance(data, dict) or set(data) != {"nodes"} or not isinstance(data["nodes"], dict):
        raise ConfigError(shown, "(document)", "expected a mapping with one key, nodes: {NODE or host range: "
                          f"{{resource: quantity}}}}, got {show(data)}")
    out: dict[str, dict[str, Decimal]] = {}
    for expr, used in data["nodes"].items():
        where = f"nodes.{expr}"
        try:
            names = hostlist.expand(str(expr))
        except hostlist.HostlistError as exc:
            raise ConfigError(shown, where, str(exc)) from None
        if not isinstance(used, dict):
            raise ConfigError(shown, where, f"expected a mapping of resource name to quantity, got {show(used)}")
        for node in names:
            if node not in fabric.nodes:
                raise ConfigError(shown, where, f"node {node!r} is not in the stack's fabric")
            if node in out:
                raise ConfigError(shown, where, f"node {node!r} is listed twice")
            alloc = fabric.nodes[node].pool.allocatable()
            amounts = {}
            for resource, value in used.items():
                try:
                    amount = parse_quantity(value)
                except ValueError:
                    raise ConfigError(shown, f"{where}.{resource}", f"expected a Kubernetes quantity, got "
                                      f"{show(value)}") from None
                if amount < 0 or amount > alloc.get(str(resource), Decimal(0)):
                    raise ConfigError(shown, f"{where}.{resource}", f"expected a quantity between 0 and what "
                                      f"node {node} can allocate ({alloc.get(str(resource), 0)}), got {show(value)}")
                amounts[str(resource)] = amount
            out[node] = amounts
    return out
