"""The actions of Volcano's cycle that decide admission and eviction (v1.15.1
``pkg/scheduler/actions``), run over an ``eviction.Session``: enqueue, preempt, reclaim,
gangpreempt, gangreclaim, and backfill's choice of pending tasks. See ``eviction.py`` for what is
modelled."""
from __future__ import annotations

import functools
import math
from typing import Callable, Mapping

from modules.semantics import eviction as walk_model

from . import explain
from .eviction import (PENDING, PIPELINED, RUNNING, BOUND, SUCCEEDED, ALLOCATED, Eviction, Job, NodeInfo, PodFit,
                       Res, Session, Task, show_res, vres)

PREEMPTABLE_STATUS = (BOUND, RUNNING)


def enqueue(ssn: Session) -> None:
    """Pending PodGroups become Inqueue, queue by queue in queue order, when the job has no
    minResources or every enqueue gate permits it."""
    queues = sorted({ssn.queues[j.queue] for j in ssn.jobs.values()}, key=lambda q: q.name)
    waiting = {q.name: sorted((j for j in ssn.jobs.values() if j.queue == q.name and j.is_pending), key=ssn.job_key())
               for q in queues}
    active = list(queues)
    while active:
        active.sort(key=ssn.queue_key())
        queue = active.pop(0)
        jobs = waiting[queue.name]
        if not jobs:
            continue
        job = jobs.pop(0)
        if job.min_resources is None or ssn.job_enqueueable(job):
            job.phase = "Inqueue"
        active.append(queue)


def _nodes_for(ssn: Session, task: Task, selectors: Mapping[str, PodFit]) -> list[NodeInfo]:
    """The nodes the predicates plugin lets ``task`` use, by name (none filtered without the plugin).
    The nodes are ordered once per session and each distinct pod spec's nodes filtered once
    (labels, taints and cordons do not change in a cycle)."""
    cache = ssn.__dict__.setdefault("_usable", {})
    fit = selectors.get(task.uid) if "predicates" in ssn.names else None
    key = repr(fit)
    usable = cache.get(key)
    if usable is None:
        ordered = nodes_by_name(ssn)
        usable = cache[key] = ordered if fit is None else [n for n in ordered if ssn.predicate(task, n, fit)]
    return usable


def nodes_by_name(ssn: Session) -> list[NodeInfo]:
    """The session's nodes by name, sorted once per session (every action's node order)."""
    cache = ssn.__dict__.setdefault("_usable", {})
    ordered = cache.get("<all>")
    if ordered is None:
        ordered = cache["<all>"] = [n for _, n in sorted(ssn.nodes.items())]
    return ordered


def first_fit(task: Task, nodes: list[NodeInfo], cursors: dict, within: set[str] | None = None) -> NodeInfo | None:
    """The first of ``nodes`` whose future idle holds ``task`` (among ``within`` when given).
    ``cursors`` remembers, per request shape and node list, where the last such search stopped: in
    one placement the nodes only fill up, so a node that could not hold a shape never will."""
    key = (tuple(sorted(task.resreq.items())), id(nodes), id(within))
    i = cursors.get(key, 0)
    while i < len(nodes):
        node = nodes[i]
        if (within is None or node.name in within) and vres.less_equal(task.resreq, node.future_idle()):
            cursors[key] = i
            return node
        i += 1
    cursors[key] = i
    return None


def preempt_refusal(ssn: Session, t: Task, p: Task, same_job: bool) -> str | None:
    """None when ``t`` is a candidate victim for preemptor ``p`` (preempt.go's filter: a running or
    bound pod, not BestEffort-for-non-BestEffort, preemptable, of another job of the same queue; or
    of the same job when ``same_job``); "" when it is no candidate at all; else why not."""
    if t.status not in PREEMPTABLE_STATUS or t.job not in ssn.jobs or (t.job == p.job) != same_job:
        return ""
    if p.best_effort and not t.best_effort:
        return "the preemptor is BestEffort and this pod is not"
    if not t.preemptable:
        return "preemptable annotation: the pod says volcano.sh/preemptable: false"
    queue, mine = ssn.jobs[t.job].queue, ssn.jobs[p.job].queue
    if queue != mine:
        return f"queue {queue}: preempt takes only from the preemptor's own queue ({mine})"
    return None


