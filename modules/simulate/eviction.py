"""Volcano's whole scheduling cycle around allocate: the enqueue gate and the eviction actions
(preempt, reclaim, gangpreempt, gangreclaim), as a session over a cluster's objects (Volcano
v1.15.1, ``pkg/scheduler/actions``, ``pkg/scheduler/plugins``). It answers "if this job is submitted
into this queue, which running pods are evicted, from which queues, and why", and it runs the
ported upstream action tests (``fidelity.py``).

What is modelled, as Volcano does it:

* **Resources** as Volcano's ``api.Resource``: cpu in millicores, memory in bytes, other resources
  in thousandths, every pod one ``pods``; comparisons with its 0.1 tolerance, a missing dimension
  as zero (``Zero``) or unbounded (``Infinity``).
* **Jobs** are PodGroups (pods without one are ignored, as Volcano's cache does); a job's priority
  is its PodGroup's PriorityClass value (unnamed or unknown: the ``globalDefault`` class's, else 0),
  and jobs the job-order plugins do not tell apart go by creation time, then UID
  (``modules/semantics/session.py``); a task's priority is the pod's
  ``spec.priority`` (1 when unset); a pod is preemptable unless ``volcano.sh/preemptable`` says
  false (annotation, then label); ``preemptionPolicy: Never`` never evicts anything; critical pods
  (``system-cluster-critical``, ``system-node-critical``, namespace ``kube-system``) are never
  victims (conformance).
* **Plugins**: conformance, gang, priority, proportion (deserved by weight, water-filled up to
  capability and request, at least the guarantee), capacity (flat: deserved, guarantee,
  capability), overcommit (enqueue gate, factor 1.2), sla (permits), drf (its eviction filter is
  not modelled) and predicates (cordons, nodeSelector, required node affinity, taints and
  tolerations: ``predicates.py``; other node predicates are not modelled).
  Each session function walks the conf's tiers as ``framework/session_plugins.go`` does; victim
  filters use the one tier walk of ``modules/semantics/eviction.py``, and every eviction names the
  tier and plugins that chose it.
* **Actions**: enqueue (queue order, then job order; ``minResources`` against the queue),
  preempt (starving jobs, per queue; victims of lower-priority jobs in the same queue, node by node,
  evicted until the preemptor fits and its queue may allocate; then inside a job), reclaim (queues
  not overused, preemptive tasks; victims in other reclaimable queues), gangpreempt and gangreclaim
  (whole jobs: victims grouped into bundles a job can lose without breaking its gang ("safe") or
  only as a whole ("whole"), filtered by ``UnifiedEvictable``, domain by domain).

Not modelled (upstream cases that need them are listed as divergent): topology-aware preemption's
randomised candidate search, pod affinity, PodDisruptionBudgets, hierarchical queues, DRA. Gang
eviction searches the HyperNode domains the session is given (``Session.domains``: the what-if sets
them for a hard-mode job, ``whatif_topology.py``); otherwise the whole cluster is one domain.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any, Callable, Iterable, Mapping

from modules.core.errors import InputError
from modules.semantics import eviction as walk_model
from modules.semantics.minresources import scheduler_view
from modules.semantics.podspec import Reader, amounts, pod_requests
from modules.semantics.workloads import pod_group
from modules.semantics.scheduler_conf import parse_conf
from modules.semantics.session import EPOCH, creation_time, pods_priorities, priority_classes
from modules.semantics.shapes import annotations, as_dict, is_kind, labels, meta

from .predicates import PodFit, node_taints, selectors  # noqa: F401  (selectors: the actions' node filters)

CPU, MEMORY, PODS = "cpu", "memory", "pods"
MIN = 0.1                                       # Volcano's minResource
INF = math.inf
GROUP_ANNOTATION = "scheduling.k8s.io/group-name"
PREEMPTABLE = "volcano.sh/preemptable"
TASK_SPEC = "volcano.sh/task-spec"
CRITICAL = ("system-cluster-critical", "system-node-critical")
RUNNING, PENDING, PIPELINED, RELEASING, BOUND, SUCCEEDED, FAILED = (
    "Running", "Pending", "Pipelined", "Releasing", "Bound", "Succeeded", "Failed")
ALLOCATED = (BOUND, "Binding", RUNNING, "Allocated")
OVERCOMMIT_FACTOR = 1.2
INT32_MIN = -(2**31)
TEST_PLUGINS = ("test-preempt", "test-reclaim")   # plugins upstream's gang-eviction unit tests register

Res = dict   # resource name -> float, Volcano's units


# --- resources ------------------------------------------------------------------------------

def res_of(given: Mapping[str, Decimal] | None) -> Res:
    out: Res = {}
    for name, amount in (given or {}).items():
        if name.startswith(("requests.", "limits.", "count/")):
            continue
        value = float(amount)
        out[name] = value * 1000 if name != MEMORY and name != PODS else value
    return out


def r_add(a: Res, b: Res) -> Res:
    out = dict(a)
    for k, v in b.items():
        out[k] = out.get(k, 0.0) + v
    return out


def r_sub(a: Res, b: Res) -> Res:
    out = dict(a)
    for k, v in b.items():
        out[k] = out.get(k, 0.0) - v
    return out


def _le(x: float, y: float) -> bool:
    return x < y or abs(x - y) < MIN


def r_le(left: Res, right: Res, infinity: bool = False) -> bool:
    """``Resource.LessEqual``: every dimension of ``left`` within ``right``; a dimension ``right``
    lacks is 0, or unbounded with ``infinity``."""
    for name in set(left) | {CPU, MEMORY}:
        if name not in right and infinity and name not in (CPU, MEMORY):
            continue
        if not _le(left.get(name, 0.0), right.get(name, 0.0)):
            return False
    return True


def r_le_dims(left: Res, right: Res, req: Res) -> tuple[bool, list[str]]:
    """``LessEqualWithDimensionAndResourcesName``: only the dimensions ``req`` asks for; the names
    that do not fit."""
    over = [n for n, q in sorted(req.items()) if n != PODS and q > 0 and left.get(n, 0.0) > right.get(n, 0.0)]
    return not over, over


def r_empty(r: Res) -> bool:
    return all(v < MIN for n, v in r.items() if n != PODS)


def r_names(r: Res) -> set[str]:
    return {n for n, v in r.items() if v >= MIN}


def r_min(r: Res, cap: Res, infinity: bool) -> Res:
    """``MinDimensionResource``."""
    out = dict(r)
    for name in list(out):
        if name in cap:
            out[name] = min(out[name], cap[name])
        elif name in (CPU, MEMORY):
            out[name] = min(out[name], 0.0)
        elif not infinity:
            out[name] = 0.0
    return out


def r_max(a: Res, b: Res) -> Res:
    return {n: max(a.get(n, 0.0), b.get(n, 0.0)) for n in set(a) | set(b)}


def r_exceeded(a: Res, b: Res) -> Res:
    """``ExceededPart``: how much of ``a`` is above ``b``, per dimension."""
    return {n: max(v - b.get(n, 0.0), 0.0) for n, v in a.items()}


def r_greater_partly(left: Res, right: Res, req: Res) -> bool:
    """``GreaterPartlyWithRelevantDimensions``: ``left`` above ``right`` on a dimension ``req``
    asks for and ``right`` sets."""
    for name, q in req.items():
        if q <= 0 or name == PODS:
            continue
        if name in (CPU, MEMORY):
            if right.get(name, 0.0) < MIN:
                continue
        elif name not in right:
            continue
        if left.get(name, 0.0) - right.get(name, 0.0) >= MIN:
            return True
    return False


def r_share(allocated: Res, deserved: Res) -> float:
    share = 0.0
    for name, d in deserved.items():
        if name == PODS:
            continue
        a = allocated.get(name, 0.0)
        share = max(share, (a / d) if d > 0 else (1.0 if a > 0 else 0.0))
    return share


def show_res(r: Res, only: Iterable[str] | None = None) -> str:
    """``r`` for a message (``only``: just these resources)."""
    parts = []
    keep = None if only is None else set(only)
    for name in sorted(r):
        v = r[name]
        if abs(v) < MIN or v == INF or (keep is not None and name not in keep):
            continue
        if name == CPU:
            parts.append(f"cpu {v / 1000:g}")
        elif name == MEMORY:
            parts.append(f"memory {v / 2**30:g}Gi")
        elif name == "ephemeral-storage" or name.startswith("hugepages-"):   # bytes, in thousandths
            parts.append(f"{name} {v / 1000 / 2**30:g}Gi")
        elif name != PODS:
            parts.append(f"{name} {v / 1000:g}")
    return ", ".join(parts) or "nothing"


# --- the session's objects -------------------------------------------------------------------

@dataclass(eq=False)
class Task:
    """A pod in the eviction session, as Volcano's TaskInfo holds it."""
    uid: str                  # namespace/name
    name: str
    namespace: str
    job: str
    node: str
    status: str
    resreq: Res
    priority: int
    preemptable: bool
    best_effort: bool
    never: bool               # preemptionPolicy: Never
    priority_class: str
    role: str
    gated: bool
    order: int                # position in the input (creation order)


