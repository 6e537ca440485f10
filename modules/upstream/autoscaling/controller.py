"""One HPA sync on plain data: every metric's proposal, the largest of them, then normalisation.

Ported in our own code from kubernetes/kubernetes v1.35.0 ``pkg/controller/podautoscaler/
horizontal.go`` (``reconcileAutoscaler``, ``computeReplicasForMetrics``, ``computeStatusFor*``,
``normalizeDesiredReplicas[WithBehaviors]``). The spec is an ``autoscaling/v2`` HPA as a dict; what
the metrics APIs would return is an :class:`Observation` per metric; the controller's memory is a
:class:`History` passed in and returned. ``replay`` runs syncs over a series.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from modules.core.quantity import parse_quantity

from . import behavior as bh
from .replicas import (CPU_INITIALIZATION_PERIOD, DEFAULT_TOLERANCE, INITIAL_READINESS_DELAY, HPAError, Pod,
                       PodMetric, Proposal, Tolerances, external_replicas, external_sum, object_replicas,
                       per_pod_replicas, plain_replicas, resource_replicas)

SOURCES = ("Resource", "ContainerResource", "Pods", "Object", "External")
SOURCE_KEY = {"Resource": "resource", "ContainerResource": "containerResource", "Pods": "pods",
              "Object": "object", "External": "external"}


def milli(value: object) -> int:
    """``Quantity.MilliValue()``: the quantity in milli-units, rounded up."""
    scaled = parse_quantity(value) * 1000
    whole = int(scaled)
    return whole + 1 if scaled > whole else whole


@dataclass(frozen=True)
class Options:
    """The controller manager's flags that shape a sync (upstream's defaults)."""

    tolerance: float = DEFAULT_TOLERANCE
    downscale_window: int = bh.DOWNSCALE_STABILIZATION
    cpu_initialization: float = CPU_INITIALIZATION_PERIOD
    readiness_delay: float = INITIAL_READINESS_DELAY
    scale_up_limit_factor: float = bh.SCALE_UP_LIMIT_FACTOR
    configurable_tolerance: bool = True   # the HPAConfigurableTolerance gate (beta, on by default in v1.35)


@dataclass(frozen=True)
class Observation:
    """What the metrics APIs return for one metric of the spec at one sync."""

    pods: tuple[Pod, ...] = ()                        # the pods the target's selector finds
    samples: dict[str, PodMetric] = field(default_factory=dict)   # Resource / ContainerResource / Pods
    value: int | None = None                          # Object: the object's value (milli)
    values: tuple[int, ...] = ()                      # External: every series' value (milli)
    error: str = ""                                   # the metric could not be read


@dataclass(frozen=True)
class History:
    """What the controller remembers of an HPA between syncs: recent recommendations and scale events."""

    recommendations: tuple[bh.Recommendation, ...] = ()
    up_events: tuple[bh.Event, ...] = ()
    down_events: tuple[bh.Event, ...] = ()


@dataclass(frozen=True)
class Decision:
    """What one sync decides."""

    replicas: int              # what the HPA writes to the target's scale (the current count if it does not)
    reason: str                # why it rescales (upstream's rescale reason), or why it does not
    limited: str               # the ScalingLimited reason: DesiredWithinRange, TooManyReplicas, ScaleUpLimit, ...
    proposals: tuple[tuple[str, int | None, str], ...]   # per metric: (name, replicas, error)
    history: History
    stabilized: str = ""       # ScaleUpStabilized / ScaleDownStabilized when a window held the count


def tolerances_of(spec: dict, options: Options) -> Tolerances:
    """The controller's tolerance, or the behavior's per-direction ``tolerance`` (v1.33+ field)."""
    up = down = options.tolerance
    behavior = spec.get("behavior") or {}
    if options.configurable_tolerance:
        if (behavior.get("scaleUp") or {}).get("tolerance") is not None:
            up = float(parse_quantity(behavior["scaleUp"]["tolerance"]))
        if (behavior.get("scaleDown") or {}).get("tolerance") is not None:
            down = float(parse_quantity(behavior["scaleDown"]["tolerance"]))
    return Tolerances(down, up)


def metric_name(metric: object) -> str | None:
    """The name of what one entry of an HPA's ``metrics`` reads: the resource's (Resource,
    ContainerResource) or the metric's (``metric.name``: Pods, Object, External); None when the
    entry has no such name (a shape the API server would refuse)."""
    if not isinstance(metric, dict):
        return None
    kind = metric.get("type")
    source = metric.get(SOURCE_KEY.get(str(kind), ""))
    if not isinstance(source, dict):
        return None
    if kind in ("Resource", "ContainerResource"):
        name = source.get("name")
    else:
        ident = source.get("metric")
        name = ident.get("name") if isinstance(ident, dict) else None
    return None if name is None else str(name)


def metric_label(metric: dict) -> str:
    kind = metric.get("type")
    source = metric.get(SOURCE_KEY.get(kind, ""), {}) or {}
    if kind in ("Resource", "ContainerResource"):
        return f"{metric_name(metric)} resource" + (f" of container {source.get('container')}"
                                                      if kind == "ContainerResource" else "")
    return f"{str(kind).lower()} metric {metric_name(metric)}"


def propose(metric: dict, seen: Observation, spec_replicas: int, status_replicas: int, tolerances: Tolerances,
            now: float, options: Options) -> Proposal:
    """``computeStatusFor<Type>Metric``: one metric's proposal (raises HPAError, also for a spec the
    API server would not have admitted)."""
    kind = metric.get("type")
    if kind not in SOURCES:
        raise HPAError(f"unknown metric source type {kind!r}")
    if seen.error:
        raise HPAError(seen.error)
    try:
        return _propose(kind, metric, seen, spec_replicas, status_replicas, tolerances, now, options)
    except (KeyError, TypeError, ValueError, ZeroDivisionError) as err:
        raise HPAError(f"invalid {kind} metric source: {err}") from None


def _propose(kind: str, metric: dict, seen: Observation, spec_replicas: int, status_replicas: int,
             tolerances: Tolerances, now: float, options: Options) -> Proposal:
    source = metric[SOURCE_KEY[kind]]
    target = source.get("target") or {}
    timing = (options.cpu_initialization, options.readiness_delay)
    if kind in ("Resource", "ContainerResource"):
        name, container = source["name"], source.get("container", "")
        if target.get("averageValue") is not None:
            return plain_replicas(spec_replicas, milli(target["averageValue"]), tolerances, list(seen.pods),
                                  seen.samples, name, now, timing)
        if target.get("averageUtilization") is None:
            raise HPAError("invalid resource metric source: neither an average utilization target nor an "
                           "average value (usage) target was set")
        return resource_replicas(spec_replicas, int(target["averageUtilization"]), name, tolerances,
                                 list(seen.pods), seen.samples, container, now, timing)
    if kind == "Pods":
        return plain_replicas(spec_replicas, milli(target["averageValue"]), tolerances, list(seen.pods),
                              seen.samples, "", now, timing)
    if kind == "Object":
        if target.get("type") == "Value" and target.get("value") is not None:
            return object_replicas(spec_replicas, seen.value or 0, milli(target["value"]), tolerances,
                                   list(seen.pods))
        if target.get("type") == "AverageValue" and target.get("averageValue") is not None:
            return per_pod_replicas(status_replicas, seen.value or 0, milli(target["averageValue"]), tolerances)
        raise HPAError("invalid object metric source: neither a value target nor an average value target was set")
    if target.get("averageValue") is not None:
        return per_pod_replicas(status_replicas, external_sum(list(seen.values)), milli(target["averageValue"]),
                                tolerances)
    if target.get("value") is not None:
        return external_replicas(spec_replicas, list(seen.values), milli(target["value"]), tolerances,
                                 list(seen.pods))
    raise HPAError("invalid external metric source: neither a value target nor an average value target was set")


def desired_for_metrics(spec: dict, observations: list[Observation], spec_replicas: int, status_replicas: int,
                        now: float, options: Options) -> tuple[int, str, list[tuple[str, int | None, str]]]:
    """``computeReplicasForMetrics``: the largest proposal; -1 when every metric failed, or when
    some failed and the others would scale down (the HPA never scales down on partial data)."""
    tolerances = tolerances_of(spec, options)
    replicas, chosen, invalid, out = 0, "", 0, []
    metrics = spec.get("metrics") or []
    for metric, seen in zip(metrics, observations):
        label = metric_label(metric)
        try:
            proposal = propose(metric, seen, spec_replicas, status_replicas, tolerances, now, options)
        except HPAError as err:
            invalid += 1
            out.append((label, None, str(err)))
            continue
        out.append((label, proposal.replicas, ""))
        if replicas == 0 or proposal.replicas > replicas:
            replicas, chosen = proposal.replicas, label
    if invalid >= len(metrics) or (invalid and replicas < spec_replicas):
        return -1, "", out
    return replicas, chosen, out


def sync(spec: dict, spec_replicas: int, observations: list[Observation], history: History, now: float,
         options: Options = Options(), status_replicas: int | None = None) -> Decision:
    """``reconcileAutoscaler`` from the scale read to the replica count written."""
    status_replicas = spec_replicas if status_replicas is None else status_replicas
    minimum = spec.get("minReplicas", 1)
    maximum = spec["maxReplicas"]
    if spec_replicas == 0 and minimum != 0:
        return Decision(0, "ScalingDisabled: the target's replica count is zero", "", (), history)
    if spec_replicas > maximum:
        return _rescaled(spec, spec_replicas, maximum, "Current number of replicas above Spec.MaxReplicas",
                         "", (), history, now, options)
    if spec_replicas < minimum:
        return _rescaled(spec, spec_replicas, minimum, "Current number of replicas below Spec.MinReplicas",
                         "", (), history, now, options)
    desired, chosen, proposals = desired_for_metrics(spec, observations, spec_replicas, status_replicas, now,
                                                     options)
    if desired == -1:
        first = next(error for _, _, error in proposals if error)
        failed = sum(1 for _, _, error in proposals if error)
        return Decision(spec_replicas, f"invalid metrics ({failed} invalid out of {len(proposals)}), first "
                        f"error is: {first}", "", tuple(proposals), history)
    reason = (f"{chosen} above target" if desired > spec_replicas else
              "All metrics below target" if desired < spec_replicas else "")
    behavior = bh.behavior_of(spec.get("behavior"), options.downscale_window)
    if behavior is None:
        stabilized, recs = bh.stabilize(list(history.recommendations), desired, options.downscale_window, now)
        held = "ScaleDownStabilized" if stabilized != desired else ""
        final, limited = bh.limited_without_behavior(spec_replicas, stabilized, minimum, maximum,
                                                     options.scale_up_limit_factor)
    else:
        stabilized, why, recs = bh.stabilize_with_behavior(list(history.recommendations), desired, spec_replicas,
                                                           behavior, now)
        held = why if stabilized != desired else ""
        final, limited = bh.rate_limited(stabilized, spec_replicas, minimum, maximum, list(history.up_events),
                                         list(history.down_events), behavior, now)
    history = History(tuple(recs), history.up_events, history.down_events)
    return _rescaled(spec, spec_replicas, final, reason, limited, tuple(proposals), history, now, options, held)


def _rescaled(spec: dict, current: int, desired: int, reason: str, limited: str, proposals: tuple,
              history: History, now: float, options: Options, held: str = "") -> Decision:
    if desired != current:   # storeScaleEvent: only a rescale is remembered
        behavior = bh.behavior_of(spec.get("behavior"), options.downscale_window)
        if desired > current:
            history = History(history.recommendations,
                              tuple(bh.store_event(behavior, list(history.up_events), current, desired, now)),
                              history.down_events)
        else:
            history = History(history.recommendations, history.up_events,
                              tuple(bh.store_event(behavior, list(history.down_events), current, desired, now)))
    return Decision(desired, reason if desired != current else (held or reason or "no change"), limited,
                    proposals, history, held)