def _candidates(ssn: Session, action: str, node: NodeInfo, task: Task, why: Callable[[Task], str | None]
                ) -> list[Task]:
    out = []
    for t in node.tasks:
        reason = why(t)
        if reason is None:
            out.append(t)
        elif reason:
            explain.refuse(ssn, action, t, None, explain.ACTION, reason)
    return out


def _preempt_task(ssn: Session, ops: list, task: Task, why: Callable[[Task], str | None],
                  selectors: Mapping[str, PodFit]) -> bool:
    """One preemptor, node by node: victims the tier walk allows, evicted lowest first until the
    preemptor fits the node and its queue; the first node where it does wins."""
    if task.never:
        explain.step(ssn, task.job, f"preempt: {task.uid} has preemptionPolicy: Never")
        return False
    job = ssn.jobs[task.job]
    queue = ssn.queues[job.queue]
    for node in _nodes_for(ssn, task, selectors):
        preemptees = _candidates(ssn, walk_model.PREEMPT, node, task, why)
        decision = ssn.victims(walk_model.PREEMPT, task, preemptees)
        if not vres.less_equal(task.resreq, _with(node.future_idle(), decision.victims)):
            continue
        node_ops: list = []
        for victim in ssn.victim_order(decision.victims, task):
            if ssn.allocatable(queue, task) and vres.less_equal(task.resreq, node.future_idle()):
                break
            ssn.evict(node_ops, victim, _record(ssn, walk_model.PREEMPT, victim, task, decision))
        if ssn.allocatable(queue, task) and vres.less_equal(task.resreq, node.future_idle()):
            ssn.pipeline(node_ops, task, node.name)
            ops.extend(node_ops)
            return True
        ssn.discard(node_ops)
    return False


def _with(idle: Res, victims: list[Task]) -> Res:
    for v in victims:
        idle = vres.add(idle, v.resreq)
    return idle


def _record(ssn: Session, action: str, victim: Task, preemptor: Task, decision: walk_model.Decision,
            shares: Mapping[str, str] | None = None) -> Eviction:
    """The eviction as reported: who, for whom, why, and the tier that chose it. ``shares``: each
    queue's use against its share when the victims were chosen (``queue_shares``)."""
    vjob, pjob = ssn.jobs[victim.job], ssn.jobs[preemptor.job]
    if action in (walk_model.PREEMPT, walk_model.GANG_PREEMPT):
        why = (f"job {vjob.uid} has priority {vjob.priority}, below {pjob.uid}'s {pjob.priority}, in the same queue "
               f"{vjob.queue}")
    else:
        share = (shares or queue_shares(ssn)).get(vjob.queue, "a reclaimable queue")
        why = f"queue {vjob.queue} {share}; queue {pjob.queue} reclaims"
    return Eviction(action, victim.uid, vjob.uid, vjob.queue, victim.node, preemptor.uid, pjob.queue, decision.tier,
                    decision.plugins, why)


def queue_shares(ssn: Session) -> dict[str, str]:
    """Each queue's use against its share, in words (capacity's deserved, else proportion's)."""
    out = {}
    for name in ssn.queues:
        if name in ssn.cap:
            a = ssn.cap[name]
            out[name] = (f"runs {show_res(a.allocated)} against deserved {show_res(a.deserved)} "
                         f"(guarantee {show_res(a.guarantee)})")
        elif name in ssn.prop:
            a = ssn.prop[name]
            out[name] = f"runs {show_res(a.allocated)} against its proportional share {show_res(a.deserved)}"
    return out


def _preemptors(ssn: Session, require_starving: bool = True) -> dict[str, list[Job]]:
    out: dict[str, list[Job]] = {}
    for job in sorted(ssn.jobs.values(), key=lambda j: j.uid):
        if job.is_pending or not ssn.job_valid(job):
            continue
        if require_starving and not ssn.job_starving(job):
            continue
        out.setdefault(job.queue, []).append(job)
    return out


