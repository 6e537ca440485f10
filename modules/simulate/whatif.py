"""`trainstack simulate ... --submit JOB.yaml`: if this job is submitted into this queue on this
cluster, which running pods does Volcano evict, from which queues, and why.

The cluster is a snapshot (its Nodes, Queues, PriorityClasses, PodGroups and Pods, and its
scheduler conf) or a stack (its fabric's nodes, rendered Queues, PriorityClasses and scheduler
conf, with the jobs of ``--workloads`` running where the topology-aware model places them). The
submitted job (Volcano Jobs, or PodGroups with their Pods) goes through the conf's actions as one
cycle (``cycle.py``): enqueue's gate, then whether allocate can place it in idle room, then the
eviction actions the conf lists. Every eviction names the tier and plugins of the tier walk that
chose it (``modules/semantics/eviction.py``).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path


from modules.core.errors import InputError, listing
from modules.semantics import eviction as walk_model
from modules.semantics.scheduler_conf import chart_default, from_objects, passed_over, read_conf_text
from modules.semantics.session import EPOCH, GROUP_ANNOTATION
from modules.semantics.shapes import meta

from . import cycle, explain, submit, whatif_topology
from .eviction import Eviction, Session, cluster_of, pod_fits, show_res, vres
from .model import ClusterModel, read_model



@dataclass
class WhatIf:
    """What Volcano would do with one more job: the outcome, why, and any evictions."""
    cluster: str
    job: str
    queue: str
    actions: list[str]
    outcome: str                     # enqueue-refused | fits | evicts | pending
    reason: str
    evictions: list[Eviction] = field(default_factory=list)
    placed: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    conf_source: str = ""
    refused: list[explain.Refusal] = field(default_factory=list)   # candidates refused, when it waits
    steps: list[str] = field(default_factory=list)     # why an action did nothing for the job as a whole
    lacks: str = ""                                    # what it needs against what it may use


def scheduler_conf(objects: list[dict], text: str | None, shown: str) -> tuple[dict, str, list[str]]:
    """The conf to run, where it came from, and notes: the given text (the conf, its ConfigMap's YAML
    or the chart's values), else the one among the objects (a release's, or the ConfigMap the
    scheduler mounts), else the chart's default conf at the pinned tag. One reader with placement
    (``modules.semantics.scheduler_conf``)."""
    found = read_conf_text(text, shown) if text is not None else from_objects(objects, shown)
    if found is None:
        found = chart_default()
        return found.conf, found.source, [f"no scheduler conf in {shown}: running {found.source}",
                                          *passed_over(objects)]
    return found.conf, found.source, list(found.notes)


def _topology(model: ClusterModel, submitted: list[str], job, conf: dict, shown: str, ssn: Session,
              result: WhatIf):
    """The topology-aware model's view of the submitted gang (``whatif_topology``), and its
    gang-eviction domains set on the session; None without HyperNodes or network-topology-aware."""
    if "network-topology-aware" not in ssn.names:
        return None
    topo = whatif_topology.view(model, submitted, job.uid, conf, shown)
    if topo is None:
        return None
    if topo.enforced and topo.placed is None:
        result.notes.append(f"allocate (topology-aware, as simulate places it): {topo.reason}")
    allocatable = {name: node.allocatable for name, node in ssn.nodes.items()}
    ssn.domains = lambda j, action: whatif_topology.eviction_domains(
        conf, action, topo.hard_tier, j.min_resources, topo.hypernodes, allocatable) if j is job else None
    return topo


def _fits_on(ssn: Session, tasks: list, where: dict[str, str]) -> dict[str, str] | None:
    """The topology-aware placement, held to the queue: every task on its node, within its queue's
    allocatable; None when the queue refuses one."""
    ops: list = []
    placed: dict[str, str] = {}
    for task in tasks:
        node = where.get(task.uid)
        if node not in ssn.nodes or not ssn.allocatable(ssn.queues[ssn.jobs[task.job].queue], task):
            ssn.discard(ops)
            return None
        ssn.pipeline(ops, task, node)
        placed[task.uid] = node
    ssn.discard(ops)
    return placed


def _fits_idle(ssn: Session, tasks: list, chosen: dict) -> dict[str, str] | None:
    """Allocate's question for the gang: can every pending task go to a node's idle room, within
    its queue? First fit by node name, all or nothing."""
    ops: list = []
    placed: dict[str, str] = {}
    cursors: dict = {}
    for task in tasks:
        queue = ssn.queues[ssn.jobs[task.job].queue]
        node = cycle.first_fit(task, cycle._nodes_for(ssn, task, chosen), cursors)
        if node is None or not ssn.allocatable(queue, task):
            ssn.discard(ops)
            return None
        ssn.pipeline(ops, task, node.name)
        placed[task.uid] = node.name
    ssn.discard(ops)
    return placed


def what_if(objects: list[tuple[str, dict]], new: list[tuple[str, dict]], groups: list[str], conf: dict,
            shown: str, job_shown: str, source: str | None = None) -> WhatIf:
    """``shown`` names the cluster in the report; ``source`` is the file a mistake in ``objects`` is
    reported against (default ``shown``), ``job_shown`` the file of the submission ``new``. The
    cluster and the submission are read once, into one model (``model.py``); the session and the
    topology-aware allocate are built from it."""
    submission = read_model(new, job_shown)
    submission.read_all()                  # a mistake in the submission names its own file, and comes first
    model = read_model(objects, source or shown).plus(submission)
    cluster = cluster_of(model, conf)
    # A submission without a creationTimestamp is the newest job (Volcano's job order's tie-break).
    latest = max((j.created for j in cluster.jobs.values()), default=EPOCH)
    for n, group in enumerate(submission.group_list):
        job = cluster.jobs.get(group.uid)
        if job is not None and meta(group.obj).get("creationTimestamp") is None:
            job.created = latest + timedelta(seconds=n + 1)
    actions = walk_model.actions_of(conf)
    first = groups[0]
    if first not in cluster.jobs:
        raise InputError(job_shown, "", f"expected a named PodGroup or Volcano Job, got {first!r}")
    queue = cluster.jobs[first].queue
    result = WhatIf(shown, first, queue, actions, "pending", "")
    result.notes += cluster.ignored
    if queue not in cluster.queues:
        result.outcome, result.reason = "pending", f"queue {queue} does not exist; Volcano ignores the job"
        return result
    ssn = Session(cluster)
    chosen = pod_fits(model.pods)
    job = ssn.jobs[first]
    if "enqueue" in actions:
        cycle.enqueue(ssn)
        if job.is_pending:
            refused = ssn.refusals.get(job.uid, "a gate of the conf's enqueue plugins")
            result.outcome = "enqueue-refused"
            result.reason = (f"enqueue keeps the PodGroup Pending: its minResources "
                             f"{show_res(job.min_resources or {})} do not pass {refused}")
            return result
    else:
        job.phase = "Inqueue"
        result.notes.append("the conf runs no enqueue action: the PodGroup is taken as Inqueue")
    pending = sorted(job.pending(), key=ssn.task_key)
    if not pending:
        raise InputError(job_shown, "", f"PodGroup {first} has no pending pods to submit")
    need: dict = {}
    for t in pending:
        need = vres.add(need, t.resreq)
    placed = _fits_idle(ssn, pending, chosen)
    topo = _topology(model, [g.uid for g in submission.group_list], job, conf, shown, ssn, result) \
        if placed is not None or \
        any(a in walk_model.GANG_EVICTION for a in actions) else None
    if topo is not None and topo.enforced and placed is not None:
        placed = _fits_on(ssn, pending, topo.placed) if topo.placed is not None else None
    if placed is not None and "allocate" in actions:
        result.outcome, result.placed = "fits", placed
        result.reason = f"allocate places its {len(pending)} pods in idle room ({show_res(need)}); nothing is evicted"
        return result
    evicting = [a for a in actions if a in walk_model.EVICTION_ACTIONS]
    if not evicting:
        result.reason = (f"its pods ({show_res(need)}) do not fit the idle room and the conf runs no eviction "
                         "action (preempt, reclaim, gangpreempt, gangreclaim): it waits")
        return result
    _evict(ssn, job, chosen, evicting, pending, need, result)
    return result


def _evict(ssn: Session, job, chosen: dict, evicting: list[str], pending: list, need: dict, result: WhatIf) -> None:
    """Run the conf's eviction actions; the evictions made for the job, or why none was."""
    explain.enable(ssn)
    for action in evicting:
        cycle.ACTIONS[action](ssn, chosen)
    ours = {t.uid for t in job.tasks}
    result.evictions = [e for e in ssn.evictions if e.preemptor in ours]
    others = [e for e in ssn.evictions if e.preemptor not in ours]
    if others:
        result.notes.append(f"the same cycle also evicts {len(others)} pod(s) for other pending jobs")
    result.placed = {t: n for t, n in ssn.pipelined.items() if t in ours}
    if result.evictions:
        acted = [a for a in evicting if any(e.action == a for e in result.evictions)]
        result.outcome = "evicts"
        result.reason = (f"{', '.join(acted)} evict{'s' if len(acted) == 1 else ''} {len(result.evictions)} pod(s) "
                         f"of {len({e.job for e in result.evictions})} job(s) to make room")
        return
    result.reason = (f"its pods ({show_res(need)}) do not fit the idle room and {', '.join(evicting)} find no "
                     "victims the tier walk allows: it waits")
    result.refused = sorted(explain.refusals(ssn), key=lambda r: (r.job, r.action, r.pod))
    result.steps = explain.steps_of(ssn, job.uid)
    left = [t for t in job.tasks if t.status == "Pending"] or pending
    allowed = [t for t in ssn.allowed.values() if t.status != "Releasing"]
    result.lacks = explain.lacks(ssn, left, lambda t: cycle._nodes_for(ssn, t, chosen), allowed)
    queue = ssn.queues[job.queue]
    if left and not ssn.allocatable(queue, left[0]):
        result.steps.append(f"allocatable: queue {queue.name} may not allocate {left[0].uid} on top of what it runs "
                            "(capacity's capability, or proportion's deserved share): the queue, not the room, "
                            "keeps it pending")


