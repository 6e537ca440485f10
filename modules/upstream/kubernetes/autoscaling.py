"""HorizontalPodAutoscalers (``pkg/apis/autoscaling/validation/validation.go``)."""
from __future__ import annotations

from typing import Any

from modules.semantics.shapes import as_dict, as_int, as_list
from modules.upstream.autoscaling.controller import SOURCE_KEY
from modules.core.vocabulary.names import dns1123_label, path_segment_name
from .meta import validate_labels
from modules.upstream.field import FieldError, forbidden, formatted, invalid, not_supported, required
from .values import as_str, quantity


HPA_METRIC_TYPES = ("ContainerResource", "External", "Object", "Pods", "Resource")
HPA_TARGET_TYPES = ("AverageValue", "Utilization", "Value")
MAX_STABILIZATION_SECONDS, MAX_POLICY_PERIOD_SECONDS = 3600, 1800


def _cross_ref(ref: Any, path: str) -> list[FieldError]:
    ref = as_dict(ref)
    out: list[FieldError] = []
    for key in ("kind", "name"):
        out += formatted(f"{path}.{key}", as_str(ref.get(key)) or "", path_segment_name)
    return out


def _one_of(value: Any, path: str, allowed: tuple[str, ...], missing: str) -> list[FieldError]:
    """A required enum field: set (``missing`` says what to specify) and one of ``allowed``."""
    if not value:
        return [required(path, missing)]
    return [] if value in allowed else [not_supported(path, value, allowed)]


def _metric_target(target: dict, path: str) -> list[FieldError]:
    kind = target.get("type")
    out = _one_of(kind, f"{path}.type", HPA_TARGET_TYPES, "must specify a metric target type")
    utilization = as_int(target.get("averageUtilization"))
    if kind == "Utilization" and utilization is not None and utilization < 1:
        out.append(invalid(f"{path}.averageUtilization", utilization, "must be greater than 0"))
    for key in ("value", "averageValue"):
        value = quantity(target.get(key))
        if value is not None and value <= 0:
            out.append(invalid(f"{path}.{key}", str(target[key]), "must be positive"))
    return out


def _metric_id(metric: Any, path: str) -> list[FieldError]:
    name = as_str(as_dict(metric).get("name")) or ""
    if not name:
        return [required(f"{path}.name", "must specify a metric name")]
    out = [invalid(f"{path}.name", name, m) for m in path_segment_name(name)]
    selector = as_dict(as_dict(metric).get("selector"))
    out += validate_labels(selector.get("matchLabels"), f"{path}.selector.matchLabels")
    return out


def _metric_source(kind: str, src: dict, path: str) -> list[FieldError]:
    target = as_dict(src.get("target"))
    out: list[FieldError] = []
    if kind in ("object", "pods", "external"):
        out += _metric_id(src.get("metric"), f"{path}.metric")
    if kind == "object":
        out += _cross_ref(src.get("describedObject"), f"{path}.describedObject")
        if target.get("value") is None and target.get("averageValue") is None:
            out.append(required(f"{path}.target.value", "must set either a target value or averageValue"))
    elif kind == "pods":
        if target.get("averageValue") is None:
            out.append(required(f"{path}.target.averageValue", "must specify a positive target averageValue"))
    elif kind == "external":
        if target.get("value") is None and target.get("averageValue") is None:
            out.append(required(f"{path}.target.value",
                                "must set either a target value for metric or a per-pod target"))
        if target.get("value") is not None and target.get("averageValue") is not None:
            out.append(forbidden(f"{path}.target.value",
                                 "may not set both a target value for metric and a per-pod target"))
    else:   # resource, containerResource
        if not src.get("name"):
            out.append(required(f"{path}.name", "must specify a resource name"))
        if kind == "containerResource":
            out += formatted(f"{path}.container", as_str(src.get("container")) or "", dns1123_label,
                             "must specify a container")
        if target.get("averageUtilization") is None and target.get("averageValue") is None:
            out.append(required(f"{path}.target.averageUtilization",
                                "must set either a target raw value or a target utilization"))
        if target.get("averageUtilization") is not None and target.get("averageValue") is not None:
            out.append(forbidden(f"{path}.target.averageValue",
                                 "may not set both a target raw value and a target utilization"))
    return out + _metric_target(target, f"{path}.target")