def preempt(ssn: Session, selectors: Mapping[str, PodFit]) -> None:
    """Starving jobs take room from lower-priority jobs of their own queue, then tasks of one job
    from lower-priority tasks of the same job."""
    by_queue = _preemptors(ssn)
    tasks = {j.uid: sorted((t for t in j.pending() if not t.gated), key=ssn.task_key)
             for jobs in by_queue.values() for j in jobs}
    for queue in sorted((ssn.queues[q] for q in by_queue), key=ssn.queue_key()):
        jobs = sorted(by_queue[queue.name], key=ssn.job_key())
        while jobs:
            job = jobs.pop(0)
            ops: list = []
            assigned = False
            while ssn.job_starving(job) and tasks[job.uid]:
                preemptor = tasks[job.uid].pop(0)
                assigned = _preempt_task(ssn, ops, preemptor, lambda t, p=preemptor: preempt_refusal(
                    ssn, t, p, same_job=False), selectors)
            if ssn.job_pipelined(job):
                ssn.commit(ops)
            else:
                ssn.discard(ops)
                continue
            if assigned:
                jobs.append(job)
                jobs.sort(key=ssn.job_key())
        for job in by_queue[queue.name]:
            for preemptor in sorted((t for t in job.pending() if not t.gated), key=ssn.task_key):
                ops = []
                if not _preempt_task(ssn, ops, preemptor, lambda t, p=preemptor: preempt_refusal(
                        ssn, t, p, same_job=True), selectors):
                    ssn.discard(ops)
                    break
                ssn.commit(ops)


def reclaim(ssn: Session, selectors: Mapping[str, PodFit]) -> None:
    """Queues under their share take room from reclaimable queues above theirs, task by task."""
    by_queue = _preemptors(ssn)
    everyone = {j.queue for j in ssn.jobs.values() if not j.is_pending and ssn.job_valid(j)}
    for queue in sorted((ssn.queues[q] for q in everyone), key=ssn.queue_key()):
        if ssn.overused(queue):
            for job in by_queue.get(queue.name, []):
                explain.step(ssn, job.uid, f"reclaim: queue {queue.name} is overused (proportion: it runs at least "
                             "its deserved share), so its jobs reclaim nothing")
            continue
        for job in sorted(by_queue.get(queue.name, []), key=ssn.job_key()):
            ops: list = []
            pending = sorted((t for t in job.pending() if not t.gated), key=ssn.task_key)
            while ssn.job_starving(job) and pending:
                task = pending.pop(0)
                if task.never or not ssn.preemptive(queue, [task]):
                    explain.step(ssn, job.uid, f"reclaim: {task.uid} has preemptionPolicy: Never" if task.never
                                 else explain.preemptive_step(ssn, walk_model.RECLAIM, queue, [task]))
                    continue
                _reclaim_task(ssn, ops, task, job, selectors)
            if ssn.job_pipelined(job):
                ssn.commit(ops)
            else:
                ssn.discard(ops)


def reclaim_refusal(ssn: Session, t: Task, job: Job) -> str | None:
    """reclaim.go's filter: a running, preemptable pod of another job in another, reclaimable queue."""
    if t.status != RUNNING or t.job not in ssn.jobs:
        return ""
    if not t.preemptable:
        return "preemptable annotation: the pod says volcano.sh/preemptable: false"
    queue = ssn.jobs[t.job].queue
    if queue == job.queue:
        return ""
    if not ssn.queues[queue].reclaimable:
        return f"reclaimable: false: queue {queue} may not be reclaimed from"
    return None


def _reclaim_task(ssn: Session, ops: list, task: Task, job: Job, selectors: Mapping[str, PodFit]) -> None:
    # the queues' shares as the victims are chosen: a node that fails is discarded, so every node
    # sees the same shares; computed once, on the first node with victims
    shares: dict[str, str] | None = None
    for node in _nodes_for(ssn, task, selectors):
        reclaimees = _candidates(ssn, walk_model.RECLAIM, node, task, lambda t: reclaim_refusal(ssn, t, job))
        if not reclaimees:
            continue
        decision = ssn.victims(walk_model.RECLAIM, task, reclaimees)
        if not vres.less_equal(task.resreq, _with(node.future_idle(), decision.victims)):
            continue
        available = node.future_idle()
        node_ops: list = []
        evicted = False
        shares = queue_shares(ssn) if shares is None else shares
        for victim in ssn.victim_order(decision.victims, task):
            if vres.less_equal(task.resreq, available):
                break
            ssn.evict(node_ops, victim, _record(ssn, walk_model.RECLAIM, victim, task, decision, shares))
            available = vres.add(available, victim.resreq)
            evicted = True
        if not vres.less_equal(task.resreq, available) or not (
                evicted or vres.less_equal(task.resreq, node.future_idle())):
            ssn.discard(node_ops)
            continue
        ssn.pipeline(node_ops, task, node.name)
        ops.extend(node_ops)
        return


# --- gang eviction ---------------------------------------------------------------------------