def text_report(w: WhatIf) -> str:
    lines = [f"what if {w.job} is submitted into queue {w.queue} on {w.cluster}",
             *([f"scheduler conf: {w.conf_source}"] if w.conf_source else []),
             f"actions: {', '.join(w.actions)}", f"outcome: {w.outcome}: {w.reason}"]
    groups: dict[tuple, list[Eviction]] = {}
    for e in w.evictions:
        groups.setdefault((e.job, e.queue, e.action, e.tier, e.plugins), []).append(e)
    if groups:
        lines.append("evicted (per job; JSON lists every pod):")
    for (job, queue, action, tier, plugins), evs in groups.items():
        where = f"tier {tier + 1} ({', '.join(plugins)})" if tier is not None else "no tier"
        shown = listing([e.task.split("/", 1)[1] for e in evs], 3)
        lines.append(f"  {job} (queue {queue}): {len(evs)} pod(s) on {len({e.node for e in evs})} node(s) ({shown})")
        lines.append(f"    by {action}, chosen by {where} of {walk_model.WALK[action]}: {evs[0].why}")
    lines += _refused_lines(w)
    if w.placed:
        nodes = sorted(set(w.placed.values()))
        lines.append(f"its {len(w.placed)} pod(s) go to {len(nodes)} node(s): {', '.join(nodes[:8])}"
                     + (" ..." if len(nodes) > 8 else ""))
    for note in w.notes:
        lines.append(f"note: {note}")
    return "\n".join(lines) + "\n"


