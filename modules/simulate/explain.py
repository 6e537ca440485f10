"""Why the eviction actions refused each candidate victim, and what a pending job lacks: the "no"
of ``simulate --submit`` explained. Recorded only when a session asks for it (``Session.explain``
is a dict; None in the fidelity harness and placement).

A candidate is refused either by the action itself before the tier walk (Volcano v1.15.1
``pkg/scheduler/actions/*``: the pod's ``volcano.sh/preemptable`` annotation, its status, its
queue; the PodGroup's ``volcano.sh/preemptable`` only in gangpreempt/gangreclaim,
``IsJobPreemptableForGangEviction``; the preemptor's higher job priority in gangpreempt's
``selectDomainBundles``; whole bundles and ``allowWholeBundle``), or by a plugin's victim filter
in the tier walk (``modules/semantics/eviction.py``): the first tier, and in it the first plugin,
whose filter leaves it out (the deciding tier when one decided)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

from modules.semantics import eviction as walk_model

from .eviction import Res, Session, Task, show_res, vres

ACTION = "action"      # the plugin field of a refusal made by the action's own code


@dataclass(frozen=True)
class Refusal:
    """One candidate victim an action did not take, and who refused it."""
    action: str
    pod: str
    job: str
    queue: str
    node: str
    tier: int | None        # 1-based tier of the plugin that refused it; None: the action itself
    plugin: str             # the plugin, or "action"
    reason: str


def enable(ssn: Session) -> None:
    ssn.explain = {}


def refuse(ssn: Session, action: str, task: Task, tier: int | None, plugin: str, reason: str) -> None:
    """Record the first refusal of ``task`` by ``action`` (later ones add nothing)."""
    book = getattr(ssn, "explain", None)
    if book is None or (action, task.uid) in book:
        return
    job = ssn.jobs.get(task.job)
    book[(action, task.uid)] = Refusal(action, task.uid, task.job, job.queue if job else "", task.node, tier,
                                       plugin, reason)


def step(ssn: Session, job: str, text: str) -> None:
    """Record why an action did nothing for ``job`` as a whole (a queue overused, a gang not placed)."""
    if getattr(ssn, "explain", None) is not None:
        steps = ssn.explain.setdefault(("steps", job), [])
        if text not in steps:
            steps.append(text)


def steps_of(ssn: Session, job: str) -> list[str]:
    return list((getattr(ssn, "explain", None) or {}).get(("steps", job), []))


def refusals(ssn: Session) -> list[Refusal]:
    book = getattr(ssn, "explain", None) or {}
    evicted = {e.task for e in ssn.evictions}
    return [r for r in book.values() if isinstance(r, Refusal) and r.pod not in evicted]


# --- the reasons ------------------------------------------------------------------------------

def _share(ssn: Session, plugin: str, queue: str) -> str:
    attrs = ssn.prop if plugin == "proportion" else ssn.cap
    attr = attrs.get(queue)
    if attr is None:
        return f"queue {queue} has no {plugin} share"
    guarantee = f" (guarantee {show_res(attr.guarantee)})" if attr.guarantee else ""
    return f"queue {queue} runs {show_res(attr.allocated)} against its deserved {show_res(attr.deserved)}{guarantee}"


def plugin_reason(ssn: Session, action: str, plugin: str, task: Task, preemptor: Task) -> str:
    """Why ``plugin``'s victim filter leaves ``task`` out for ``preemptor``."""
    job, pjob = ssn.jobs[task.job], ssn.jobs[preemptor.job]
    if plugin == "conformance":
        return "a critical pod (priority class system-cluster-critical/system-node-critical, or kube-system)"
    if plugin == "gang":
        return (f"gang minAvailable: job {job.uid} runs {job.ready()} pod(s) against minAvailable "
                f"{job.min_available}; the gang plugin keeps the pods its gang needs")
    if plugin == "priority":
        if job.uid == pjob.uid:
            return f"priority: task priority {task.priority} is not below the preemptor's {preemptor.priority}"
        return f"priority: job {job.uid} has priority {job.priority}, not below {pjob.uid}'s {pjob.priority}"
    if plugin in ("proportion", "capacity"):
        return (f"share at or below deserved: {_share(ssn, plugin, job.queue)}; {plugin} lets go only pods that "
                "leave the queue above its deserved share (and at its guarantee), and this one would not")
    return f"{plugin}'s victim filter leaves it out"


