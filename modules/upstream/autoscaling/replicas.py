"""Kubernetes' HPA replica calculator on plain data.

Ported in our own code from kubernetes/kubernetes v1.35.0 ``pkg/controller/podautoscaler/
replica_calculator.go`` and ``metrics/utilization.go``: what one metric proposes, given the current
replicas, the pods the target's selector finds and the metric values the metrics APIs return.

Values are int64 milli-units, as the controller reads them (``Quantity.MilliValue()``); a resource
request is the pod's request in milli-units. Times are seconds on the caller's clock (``now``).
Every function raises :class:`HPAError` with upstream's message where upstream returns an error.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from modules.core.vocabulary.go import INT32_MAX, INT64_MAX

DEFAULT_TOLERANCE = 0.1               # --horizontal-pod-autoscaler-tolerance
CPU_INITIALIZATION_PERIOD = 300.0     # --horizontal-pod-autoscaler-cpu-initialization-period (5m)
INITIAL_READINESS_DELAY = 30.0        # --horizontal-pod-autoscaler-initial-readiness-delay (30s)
CPU = "cpu"


class HPAError(Exception):
    """An error the controller reports for one metric (upstream's message)."""


@dataclass(frozen=True)
class Tolerances:
    """The usage ratio band in which the HPA keeps the current replicas: [1 - down, 1 + up]."""

    scale_down: float = DEFAULT_TOLERANCE
    scale_up: float = DEFAULT_TOLERANCE

    def within(self, ratio: float) -> bool:
        return 1.0 - self.scale_down <= ratio <= 1.0 + self.scale_up


@dataclass(frozen=True)
class Container:
    """One container's request for the resource an HPA reads (None: no request)."""

    name: str
    request: int | None = None
    init: bool = False            # an init container
    restartable: bool = False     # restartPolicy: Always (a sidecar), counted with the containers


@dataclass(frozen=True)
class Pod:
    """What the replica calculator reads of a pod the target's selector finds."""

    name: str
    phase: str = "Running"            # Pending, Running, Succeeded, Failed
    ready: bool | None = True         # the Ready condition's status; None: no Ready condition
    ready_changed: float = 0.0        # the Ready condition's lastTransitionTime
    started: float | None = 0.0       # status.startTime; None: not set
    deleting: bool = False            # metadata.deletionTimestamp set
    containers: tuple[Container, ...] = ()
    pod_request: int | None = None    # a pod-level request (KEP-2837), used when no container is named


@dataclass(frozen=True)
class PodMetric:
    """One pod's sample: its value, when it was taken and over what window."""

    value: int
    timestamp: float = 0.0
    window: float = 60.0


@dataclass(frozen=True)
class Grouping:
    """``groupPods``' answer: the ready pods counted, the others by name (unready, no sample, ignored)."""

    ready: int
    unready: frozenset[str] = field(default_factory=frozenset)
    missing: frozenset[str] = field(default_factory=frozenset)
    ignored: frozenset[str] = field(default_factory=frozenset)


def _ceil_int32(value: float) -> int:
    return INT32_MAX if value > INT32_MAX else int(math.ceil(value))


def _div(a: int, b: int) -> int:
    """Go's integer division (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def group_pods(pods: list[Pod], metrics: dict[str, PodMetric], resource: str, now: float,
               cpu_initialization: float = CPU_INITIALIZATION_PERIOD,
               readiness_delay: float = INITIAL_READINESS_DELAY) -> Grouping:
    """``groupPods``: deleted and failed pods are ignored, pending pods unready, pods without a sample
    missing; for CPU a pod is unready while it is not Ready or has no sample since it became Ready
    inside the initialisation period, and after it while it has never been Ready."""
    ready, unready, missing, ignored = 0, set(), set(), set()
    for pod in pods:
        if pod.deleting or pod.phase == "Failed":
            ignored.add(pod.name)
            continue
        if pod.phase == "Pending":
            unready.add(pod.name)
            continue
        metric = metrics.get(pod.name)
        if metric is None:
            missing.add(pod.name)
            continue
        if resource == CPU and _cpu_unready(pod, metric, now, cpu_initialization, readiness_delay):
            unready.add(pod.name)
            continue
        ready += 1
    return Grouping(ready, frozenset(unready), frozenset(missing), frozenset(ignored))


def _cpu_unready(pod: Pod, metric: PodMetric, now: float, initialization: float, delay: float) -> bool:
    if pod.ready is None or pod.started is None:
        return True
    if pod.started + initialization > now:   # still initialising: a sample must postdate readiness
        return pod.ready is False or metric.timestamp < pod.ready_changed + metric.window
    return pod.ready is False and pod.started + delay > pod.ready_changed   # never been ready


def calculate_requests(pods: list[Pod], container: str, resource: str,
                       pod_level: bool = True) -> dict[str, int]:
    """``calculateRequests``: each pod's request, of one named container, or of the pod (its
    pod-level request when set, else its containers and restartable init containers)."""
    out: dict[str, int] = {}
    for pod in pods:
        if pod_level and not container and pod.pod_request is not None:
            out[pod.name] = pod.pod_request
            continue
        total = 0
        counted = [c for c in pod.containers if not c.init] + [c for c in pod.containers if c.init and c.restartable]
        found = False
        for c in counted:
            if not container or c.name == container:
                if c.request is None:
                    raise HPAError(f"missing request for {resource} in container {c.name} of Pod {pod.name}")
                total += c.request
            if container and c.name == container:
                found = True
                break
        if container and not found:
            raise HPAError(f"container {container} not found in Pod {pod.name}")
        out[pod.name] = total
    return out


def resource_utilization_ratio(metrics: dict[str, PodMetric], requests: dict[str, int],
                               target: int) -> tuple[float, int, int]:
    """``GetResourceUtilizationRatio``: (ratio, utilization in whole percent, raw average)."""
    total = requested = entries = 0
    for name, metric in metrics.items():
        if name not in requests:
            continue   # a sample of a pod the selector did not find
        total += metric.value
        requested += requests[name]
        entries += 1
    if requested == 0:
        raise HPAError("no metrics returned matched known pods")
    utilization = _div(total * 100, requested)
    return utilization / target, utilization, _div(total, entries)


def metric_usage_ratio(metrics: dict[str, PodMetric], target: int) -> tuple[float, int]:
    """``GetMetricUsageRatio``: (ratio, average usage)."""
    usage = _div(sum(m.value for m in metrics.values()), len(metrics))
    return usage / target, usage


@dataclass(frozen=True)
class Proposal:
    """One metric's proposal: replicas, and what the HPA reports as its current value."""

    replicas: int
    usage: int
    utilization: int | None = None