def _metric(metric: dict, path: str) -> list[FieldError]:
    kind = metric.get("type")
    out = _one_of(kind, f"{path}.type", HPA_METRIC_TYPES, "must specify a metric source type")
    present = [f for f in ("object", "pods", "resource", "external", "containerResource") if metric.get(f) is not None]
    if present:
        out += _metric_source(present[0], as_dict(metric.get(present[0])), f"{path}.{present[0]}")
    expected = SOURCE_KEY.get(str(kind))
    if expected and metric.get(expected) is None:
        out.append(required(f"{path}.{expected}", "must populate information for the given metric source"))
    if len(present) != 1:
        for extra in present:
            if extra != expected:
                out.append(forbidden(f"{path}.{extra}", "must populate the given metric source only"))
    return out


def _scaling_rules(rules: Any, path: str) -> list[FieldError]:
    rules = as_dict(rules)
    out: list[FieldError] = []
    window = as_int(rules.get("stabilizationWindowSeconds"))
    if window is not None and window < 0:
        out.append(invalid(f"{path}.stabilizationWindowSeconds", window, "must be greater than or equal to zero"))
    elif window is not None and window > MAX_STABILIZATION_SECONDS:
        out.append(invalid(f"{path}.stabilizationWindowSeconds",
                           window, f"must be less than or equal to {MAX_STABILIZATION_SECONDS}"))
    select = rules.get("selectPolicy")
    if select is not None and select not in ("Disabled", "Max", "Min"):
        out.append(not_supported(f"{path}.selectPolicy", select, ("Disabled", "Max", "Min")))
    for i, policy in enumerate(as_list(rules.get("policies"))):
        policy = as_dict(policy)
        p = f"{path}.policies[{i}]"
        if policy.get("type") not in ("Percent", "Pods"):
            out.append(not_supported(f"{p}.type", policy.get("type", ""), ("Percent", "Pods")))
        value = as_int(policy.get("value"))
        if value is not None and value <= 0:
            out.append(invalid(f"{p}.value", value, "must be greater than zero"))
        period = as_int(policy.get("periodSeconds"))
        if period is not None and period <= 0:
            out.append(invalid(f"{p}.periodSeconds", period, "must be greater than zero"))
        elif period is not None and period > MAX_POLICY_PERIOD_SECONDS:
            out.append(invalid(f"{p}.periodSeconds",
                               period, f"must be less than or equal to {MAX_POLICY_PERIOD_SECONDS}"))
    return out


def validate_hpa(obj: dict, scale_to_zero: bool = False) -> list[FieldError]:
    """autoscaling validation.go ``validateHorizontalPodAutoscalerSpec`` (autoscaling/v2; a v1 HPA's
    ``targetCPUUtilizationPercentage`` is its Resource metric). ``scale_to_zero``: the cluster enables
    the HPAScaleToZero feature gate (then minReplicas 0 is allowed with an Object or External metric)."""
    spec = as_dict(obj.get("spec"))
    out: list[FieldError] = []
    min_replicas = as_int(spec.get("minReplicas", 1))
    floor = 0 if scale_to_zero else 1
    if min_replicas is not None and min_replicas < floor:
        out.append(invalid("spec.minReplicas", min_replicas, f"must be greater than or equal to {floor}"))
    max_replicas = as_int(spec.get("maxReplicas"))
    if max_replicas is None or max_replicas < 1:
        out.append(invalid("spec.maxReplicas", spec.get("maxReplicas", 0), "must be greater than 0"))
    elif min_replicas is not None and max_replicas < min_replicas:
        out.append(invalid("spec.maxReplicas", max_replicas, "must be greater than or equal to `minReplicas`"))
    out += _cross_ref(spec.get("scaleTargetRef"), "spec.scaleTargetRef")
    has_object = False
    for i, metric in enumerate(as_list(spec.get("metrics"))):
        metric = as_dict(metric)
        out += _metric(metric, f"spec.metrics[{i}]")
        has_object = has_object or metric.get("type") in ("Object", "External")
    if min_replicas == 0 and scale_to_zero and not has_object:
        out.append(forbidden("spec.metrics", "must specify at least one Object or External metric to support "
                                              "scaling to zero replicas"))
    utilization = as_int(spec.get("targetCPUUtilizationPercentage"))
    if utilization is not None and utilization < 1:
        out.append(invalid("spec.targetCPUUtilizationPercentage", utilization, "must be greater than 0"))
    behavior = as_dict(spec.get("behavior"))
    for direction in ("scaleUp", "scaleDown"):
        if behavior.get(direction) is not None:
            out += _scaling_rules(behavior[direction], f"spec.behavior.{direction}")
    return out