@dataclass(eq=False)
class Job:
    """A job in the eviction session, as Volcano's JobInfo holds it."""
    uid: str
    name: str
    namespace: str
    queue: str
    min_available: int
    task_min: dict[str, int]
    priority: int
    phase: str
    min_resources: Res | None
    preemptable: bool | None  # the PodGroup's volcano.sh/preemptable; None: unset
    order: int
    created: datetime = EPOCH  # the PodGroup's creationTimestamp (Go's zero time when absent)
    tasks: list[Task] = field(default_factory=list)

    def count(self, *statuses: str) -> int:
        return sum(t.status in statuses for t in self.tasks)

    def ready(self) -> int:
        return self.count(*ALLOCATED, SUCCEEDED)

    def waiting(self) -> int:
        return self.count(PIPELINED)

    def pending(self) -> list[Task]:
        return [t for t in self.tasks if t.status == PENDING]

    @property
    def is_pending(self) -> bool:
        return self.phase in ("Pending", "")

    @property
    def task_min_total(self) -> int:
        return sum(self.task_min.values())


@dataclass(eq=False)
class Queue:
    """A queue in the eviction session, as Volcano's QueueInfo holds it."""
    name: str
    weight: int
    capability: Res | None
    deserved: Res
    guarantee: Res
    priority: int
    state: str
    reclaimable: bool
    order: int


