"""Roles and bindings (``pkg/apis/rbac/validation/validation.go``)."""
from __future__ import annotations

from modules.semantics.shapes import as_dict, as_list
from modules.upstream.vocabulary.names import dns1123_subdomain, path_segment_name
from .values import Problem, as_str, invalid, not_supported, required


def policy_rules(obj: dict, namespaced: bool) -> list[Problem]:
    """rbac validation.go ``ValidatePolicyRule`` for each rule of a Role or ClusterRole."""
    out: list[Problem] = []
    for i, rule in enumerate(as_list(obj.get("rules"))):
        rule = as_dict(rule)
        p = f"rules[{i}]"
        if not as_list(rule.get("verbs")):
            out.append((f"{p}.verbs", required("verbs must contain at least one value")))
        urls = as_list(rule.get("nonResourceURLs"))
        if urls:
            if namespaced:
                out.append((f"{p}.nonResourceURLs", invalid(urls, "namespaced rules cannot apply to non-resource "
                                                                  "URLs")))
            if as_list(rule.get("apiGroups")) or as_list(rule.get("resources")) or as_list(rule.get("resourceNames")):
                out.append((f"{p}.nonResourceURLs", invalid(urls, "rules cannot apply to both regular resources and "
                                                                  "non-resource URLs")))
            continue
        if not as_list(rule.get("apiGroups")):
            out.append((f"{p}.apiGroups", required("resource rules must supply at least one api group")))
        if not as_list(rule.get("resources")):
            out.append((f"{p}.resources", required("resource rules must supply at least one resource")))
    return out


SUBJECT_KINDS = ("Group", "ServiceAccount", "User")


def validate_binding(obj: dict, namespaced: bool) -> list[Problem]:
    """rbac validation.go ``ValidateRoleBinding`` / ``ValidateClusterRoleBinding``: the role it refers
    to and its subjects."""
    ref = as_dict(obj.get("roleRef"))
    out: list[Problem] = []
    if ref.get("apiGroup") != "rbac.authorization.k8s.io":
        out.append(("roleRef.apiGroup", not_supported(ref.get("apiGroup", ""), ("rbac.authorization.k8s.io",))))
    kinds = ("ClusterRole", "Role") if namespaced else ("ClusterRole",)
    if ref.get("kind") not in kinds:
        out.append(("roleRef.kind", not_supported(ref.get("kind", ""), kinds)))
    name = as_str(ref.get("name")) or ""
    if not name:
        out.append(("roleRef.name", required()))
    else:
        out += [("roleRef.name", invalid(name, m)) for m in path_segment_name(name)]
    for i, subject in enumerate(as_list(obj.get("subjects"))):
        subject = as_dict(subject)
        p = f"subjects[{i}]"
        kind, sub_name = subject.get("kind"), as_str(subject.get("name")) or ""
        if not sub_name:
            out.append((f"{p}.name", required()))
        if kind not in SUBJECT_KINDS:
            out.append((f"{p}.kind", not_supported(kind or "", SUBJECT_KINDS)))
        elif kind == "ServiceAccount":
            if sub_name:
                out += [(f"{p}.name", invalid(sub_name, m)) for m in dns1123_subdomain(sub_name)]
            if not namespaced and not subject.get("namespace"):
                out.append((f"{p}.namespace", required()))
    return out