def job_bundles(ssn: Session, job: Job, tasks: list[Task]) -> list[tuple[str, Job, list[Task]]]:
    """``CreateJobBundles``: the tasks a job can lose and stay above its gang ("safe"), and the
    rest, which go only with the whole job ("whole")."""
    tasks = sorted(tasks, key=lambda t: (t.priority, t.uid))
    surplus = job.ready() - job.min_available
    if surplus < 0:
        return [("safe", job, tasks)]
    enforce = job.min_available >= job.task_min_total
    role_surplus: dict[str, int] = {}
    if enforce:
        ready: dict[str, int] = {}
        for t in job.tasks:
            if t.status in ALLOCATED or t.status == SUCCEEDED or (t.status == PENDING and t.best_effort):
                ready[t.role] = ready.get(t.role, 0) + 1
        role_surplus = {role: ready.get(role, 0) - n for role, n in job.task_min.items()}
    safe, whole = [], []
    for t in tasks:
        has_min = enforce and t.role in job.task_min
        role_safe = role_surplus.get(t.role, 0) > 0 if has_min else True
        if surplus > 0 and role_safe:
            safe.append(t)
            surplus -= 1
            if has_min:
                role_surplus[t.role] -= 1
        else:
            whole.append(t)
    return [b for b in (("safe", job, safe), ("whole", job, whole)) if b[2]]


def gang_preemptable(job: Job) -> bool:
    """``IsJobPreemptableForGangEviction``: a PodGroup's volcano.sh/preemptable decides when set."""
    return job.preemptable is not False


def domain_victims(ssn: Session, action: str, preemptor: Job, nodes: list[NodeInfo],
                   allow_whole: bool) -> tuple[list[tuple[str, Job, list[Task]]], walk_model.Decision]:
    """``selectDomainBundles`` of gangpreempt (same queue, lower job priority) or gangreclaim
    (other reclaimable queues), filtered by the UnifiedEvictable walk."""
    by_job: dict[str, list[Task]] = {}
    for node in nodes:
        for t in node.tasks:
            reason = gang_refusal(ssn, action, t, preemptor)
            if reason is None:
                by_job.setdefault(t.job, []).append(t)
            elif reason:
                explain.refuse(ssn, action, t, None, explain.ACTION, reason)
    bundles = [b for uid in sorted(by_job) for b in job_bundles(ssn, ssn.jobs[uid], by_job[uid])]
    empty = walk_model.Decision([], None, ())
    if not bundles:
        return [], empty
    order = _bundle_order(ssn, action, preemptor)
    bundles.sort(key=order)
    candidates = [t for b in bundles for t in b[2]]
    pending = [t for t in preemptor.tasks if t.status == PENDING] or candidates[:1]
    decision = ssn.victims(action, pending[0], candidates)
    allowed = {t.uid for t in decision.victims}
    valid = []
    for kind, job, tasks in bundles:
        approved = [t for t in tasks if t.uid in allowed]
        if kind == "whole" and len(approved) == len(tasks):
            valid.append((kind, job, tasks))
        elif kind == "safe" and approved:
            valid.append((kind, job, approved))
        elif kind == "whole" and approved:
            for t in approved:
                explain.refuse(ssn, action, t, None, explain.ACTION, f"whole bundle: job {job.uid}'s pods go only "
                               "all together (its gang), and the tier walk refused some of them")
    valid.sort(key=order)
    if not allow_whole:
        for kind, job, tasks in valid:
            for t in tasks if kind == "whole" else ():
                explain.refuse(ssn, action, t, None, explain.ACTION, f"whole bundle: job {job.uid} runs no pod "
                               "beyond its minAvailable, so its pods go only with the whole job, and the conf's "
                               f"configurations set allowWholeBundle: false for {action}")
    return [b for b in valid if b[0] == "safe" or allow_whole], decision