def _adjusted(metrics: dict[str, PodMetric], grouping: Grouping, ratio: float, missing_value) -> dict:
    """The samples re-weighed as upstream does before its second pass: on a scale-down missing
    pods count as ``missing_value(pod)``, on a scale-up as 0; unready pods as 0 on a scale-up."""
    out = dict(metrics)
    if grouping.missing:
        if ratio < 1.0:
            out.update({name: PodMetric(missing_value(name)) for name in grouping.missing})
        elif ratio > 1.0:
            out.update({name: PodMetric(0) for name in grouping.missing})
    if grouping.unready and ratio > 1.0:
        out.update({name: PodMetric(0) for name in grouping.unready})
    return out


def _second_pass(current: int, ratio: float, new_ratio: float, count: int, tolerances: Tolerances) -> int:
    if tolerances.within(new_ratio) or (ratio < 1.0 < new_ratio) or (ratio > 1.0 > new_ratio):
        return current   # too small a change, or the direction would flip
    proposed = int(math.ceil(new_ratio * count))
    if (new_ratio < 1.0 and proposed > current) or (new_ratio > 1.0 and proposed < current):
        return current   # counting the re-weighed pods would flip the direction
    return proposed


def _prepare(pods: list[Pod], metrics: dict[str, PodMetric], resource: str, now: float,
             timing: tuple[float, float]) -> tuple[Grouping, dict[str, PodMetric]]:
    if not pods:
        raise HPAError("no pods returned by selector while calculating replica count")
    grouping = group_pods(pods, metrics, resource, now, *timing)
    kept = {k: v for k, v in metrics.items() if k not in grouping.ignored and k not in grouping.unready}
    if not kept:
        raise HPAError("did not receive metrics for targeted pods (pods might be unready)")
    return grouping, kept


