"""Whether an HPA's targets can converge, judged with the HPA model (modules/upstream/autoscaling).

Every sync the HPA proposes, per metric (Kubernetes' replica calculator):

* Resource, ContainerResource, Pods (per-pod averages) and Object/External ``AverageValue``: the
  load spreads over the pods, or ``replicas = metric / averageValue`` directly, so a stable
  metric gives a stable count;
* Object/External ``Value``: ``replicas x metric / value``. That converges only when the metric
  falls as replicas are added (a queue the pods drain). On a metric that does not depend on the
  target's replicas the ratio never moves: above ``value x (1 + tolerance)`` every sync multiplies
  the replicas until maxReplicas, below ``value x (1 - tolerance)`` it divides them down to
  minReplicas.

trainstack's own fabric metrics are such metrics: the fabric probe (modules/probe) measures a
tier's collectives in its own Job and publishes ``trainstack_probe_*`` gauges, which the adapter
serves as ``fabric_busbw_gbps`` (modules/autoscaling/render.py). A bounded metric (GPU utilisation
is at most 100 %) with a target its bound cannot reach beyond the tolerance only ever scales down.
"""
from __future__ import annotations

from dataclasses import dataclass

from modules.core.quantity import parse_quantity
from modules.probe.measure import METRIC_PREFIX
from modules.probe.results import exported_gauges
from modules.upstream.autoscaling.controller import (SOURCE_KEY, History, Observation, Options, metric_name, milli,
                                                     sync, tolerances_of)
from modules.upstream.autoscaling.replicas import Pod

from .render import METRICS

# Metrics with a hard upper bound in the unit the HPA reads.
BOUNDED = {"gpu_utilization": 100, "DCGM_FI_DEV_GPU_UTIL": 100}
SYNC_PERIOD = 15   # --horizontal-pod-autoscaler-sync-period
WALK_SYNCS = 64    # 16 minutes: past the default 5-minute scale-down window more than once


def replica_independent() -> frozenset[str]:
    """Metrics independent of any workload's replica count: every gauge the probe exports (a separate
    Job measures the fabric; read from the probe's own exposition) and the adapter's metrics served
    from them (``fabric_busbw_gbps``)."""
    return exported_gauges() | {name for name, m in METRICS.items() if m.series.startswith(METRIC_PREFIX + "_")}


@dataclass(frozen=True)
class Problem:
    """A target that cannot converge: which of the HPA's metrics (``index``), its source field
    (``external``, ``pods``, ...) and target field (``value``, ``averageValue``), and why."""

    index: int
    source: str
    field: str
    metric: str
    message: str

    @property
    def path(self) -> str:
        return f"spec.metrics[{self.index}].{self.source}.target.{self.field}"


def _target(metric: dict) -> tuple[str, dict]:
    kind = str(metric.get("type"))
    source = metric.get(SOURCE_KEY.get(kind, ""), None)
    source = source if isinstance(source, dict) else {}
    target = source.get("target") if isinstance(source.get("target"), dict) else {}
    return kind, target


def _walk(spec: dict, start: int, level: int) -> list[int]:
    """The replica counts an HPA goes through over 16 minutes of syncs with a constant metric of
    ``level`` milli-units, from ``start`` replicas (the model's syncs, stabilisation included)."""
    history, replicas, seen = History(), start, [start]
    for step in range(WALK_SYNCS):
        pods = tuple(Pod(f"pod-{i}") for i in range(replicas))
        decision = sync(spec, replicas, [Observation(pods=pods, values=(level,))], history, float(step * SYNC_PERIOD))
        history, replicas = decision.history, decision.replicas
        if replicas != seen[-1]:
            seen.append(replicas)
    return seen


def _bounds(spec: dict) -> tuple[int, int] | None:
    try:
        minimum = int(spec.get("minReplicas", 1))
        maximum = int(spec["maxReplicas"])
    except (KeyError, TypeError, ValueError):
        return None
    return (minimum, maximum) if 1 <= minimum <= maximum else None


def _value_problem(spec: dict, name: str, value: object, where: tuple[int, str]) -> Problem | None:
    bounds = _bounds(spec)
    try:
        target = milli(value)
    except ValueError:
        return None
    if bounds is None or target <= 0:
        return None
    minimum, maximum = bounds
    one = {**spec, "metrics": [{"type": "External", "external": {"metric": {"name": name},
                                                                  "target": {"type": "Value", "value": str(value)}}}]}
    up = _walk(one, minimum, target * 3 // 2)
    down = _walk(one, maximum, target // 2)
    tol = tolerances_of(spec, Options())
    shown = str(value)
    return Problem(*where, "value", name, (
        f"a Value target ({shown}) on {name}, which does not change with the target's replicas: every sync the HPA "
        f"sets replicas x {name} / {shown}, so the ratio never settles. At 1.5 x {shown} it goes "
        f"{_path(up, maximum, 'maxReplicas')}, at 0.5 x {shown} {_path(down, minimum, 'minReplicas')}; "
        f"only inside {1 - tol.scale_down:g}-{1 + tol.scale_up:g} x "
        f"{shown} does it hold, at whatever count it had. Use an AverageValue target (replicas = {name} / "
        "averageValue) to get one replica per averageValue"))


def _path(walk: list[int], end: int, what: str) -> str:
    steps = " -> ".join(map(str, walk))
    if walk[-1] == end:
        return f"{steps} ({what})"
    return f"{steps} in {WALK_SYNCS * SYNC_PERIOD // 60} minutes, on to {what} {end}"


def _bound_problem(spec: dict, kind: str, name: str, target: dict, where: tuple[int, str]) -> Problem | None:
    bound = BOUNDED.get(name)
    value = target.get("averageValue") if kind == "Pods" else None
    if bound is None or value is None:
        return None
    try:
        reach = bound / float(parse_quantity(value))
    except (ValueError, ZeroDivisionError):
        return None
    tol = tolerances_of(spec, Options())
    if reach > 1 + tol.scale_up:
        return None
    return Problem(*where, "averageValue", name, (
        f"an averageValue of {str(value)} on {name}, which never exceeds {bound}: the usage ratio is at most "
        f"{reach:.2f}, within or below the tolerance band, so the HPA can only scale down (to minReplicas) and never "
        f"up. Set a target below {bound / (1 + tol.scale_up):.4g}"))


def problems(hpa: dict, independent: set[str] | frozenset[str] = frozenset()) -> list[Problem]:
    """Targets of an ``autoscaling/v2`` HPA that cannot converge (``independent``: more metric names
    that do not depend on the target's replicas)."""
    spec = hpa.get("spec") if isinstance(hpa.get("spec"), dict) else {}
    metrics = spec.get("metrics") if isinstance(spec.get("metrics"), list) else []
    independent = replica_independent() | independent
    out = []
    for i, metric in enumerate(metrics):
        if not isinstance(metric, dict):
            continue
        kind, target = _target(metric)
        name = metric_name(metric) or ""
        where = (i, SOURCE_KEY.get(kind, "pods"))
        if kind in ("Object", "External") and target.get("type") == "Value" and name in independent:
            problem = _value_problem(spec, name, target.get("value"), where)
        else:
            problem = _bound_problem(spec, kind, name, target, where)
        if problem:
            out.append(problem)
    return out
