"""apps/v1 workloads (``pkg/apis/apps/validation/validation.go``): selectors, StatefulSet templates,
a Deployment's strategy."""
from __future__ import annotations

from dataclasses import replace
from typing import Any

from modules.core.selectors import selector_matches
from modules.semantics.shapes import as_dict, as_list
from .core_pod import validate_pod_annotations
from .meta import validate_annotations, validate_labels
from .pod_options import API_SERVER_CREATE
from modules.upstream.field import FieldError, forbidden, invalid, not_supported, required
from modules.core.vocabulary.go import atoi, is_ascii_digits


# --- the kinds -----------------------------------------------------------------------------------

# Where each core kind keeps its pod template, and the restart policies it allows.
# Codes (``FieldError.origin``) a rule selects these two errors by, for its fix hint.
SELECTOR_MISMATCH = "selector-matches-template"
NO_ROLLOUT_PROGRESS = "surge-or-unavailable"
APPS_KINDS = ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet")
BATCH_RESTART_POLICIES = ("OnFailure", "Never")


def stateful_set_template(template: dict) -> list[FieldError]:
    """ValidatePodTemplateSpecForStatefulSet: a StatefulSet's pod template gets only its labels and
    annotations (the pod deletion cost included) checked, and restartPolicy Always: not the pod spec,
    whose volumeMounts may name the volumeClaimTemplates rather than a volume (upstream leaves that
    union unchecked)."""
    md = as_dict(template.get("metadata"))
    out = validate_labels(md.get("labels"), "spec.template.metadata.labels")
    out += validate_annotations(md.get("annotations"), "spec.template.metadata.annotations")
    out += validate_pod_annotations(md.get("annotations"), "spec.template.metadata.annotations", API_SERVER_CREATE)
    policy = as_dict(template.get("spec")).get("restartPolicy") or "Always"
    if policy != "Always":
        out.append(not_supported("spec.template.spec.restartPolicy", policy, ("Always",)))
    return out


def apps_selector(kind: str, spec: dict) -> list[FieldError]:
    """ValidateDeploymentSpec, ValidateStatefulSetSpec, ValidateDaemonSetSpec, ValidateReplicaSetSpec:
    apps/v1 needs a selector, not an empty one, and the pod template's labels must satisfy it."""
    selector = spec.get("selector")
    if not isinstance(selector, dict):
        return [required("spec.selector")]
    if not as_dict(selector.get("matchLabels")) and not as_list(selector.get("matchExpressions")):
        noun = {"ReplicaSet": "deployment"}.get(kind, kind.lower())   # the ReplicaSet check reuses the words
        return [invalid("spec.selector", selector, f"empty selector is invalid for {noun}")]
    labels = as_dict(as_dict(as_dict(spec.get("template")).get("metadata")).get("labels"))
    if not selector_matches(selector, labels):
        error = invalid("spec.template.metadata.labels", labels, "`selector` does not match template `labels`")
        return [replace(error, origin=SELECTOR_MISMATCH)]
    return []


def _int_or_percent(value: Any) -> int | None:
    """getIntOrPercentValue: an int, or the number of an `N%` string (None: not either)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.endswith("%") and is_ascii_digits(value[:-1]):   # IsValidPercent
        return atoi(value[:-1])
    return None


_ROLLING = "spec.strategy.rollingUpdate"


def deployment_strategy(strategy: dict) -> list[FieldError]:
    """ValidateDeploymentStrategy after v1 defaulting (type RollingUpdate; maxSurge and maxUnavailable
    25%): Recreate takes no rollingUpdate; maxSurge and maxUnavailable not both 0, maxUnavailable at
    most 100%."""
    kind = strategy.get("type") or "RollingUpdate"
    rolling = strategy.get("rollingUpdate")
    if kind == "Recreate":
        if rolling is not None:
            return [forbidden("spec.strategy.rollingUpdate", "may not be specified when strategy `type` is 'Recreate'")]
        return []
    if kind != "RollingUpdate":
        return [not_supported("spec.strategy.type", kind, ("Recreate", "RollingUpdate"))]
    rolling = as_dict(rolling)
    unavailable, surge = rolling.get("maxUnavailable", "25%"), rolling.get("maxSurge", "25%")
    out: list[FieldError] = []
    for name, value in (("maxUnavailable", unavailable), ("maxSurge", surge)):
        number = _int_or_percent(value)
        if number is not None and number < 0:
            out.append(invalid(f"{_ROLLING}.{name}", value, "must be greater than or equal to 0"))
    if _int_or_percent(unavailable) == 0 and _int_or_percent(surge) == 0:
        error = invalid(f"{_ROLLING}.maxUnavailable", unavailable, "may not be 0 when `maxSurge` is 0")
        out.append(replace(error, origin=NO_ROLLOUT_PROGRESS))
    if isinstance(unavailable, str) and (_int_or_percent(unavailable) or 0) > 100:
        out.append(invalid(f"{_ROLLING}.maxUnavailable", unavailable, "must not be greater than 100%"))
    return out