def resource_replicas(current: int, target_utilization: int, resource: str, tolerances: Tolerances,
                      pods: list[Pod], metrics: dict[str, PodMetric], container: str = "", now: float = 0.0,
                      timing: tuple[float, float] = (CPU_INITIALIZATION_PERIOD, INITIAL_READINESS_DELAY)
                      ) -> Proposal:
    """``GetResourceReplicas``: a Utilization target (percent of the pods' requests)."""
    grouping, kept = _prepare(pods, metrics, resource, now, timing)
    requests = calculate_requests(pods, container, resource)
    ratio, utilization, raw = resource_utilization_ratio(kept, requests, target_utilization)
    with_unready = bool(grouping.unready) and ratio > 1.0
    if not with_unready and not grouping.missing:
        replicas = current if tolerances.within(ratio) else int(math.ceil(ratio * grouping.ready))
        return Proposal(replicas, raw, utilization)
    fallback = max(100, target_utilization)
    adjusted = _adjusted(kept, grouping, ratio, lambda name: _div(requests[name] * fallback, 100))
    new_ratio = resource_utilization_ratio(adjusted, requests, target_utilization)[0]
    return Proposal(_second_pass(current, ratio, new_ratio, len(adjusted), tolerances), raw, utilization)


def plain_replicas(current: int, target: int, tolerances: Tolerances, pods: list[Pod],
                   metrics: dict[str, PodMetric], resource: str = "", now: float = 0.0,
                   timing: tuple[float, float] = (CPU_INITIALIZATION_PERIOD, INITIAL_READINESS_DELAY)
                   ) -> Proposal:
    """``calcPlainMetricReplicas``: an AverageValue target on a Pods metric (``resource`` empty)
    or on a resource (``GetRawResourceReplicas``)."""
    grouping, kept = _prepare(pods, metrics, resource, now, timing)
    ratio, usage = metric_usage_ratio(kept, target)
    with_unready = bool(grouping.unready) and ratio > 1.0
    if not with_unready and not grouping.missing:
        replicas = current if tolerances.within(ratio) else int(math.ceil(ratio * grouping.ready))
        return Proposal(replicas, usage)
    adjusted = _adjusted(kept, grouping, ratio, lambda name: target)
    new_ratio = metric_usage_ratio(adjusted, target)[0]
    return Proposal(_second_pass(current, ratio, new_ratio, len(adjusted), tolerances), usage)


def ready_pod_count(pods: list[Pod]) -> int:
    """``getReadyPodsCount``: Running pods whose Ready condition is True."""
    if not pods:
        raise HPAError("unable to calculate ready pods: no pods returned by selector while calculating "
                       "replica count")
    return sum(1 for p in pods if p.phase == "Running" and p.ready is True)


def _usage_ratio_replicas(current: int, ratio: float, tolerances: Tolerances, pods: list[Pod]) -> int:
    """``getUsageRatioReplicaCount``: from zero replicas the ratio alone decides (scale to zero)."""
    if current == 0:
        return int(math.ceil(ratio))
    if tolerances.within(ratio):
        return current
    return _ceil_int32(ratio * ready_pod_count(pods))


def object_replicas(current: int, usage: int, target: int, tolerances: Tolerances, pods: list[Pod]) -> Proposal:
    """``GetObjectMetricReplicas``: a Value target on an Object metric."""
    return Proposal(_usage_ratio_replicas(current, usage / target, tolerances, pods), usage)


def per_pod_replicas(status_replicas: int, usage: int, target: int, tolerances: Tolerances) -> Proposal:
    """``GetObjectPerPodMetricReplicas`` / ``GetExternalPerPodMetricReplicas``: an AverageValue target
    on an Object or External metric: ``ceil(usage / target)`` unless within tolerance of the
    replicas the target's status reports."""
    replicas = status_replicas
    ratio = usage / (target * status_replicas) if status_replicas else math.inf
    if not tolerances.within(ratio):
        replicas = _ceil_int32(usage / target)
    if usage >= INT64_MAX or not status_replicas:
        return Proposal(replicas, min(usage, INT64_MAX))
    return Proposal(replicas, int(math.ceil(usage / status_replicas)))


def external_sum(values: list[int]) -> int:
    """The External metric's value: the sum of every series the selector returns (capped at int64)."""
    total = 0
    for value in values:
        if value > 0 and total > INT64_MAX - value:
            return INT64_MAX
        total += value
    return total


def external_replicas(current: int, values: list[int], target: int, tolerances: Tolerances,
                      pods: list[Pod]) -> Proposal:
    """``GetExternalMetricReplicas``: a Value target on an External metric."""
    usage = external_sum(values)
    return Proposal(_usage_ratio_replicas(current, usage / target, tolerances, pods), usage)