@dataclass(eq=False)
class NodeInfo:
    """A node in the eviction session: its allocatable resources and the tasks on it."""
    name: str
    allocatable: Res
    labels: dict
    tasks: list[Task] = field(default_factory=list)
    taints: tuple[tuple[str, str, str], ...] = ()   # NoSchedule and NoExecute taints (key, value, effect)
    unschedulable: bool = False                       # spec.unschedulable (cordoned)

    def idle(self) -> Res:
        used = {}
        for t in self.tasks:
            if t.status != PIPELINED:
                used = r_add(used, t.resreq)
        return r_sub(self.allocatable, used)

    def future_idle(self) -> Res:
        out = self.idle()
        for t in self.tasks:
            if t.status == RELEASING:
                out = r_add(out, t.resreq)
            elif t.status == PIPELINED:
                out = r_sub(out, t.resreq)
        return out


@dataclass
class Eviction:
    """One victim: who, from which queue, for whom, and the tier and plugins that chose it."""

    action: str
    task: str
    job: str
    queue: str
    node: str
    preemptor: str
    preemptor_queue: str
    tier: int | None
    plugins: tuple[str, ...]
    why: str


# --- reading the objects ---------------------------------------------------------------------

def _bool(value: Any) -> bool | None:
    text = str(value).strip()
    if text in ("1", "t", "T", "true", "TRUE", "True"):
        return True
    if text in ("0", "f", "F", "false", "FALSE", "False"):
        return False
    return None


def _preemptable(obj: dict) -> bool | None:
    for where in (annotations(obj), labels(obj)):
        if PREEMPTABLE in where:
            return bool(_bool(where[PREEMPTABLE]))
    return None


def _task_status(obj: dict) -> str:
    phase = as_dict(obj.get("status")).get("phase", PENDING)
    node = as_dict(obj.get("spec")).get("nodeName")
    if phase == RUNNING:
        return RELEASING if meta(obj).get("deletionTimestamp") else RUNNING
    if phase == PENDING:
        return BOUND if node else PENDING
    return phase


def _queue(reader: Reader, name: str, obj: dict, order: int) -> Queue:
    spec = as_dict(obj.get("spec"))
    cap = spec.get("capability")
    return Queue(name, reader.integer(spec, "weight", "spec", 1, "an integer >= 1", 1),
                 res_of(amounts(reader, cap, "spec.capability")) if cap else None,
                 res_of(amounts(reader, spec.get("deserved"), "spec.deserved")),
                 res_of(amounts(reader, as_dict(spec.get("guarantee")).get("resource"), "spec.guarantee.resource")),
                 reader.integer(spec, "priority", "spec", INT32_MIN, "an integer", 0),
                 str(as_dict(obj.get("status")).get("state") or "Open"), spec.get("reclaimable") is not False, order)


@dataclass
class Cluster:
    """The objects a session is opened from, read once."""

    nodes: dict[str, NodeInfo]
    jobs: dict[str, Job]
    queues: dict[str, Queue]
    priority_classes: dict[str, tuple[int, str | None]]
    conf: dict
    ignored: list[str] = field(default_factory=list)   # pods Volcano ignores, and why