def _refused_lines(w: WhatIf) -> list[str]:
    """The candidates refused, per job and refusal, and what the job lacks."""
    lines: list[str] = []
    groups: dict[tuple, list[explain.Refusal]] = {}
    for r in w.refused:
        groups.setdefault((r.job, r.queue, r.action, r.tier, r.plugin, r.reason), []).append(r)
    if groups:
        lines.append("candidates refused (per job; JSON lists every pod):")
    for (job, queue, action, tier, plugin, reason), rs in groups.items():
        by = f"{action}, tier {tier}, plugin {plugin}" if tier is not None else f"{action} itself"
        lines.append(f"  {job} (queue {queue}): {len(rs)} pod(s) refused by {by}: {reason}")
    lines += [f"  {step}" for step in w.steps]
    if w.lacks:
        lines.append(f"what it lacks: {w.lacks}")
    return lines


def json_report(w: WhatIf) -> str:
    return json.dumps({
        "cluster": w.cluster, "job": w.job, "queue": w.queue, "conf": w.conf_source, "actions": w.actions,
        "outcome": w.outcome,
        "reason": w.reason, "placed": dict(sorted(w.placed.items())), "notes": w.notes,
        "evictions": [{"pod": e.task, "job": e.job, "queue": e.queue, "node": e.node, "action": e.action,
                       "tier": None if e.tier is None else e.tier + 1, "plugins": list(e.plugins),
                       "preemptor": e.preemptor, "why": e.why} for e in w.evictions],
        "refused": [{"pod": r.pod, "job": r.job, "queue": r.queue, "node": r.node, "action": r.action,
                     "tier": r.tier, "plugin": r.plugin, "reason": r.reason} for r in w.refused],
        "steps": w.steps, "lacks": w.lacks,
    }, indent=2) + "\n"