def gang_refusal(ssn: Session, action: str, t: Task, preemptor: Job) -> str | None:
    """selectDomainBundles' filter (gangpreempt: a bound or running pod of a lower-priority job of
    the preemptor's queue; gangreclaim: a running pod of another, reclaimable queue; both: the pod
    and its PodGroup preemptable); "" when ``t`` is no candidate at all."""
    victim = ssn.jobs.get(t.job)
    if victim is None or t.job == preemptor.uid:
        return ""
    if action == walk_model.GANG_PREEMPT:
        if t.status not in PREEMPTABLE_STATUS:
            return ""
    elif t.status != RUNNING or victim.queue == preemptor.queue:
        return ""
    if not t.preemptable:
        return "preemptable annotation: the pod says volcano.sh/preemptable: false"
    if not gang_preemptable(victim):
        return (f"preemptable annotation: PodGroup {victim.uid} says volcano.sh/preemptable: false (read by the "
                "gang actions only)")
    if action == walk_model.GANG_PREEMPT:
        if victim.queue != preemptor.queue:
            return f"queue {victim.queue}: gangpreempt takes only from the preemptor's own queue ({preemptor.queue})"
        if preemptor.priority <= victim.priority:
            return (f"priority: job {victim.uid} has priority {victim.priority}, not below {preemptor.uid}'s "
                    f"{preemptor.priority}")
    elif not ssn.queues[victim.queue].reclaimable:
        return f"reclaimable: false: queue {victim.queue} may not be reclaimed from"
    return None


def _bundle_order(ssn: Session, action: str, preemptor: Job):
    """``SortBundlesForPreempt`` / ``SortBundlesForReclaim`` (v1.15.1 actions/utils/bundle.go:248,
    269): safe bundles first; then gangpreempt: the victim jobs in reverse job order (JobOrderFn
    with its creation-time and UID fallback is total, so this decides); gangreclaim: the victim
    queues in reverse queue order (VictimQueueOrderFn, flat queues: !QueueOrderFn), then, inside
    a queue, the bundle with the best return on the need (``bundle_roi``), then job UID, first
    task UID, size."""
    need: Res = {}
    for t in preemptor.tasks:
        if t.status == PENDING and not t.gated:
            need = vres.add(need, t.resreq)
    job_key = ssn.job_key()
    queue_key = ssn.queue_key()

    def cmp(a, b) -> int:
        if a[0] != b[0]:
            return -1 if a[0] == "safe" else 1
        if action == walk_model.GANG_PREEMPT and a[1].uid != b[1].uid:
            return -1 if job_key(a[1]) > job_key(b[1]) else 1
        qa, qb = ssn.queues[a[1].queue], ssn.queues[b[1].queue]
        if action != walk_model.GANG_PREEMPT and qa is not qb:
            return -1 if queue_key(qa) > queue_key(qb) else 1
        ra, rb = bundle_roi(a, need), bundle_roi(b, need)
        if ra != rb:
            return -1 if ra > rb else 1
        ka = (a[1].uid, a[2][0].uid if a[2] else "", len(a[2]))
        kb = (b[1].uid, b[2][0].uid if b[2] else "", len(b[2]))
        return -1 if ka < kb else (1 if ka > kb else 0)
    return functools.cmp_to_key(cmp)


def _score(res: Res, need: Res, cap: bool) -> float:
    score = 0.0
    for name, n in need.items():
        if n < 0.1:
            continue
        v = res.get(name, 0.0)
        score += (min(v, n) if cap else v) / n
    return score


def bundle_roi(bundle: tuple[str, Job, list[Task]], need: Res) -> float:
    """``bundleROI``: what the bundle frees towards the need (capped at it) per what its job loses
    in all (a safe bundle costs its job nothing: infinite)."""
    kind, job, tasks = bundle
    local: Res = {}
    for t in tasks:
        local = vres.add(local, t.resreq)
    whole: Res = {}
    if kind == "whole":
        for t in job.tasks:
            whole = vres.add(whole, t.resreq)
    spent = _score(whole, need, cap=False)
    return math.inf if spent == 0 else _score(local, need, cap=True) / spent


def _place(ssn: Session, ops: list, tasks: list[Task], selectors: Mapping[str, PodFit],
           within: set[str] | None = None) -> bool:
    """Pipeline each task onto the first node (by name, among ``within`` when given) whose future
    idle holds it."""
    cursors: dict = {}
    for task in tasks:
        node = first_fit(task, _nodes_for(ssn, task, selectors), cursors, within)
        if node is None:
            return False
        ssn.pipeline(ops, task, node.name)
    return True


