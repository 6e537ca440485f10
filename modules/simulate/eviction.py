"""Volcano's whole scheduling cycle around allocate: the enqueue gate and the eviction actions
(preempt, reclaim, gangpreempt, gangreclaim), as a session over the cluster model (``model.py``;
``cluster_of`` is the session's index of it: nodes, jobs, tasks and queues in Volcano's
``api.Resource``) (Volcano v1.15.1, ``pkg/scheduler/actions``, ``pkg/scheduler/plugins``). It
answers "if this job is submitted into this queue, which running pods are evicted, from which
queues, and why", and it runs the ported upstream action tests (``fidelity.py``).

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
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Callable, Iterable, Mapping

from modules.core.errors import InputError
from modules.semantics import eviction as walk_model
from modules.core.vocabulary.go import parse_bool
from modules.core.vocabulary.resource_names import scheduler_view
from modules.semantics.scheduler_conf import parse_conf
from modules.semantics.session import EPOCH, pods_priorities
from modules.semantics.shapes import annotations, labels

from .model import ClusterModel, GroupObject, QueueObject, read_model
from .objects import NodeObject, PodObject
from .predicates import PodFit, pod_fits  # noqa: F401  (pod_fits: the actions' node filters)
from modules.core.vocabulary import resource as vres

from .resources import (ALLOCATED, BOUND, CPU, FAILED, INF, MEMORY, MIN, PENDING, PIPELINED, PODS,  # noqa: F401
                        RELEASING, RUNNING, SUCCEEDED, Res, r_share, show_res)
from .shares import SharePlugins

PREEMPTABLE = "volcano.sh/preemptable"
TASK_SPEC = "volcano.sh/task-spec"
CRITICAL = ("system-cluster-critical", "system-node-critical")
TEST_PLUGINS = ("test-preempt", "test-reclaim")   # plugins upstream's gang-eviction unit tests register


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
                used = vres.add(used, t.resreq)
        return vres.sub(self.allocatable, used)

    def future_idle(self) -> Res:
        out = self.idle()
        for t in self.tasks:
            if t.status == RELEASING:
                out = vres.add(out, t.resreq)
            elif t.status == PIPELINED:
                out = vres.sub(out, t.resreq)
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
    return parse_bool(str(value).strip())


def _preemptable(obj: dict) -> bool | None:
    return _marked(annotations(obj), labels(obj))


def _pod_preemptable(pod: PodObject) -> bool | None:
    return _marked(pod.annotations, pod.labels)


def _marked(*where: dict) -> bool | None:
    """``volcano.sh/preemptable``: the annotation, then the label; None when neither says."""
    for found in where:
        if PREEMPTABLE in found:
            return bool(_bool(found[PREEMPTABLE]))
    return None


def _task_status(pod: PodObject) -> str:
    phase = PENDING if pod.phase is None else pod.phase
    if phase == RUNNING:
        return RELEASING if pod.deleting else RUNNING
    if phase == PENDING:
        return BOUND if pod.node else PENDING
    return phase


@dataclass
class Cluster:
    """The session's index of a cluster model (``model.py``): nodes, jobs, queues in ``api.Resource``."""

    nodes: dict[str, NodeInfo]
    jobs: dict[str, Job]
    queues: dict[str, Queue]
    priority_classes: dict[str, tuple[int, str | None]]
    conf: dict
    ignored: list[str] = field(default_factory=list)   # pods Volcano ignores, and why


def read_cluster(objects: Iterable[tuple[str, dict]], shown: str, conf: dict) -> Cluster:
    """The session's cluster from ``(where, object)`` pairs, through the one model (``read_model``)."""
    return cluster_of(read_model(objects, shown), conf)


class Converted:
    """``api.Resource`` of each distinct amounts, converted once (a fabric's nodes and a job's pods
    repeat a handful of shapes); each caller gets its own copy."""

    def __init__(self) -> None:
        self.known: dict[tuple, Res] = {}

    def __call__(self, amounts: dict) -> Res:
        key = tuple(amounts.items())
        found = self.known.get(key)
        if found is None:
            found = self.known[key] = vres.new_resource(amounts)
        return dict(found)


def node_info(node: NodeObject, convert: Callable[[dict], Res] = vres.new_resource) -> NodeInfo:
    return NodeInfo(node.name, convert(node.allocatable), node.labels, taints=node.taints,
                    unschedulable=node.unschedulable)