# --- a stack as the cluster ------------------------------------------------------------------

def bundle_objects(bundle) -> list[dict]:
    """The stack's objects Volcano reads: its rendered resources and its chart releases."""
    from modules.core.wire import release_manifest
    objects = [release_manifest(r.name, r.namespace, r.chart, r.repository, r.version, r.values)
               for r in getattr(bundle, "releases", [])]
    return objects + [r.obj for r in getattr(bundle, "resources", [])]


def fabric_nodes(fabric) -> list[dict]:
    """A Node per fabric node, allocating what its pool declares, with its pool's labels and taints."""
    out = []
    for name, node in fabric.nodes.items():
        pool = node.pool
        alloc = {"cpu": f"{pool.cpu_milli}m", "memory": str(pool.memory_bytes), "pods": "110"}
        if pool.gpus:
            alloc[pool.gpu_resource] = str(pool.gpus)
        alloc.update({k: str(v) for k, v in pool.resources.items()})
        obj = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": dict(node.labels)},
               "status": {"allocatable": alloc}}
        if pool.taints:       # the pool's taints: the predicates keep pods that do not tolerate them off
            obj["spec"] = {"taints": [dict(t) for t in pool.taints]}
        out.append(obj)
    return out


def _queue_and_priority(obj: dict, context: list[dict]) -> tuple[str, str | None]:
    """A running workload's queue and PriorityClass as the semantic reader gives them (a TrainJob's
    from its runtime, a Deployment's from its pod template's queue annotation)."""
    from modules.semantics.workloads import Unknown, workload_of
    try:
        workload = workload_of(obj, context)
    except Unknown:
        workload = None
    if workload is None:
        return "default", None
    return workload.queue or "default", workload.priority_class


def running_objects(result, path: Path, shown: str, context: list[dict] | None = None) -> list[tuple[str, dict]]:
    """The jobs the topology-aware model placed, as Running PodGroups and Pods on their nodes.
    ``context``: the stack's objects (runtimes, PriorityClasses)."""
    from modules.core import yamlio
    docs = [d for d in yamlio.load_all(yamlio.read_text(path, shown), shown) if isinstance(d, dict)]
    by_name = {str(meta(d).get("name")): d for d in docs}
    out: list[tuple[str, dict]] = []
    names = result.cluster.node_names
    for job, outcome in zip(result.jobs, result.outcomes["topology-aware"]):
        if not outcome.placed:
            continue
        obj = by_name.get(job.name, {})
        queue, priority = _queue_and_priority(obj, docs + (context or []))
        namespace = str(meta(obj).get("namespace") or "default")
        where = f"{shown}: {job.name}"
        group = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
                 "metadata": {"name": job.name, "namespace": namespace},
                 "spec": {"minMember": job.min_available, "queue": queue}, "status": {"phase": "Running"}}
        if priority:
            group["spec"]["priorityClassName"] = priority
        out.append((where, group))
        requests = {p.name: p.requests for p in job.pods}
        for pod_name, node in outcome.pods:
            pod = {"apiVersion": "v1", "kind": "Pod",
                   "metadata": {"name": pod_name, "namespace": namespace,
                                "annotations": {GROUP_ANNOTATION: job.name}},
                   "spec": {"nodeName": names[node], "containers": [{"name": "main", "resources": {
                       "requests": {k: submit.quantity_text(v) for k, v in requests.get(pod_name, {}).items()}}}]},
                   "status": {"phase": "Running"}}
            if priority:
                pod["spec"]["priorityClassName"] = priority
            out.append((where, pod))
    return out
