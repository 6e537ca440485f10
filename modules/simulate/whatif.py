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
from decimal import Decimal
from pathlib import Path
from typing import Any

from modules.core.errors import InputError
from modules.semantics import eviction as walk_model
from modules.semantics.podspec import Reader
from modules.semantics.scheduler_conf import conf_in_effect, parse_conf
from modules.semantics.session import EPOCH
from modules.semantics.shapes import is_kind, meta
from modules.semantics.workloads import Unknown, Workload, volcano_job

from . import cycle
from .eviction import PENDING, Eviction, Session, r_add, r_le, read_cluster, selectors, show_res
from .snapshot import read_objects
from .workloads import MAX_PODS

DEFAULT_CONF = {"actions": "enqueue, allocate, backfill", "tiers": [
    {"plugins": [{"name": "priority"}, {"name": "gang"}, {"name": "conformance"}]},
    {"plugins": [{"name": "drf"}, {"name": "predicates"}, {"name": "proportion"}, {"name": "nodeorder"},
                 {"name": "binpack"}]}]}   # the chart's default conf


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


def _quantity(value: Decimal) -> str:
    return format(value.normalize(), "f")


def workload_objects(workload: Workload, namespace: str, queue: str | None) -> list[dict]:
    """A PodGroup and pending Pods for a workload, as Volcano's job controller creates them."""
    name = workload.name
    group: dict[str, Any] = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
                             "metadata": {"name": name, "namespace": namespace},
                             "spec": {"minMember": workload.min_member, "queue": queue or workload.queue or "default"},
                             "status": {"phase": "Pending"}}
    if workload.priority_class:
        group["spec"]["priorityClassName"] = workload.priority_class
    minres = workload.min_resources()
    if minres:
        group["spec"]["minResources"] = {k: _quantity(v) for k, v in minres.items()}
    pods = []
    for s, pod_set in enumerate(workload.sets):
        for i in range(pod_set.count):
            pod = {"apiVersion": "v1", "kind": "Pod",
                   "metadata": {"name": f"{name}-{pod_set.name or s}-{i}", "namespace": namespace,
                                "annotations": {"scheduling.k8s.io/group-name": name}},
                   "spec": {"containers": [{"name": "main", "resources": {
                       "requests": {k: _quantity(v) for k, v in pod_set.requests.items()}}}]},
                   "status": {"phase": PENDING}}
            if workload.priority_class:
                pod["spec"]["priorityClassName"] = workload.priority_class
            pods.append(pod)
    return [group, *pods]


def submitted(path: Path, shown: str, queue: str | None) -> tuple[list[tuple[str, dict]], list[str]]:
    """The submitted objects and the names of the PodGroups they make."""
    out: list[tuple[str, dict]] = []
    groups: list[str] = []
    pods = 0
    for where, obj in read_objects(path, shown):
        if is_kind(obj, "Job", "batch.volcano.sh"):
            reader = Reader(shown, where)
            try:
                workload = volcano_job(reader, obj)
            except Unknown as exc:
                raise InputError(shown, where, str(exc)) from None
            pods += sum(s.count for s in workload.sets)   # the workloads files' budget, before a pod is built
            if pods > MAX_PODS:
                raise reader.error("spec.tasks", f"the submitted jobs would hold more than {MAX_PODS:,} pods")
            namespace = str(meta(obj).get("namespace") or "default")
            objs = workload_objects(workload, namespace, queue)
            out += [(where, o) for o in objs]
            groups.append(f"{namespace}/{workload.name}")
        elif is_kind(obj, "PodGroup", "scheduling.volcano.sh"):
            obj = json.loads(json.dumps(obj))
            if queue:
                obj.setdefault("spec", {})["queue"] = queue
            obj.setdefault("status", {})["phase"] = "Pending"
            out.append((where, obj))
            groups.append(f"{meta(obj).get('namespace') or 'default'}/{meta(obj).get('name')}")
        elif is_kind(obj, "Pod", ""):
            out.append((where, obj))
        else:
            raise InputError(shown, f"{where}: kind", f"expected a Volcano Job, a PodGroup or a Pod, got "
                             f"{obj.get('kind')!r}")
    if not groups:
        raise InputError(shown, "", "nothing to submit: expected a Volcano Job, or a PodGroup with its Pods")
    return out, groups