def walk_refusals(ssn: Session, action: str, preemptor: Task, candidates: list[Task],
                  tiers: Sequence[Sequence[str]], filters: dict[str, Callable[[list[Task]], Any]],
                  decision: walk_model.Decision) -> None:
    """Each candidate the walk did not return: the first plugin, in the deciding tier (else in
    tier order), whose filter leaves it out."""
    chosen = {t.uid for t in decision.victims}
    left = [t for t in candidates if t.uid not in chosen]
    if not left or getattr(ssn, "explain", None) is None:
        return
    kept: dict[str, set[str] | None] = {}

    def keeps(name: str) -> set[str] | None:
        if name not in kept:
            result = filters[name](candidates)
            kept[name] = None if result is None else {t.uid for t in result}
        return kept[name]
    order = [decision.tier] if decision.tier is not None else range(len(tiers))
    for t in left:
        for tier in order:
            name = next((n for n in tiers[tier] if n in filters and keeps(n) is not None and t.uid not in keeps(n)),
                        None)
            if name is not None:
                refuse(ssn, action, t, tier + 1, name, plugin_reason(ssn, action, name, t, preemptor))
                break
        else:
            if decision.tier is not None:
                refuse(ssn, action, t, decision.tier + 1, "+".join(decision.plugins),
                       "the deciding tier's plugins agree on no victim set that holds it")


def preemptive_step(ssn: Session, action: str, queue: Any, tasks: list[Task]) -> str:
    """Why capacity/proportion do not let ``queue`` reclaim for ``tasks``: its capability, or its
    deserved share, with what it runs and what the tasks ask."""
    req: Res = {}
    for t in tasks:
        req = vres.add(req, t.resreq)
    attr = ssn.cap.get(queue.name) or ssn.prop.get(queue.name)
    if attr is None:
        return f"{action}: queue {queue.name} may not reclaim"
    future = vres.add(attr.allocated, req)
    over_cap = [n for n, q in req.items() if n != "pods" and q > 0 and future.get(n, 0.0) > attr.real_capability.get(
        n, float("inf")) + 0.1]
    if over_cap:
        return (f"capability: queue {queue.name} may hold {show_res(attr.real_capability, over_cap)}; it runs "
                f"{show_res(attr.allocated, over_cap)} and the job asks {show_res(req, over_cap)}, so {action} does "
                "not act for it")
    return (f"{action}: queue {queue.name} runs {show_res(attr.allocated, req)} against its deserved "
            f"{show_res(attr.deserved, req)}; with the job's {show_res(req)} it would pass its deserved share, so "
            "capacity/proportion do not let it reclaim")


# --- what the job lacks -------------------------------------------------------------------------

def lacks(ssn: Session, pending: list[Task], nodes_for: Callable[[Task], list], allowed: list[Task]) -> str:
    """What the pending tasks need against the idle room of the nodes they may use and what the
    victims the walks allowed would free there."""
    need: Res = {}
    for t in pending:
        need = vres.add(need, t.resreq)
    usable = {n.name: n for t in pending[:1] for n in nodes_for(t)}
    idle: Res = {}
    for node in usable.values():
        idle = vres.add(idle, node.future_idle())
    freed: Res = {}
    for t in allowed:
        if t.node in usable:
            freed = vres.add(freed, t.resreq)
    short = {k: v for k, v in vres.sub(vres.sub(need, idle), freed).items() if v > 0.1 and k != "pods"}
    text = (f"it needs {show_res(need)}; the {len(usable)} of {len(ssn.nodes)} node(s) its pods may use have "
            f"{show_res(idle, need)} idle")
    if len(usable) < len(ssn.nodes):
        text += (f" (the predicates keep it off {len(ssn.nodes) - len(usable)}: cordons, nodeSelector, node affinity, "
                 "taints it does not tolerate)")
    if freed:
        text += f" and the victims the walks allow there would free {show_res(freed, need)}"
    return text + (f": it lacks {show_res(short)}" if short else
                   ": the room adds up, but not pod by pod on single nodes, or not inside one HyperNode its "
                   "topology allows")