def gang_evict(ssn: Session, action: str, selectors: Mapping[str, PodFit], allow_whole: bool | None = None) -> None:
    """gangpreempt / gangreclaim: for each starving job, its domains (``Session.domains``: the
    HyperNodes a hard-mode job may use, else the whole cluster) in order (``_evict_in_domains``).
    ``allow_whole``: None reads ``allowWholeBundle`` from the conf's configurations block."""
    if allow_whole is None:
        allow_whole = walk_model.gang_arguments(ssn.conf, action).allow_whole_bundle
    by_queue = _preemptors(ssn)
    everyone = {j.queue for j in ssn.jobs.values() if not j.is_pending and ssn.job_valid(j)}
    nodes = nodes_by_name(ssn)
    for queue in sorted((ssn.queues[q] for q in everyone), key=ssn.queue_key()):
        if action == walk_model.GANG_RECLAIM and ssn.overused(queue):
            for job in by_queue.get(queue.name, []):
                explain.step(ssn, job.uid, f"gangreclaim: queue {queue.name} is overused (proportion: it runs at "
                             "least its deserved share), so its jobs reclaim nothing")
            continue
        for job in sorted(by_queue.get(queue.name, []), key=ssn.job_key()):
            pending = sorted((t for t in job.pending() if not t.gated), key=ssn.task_key)
            if not pending or (action == walk_model.GANG_RECLAIM and not ssn.preemptive(queue, pending)):
                if pending:
                    explain.step(ssn, job.uid, explain.preemptive_step(ssn, action, queue, pending))
                continue
            ops = _evict_in_domains(ssn, action, job, pending, selectors, allow_whole, nodes)
            if ops and ssn.job_pipelined(job):
                ssn.commit(ops)
            else:
                ssn.discard(ops)


def _evict_in_domains(ssn: Session, action: str, job: Job, pending: list[Task], selectors: Mapping[str, PodFit],
                      allow_whole: bool, nodes: list[NodeInfo]) -> list:
    """``preemptJobInDomains`` / ``reclaimJobInDomains``: domain by domain, bundles are added in
    order until the job's pending tasks fit the domain's idle room and the victims, then evicted
    and the tasks placed in the domain; the first domain where they are wins."""
    need: Res = {}
    for t in pending:
        need = vres.add(need, t.resreq)
    domains = ssn.domains(job, action)
    if domains is not None and not domains:
        explain.step(ssn, job.uid, f"{action}: no HyperNode within the job's tier holds its minResources: no domain "
                     "to evict in")
    shares: dict[str, str] | None = None    # every domain's attempt is discarded: the same shares in each
    for name, names in [("the cluster", None)] if domains is None else domains:
        within = None if names is None else set(names)
        domain = nodes if within is None else [n for n in nodes if n.name in within]
        bundles, decision = domain_victims(ssn, action, job, domain, allow_whole)
        idle: Res = {}
        for n in domain:
            idle = vres.add(idle, n.future_idle())
        chosen: list[Task] = []
        shares = queue_shares(ssn) if shares is None else shares
        for _, _, tasks in bundles:
            chosen += tasks
            if not vres.less_equal(need, _with(idle, chosen)):
                continue
            attempt: list = []
            for victim in chosen:
                ssn.evict(attempt, victim, _record(ssn, action, victim, pending[0], decision, shares))
            if _place(ssn, attempt, pending, selectors, within):
                return attempt
            explain.step(ssn, job.uid, f"{action}: evicting {len(chosen)} allowed pod(s) in {name} would free "
                         "enough in all, but the job's pods would still not fit node by node on the nodes they may "
                         "use there")
            ssn.discard(attempt)
    return []


def backfill_order(ssn: Session) -> list[Task]:
    """``pickUpPendingTasks``: best-effort pending (and pipelined) tasks, queue by queue, job by
    job, task by task in order."""
    out: list[Task] = []
    by_queue: dict[str, list[Job]] = {}
    for job in ssn.jobs.values():
        if job.is_pending or not ssn.job_valid(job):
            continue
        if any(t.best_effort and (t.status == PIPELINED or (t.status == PENDING and not t.gated)) for t in job.tasks):
            by_queue.setdefault(job.queue, []).append(job)
    for queue in sorted((ssn.queues[q] for q in by_queue), key=ssn.queue_key()):
        for job in sorted(by_queue[queue.name], key=ssn.job_key()):
            out += sorted((t for t in job.tasks if t.best_effort and (t.status == PIPELINED or (
                t.status == PENDING and not t.gated))), key=ssn.task_key)
    return out


ACTIONS: dict[str, Callable[..., None]] = {
    "enqueue": lambda ssn, sel: enqueue(ssn),
    "preempt": preempt,
    "reclaim": reclaim,
    "gangpreempt": lambda ssn, sel: gang_evict(ssn, walk_model.GANG_PREEMPT, sel),
    "gangreclaim": lambda ssn, sel: gang_evict(ssn, walk_model.GANG_RECLAIM, sel),
}
