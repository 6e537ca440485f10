"""The share plugins of the eviction session (Volcano v1.15.1 ``pkg/scheduler/plugins``):
proportion (deserved by weight, water-filled up to capability and request, at least the
guarantee), capacity (flat queues: deserved, guarantee, capability) and overcommit (the enqueue
gate). A mixin of ``eviction.Session``: it reads the session's jobs, queues, nodes, total and
plugin entries."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from modules.semantics.shapes import as_dict

from modules.core.vocabulary import resource as vres

from .resources import ALLOCATED, CPU, INF, MEMORY, MIN, PENDING, PIPELINED, PODS, Res, r_share, show_res

if TYPE_CHECKING:
    from .eviction import Job, Queue, Task

OVERCOMMIT_FACTOR = 1.2


def _same(a: Res, b: Res) -> bool:
    return all(abs(a.get(k, 0.0) - b.get(k, 0.0)) < 1e-9 for k in set(a) | set(b))


class SharePlugins:
    """proportion's, capacity's and overcommit's session state and functions."""

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

    def _queue_attrs(self, plugin: str, deserved: Callable[[Queue], Res]) -> dict[str, "_Attr"]:
        """The plugin's base share of every queue that has a job (none when the conf lacks the
        plugin), each queue's jobs grouped once."""
        if plugin not in self.names:
            return {}
        by_queue: dict[str, list[Job]] = {}
        for job in self.jobs.values():
            by_queue.setdefault(job.queue, []).append(job)
        guarantee = self._total_guarantee()
        return {name: self._base_attr(self.queues[name], guarantee, deserved(self.queues[name]), by_queue[name])
                for name in sorted(by_queue)}

    def _base_attr(self, queue: Queue, total_guarantee: Res, deserved: Res, jobs: list[Job]) -> "_Attr":
        cap = dict(queue.capability) if queue.capability else None
        if cap is not None:
            cap.setdefault(CPU, 0.0)
            cap.setdefault(MEMORY, 0.0)
            if cap[CPU] <= 0:
                cap[CPU] = INF
            if cap[MEMORY] <= 0:
                cap[MEMORY] = INF
        real = vres.add(vres.exceeded_part(self.total, total_guarantee), queue.guarantee)
        if cap is not None:
            real = vres.min_dimension(real, cap, vres.INFINITY)
        attr = SharePlugins._Attr(queue.name, queue.weight, deserved, {}, {}, {}, dict(queue.guarantee), cap, real)
        for job in jobs:
            for t in job.tasks:
                if t.status in ALLOCATED:
                    attr.allocated = vres.add(attr.allocated, t.resreq)
                    attr.request = vres.add(attr.request, t.resreq)
                elif t.status == PENDING:
                    attr.request = vres.add(attr.request, t.resreq)
            if job.phase == "Inqueue" and job.min_resources is not None:
                attr.inqueue = vres.add(attr.inqueue, vres.exceeded_part(job.min_resources, self._job_allocated(job)))
        return attr

    def _job_allocated(self, job: Job) -> Res:
        out: Res = {}
        for t in job.tasks:
            if t.status in ALLOCATED:
                out = vres.add(out, t.resreq)
        return out

    def _total_guarantee(self) -> Res:
        out: Res = {}
        for q in self.queues.values():
            out = vres.add(out, q.guarantee)
        return out

    def _open_proportion(self) -> None:
        self.prop = self._queue_attrs("proportion", lambda queue: {})
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
                attr.deserved = vres.add(attr.deserved, vres.multi(remaining, attr.weight / weight))   # Multi(w/total)
                attr.deserved = vres.min_dimension(attr.deserved, attr.real_capability, vres.INFINITY)
                attr.deserved = vres.min_dimension(attr.deserved, attr.request, vres.ZERO)
                attr.deserved = vres.set_max(attr.deserved, attr.guarantee)
                attr.share = r_share(attr.allocated, attr.deserved)
                if vres.less_equal(attr.request, attr.deserved) or _same(attr.deserved, old):
                    meet.add(attr.name)
                for k in set(attr.deserved) | set(old):
                    d = attr.deserved.get(k, 0.0) - old.get(k, 0.0)
                    if d > 0:
                        increased[k] = increased.get(k, 0.0) + d
                    elif d < 0:
                        decreased[k] = decreased.get(k, 0.0) - d
            remaining = vres.exceeded_part(vres.add(remaining, decreased), increased)
            if vres.is_empty(remaining) or _same(remaining, old_remaining):
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
            if not vres.less_equal(allocated, attr.deserved):
                allocations[job.queue] = vres.sub(allocated, t.resreq)
                out.append(t)
        return out

    def _queue_allocatable(self, attr: "_Attr", queue: Queue, tasks: list[Task], bound: Res,
                           check_state: bool = True) -> bool:
        if check_state and queue.state != "Open":
            return False
        req: Res = {}
        for t in tasks:
            req = vres.add(req, t.resreq)
        return vres.less_equal_with_dimension(vres.add(attr.allocated, req), bound, req)[0]

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
        need = vres.add(vres.add(job.min_resources, attr.allocated), attr.inqueue)
        if vres.less_equal_with_dimension(need, attr.real_capability, job.min_resources)[0]:
            attr.inqueue = vres.add(attr.inqueue, job.min_resources)
            return 1
        asked = job.min_resources
        self.refusals[job.uid] = (f"{plugin}: queue {queue.name} may hold {show_res(attr.real_capability, asked)}; it "
                                  f"uses {show_res(attr.allocated, asked)} and its Inqueue jobs hold "
                                  f"{show_res(attr.inqueue, asked)}")
        return -1

    # ---- capacity (flat queues)
    def _open_capacity(self) -> None:
        self.cap = self._queue_attrs("capacity", lambda queue: dict(queue.deserved))
        for attr in self.cap.values():
            capped = vres.min_dimension(attr.deserved, attr.real_capability, vres.INFINITY)
            attr.deserved = vres.set_max(capped, attr.guarantee)
            attr.share = r_share(attr.allocated, attr.deserved)

    def _capacity_reclaimable(self, reclaimer: Task, tasks: list[Task]) -> list[Task]:
        allocations: dict[str, Res] = {}
        out = []
        for t in self.victim_order(tasks, reclaimer):
            job = self.jobs.get(t.job)
            if job is None or job.queue not in self.cap:
                continue
            if not (set(vres.resource_names(t.resreq)) - {PODS}) & set(vres.resource_names(reclaimer.resreq)):
                continue
            attr = self.cap[job.queue]
            allocated = allocations.setdefault(job.queue, dict(attr.allocated))
            if not self._capacity_victim(attr, allocated, t):
                continue
            allocations[job.queue] = vres.sub(allocated, t.resreq)
            out.append(t)
        return out

    def _capacity_victim(self, attr: "_Attr", allocated: Res, t: Task) -> bool:
        if not vres.less_equal(attr.guarantee, vres.sub(allocated, t.resreq)):
            return False
        if not (set(vres.resource_names(t.resreq)) & set(vres.resource_names(attr.deserved))):
            return True
        return vres.greater_partly_with_relevant_dimensions(allocated, attr.deserved, t.resreq)[0]

    def _capacity_unified_reclaim(self, tasks: list[Task]) -> list[Task]:
        allocations: dict[str, Res] = {}
        out = []
        for t in tasks:
            attr = self.cap[self.jobs[t.job].queue]
            allocated = allocations.setdefault(attr.name, dict(attr.allocated))
            if self._capacity_victim(attr, allocated, t):
                allocations[attr.name] = vres.sub(allocated, t.resreq)
                out.append(t)
        return out

    def _capacity_preemptive(self, queue: Queue, tasks: list[Task]) -> bool:
        if queue.state != "Open":
            return False
        attr = self.cap[queue.name]
        req: Res = {}
        for t in tasks:
            req = vres.add(req, t.resreq)
        future = vres.add(attr.allocated, req)
        if not vres.less_equal_with_dimension(future, attr.real_capability, req)[0]:
            return False
        for name, q in req.items():
            if q <= 0 or name == PODS or (future.get(name, 0.0) < MIN and attr.deserved.get(name, 0.0) < MIN):
                continue
            if vres.le_tolerant(future.get(name, 0.0), attr.deserved.get(name, 0.0)):
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
                    used = vres.add(used, t.resreq)
        self.oc_factor = factor
        self.oc_idle = vres.sub(vres.multi(self.total, factor), used)
        self.oc_inqueue: Res = {}
        for job in self.jobs.values():
            if job.min_resources is None:
                continue
            if job.phase == "Inqueue":
                self.oc_inqueue = vres.add(self.oc_inqueue, job.min_resources)
            elif job.phase == "Running" and job.ready() >= job.min_available:
                running = vres.exceeded_part(job.min_resources, self._job_allocated(job))
                self.oc_inqueue = vres.add(self.oc_inqueue, running)

    def _overcommit_enqueueable(self, job: Job) -> int:
        if job.min_resources is None:
            return 1
        need = vres.add(self.oc_inqueue, job.min_resources)
        if vres.less_equal_with_dimension(need, self.oc_idle, job.min_resources)[0]:
            self.oc_inqueue = vres.add(self.oc_inqueue, job.min_resources)   # JobEnqueued
            return 1
        self.refusals[job.uid] = (f"overcommit: the cluster's allocatable times {self.oc_factor:g}, less what pods "
                                  f"use, leaves {show_res(self.oc_idle, job.min_resources)}, of which Inqueue jobs "
                                  f"hold {show_res(self.oc_inqueue, job.min_resources)}")
        return -1