def read_cluster(objects: Iterable[tuple[str, dict]], shown: str, conf: dict) -> Cluster:
    """Nodes, Queues, PriorityClasses, PodGroups and Pods among ``(where, object)`` pairs."""
    nodes: dict[str, NodeInfo] = {}
    queues: dict[str, Queue] = {}
    classes: dict[str, tuple[int, str | None]] = {}
    groups: list[tuple[str, dict]] = []
    pods: list[tuple[str, dict]] = []
    class_objects: list[dict] = []
    for where, obj in objects:
        if not isinstance(obj, dict):
            continue
        reader = Reader(shown, where)
        name = str(meta(obj).get("name", ""))
        if is_kind(obj, "Node", ""):
            status = as_dict(obj.get("status"))
            alloc = status.get("allocatable") or status.get("capacity") or {}
            nodes[name] = NodeInfo(name, res_of(amounts(reader, alloc, "status.allocatable")), dict(labels(obj)),
                                   taints=node_taints(obj), unschedulable=as_dict(obj.get("spec")).get("unschedulable")
                                   is True)
        elif is_kind(obj, "Queue", "scheduling.volcano.sh"):
            queues[name] = _queue(reader, name, obj, len(queues))
        elif is_kind(obj, "PriorityClass", "scheduling.k8s.io"):
            classes[name] = (reader.integer(obj, "value", "", INT32_MIN, "an integer", 0), obj.get("preemptionPolicy"))
            class_objects.append(obj)
        elif is_kind(obj, "PodGroup", "scheduling.volcano.sh"):
            groups.append((where, obj))
        elif is_kind(obj, "Pod", ""):
            pods.append((where, obj))
    jobs: dict[str, Job] = {}
    priorities = priority_classes(class_objects)     # a job's priority as Volcano's cache sets it
    unknown_class: dict[str, str] = {}               # job -> the PriorityClass it names that is not here
    for i, (where, obj) in enumerate(groups):
        reader = Reader(shown, where)
        group = pod_group(reader, obj)
        ns = str(meta(obj).get("namespace") or "default")
        minimum = scheduler_view(group.explicit_min_resources or {})
        task_min = as_dict(as_dict(obj.get("spec")).get("minTaskMember"))
        created = creation_time(obj)
        if created is None:
            raise reader.expected("metadata.creationTimestamp", "an RFC 3339 time", meta(obj).get("creationTimestamp"))
        jobs[f"{ns}/{group.name}"] = Job(
            f"{ns}/{group.name}", group.name, ns, group.queue or "default", group.min_member,
            {str(k): reader.integer(task_min, k, "spec.minTaskMember", 0, "an integer >= 0") for k in task_min},
            priorities.of(group.priority_class),
            str(as_dict(obj.get("status")).get("phase") or "Pending"),
            res_of(minimum) if minimum else None, _preemptable(obj), i, created)
        if group.priority_class and group.priority_class not in priorities.values:
            unknown_class[f"{ns}/{group.name}"] = group.priority_class
    ignored: list[str] = []
    for i, (where, obj) in enumerate(pods):
        reader = Reader(shown, where)
        spec = as_dict(obj.get("spec"))
        ns = str(meta(obj).get("namespace") or "default")
        name = str(meta(obj).get("name"))
        group = annotations(obj).get(GROUP_ANNOTATION)
        job = jobs.get(f"{ns}/{group}") if group else None
        status = _task_status(obj)
        req = res_of(pod_requests(reader, spec, "spec", require_containers=False).fit)
        best_effort = r_empty(req)
        req[PODS] = req.get(PODS, 0.0) + 1
        prio = spec.get("priority")
        task = Task(f"{ns}/{name}", name, ns, job.uid if job else "", str(spec.get("nodeName") or ""), status, req,
                    int(prio) if isinstance(prio, int) else 1, _preemptable(obj) is not False, best_effort,
                    spec.get("preemptionPolicy") == "Never", str(spec.get("priorityClassName") or ""),
                    str(annotations(obj).get(TASK_SPEC, "")), bool(spec.get("schedulingGates")), i)
        if job is None:
            if status == PENDING:
                ignored.append(f"{task.uid}: no PodGroup, so Volcano does not schedule it")
        else:
            job.tasks.append(task)
        if task.node in nodes and status not in (PENDING, SUCCEEDED, FAILED):
            nodes[task.node].tasks.append(task)
    current = {uid: job.priority for uid, job in jobs.items()}
    for uid, value, note in pods_priorities(unknown_class, [o for _, o in pods], current):
        jobs[uid].priority = value
        ignored.append(note)
    return Cluster(nodes, jobs, queues, classes, conf, ignored)


# --- the session ---------------------------------------------------------------------------

def _enabled(plugin: dict, flag: str) -> bool:
    value = plugin.get(flag)
    return value is None or value is True


