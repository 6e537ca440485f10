"""Roles and bindings (``pkg/apis/rbac/validation/validation.go``)."""
from __future__ import annotations

from modules.semantics.shapes import as_dict, as_list
from modules.core.vocabulary.names import dns1123_subdomain, path_segment_name
from modules.upstream.field import FieldError, formatted, invalid, not_supported, required
from .values import as_str


def policy_rules(obj: dict, namespaced: bool) -> list[FieldError]:
    """rbac validation.go ``ValidatePolicyRule`` for each rule of a Role or ClusterRole."""
    out: list[FieldError] = []
    for i, rule in enumerate(as_list(obj.get("rules"))):
        rule = as_dict(rule)
        p = f"rules[{i}]"
        if not as_list(rule.get("verbs")):
            out.append(required(f"{p}.verbs", "verbs must contain at least one value"))
        urls = as_list(rule.get("nonResourceURLs"))
        if urls:
            if namespaced:
                out.append(invalid(f"{p}.nonResourceURLs", urls, "namespaced rules cannot apply to non-resource "
                                                                  "URLs"))
            if as_list(rule.get("apiGroups")) or as_list(rule.get("resources")) or as_list(rule.get("resourceNames")):
                out.append(invalid(f"{p}.nonResourceURLs", urls, "rules cannot apply to both regular resources and "
                                                                  "non-resource URLs"))
            continue
        if not as_list(rule.get("apiGroups")):
            out.append(required(f"{p}.apiGroups", "resource rules must supply at least one api group"))
        if not as_list(rule.get("resources")):
            out.append(required(f"{p}.resources", "resource rules must supply at least one resource"))
    return out


SUBJECT_KINDS = ("Group", "ServiceAccount", "User")


def validate_binding(obj: dict, namespaced: bool) -> list[FieldError]:
    """rbac validation.go ``ValidateRoleBinding`` / ``ValidateClusterRoleBinding``: the role it refers
    to and its subjects."""
    ref = as_dict(obj.get("roleRef"))
    out: list[FieldError] = []
    if ref.get("apiGroup") != "rbac.authorization.k8s.io":
        out.append(not_supported("roleRef.apiGroup", ref.get("apiGroup", ""), ("rbac.authorization.k8s.io",)))
    kinds = ("ClusterRole", "Role") if namespaced else ("ClusterRole",)
    if ref.get("kind") not in kinds:
        out.append(not_supported("roleRef.kind", ref.get("kind", ""), kinds))
    out += formatted("roleRef.name", as_str(ref.get("name")) or "", path_segment_name)
    for i, subject in enumerate(as_list(obj.get("subjects"))):
        subject = as_dict(subject)
        p = f"subjects[{i}]"
        kind, sub_name = subject.get("kind"), as_str(subject.get("name")) or ""
        if not sub_name:
            out.append(required(f"{p}.name"))
        if kind not in SUBJECT_KINDS:
            out.append(not_supported(f"{p}.kind", kind or "", SUBJECT_KINDS))
        elif kind == "ServiceAccount":
            if sub_name:
                out += [invalid(f"{p}.name", sub_name, m) for m in dns1123_subdomain(sub_name)]
            if not namespaced and not subject.get("namespace"):
                out.append(required(f"{p}.namespace"))
    return out
