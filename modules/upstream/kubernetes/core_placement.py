"""Where a pod may run (``pkg/apis/core/validation/validation.go`` ``ValidateTolerations``,
``validateAffinity``, ``validateTopologySpreadConstraints``)."""
from __future__ import annotations

from typing import Any

from modules.semantics.shapes import as_dict, as_int, as_list
from modules.upstream.field import FieldError, duplicate, forbidden, formatted, invalid, not_supported, required
from modules.core.vocabulary.names import label_value, qualified_name

from .values import as_str


TOLERATION_OPERATORS = ("Equal", "Exists")
TAINT_EFFECTS = ("NoExecute", "NoSchedule", "PreferNoSchedule")


def validate_tolerations(tolerations: Any, path: str) -> list[FieldError]:
    """ValidateTolerations (the comparison operators Lt/Gt are behind a feature gate that is off)."""
    out: list[FieldError] = []
    for i, t in enumerate(as_list(tolerations)):
        t = as_dict(t)
        p = f"{path}[{i}]"
        key, operator = as_str(t.get("key")) or "", t.get("operator") or ""
        value, effect = as_str(t.get("value")) or "", t.get("effect") or ""
        if key:
            out += [invalid(f"{p}.key", key, m) for m in qualified_name(key)]
        elif operator != "Exists":
            out.append(invalid(f"{p}.operator", operator, "operator must be Exists when `key` is empty, which "
                                                           'means "match all values and all keys"'))
        if t.get("tolerationSeconds") is not None and effect != "NoExecute":
            out.append(invalid(f"{p}.effect", effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"))
        if operator in ("", "Equal"):
            errors = label_value(value)
            if errors:   # upstream joins this one's messages into one error
                out.append(invalid(f"{p}.operator", value, ";".join(errors)))
        elif operator == "Exists":
            if value:
                out.append(invalid(f"{p}.operator", value, "value must be empty when `operator` is 'Exists'"))
        else:
            out.append(not_supported(f"{p}.operator", operator, TOLERATION_OPERATORS))
        if effect and effect not in TAINT_EFFECTS:
            out.append(not_supported(f"{p}.effect", effect, TAINT_EFFECTS))
    return out


def _node_selector_term(term: Any, path: str) -> list[FieldError]:
    """ValidateNodeSelectorTerm: each requirement's operator and the values it needs."""
    out: list[FieldError] = []
    term = as_dict(term)
    for part in ("matchExpressions", "matchFields"):
        for j, req in enumerate(as_list(term.get(part))):
            req = as_dict(req)
            p = f"{path}.{part}[{j}]"
            operator, values = req.get("operator"), as_list(req.get("values"))
            if operator in ("In", "NotIn"):
                if not values:
                    out.append(required(f"{p}.values", "must be specified when `operator` is 'In' or 'NotIn'"))
            elif operator in ("Exists", "DoesNotExist"):
                if values:
                    out.append(forbidden(f"{p}.values", "may not be specified when `operator` is 'Exists' or "
                                                         "'DoesNotExist'"))
            elif operator in ("Gt", "Lt"):
                if len(values) != 1:
                    out.append(required(f"{p}.values", "must be specified single value when `operator` is "
                                                        "'Lt' or 'Gt'"))
            else:
                out.append(invalid(f"{p}.operator", operator if isinstance(operator, str) else "",
                                                     "not a valid selector operator"))
            key = as_str(req.get("key")) or ""
            if part == "matchExpressions":
                out += [invalid(f"{p}.key", key, m) for m in qualified_name(key)]
                for k, value in enumerate(values):   # AllowInvalidLabelValueInRequiredNodeAffinity off
                    if isinstance(value, str):
                        out += [invalid(f"{p}.values[{k}]", value, m) for m in label_value(value)]
    return out


def _weight(weight: Any, path: str) -> list[FieldError]:
    value = as_int(weight)
    if value is None or 1 <= value <= 100:
        return []
    return [invalid(path, value, "must be in the range 1-100")]


def validate_affinity(affinity: dict, path: str) -> list[FieldError]:
    """validateAffinity: node selector terms and their requirements, preference weights, pod
    (anti-)affinity terms with a topology key."""
    out: list[FieldError] = []
    node = as_dict(affinity.get("nodeAffinity"))
    required_terms = node.get("requiredDuringSchedulingIgnoredDuringExecution")
    if isinstance(required_terms, dict):
        p = f"{path}.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
        terms = as_list(required_terms.get("nodeSelectorTerms"))
        if not terms:
            out.append(required(p, "must have at least one node selector term"))
        for i, term in enumerate(terms):
            out += _node_selector_term(term, f"{p}[{i}]")
    for i, pref in enumerate(as_list(node.get("preferredDuringSchedulingIgnoredDuringExecution"))):
        p = f"{path}.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[{i}]"
        out += _weight(as_dict(pref).get("weight"), f"{p}.weight")
        out += _node_selector_term(as_dict(pref).get("preference"), f"{p}.preference")
    for kind in ("podAffinity", "podAntiAffinity"):
        block = as_dict(affinity.get(kind))
        for mode in ("requiredDuringSchedulingIgnoredDuringExecution",
                     "preferredDuringSchedulingIgnoredDuringExecution"):
            for i, term in enumerate(as_list(block.get(mode))):
                term = as_dict(term)
                p = f"{path}.{kind}.{mode}[{i}]"
                if mode.startswith("preferred"):
                    out += _weight(term.get("weight"), f"{p}.weight")
                    term, p = as_dict(term.get("podAffinityTerm")), f"{p}.podAffinityTerm"
                out += formatted(f"{p}.topologyKey", as_str(term.get("topologyKey")) or "", qualified_name,
                                 "can not be empty")
    return out


SPREAD_ACTIONS = ("DoNotSchedule", "ScheduleAnyway")


def validate_spread(constraints: Any, path: str) -> list[FieldError]:
    """validateTopologySpreadConstraints: a positive maxSkew, a topology key, a known action (each
    key/action pair once), a positive minDomains only with DoNotSchedule."""
    out: list[FieldError] = []
    seen: set[tuple[str, str]] = set()
    for i, c in enumerate(as_list(constraints)):
        c = as_dict(c)
        p = f"{path}[{i}]"
        skew = as_int(c.get("maxSkew"))
        if skew is not None and skew <= 0:
            out.append(invalid(f"{p}.maxSkew", skew, "must be greater than zero"))
        key = as_str(c.get("topologyKey")) or ""
        out += formatted(f"{p}.topologyKey", key, qualified_name, "can not be empty")
        action = c.get("whenUnsatisfiable") or ""
        if action not in SPREAD_ACTIONS:
            out.append(not_supported(f"{p}.whenUnsatisfiable", action, SPREAD_ACTIONS))
        elif (key, action) in seen:
            out.append(duplicate(p, f"{{{key}, {action}}}"))
        seen.add((key, action))
        domains = as_int(c.get("minDomains"))
        if domains is not None and domains <= 0:
            out.append(invalid(f"{p}.minDomains", domains, "must be greater than zero"))
        elif domains is not None and action != "DoNotSchedule":
            out.append(invalid(f"{p}.minDomains", domains, "can only use minDomains if "
                                                            f"whenUnsatisfiable=DoNotSchedule, not {action}"))
    return out