class Session:
    """One scheduling cycle over a cluster: plugins opened from the conf's tiers, statements that
    evict and pipeline and can be discarded."""

    def __init__(self, cluster: Cluster):
        self.nodes = cluster.nodes
        self.queues = cluster.queues
        # Volcano drops jobs whose queue is missing from the snapshot.
        self.jobs = {k: j for k, j in cluster.jobs.items() if j.queue in self.queues}
        self.conf = cluster.conf
        self.tiers = walk_model.tiers_of(cluster.conf)
        self.names = {str(p.get("name")) for tier in self.tiers for p in tier}
        self.evictions: list[Eviction] = []
        self.refusals: dict[str, str] = {}          # job -> which enqueue gate refused it, with its figures
        self.pipelined: dict[str, str] = {}
        self.explain: dict | None = None             # (action, pod) -> why it was refused (explain.py), when asked
        self.allowed: dict[str, Task] = {}           # candidates some walk allowed (explained sessions)
        # (job, action) -> the gang-eviction domains [(HyperNode, node names)], None: the whole cluster
        self.domains: Callable[[Job, str], list[tuple[str, tuple[str, ...]]] | None] = lambda job, action: None
        total: Res = {}
        for node in self.nodes.values():
            total = r_add(total, node.allocatable)
        self.total = total
        self._open_proportion()
        self._open_capacity()
        self._open_overcommit()

    # ---- tier walks of the session functions
    def _plugins(self, flag: str | None = None) -> Iterable[tuple[int, str, dict]]:
        for t, tier in enumerate(self.tiers):
            for plugin in tier:
                if flag is None or _enabled(plugin, flag):
                    yield t, str(plugin.get("name")), plugin

    def _has(self, name: str, flag: str | None = None) -> bool:
        return any(n == name for _, n, _ in self._plugins(flag))

    def _voting(self, flag: str, fns: Mapping[str, Callable[[Any], int]], obj: Any) -> bool:
        """JobPipelined / JobEnqueueable: a reject ends it; a tier with a permit decides."""
        for tier in self.tiers:
            found = False
            for plugin in tier:
                fn = fns.get(str(plugin.get("name")))
                if fn is None or not _enabled(plugin, flag):
                    continue
                vote = fn(obj)
                if vote < 0:
                    return False
                found = found or vote > 0
            if found:
                return True
        return True

    def job_starving(self, job: Job) -> bool:
        fns = {"gang": lambda j: j.waiting() + j.ready() < j.min_available,
               "priority": lambda j: j.ready() + j.waiting() < len(j.tasks)}
        for tier in self.tiers:
            found = False
            for plugin in tier:
                fn = fns.get(str(plugin.get("name")))
                if fn is None or not _enabled(plugin, "enableJobStarving"):
                    continue
                found = True
                if not fn(job):
                    return False
            if found:
                return True
        return False

    def job_pipelined(self, job: Job) -> bool:
        def gang(j: Job) -> int:
            return 1 if self._task_pipelined(j) and j.waiting() + j.ready() + sum(
                t.best_effort for t in j.pending()) >= j.min_available else -1
        return self._voting("enableJobPipelined", {"gang": gang}, job)

    def _task_pipelined(self, job: Job) -> bool:
        if job.min_available < job.task_min_total:
            return True
        occupied: dict[str, int] = {}
        for t in job.tasks:
            if t.status in ALLOCATED or t.status in (SUCCEEDED, PIPELINED) or (
                    t.status == PENDING and r_empty(t.resreq)):
                occupied[t.role] = occupied.get(t.role, 0) + 1
        return all(occupied.get(role, 0) >= n for role, n in job.task_min.items())

    def job_valid(self, job: Job) -> bool:
        if "gang" not in self.names:
            return True
        valid = sum(t.status in ALLOCATED or t.status in (SUCCEEDED, PIPELINED, PENDING) for t in job.tasks)
        return valid >= job.min_available

    def job_enqueueable(self, job: Job) -> bool:
        fns = {"proportion": lambda j: self._share_enqueueable(self.prop, j),
               "capacity": lambda j: self._share_enqueueable(self.cap, j),
               "overcommit": self._overcommit_enqueueable, "sla": lambda j: 1}
        return self._voting("enableJobEnqueued", fns, job)

    def allocatable(self, queue: Queue, task: Task) -> bool:
        def proportion(q: Queue, t: Task) -> bool:
            return self._queue_allocatable(self.prop[q.name], q, [t], self.prop[q.name].deserved)

        def capacity(q: Queue, t: Task) -> bool:
            return self._queue_allocatable(self.cap[q.name], q, [t], self.cap[q.name].real_capability,
                                           check_state=False)
        fns = {"proportion": proportion, "capacity": capacity}
        for _, name, _ in self._plugins("enabledAllocatable"):
            fn = fns.get(name)
            if fn is not None and queue.name in self._attrs(name) and not fn(queue, task):
                return False
        return True

    def overused(self, queue: Queue) -> bool:
        for _, name, _ in self._plugins("enabledOverused"):
            if name == "proportion" and queue.name in self.prop:
                attr = self.prop[queue.name]
                if r_le(attr.deserved, attr.allocated):
                    return True
        return False

    def preemptive(self, queue: Queue, tasks: list[Task]) -> bool:
        for _, name, _ in self._plugins("enablePreemptive"):
            if name == "proportion" and queue.name in self.prop:
                if not self._queue_allocatable(self.prop[queue.name], queue, tasks, self.prop[queue.name].deserved):
                    return False
            elif name == "capacity" and queue.name in self.cap:
                if not self._capacity_preemptive(queue, tasks):
                    return False
        return True

    def _attrs(self, name: str) -> dict:
        return self.prop if name == "proportion" else self.cap

    # ---- orders
    def task_key(self, t: Task) -> tuple:
        prio = -t.priority if self._has("priority", "enableTaskOrder") else 0
        return (prio, t.uid)

    def job_cmp(self, a: Job, b: Job) -> int:
        for _, name, _ in self._plugins("enableJobOrder"):
            if name == "priority" and a.priority != b.priority:
                return -1 if a.priority > b.priority else 1
            if name == "gang":
                ra, rb = a.ready() >= a.min_available, b.ready() >= b.min_available
                if ra != rb:
                    return 1 if ra else -1
        return 0

    def job_key(self):
        def cmp(a: Job, b: Job) -> int:
            c = self.job_cmp(a, b)
            if c:
                return c
            # JobOrderFn's fallback: the older job first, then the smaller UID
            ka, kb = (a.created, a.uid), (b.created, b.uid)
            return -1 if ka < kb else (1 if ka > kb else 0)
        return functools.cmp_to_key(cmp)

    def queue_cmp(self, a: Queue, b: Queue) -> int:
        for _, name, _ in self._plugins("enableQueueOrder"):
            if name in ("proportion", "capacity"):
                if a.priority != b.priority:
                    return -1 if a.priority > b.priority else 1
                attrs = self._attrs(name)
                sa = attrs[a.name].share if a.name in attrs else 0.0
                sb = attrs[b.name].share if b.name in attrs else 0.0
                if sa != sb:
                    return -1 if sa < sb else 1
                if name == "capacity" and a.name in attrs and b.name in attrs:
                    da, db = not r_empty(attrs[a.name].deserved), not r_empty(attrs[b.name].deserved)
                    if da != db:
                        return -1 if da else 1
        return 0

    def queue_key(self):
        def cmp(a: Queue, b: Queue) -> int:
            return self.queue_cmp(a, b) or (-1 if a.name < b.name else (1 if a.name > b.name else 0))
        return functools.cmp_to_key(cmp)

    def victim_order(self, victims: list[Task], preemptor: Task) -> list[Task]:
        """``BuildVictimsPriorityQueue``: other queues in victim-queue order, then lower jobs
        first, inside a job the lowest task first."""
        pjob = self.jobs.get(preemptor.job)

        def cmp(a: Task, b: Task) -> int:
            if a.job != b.job:
                ja, jb = self.jobs[a.job], self.jobs[b.job]
                if pjob is not None and ja.queue != jb.queue:
                    qa, qb = self.queues[ja.queue], self.queues[jb.queue]
                    c = self.queue_cmp(qa, qb)
                    if c:
                        return -c
                    return -1 if qa.name > qb.name else 1
                c = self.job_cmp(ja, jb)
                if c:
                    return -c
            ka, kb = self.task_key(a), self.task_key(b)
            return -1 if ka > kb else (1 if ka < kb else 0)
        return sorted(victims, key=functools.cmp_to_key(cmp))

    # ---- victim filters, walked by modules.semantics.eviction
    def _critical(self, t: Task) -> bool:
        return t.priority_class in CRITICAL or t.namespace == "kube-system"

    def _gang_filter(self, tasks: list[Task]) -> list[Task]:
        occupied: dict[str, int] = {}
        out = []
        for t in tasks:
            job = self.jobs.get(t.job)
            if job is None:
                continue
            occupied.setdefault(job.uid, job.ready())
            if occupied[job.uid] > job.min_available:
                occupied[job.uid] -= 1
                out.append(t)
        return out

    def _priority_filter(self, preemptor: Task) -> Callable[[list[Task]], list[Task]]:
        pjob = self.jobs[preemptor.job]

        def fn(tasks: list[Task]) -> list[Task]:
            out = []
            for t in tasks:
                job = self.jobs.get(t.job)
                if job is None:
                    continue
                if job.uid != pjob.uid:
                    if job.priority < pjob.priority:
                        out.append(t)
                elif t.priority < preemptor.priority:
                    out.append(t)
            return out
        return fn

    def victims(self, action: str, preemptor: Task, candidates: list[Task]) -> walk_model.Decision:
        filters: dict[str, Callable[[list[Task]], Any]] = {
            "conformance": lambda ts: [t for t in ts if not self._critical(t)],
            "gang": self._gang_filter if action in (walk_model.PREEMPT, walk_model.RECLAIM) else (lambda ts: list(ts)),
        }
        if action == walk_model.PREEMPT:
            filters["priority"] = self._priority_filter(preemptor)
        elif action == walk_model.RECLAIM:
            filters["proportion"] = lambda ts: self._proportion_reclaimable(ts)
            filters["capacity"] = lambda ts: self._capacity_reclaimable(preemptor, ts)
        else:
            pjob = self.jobs[preemptor.job]
            if action == walk_model.GANG_PREEMPT:
                filters["priority"] = lambda ts: [t for t in ts if self.jobs[t.job].priority < pjob.priority]
                filters["capacity"] = lambda ts: list(ts)
            else:
                filters["priority"] = lambda ts: list(ts)
                filters["capacity"] = lambda ts: self._capacity_unified_reclaim(ts)
            filters["test-preempt"] = filters["test-reclaim"] = lambda ts: list(ts)
        filters = {k: v for k, v in filters.items() if k in self.names}
        tiers = walk_model.filters_by_tier(self.conf, action)
        if action in walk_model.GANG_EVICTION:
            # upstream's gang-eviction unit tests register a plugin of their own that permits all
            tiers = [names + [str(p["name"]) for p in tier if p.get("name") in TEST_PLUGINS]
                     for names, tier in zip(tiers, self.tiers)]
        decision = walk_model.walk_tiers(tiers, candidates, filters, key=lambda t: t.uid)
        if self.explain is not None:
            from .explain import walk_refusals
            self.allowed.update((t.uid, t) for t in decision.victims)
            walk_refusals(self, action, preemptor, candidates, tiers, filters, decision)
        return decision

    # ---- proportion
    @dataclass
    class _Attr:
        """The proportion plugin's share of one queue (its queueAttr)."""
        name: str
        weight: int
        deserved: Res
        allocated: Res
        request: Res
        inqueue: Res
        guarantee: Res
        capability: Res | None
        real_capability: Res
        share: float = 0.0

    def _queue_jobs(self) -> dict[str, list[Job]]:
        out: dict[str, list[Job]] = {}
        for job in self.jobs.values():
            out.setdefault(job.queue, []).append(job)
        return out

    def _base_attr(self, queue: Queue, total_guarantee: Res, deserved: Res) -> "_Attr":
        cap = dict(queue.capability) if queue.capability else None
        if cap is not None:
            cap.setdefault(CPU, 0.0)
            cap.setdefault(MEMORY, 0.0)
            if cap[CPU] <= 0:
                cap[CPU] = INF
            if cap[MEMORY] <= 0:
                cap[MEMORY] = INF
        real = r_add(r_exceeded(self.total, total_guarantee), queue.guarantee)
        if cap is not None:
            real = r_min(real, cap, infinity=True)
        attr = Session._Attr(queue.name, queue.weight, deserved, {}, {}, {}, dict(queue.guarantee), cap, real)
        for job in self._queue_jobs().get(queue.name, []):
            for t in job.tasks:
                if t.status in ALLOCATED:
                    attr.allocated = r_add(attr.allocated, t.resreq)
                    attr.request = r_add(attr.request, t.resreq)
                elif t.status == PENDING:
                    attr.request = r_add(attr.request, t.resreq)
            if job.phase == "Inqueue" and job.min_resources is not None:
                attr.inqueue = r_add(attr.inqueue, r_exceeded(job.min_resources, self._job_allocated(job)))
        return attr

    def _job_allocated(self, job: Job) -> Res:
        out: Res = {}
        for t in job.tasks:
            if t.status in ALLOCATED:
                out = r_add(out, t.resreq)
        return out

    def _total_guarantee(self) -> Res:
        out: Res = {}
        for q in self.queues.values():
            out = r_add(out, q.guarantee)
        return out

    def _open_proportion(self) -> None:
        self.prop: dict[str, Session._Attr] = {}
        if "proportion" not in self.names:
            return
        guarantee = self._total_guarantee()
        for name in sorted({j.queue for j in self.jobs.values()}):
            self.prop[name] = self._base_attr(self.queues[name], guarantee, {})
        remaining = dict(self.total)
        meet: set[str] = set()
        while True:
            weight = sum(a.weight for a in self.prop.values() if a.name not in meet)
            if weight == 0:
                break
            old_remaining = dict(remaining)
            increased: Res = {}
            decreased: Res = {}
            for attr in self.prop.values():
                if attr.name in meet:
                    continue
                old = dict(attr.deserved)
                attr.deserved = r_add(attr.deserved, {k: v * attr.weight / weight for k, v in remaining.items()})
                attr.deserved = r_min(attr.deserved, attr.real_capability, infinity=True)
                attr.deserved = r_min(attr.deserved, attr.request, infinity=False)
                attr.deserved = r_max(attr.deserved, attr.guarantee)
                attr.share = r_share(attr.allocated, attr.deserved)
                if r_le(attr.request, attr.deserved) or _same(attr.deserved, old):
                    meet.add(attr.name)
                for k in set(attr.deserved) | set(old):
                    d = attr.deserved.get(k, 0.0) - old.get(k, 0.0)
                    if d > 0:
                        increased[k] = increased.get(k, 0.0) + d
                    elif d < 0:
                        decreased[k] = decreased.get(k, 0.0) - d
            remaining = r_exceeded(r_add(remaining, decreased), increased)
            if r_empty(remaining) or _same(remaining, old_remaining):
                break

    def _proportion_reclaimable(self, tasks: list[Task]) -> list[Task]:
        allocations: dict[str, Res] = {}
        out = []
        for t in tasks:
            job = self.jobs.get(t.job)
            if job is None or job.queue not in self.prop:
                continue
            attr = self.prop[job.queue]
            allocated = allocations.setdefault(job.queue, dict(attr.allocated))
            if not r_le(allocated, attr.deserved):
                allocations[job.queue] = r_sub(allocated, t.resreq)
                out.append(t)
        return out

    def _queue_allocatable(self, attr: "_Attr", queue: Queue, tasks: list[Task], bound: Res,
                           check_state: bool = True) -> bool:
        if check_state and queue.state != "Open":
            return False
        req: Res = {}
        for t in tasks:
            req = r_add(req, t.resreq)
        return r_le_dims(r_add(attr.allocated, req), bound, req)[0]

    def _share_enqueueable(self, attrs: dict, job: Job) -> int:
        """proportion's and capacity's enqueue gate: a closed queue refuses; the job's minResources,
        with what the queue uses and holds Inqueue, within the queue's real capability."""
        queue = self.queues[job.queue]
        plugin = "proportion" if attrs is self.prop else "capacity"
        if queue.state != "Open":
            self.refusals[job.uid] = f"{plugin}: queue {queue.name} is {queue.state}, not Open"
            return -1
        if job.min_resources is None or job.queue not in attrs:
            return 1
        attr = attrs[job.queue]
        need = r_add(r_add(job.min_resources, attr.allocated), attr.inqueue)
        if r_le_dims(need, attr.real_capability, job.min_resources)[0]:
            attr.inqueue = r_add(attr.inqueue, job.min_resources)
            return 1
        asked = job.min_resources
        self.refusals[job.uid] = (f"{plugin}: queue {queue.name} may hold {show_res(attr.real_capability, asked)}; it "
                                  f"uses {show_res(attr.allocated, asked)} and its Inqueue jobs hold "
                                  f"{show_res(attr.inqueue, asked)}")
        return -1

    # ---- capacity (flat queues)
    def _open_capacity(self) -> None:
        self.cap: dict[str, Session._Attr] = {}
        if "capacity" not in self.names:
            return
        guarantee = self._total_guarantee()
        for name in sorted({j.queue for j in self.jobs.values()}):
            queue = self.queues[name]
            attr = self._base_attr(queue, guarantee, dict(queue.deserved))
            attr.deserved = r_max(r_min(attr.deserved, attr.real_capability, infinity=True), attr.guarantee)
            attr.share = r_share(attr.allocated, attr.deserved)
            self.cap[name] = attr

    def _capacity_reclaimable(self, reclaimer: Task, tasks: list[Task]) -> list[Task]:
        allocations: dict[str, Res] = {}
        out = []
        for t in self.victim_order(tasks, reclaimer):
            job = self.jobs.get(t.job)
            if job is None or job.queue not in self.cap:
                continue
            if not (r_names(t.resreq) - {PODS}) & r_names(reclaimer.resreq):
                continue
            attr = self.cap[job.queue]
            allocated = allocations.setdefault(job.queue, dict(attr.allocated))
            if not self._capacity_victim(attr, allocated, t):
                continue
            allocations[job.queue] = r_sub(allocated, t.resreq)
            out.append(t)
        return out

    def _capacity_victim(self, attr: "_Attr", allocated: Res, t: Task) -> bool:
        if not r_le(attr.guarantee, r_sub(allocated, t.resreq)):
            return False
        if not (r_names(t.resreq) & r_names(attr.deserved)):
            return True
        return r_greater_partly(allocated, attr.deserved, t.resreq)

    def _capacity_unified_reclaim(self, tasks: list[Task]) -> list[Task]:
        allocations: dict[str, Res] = {}
        out = []
        for t in tasks:
            attr = self.cap[self.jobs[t.job].queue]
            allocated = allocations.setdefault(attr.name, dict(attr.allocated))
            if self._capacity_victim(attr, allocated, t):
                allocations[attr.name] = r_sub(allocated, t.resreq)
                out.append(t)
        return out

    def _capacity_preemptive(self, queue: Queue, tasks: list[Task]) -> bool:
        if queue.state != "Open":
            return False
        attr = self.cap[queue.name]
        req: Res = {}
        for t in tasks:
            req = r_add(req, t.resreq)
        future = r_add(attr.allocated, req)
        if not r_le_dims(future, attr.real_capability, req)[0]:
            return False
        for name, q in req.items():
            if q <= 0 or name == PODS or (future.get(name, 0.0) < MIN and attr.deserved.get(name, 0.0) < MIN):
                continue
            if _le(future.get(name, 0.0), attr.deserved.get(name, 0.0)):
                return True
        return False

    def _open_overcommit(self) -> None:
        """overcommit's enqueue gate: the cluster times the factor, less what nodes use and what
        Inqueue (and running, not yet full) jobs still hold back."""
        factor = OVERCOMMIT_FACTOR
        for _, name, plugin in self._plugins():
            if name == "overcommit":
                given = as_dict(plugin.get("arguments")).get("overcommit-factor")
                if isinstance(given, (int, float)) and not isinstance(given, bool) and given >= 1.0:
                    factor = float(given)
        used: Res = {}
        for node in self.nodes.values():
            for t in node.tasks:
                if t.status != PIPELINED:
                    used = r_add(used, t.resreq)
        self.oc_factor = factor
        self.oc_idle = r_sub({k: v * factor for k, v in self.total.items()}, used)
        self.oc_inqueue: Res = {}
        for job in self.jobs.values():
            if job.min_resources is None:
                continue
            if job.phase == "Inqueue":
                self.oc_inqueue = r_add(self.oc_inqueue, job.min_resources)
            elif job.phase == "Running" and job.ready() >= job.min_available:
                self.oc_inqueue = r_add(self.oc_inqueue, r_exceeded(job.min_resources, self._job_allocated(job)))

    def _overcommit_enqueueable(self, job: Job) -> int:
        if job.min_resources is None:
            return 1
        if r_le_dims(r_add(self.oc_inqueue, job.min_resources), self.oc_idle, job.min_resources)[0]:
            self.oc_inqueue = r_add(self.oc_inqueue, job.min_resources)   # JobEnqueued
            return 1
        self.refusals[job.uid] = (f"overcommit: the cluster's allocatable times {self.oc_factor:g}, less what pods "
                                  f"use, leaves {show_res(self.oc_idle, job.min_resources)}, of which Inqueue jobs "
                                  f"hold {show_res(self.oc_inqueue, job.min_resources)}")
        return -1

    # ---- statements
    def _track(self, t: Task, allocated: bool) -> None:
        job = self.jobs.get(t.job)
        if job is None:
            return
        for attrs in (self.prop, self.cap):
            attr = attrs.get(job.queue)
            if attr is not None:
                attr.allocated = (r_add if allocated else r_sub)(attr.allocated, t.resreq)
                attr.share = r_share(attr.allocated, attr.deserved)

    def evict(self, ops: list, t: Task, record: Eviction) -> None:
        ops.append(("evict", t, t.status, record))
        t.status = RELEASING
        self._track(t, False)

    def pipeline(self, ops: list, t: Task, node: str) -> None:
        ops.append(("pipeline", t, t.status, node))
        t.status = PIPELINED
        t.node = node
        self.nodes[node].tasks.append(t)
        self._track(t, True)

    def discard(self, ops: list) -> None:
        for op, t, status, extra in reversed(ops):
            if op == "evict":
                self._track(t, True)
            else:
                self._track(t, False)
                self.nodes[extra].tasks.remove(t)
                t.node = ""
            t.status = status
        ops.clear()

    def commit(self, ops: list) -> None:
        for op, t, _, extra in ops:
            if op == "evict":
                self.evictions.append(extra)
            else:
                self.pipelined[t.uid] = extra
        ops.clear()

    # ---- node predicates (resources aside: nodeSelector and the pod count)
    def predicate(self, t: Task, node: NodeInfo, fit: "PodFit | None") -> bool:
        """The predicates plugin's node filters a pod's spec decides (resources aside):
        NodeUnschedulable, NodeAffinity (nodeSelector, required node affinity), TaintToleration."""
        return (fit or PodFit()).allows(node)


def _same(a: Res, b: Res) -> bool:
    return all(abs(a.get(k, 0.0) - b.get(k, 0.0)) < 1e-9 for k in set(a) | set(b))


def conf_of(text: Any, shown: str) -> dict:
    conf, problem = parse_conf(text)
    if conf is None:
        raise InputError(shown, "volcano-scheduler.conf", f"the scheduler configuration {problem}")
    return conf
