"""The HPA's normalisation of a desired replica count: stabilisation windows, scaling policies and
the min/max bounds, on plain data.

Ported in our own code from kubernetes/kubernetes v1.35.0 ``pkg/controller/podautoscaler/
horizontal.go`` (``stabilizeRecommendation[WithBehaviors]``, ``convertDesiredReplicasWith{Rules,
BehaviorRate}``, ``calculateScale{Up,Down}Limit*``, ``storeScaleEvent``) and the defaults of
``pkg/apis/autoscaling/v2/defaults.go``. The controller's history (recent recommendations, recent
scale events) is passed in and returned: nothing here keeps state. Times are seconds.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TypeVar

from modules.core.vocabulary.go import INT32_MAX, INT32_MIN

DOWNSCALE_STABILIZATION = 300        # --horizontal-pod-autoscaler-downscale-stabilization (5m)
SCALE_UP_LIMIT_FACTOR = 2.0          # without behavior: at most max(2 x current, 4)
SCALE_UP_LIMIT_MINIMUM = 4.0
_T = TypeVar("_T")


@dataclass(frozen=True)
class Policy:
    """``HPAScalingPolicy``: at most ``value`` pods (Pods) or percent (Percent) per ``period`` seconds."""

    type: str          # Pods or Percent
    value: int
    period: int        # periodSeconds


@dataclass(frozen=True)
class Rules:
    """``HPAScalingRules`` after defaulting (``stabilization`` None: the controller's default)."""

    stabilization: int | None
    select: str
    policies: tuple[Policy, ...]
    tolerance: float | None = None


@dataclass(frozen=True)
class Behavior:
    """``HorizontalPodAutoscalerBehavior`` after defaulting: the scale-up and scale-down rules."""

    up: Rules
    down: Rules


DEFAULT_UP = Rules(0, "Max", (Policy("Pods", 4, 15), Policy("Percent", 100, 15)))
DEFAULT_DOWN = Rules(None, "Max", (Policy("Percent", 100, 15),))


def rules(given: dict | None, default: Rules) -> Rules:
    """``GenerateHPAScale{Up,Down}Rules``: the fields a spec leaves out come from the default."""
    given = given or {}
    policies = given.get("policies")
    tolerance = given.get("tolerance")
    return Rules(
        given["stabilizationWindowSeconds"] if given.get("stabilizationWindowSeconds") is not None
        else default.stabilization,
        given.get("selectPolicy") or default.select,
        tuple(Policy(p["type"], int(p["value"]), int(p["periodSeconds"])) for p in policies)
        if policies is not None else default.policies,
        float(tolerance) if tolerance is not None else None)


def behavior_of(spec_behavior: dict | None, downscale_window: int = DOWNSCALE_STABILIZATION) -> Behavior | None:
    """The behaviour the controller applies: None when the spec sets none (the older normalisation
    applies then); a scale-down window left out is the controller's default window."""
    if spec_behavior is None:
        return None
    down = rules(spec_behavior.get("scaleDown"), DEFAULT_DOWN)
    if down.stabilization is None:
        down = replace(down, stabilization=downscale_window)
    return Behavior(rules(spec_behavior.get("scaleUp"), DEFAULT_UP), down)


@dataclass(frozen=True)
class Event:
    """A scale event the controller remembers: how many replicas it added (or removed) and when."""

    change: int
    at: float
    outdated: bool = False


@dataclass(frozen=True)
class Recommendation:
    """An unstabilised recommendation the controller remembers, and when it made it."""

    replicas: int
    at: float


def changes_in_period(period: int, events: list[Event], now: float) -> int:
    """``getReplicasChangePerPeriod``: replicas changed by events younger than ``period``."""
    cutoff = now - period
    return sum(e.change for e in events if e.at > cutoff)


def scale_up_limit(current: int, up_events: list[Event], down_events: list[Event], up: Rules, now: float) -> int:
    """``calculateScaleUpLimitWithScalingRules``: the most replicas the policies allow now, counted
    from the replicas at the start of each policy's period (scale-ups and scale-downs since undone)."""
    if up.select == "Disabled":
        return current
    pick, result = (min, INT32_MAX) if up.select == "Min" else (max, INT32_MIN)
    for policy in up.policies:
        start = current - changes_in_period(policy.period, up_events, now) + \
            changes_in_period(policy.period, down_events, now)
        if policy.type == "Pods":
            proposed = start + policy.value
        else:   # rounded up, else a small percentage of few replicas would never add one
            proposed = int(math.ceil(start * (1 + policy.value / 100)))
        result = pick(result, proposed)
    return result


def scale_down_limit(current: int, up_events: list[Event], down_events: list[Event], down: Rules, now: float) -> int:
    """``calculateScaleDownLimitWithBehaviors``: the fewest replicas the policies allow now."""
    if down.select == "Disabled":
        return current
    pick, result = (max, INT32_MIN) if down.select == "Min" else (min, INT32_MAX)
    for policy in down.policies:
        start = current + changes_in_period(policy.period, down_events, now) - \
            changes_in_period(policy.period, up_events, now)
        if policy.type == "Pods":
            proposed = start - policy.value
        else:   # truncated toward zero, as Go's int32(float64)
            proposed = int(start * (1 - policy.value / 100))
        result = pick(result, proposed)
    return result


def stabilize(recommendations: list[Recommendation], desired: int, window: int, now: float
              ) -> tuple[int, list[Recommendation]]:
    """``stabilizeRecommendation`` (an HPA without behavior): the highest recommendation of the
    scale-down window; the new one replaces the last expired entry or is appended."""
    highest, old = desired, None
    for i, rec in enumerate(recommendations):
        if rec.at < now - window:
            old = i
        elif rec.replicas > highest:
            highest = rec.replicas
    return highest, _record(recommendations, old, Recommendation(desired, now))


def _record(entries: list[_T], old: int | None, new: _T) -> list[_T]:
    """A copy of ``entries`` with ``new`` in place of entry ``old``, or appended when ``old`` is None."""
    out = list(entries)
    if old is None:
        out.append(new)
    else:
        out[old] = new
    return out


def stabilize_with_behavior(recommendations: list[Recommendation], desired: int, current: int, behavior: Behavior,
                            now: float) -> tuple[int, str, list[Recommendation]]:
    """``stabilizeRecommendationWithBehaviors``: scale up no further than the lowest recommendation
    of the scale-up window, down no further than the highest of the scale-down window."""
    up_cutoff, down_cutoff = now - behavior.up.stabilization, now - behavior.down.stabilization
    up, down, old = desired, desired, None
    for i, rec in enumerate(recommendations):
        if rec.at > up_cutoff:
            up = min(rec.replicas, up)
        if rec.at > down_cutoff:
            down = max(rec.replicas, down)
        if rec.at < up_cutoff and rec.at < down_cutoff:
            old = i
    recommendation = min(max(current, up), down)
    reason = "ScaleUpStabilized" if desired >= current else "ScaleDownStabilized"
    return recommendation, reason, _record(recommendations, old, Recommendation(desired, now))


def rate_limited(desired: int, current: int, min_replicas: int, max_replicas: int, up_events: list[Event],
                 down_events: list[Event], behavior: Behavior, now: float) -> tuple[int, str]:
    """``convertDesiredReplicasWithBehaviorRate``: the policies' limit, then min/max."""
    if desired > current:
        limit = max(scale_up_limit(current, up_events, down_events, behavior.up, now), current)
        allowed, reason = (limit, "ScaleUpLimit") if max_replicas > limit else (max_replicas, "TooManyReplicas")
        if desired > allowed:
            return allowed, reason
    elif desired < current:
        limit = min(scale_down_limit(current, up_events, down_events, behavior.down, now), current)
        allowed, reason = (limit, "ScaleDownLimit") if min_replicas < limit else (min_replicas, "TooFewReplicas")
        if desired < allowed:
            return allowed, reason
    return desired, "DesiredWithinRange"


def limited_without_behavior(current: int, desired: int, min_replicas: int, max_replicas: int,
                             factor: float = SCALE_UP_LIMIT_FACTOR) -> tuple[int, str]:
    """``convertDesiredReplicasWithRules``: min/max, and at most max(factor x current, 4) at once."""
    limit = int(max(factor * current, SCALE_UP_LIMIT_MINIMUM))
    allowed, reason = (limit, "ScaleUpLimit") if max_replicas > limit else (max_replicas, "TooManyReplicas")
    if desired < min_replicas:
        return min_replicas, "TooFewReplicas"
    if desired > allowed:
        return allowed, reason
    return desired, "DesiredWithinRange"


def store_event(behavior: Behavior | None, events: list[Event], previous: int, new: int, now: float) -> list[Event]:
    """``storeScaleEvent`` for one direction's history (``events`` are the scale-up events when
    ``new > previous``, else the scale-down events): events older than the direction's longest
    policy period are marked outdated and the last of them is reused for the new event."""
    if behavior is None:
        return list(events)   # kept only for behaviors' policies
    direction = behavior.up if new > previous else behavior.down
    longest = max((p.period for p in direction.policies), default=0)
    out = [replace(e, outdated=True) if e.at < now - longest else e for e in events]
    old = max((i for i, e in enumerate(out) if e.outdated), default=None)
    return _record(out, old, Event(abs(new - previous), now))