def session_queue(queue: QueueObject, order: int) -> Queue:
    return Queue(queue.name, queue.weight,
                 vres.new_resource(queue.capability) if queue.capability is not None else None,
                 vres.new_resource(queue.deserved), vres.new_resource(queue.guarantee), queue.priority, queue.state,
                 queue.reclaimable, order)


def session_job(model: ClusterModel, group: GroupObject, order: int) -> Job:
    spec = group.spec()
    minimum = scheduler_view(spec.explicit_min_resources or {})
    return Job(group.uid, spec.name, group.namespace, spec.queue or "default", spec.min_member, group.task_min(),
               model.priority_of(group), str(group.phase or "Pending"),
               vres.new_resource(minimum) if minimum else None, _preemptable(group.obj), order, group.created())


def session_task(pod: PodObject, job: Job | None, order: int,
                 convert: Callable[[dict], Res] = vres.new_resource) -> Task:
    spec, ns = pod.spec, pod.namespace or "default"
    req = convert(pod.requests(require_containers=False))
    best_effort = vres.is_empty(req)
    req[PODS] = req.get(PODS, 0.0) + 1
    prio = spec.get("priority")
    return Task(f"{ns}/{pod.name}", pod.name, ns, job.uid if job else "", str(pod.node or ""), _task_status(pod), req,
                int(prio) if isinstance(prio, int) else 1, _pod_preemptable(pod) is not False, best_effort,
                spec.get("preemptionPolicy") == "Never", str(spec.get("priorityClassName") or ""),
                str(pod.annotations.get(TASK_SPEC, "")), bool(spec.get("schedulingGates")), order)


def cluster_of(model: ClusterModel, conf: dict) -> Cluster:
    """The session's index of the model: nodes, queues, PriorityClasses, jobs (PodGroups) and their
    tasks, each read once by the model and only converted here."""
    convert = Converted()
    nodes = {n.name: node_info(n, convert) for n in model.nodes}
    queues: dict[str, Queue] = {}
    for queue in model.queue_list:
        queues[queue.name] = session_queue(queue, len(queues))
    classes = {name: (value, policy) for name, value, policy in model.class_list}
    jobs: dict[str, Job] = {}
    unknown_class: dict[str, str] = {}               # job -> the PriorityClass it names that is not here
    for i, group in enumerate(model.group_list):
        job = jobs[group.uid] = session_job(model, group, i)
        named = group.spec().priority_class
        if named and named not in model.classes.values:
            unknown_class[job.uid] = named
    ignored: list[str] = []
    for i, pod in enumerate(model.pods):
        group = model.group_of(pod)
        job = jobs.get(group.uid) if group is not None else None
        task = session_task(pod, job, i, convert)
        if job is None:
            if task.status == PENDING:
                ignored.append(f"{task.uid}: no PodGroup, so Volcano does not schedule it")
        else:
            job.tasks.append(task)
        if task.node in nodes and task.status not in (PENDING, SUCCEEDED, FAILED):
            nodes[task.node].tasks.append(task)
    current = {uid: job.priority for uid, job in jobs.items()}
    for uid, value, note in pods_priorities(unknown_class, [o for _, o in model.pod_pairs], current):
        jobs[uid].priority = value
        ignored.append(note)
    return Cluster(nodes, jobs, queues, classes, conf, ignored)


# --- the session ---------------------------------------------------------------------------

def _enabled(plugin: dict, flag: str) -> bool:
    value = plugin.get(flag)
    return value is None or value is True


class Session(SharePlugins):
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
            total = vres.add(total, node.allocatable)
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
                    t.status == PENDING and vres.is_empty(t.resreq)):
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
                if vres.less_equal(attr.deserved, attr.allocated):
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
                    da, db = not vres.is_empty(attrs[a.name].deserved), not vres.is_empty(attrs[b.name].deserved)
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

    # ---- statements
    def _track(self, t: Task, allocated: bool) -> None:
        job = self.jobs.get(t.job)
        if job is None:
            return
        for attrs in (self.prop, self.cap):
            attr = attrs.get(job.queue)
            if attr is not None:
                attr.allocated = (vres.add if allocated else vres.sub)(attr.allocated, t.resreq)
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


def conf_of(text: Any, shown: str) -> dict:
    conf, problem = parse_conf(text)
    if conf is None:
        raise InputError(shown, "volcano-scheduler.conf", f"the scheduler configuration {problem}")
    return conf
