"""PriorityClasses (``pkg/apis/scheduling/validation/validation.go``)."""
from __future__ import annotations

from modules.semantics.shapes import as_dict, as_int
from modules.upstream.field import FieldError, forbidden, not_supported


HIGHEST_USER_PRIORITY = 1_000_000_000
SYSTEM_PRIORITY_CLASSES = {"system-cluster-critical": 2_000_000_000, "system-node-critical": 2_000_001_000}


def validate_priority_class(obj: dict) -> list[FieldError]:
    """scheduling validation.go ``ValidatePriorityClass``: the system- prefix and the value range."""
    name = str(as_dict(obj.get("metadata")).get("name", ""))
    value = as_int(obj.get("value"))
    out: list[FieldError] = []
    if name.startswith("system-"):
        if name not in SYSTEM_PRIORITY_CLASSES:
            reason = f"{name} is not a known system priority class"
        elif value != SYSTEM_PRIORITY_CLASSES[name]:
            reason = f"value of {name} PriorityClass must be {SYSTEM_PRIORITY_CLASSES[name]}"
        else:
            reason = ""
        if reason:
            out.append(forbidden("metadata.name", "priority class names with 'system-' prefix are reserved for "
                                                   f"system use only. error: {reason}"))
    elif value is not None and value > HIGHEST_USER_PRIORITY:
        out.append(forbidden("value", f"maximum allowed value of a user defined priority is {HIGHEST_USER_PRIORITY}"))
    policy = obj.get("preemptionPolicy")
    if policy is not None and policy not in ("Never", "PreemptLowerPriority"):
        out.append(not_supported("preemptionPolicy", policy, ("Never", "PreemptLowerPriority")))
    return out
