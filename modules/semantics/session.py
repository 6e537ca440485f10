"""What Volcano's scheduler cache and session make of a cluster's jobs (volcano-sh/volcano v1.15.1,
``pkg/scheduler/cache/cache.go`` ``Snapshot``, ``pkg/scheduler/api/job_info.go``,
``pkg/scheduler/framework/session_plugins.go`` ``JobOrderFn``, ``pkg/scheduler/actions/allocate``),
decided once for every reader of a live cluster (``simulate --snapshot``, ``drift``):

- **A job exists only through its PodGroup.** A pod joins the job its
  ``scheduling.k8s.io/group-name`` annotation names; a pod without the annotation belongs to no job
  (``getOrCreateJob`` returns none) until Volcano's PodGroup controller
  (``pkg/controllers/podgroup``) creates a one-member PodGroup for it and annotates the pod; a job
  whose PodGroup is absent is skipped when the
  session's snapshot is taken ("the scheduling spec of Job ... is nil, ignore it"). Either way its
  pending pods are not scheduled (``unscheduled_reason``).
- **Usage**: every pod bound to a node (``spec.nodeName``) and not Succeeded or Failed holds its
  requests there, whatever its scheduler or owner (DaemonSet pods, other schedulers' pods); the
  snapshot reader counts them so.
- **Phases**: ``JobInfo.IsPending`` is a PodGroup phase of ``Pending`` or empty; the allocate action
  skips such a job when the conf runs the ``enqueue`` action (enqueue must admit it first), and
  otherwise moves it to ``Inqueue`` itself (``allocate_skips``). ``Inqueue`` and ``Running`` jobs
  are allocated.
- **Priority**: a job's priority is the value of the PriorityClass its PodGroup's
  ``priorityClassName`` names, else the value of the ``globalDefault`` PriorityClass, else 0
  (``PriorityClasses``).
- **Job order** (``job_order_key``): the job-order functions of the conf's plugins (those without
  ``enableJobOrder: false``), tier by tier in the conf's order, the first that tells two jobs apart
  decides: ``priority`` (higher first),
  ``gang`` (a job that is not ready, fewer running tasks than ``minMember``, first); then the
  creation timestamp (older first), then the job's UID (``namespace/name`` of its PodGroup). Other
  plugins' job orders (``drf``'s share, ``sla``'s waiting time) are not modelled.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Iterable, Sequence

from .shapes import as_dict, is_kind, meta

GROUP_ANNOTATION = "scheduling.k8s.io/group-name"
ENQUEUE = "enqueue"
PENDING_PHASES = ("", "Pending")       # JobInfo.IsPending
JOB_ORDER_PLUGINS = ("priority", "gang")   # the plugins whose JobOrderFn is modelled
# Volcano's default conf (and the bundle's) runs these; used when a snapshot carries no conf.
DEFAULT_ACTIONS = ("enqueue", "allocate", "backfill")
DEFAULT_JOB_ORDER = ("priority", "gang")
EPOCH = datetime(1, 1, 1, tzinfo=timezone.utc)     # Go's zero time: a missing timestamp sorts first


@dataclass(frozen=True)
class PriorityClasses:
    """The PriorityClasses a scheduling session knows: their values and the global default."""
    values: dict[str, int] = field(default_factory=dict)
    default: int = 0                   # the globalDefault class's value (the last one read), else 0

    def of(self, name: Any) -> int:
        """The priority of a job whose PodGroup names ``name`` (None or unknown: the default)."""
        return self.values.get(name, self.default) if isinstance(name, str) else self.default


def priority_classes(objects: Iterable[dict]) -> PriorityClasses:
    values: dict[str, int] = {}
    default = 0
    for obj in objects:
        if not (isinstance(obj, dict) and is_kind(obj, "PriorityClass", "scheduling.k8s.io")):
            continue
        value = obj.get("value")
        if isinstance(value, bool) or not isinstance(value, int):
            continue
        values[str(meta(obj).get("name"))] = value
        if obj.get("globalDefault") is True:
            default = value
    return PriorityClasses(values, default)


def unscheduled_reason(group: str | None, namespace: str, group_exists: bool) -> str | None:
    """Why Volcano schedules no pending pod of this job, or None when it does."""
    if group is None:
        return ("no scheduling.k8s.io/group-name annotation: the pod belongs to no PodGroup, and Volcano's "
                "scheduler ignores a pod without one until Volcano's PodGroup controller creates one for it "
                "(podgroup-<pod UID>, minMember 1) and annotates the pod; a pod left so in a snapshot usually "
                "means that controller is not running")
    if not group_exists:
        return (f"PodGroup {namespace}/{group} is not in the snapshot: Volcano ignores a job whose PodGroup is "
                "nil, so its pods are not scheduled")
    return None


def is_pending_phase(phase: Any) -> bool:
    return phase is None or phase in PENDING_PHASES


def allocate_skips(phase: Any, actions: Sequence[str]) -> str | None:
    """Why the allocate action skips a job in PodGroup phase ``phase`` under ``actions``, or None."""
    if is_pending_phase(phase) and ENQUEUE in actions:
        return (f"PodGroup phase {phase or 'empty'}: allocate skips it until the enqueue action admits it "
                "(enqueue's gate is not modelled; a PodGroup still Pending in a snapshot is usually one enqueue "
                "refused)")
    return None


def creation_time(obj: dict) -> datetime | None:
    """``metadata.creationTimestamp`` (RFC 3339); absent: Go's zero time; unparsable: None."""
    raw = meta(obj).get("creationTimestamp")
    if raw is None:
        return EPOCH
    if isinstance(raw, datetime):                      # YAML parses unquoted timestamps
        return raw if raw.tzinfo else raw.replace(tzinfo=timezone.utc)
    if not isinstance(raw, str):
        return None
    try:
        parsed = datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)


