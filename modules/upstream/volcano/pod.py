"""Volcano v1.15.1's pod validating webhook (volcano-sh/volcano ``pkg/webhooks/admission/pods/validate``
``admit_pod.go``; ``/pods/validate`` is off in the chart's ``enabled_admissions``), our own code."""
from __future__ import annotations

from modules.semantics.shapes import annotations, as_dict
from modules.upstream.cluster import Cluster
from modules.upstream.field import FieldError
from modules.core.vocabulary.go import INT32_MAX, atoi, go_quote, is_ascii_digits
from modules.upstream.webhook_error import refuse

JDB_ANNOTATIONS = ("volcano.sh/jdb-min-available", "volcano.sh/jdb-max-unavailable")
SCHEDULER_NAMES = ("volcano",)


def _atoi_error(text: str) -> str:
    """The error text of Go's ``strconv.Atoi`` for ``text`` (which it refuses)."""
    body = text[1:] if text[:1] in "+-" else text
    reason = "value out of range" if is_ascii_digits(body) else "invalid syntax"
    return f"strconv.Atoi: parsing {go_quote(text)}: {reason}"


def _int32(value: int) -> int:
    """``intstr.FromInt``'s ``int32(i)``: Go's conversion wraps."""
    return (value + INT32_MAX + 1) % 2 ** 32 - INT32_MAX - 1


def int_or_percentage_error(key: str, value: str) -> str | None:
    """``validateIntPercentageStr``: ``intstr.Parse`` takes what ``strconv.Atoi`` reads as an integer
    (which must be positive), anything else as a string whose ``%`` signs are dropped and whose rest
    ``strconv.Atoi`` must read as a percentage strictly between 0 and 100."""
    number = atoi(value)
    if number is not None:
        if _int32(number) <= 0:
            return f"invalid value <{go_quote(value)}> for {key}, it must be a positive integer"
        return None
    digits = value.replace("%", "")
    percent = atoi(digits)
    if percent is None:
        return f"invalid value {_atoi_error(digits)} for {key}"
    if not 0 < percent < 100:
        return f"invalid value <{go_quote(value)}> for {key}, it must be a valid percentage which between 1% ~ 99%"
    return None


def validate_pod(pod: dict, operation: str = "CREATE", old: dict | None = None,
                 cluster: Cluster | None = None) -> list[FieldError]:
    """``validatePod``: a pod for Volcano's scheduler carries at most one of the job-disruption-budget
    annotations, each a positive integer or a percentage in 1%..99%."""
    if as_dict(pod.get("spec")).get("schedulerName") not in SCHEDULER_NAMES:
        return []
    notes = annotations(pod)
    for key in JDB_ANNOTATIONS:
        if key in notes:
            problem = int_or_percentage_error(key, str(notes[key]))
            if problem:
                return [refuse(f"metadata.annotations.{key}", "pod.disruption-budget", problem, notes[key])]
    if sum(key in notes for key in JDB_ANNOTATIONS) > 1:
        return [refuse("metadata.annotations", "pod.disruption-budget-both",
                       f"not allow configure multiple annotations <[{' '.join(JDB_ANNOTATIONS)}]> at same time")]
    return []