def scheduler_conf(objects: list[dict], text: str | None, shown: str) -> tuple[dict, str]:
    """The conf to run: the given text, else the one in effect among the objects, else the chart's
    default."""
    source = "the chart's default volcano-scheduler.conf"
    if text is None:
        found = conf_in_effect(objects)
        if found is not None and not found.uses_default:
            text, source = found.text, f"{found.path} of {meta(found.obj).get('name')}"
    if text is None:
        return DEFAULT_CONF, source
    conf, problem = parse_conf(text)
    if conf is None:
        raise InputError(shown, "volcano-scheduler.conf", f"the scheduler configuration {problem}")
    return conf, source


def _fits_idle(ssn: Session, tasks: list, chosen: dict) -> dict[str, str] | None:
    """Allocate's question for the gang: can every pending task go to a node's idle room, within
    its queue? First fit by node name, all or nothing."""
    ops: list = []
    placed: dict[str, str] = {}
    for task in tasks:
        queue = ssn.queues[ssn.jobs[task.job].queue]
        node = next((n for n in cycle._nodes_for(ssn, task, chosen) if r_le(task.resreq, n.future_idle())), None)
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
    reported against (default ``shown``), ``job_shown`` the file of the submission ``new``."""
    everything = objects + new
    read_cluster(new, job_shown, conf)     # a mistake in the submission names its own file
    cluster = read_cluster(everything, source or shown, conf)
    # A submission without a creationTimestamp is the newest job (Volcano's job order's tie-break).
    latest = max((j.created for j in cluster.jobs.values()), default=EPOCH)
    for n, (_, obj) in enumerate(o for o in new if is_kind(o[1], "PodGroup", "scheduling.volcano.sh")):
        job = cluster.jobs.get(f"{meta(obj).get('namespace') or 'default'}/{meta(obj).get('name')}")
        if job is not None and meta(obj).get("creationTimestamp") is None:
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
    chosen = selectors(everything)
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
        need = r_add(need, t.resreq)
    placed = _fits_idle(ssn, pending, chosen)
    if placed is not None and "allocate" in actions:
        result.outcome, result.placed = "fits", placed
        result.reason = f"allocate places its {len(pending)} pods in idle room ({show_res(need)}); nothing is evicted"
        return result
    evicting = [a for a in actions if a in walk_model.EVICTION_ACTIONS]
    if not evicting:
        result.reason = (f"its pods ({show_res(need)}) do not fit the idle room and the conf runs no eviction "
                         "action (preempt, reclaim, gangpreempt, gangreclaim): it waits")
        return result
    for action in evicting:
        cycle.ACTIONS[action](ssn, chosen)
    ours = {t.uid for t in job.tasks}
    result.evictions = [e for e in ssn.evictions if e.preemptor in ours]
    others = [e for e in ssn.evictions if e.preemptor not in ours]
    if others:
        result.notes.append(f"the same cycle also evicts {len(others)} pod(s) for other pending jobs")
    result.placed = {t: n for t, n in ssn.pipelined.items() if t in ours}
    if result.evictions:
        result.outcome = "evicts"
        result.reason = (f"{', '.join(evicting)} evict {len(result.evictions)} pod(s) of "
                         f"{len({e.job for e in result.evictions})} job(s) to make room")
    else:
        result.reason = (f"its pods ({show_res(need)}) do not fit the idle room and {', '.join(evicting)} find no "
                         "victims the tier walk allows: it waits")
    return result


def text_report(w: WhatIf) -> str:
    lines = [f"what if {w.job} is submitted into queue {w.queue} on {w.cluster}",
             f"actions: {', '.join(w.actions)}", f"outcome: {w.outcome}: {w.reason}"]
    groups: dict[tuple, list[Eviction]] = {}
    for e in w.evictions:
        groups.setdefault((e.job, e.queue, e.action, e.tier, e.plugins), []).append(e)
    if groups:
        lines.append("evicted (per job; JSON lists every pod):")
    for (job, queue, action, tier, plugins), evs in groups.items():
        where = f"tier {tier + 1} ({', '.join(plugins)})" if tier is not None else "no tier"
        shown = ", ".join(e.task.split("/", 1)[1] for e in evs[:3])
        shown += f" and {len(evs) - 3} more" if len(evs) > 3 else ""
        lines.append(f"  {job} (queue {queue}): {len(evs)} pod(s) on {len({e.node for e in evs})} node(s) ({shown})")
        lines.append(f"    by {action}, chosen by {where} of {walk_model.WALK[action]}: {evs[0].why}")
    if w.placed:
        nodes = sorted(set(w.placed.values()))
        lines.append(f"its {len(w.placed)} pod(s) go to {len(nodes)} node(s): {', '.join(nodes[:8])}"
                     + (" ..." if len(nodes) > 8 else ""))
    for note in w.notes:
        lines.append(f"note: {note}")
    return "\n".join(lines) + "\n"


def json_report(w: WhatIf) -> str:
    return json.dumps({
        "cluster": w.cluster, "job": w.job, "queue": w.queue, "actions": w.actions, "outcome": w.outcome,
        "reason": w.reason, "placed": dict(sorted(w.placed.items())), "notes": w.notes,
        "evictions": [{"pod": e.task, "job": e.job, "queue": e.queue, "node": e.node, "action": e.action,
                       "tier": None if e.tier is None else e.tier + 1, "plugins": list(e.plugins),
                       "preemptor": e.preemptor, "why": e.why} for e in w.evictions],
    }, indent=2) + "\n"


# --- a stack as the cluster ------------------------------------------------------------------

def bundle_objects(bundle) -> list[dict]:
    """The stack's objects Volcano reads: its rendered resources and its chart releases."""
    from modules.core.wire import release_manifest
    objects = [release_manifest(r.name, r.namespace, r.chart, r.repository, r.version, r.values)
               for r in getattr(bundle, "releases", [])]
    return objects + [r.obj for r in getattr(bundle, "resources", [])]