def job_order_plugins(plugins: Iterable[dict]) -> tuple[str, ...]:
    """The modelled job-order plugins among the conf's plugin entries, in the conf's tier order;
    an entry with ``enableJobOrder: false`` takes no part (``JobOrderFn`` skips it)."""
    names = (str(p.get("name")) for p in plugins if isinstance(p, dict) and p.get("enableJobOrder") is not False)
    return tuple(n for n in dict.fromkeys(names) if n in JOB_ORDER_PLUGINS)


def job_order_key(plugins: Sequence[str], priority: int, ready: bool, created: datetime, uid: str) -> tuple:
    """A sort key giving Volcano's job order for the job-order ``plugins`` in effect."""
    key: list[Any] = []
    for plugin in plugins:
        if plugin == "priority":
            key.append(-priority)
        elif plugin == "gang":
            key.append(1 if ready else 0)
    return (*key, created, uid)


def conf_actions(conf: dict) -> tuple[str, ...]:
    """A scheduler conf's ``actions`` (a comma-separated string, as Volcano reads it)."""
    raw = conf.get("actions")
    return tuple(a.strip() for a in raw.split(",") if a.strip()) if isinstance(raw, str) else ()


def pods_priorities(unknown: dict[str, str], pods: Iterable[dict], current: dict[str, int]
                    ) -> list[tuple[str, int, str]]:
    """``(job, priority, note)`` for each job whose PodGroup names a PriorityClass the objects lack
    (``unknown``: job -> class): Volcano's cache would find the class in the cluster, and its value
    is what admission wrote into the job's pods' ``spec.priority`` (the highest when they differ);
    without one the job keeps ``current`` (the default priority)."""
    resolved: dict[str, int] = {}
    for obj in pods:
        group = as_dict(meta(obj).get("annotations")).get(GROUP_ANNOTATION)
        uid = f"{meta(obj).get('namespace') or 'default'}/{group}"
        value = as_dict(obj.get("spec")).get("priority")
        if uid in unknown and isinstance(value, int) and not isinstance(value, bool):
            resolved[uid] = max(resolved.get(uid, value), value)
    out = []
    for uid, name in sorted(unknown.items()):
        if uid in resolved:
            out.append((uid, resolved[uid], f"PriorityClass {name} (of job {uid}) is not among the objects: the "
                        f"job takes its pods' spec.priority, {resolved[uid]}"))
        else:
            out.append((uid, current[uid], f"PriorityClass {name} (of job {uid}) is not among the objects and its "
                        f"pods carry no spec.priority: the job takes the default priority, {current[uid]}"))
    return out