def fabric_nodes(fabric) -> list[dict]:
    """A Node per fabric node, allocating what its pool declares."""
    out = []
    for name, node in fabric.nodes.items():
        pool = node.pool
        alloc = {"cpu": f"{pool.cpu_milli}m", "memory": str(pool.memory_bytes), "pods": "110"}
        if pool.gpus:
            alloc[pool.gpu_resource] = str(pool.gpus)
        alloc.update({k: str(v) for k, v in pool.resources.items()})
        out.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": dict(node.labels)},
                    "status": {"allocatable": alloc}})
    return out


def _queue_and_priority(obj: dict) -> tuple[str, str | None]:
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    marks = {**(meta(obj).get("annotations") or {}), **(meta(obj).get("labels") or {})}
    queue = spec.get("queue") or marks.get("scheduling.volcano.sh/queue-name") or "default"
    return str(queue), spec.get("priorityClassName")


def running_objects(result, path: Path, shown: str) -> list[tuple[str, dict]]:
    """The jobs the topology-aware model placed, as Running PodGroups and Pods on their nodes."""
    from modules.core import yamlio
    docs = [d for d in yamlio.load_all(yamlio.read_text(path, shown), shown) if isinstance(d, dict)]
    by_name = {str(meta(d).get("name")): d for d in docs}
    out: list[tuple[str, dict]] = []
    names = result.cluster.node_names
    for job, outcome in zip(result.jobs, result.outcomes["topology-aware"]):
        if not outcome.placed:
            continue
        obj = by_name.get(job.name, {})
        queue, priority = _queue_and_priority(obj)
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
                                "annotations": {"scheduling.k8s.io/group-name": job.name}},
                   "spec": {"nodeName": names[node], "containers": [{"name": "main", "resources": {
                       "requests": {k: _quantity(v) for k, v in requests.get(pod_name, {}).items()}}}]},
                   "status": {"phase": "Running"}}
            if priority:
                pod["spec"]["priorityClassName"] = priority
            out.append((where, pod))
    return out
