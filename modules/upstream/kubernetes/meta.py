"""Object metadata (apimachinery ``pkg/api/validation/objectmeta.go``): names by kind, namespace,
labels, annotations."""
from __future__ import annotations

from typing import Any

from modules.semantics.shapes import as_dict
from modules.upstream.vocabulary.names import (dns1035_label, dns1123_label, dns1123_subdomain, label_value,
                                               max_len_error, path_segment_name, qualified_name)
from modules.upstream.field import FieldError, invalid, required, too_long

TOTAL_ANNOTATION_SIZE = 256 * 1024


# --- object metadata (apimachinery pkg/api/validation/objectmeta.go) ---------------------------

def validate_labels(labels: Any, path: str) -> list[FieldError]:
    out: list[FieldError] = []
    for key, value in as_dict(labels).items():
        key = str(key)
        out += [invalid(path, key, m) for m in qualified_name(key)]
        if isinstance(value, str):
            out += [invalid(path, value, m) for m in label_value(value)]
    return out


def validate_annotations(annotations: Any, path: str) -> list[FieldError]:
    out: list[FieldError] = []
    size = 0
    for key, value in as_dict(annotations).items():
        key = str(key)
        out += [invalid(path, key, m) for m in qualified_name(key.lower())]
        size += len(key.encode()) + len(str(value if value is not None else "").encode())
    if size > TOTAL_ANNOTATION_SIZE:
        out.append(too_long(path, TOTAL_ANNOTATION_SIZE))
    return out


# How each kind's name is validated (names.go and each group's validation.go); custom resources and
# anything unlisted: a DNS-1123 subdomain.
_LABEL_NAMED = {"Namespace"}
_DNS1035_NAMED = {"Service"}
_PATH_SEGMENT_NAMED = {"Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding"}
CRONJOB_NAME_MAX = 52   # a CronJob's Jobs append 11 characters and must stay DNS-1035 labels


def name_problems(kind: str, name: str, group: str = "") -> list[str]:
    if kind in _LABEL_NAMED and group == "":
        return dns1123_label(name)
    if kind in _DNS1035_NAMED and group == "":
        return dns1035_label(name)
    if kind in _PATH_SEGMENT_NAMED and group == "rbac.authorization.k8s.io":
        return path_segment_name(name)
    out = dns1123_subdomain(name)
    if kind == "CronJob" and group == "batch" and len(name) > CRONJOB_NAME_MAX:
        out.append(max_len_error(CRONJOB_NAME_MAX))
    return out


def validate_object_meta(obj: dict, namespaced: bool = True) -> list[FieldError]:
    """ValidateObjectMeta: name (or generateName), namespace, labels, annotations."""
    md = as_dict(obj.get("metadata"))
    kind = str(obj.get("kind", ""))
    group = str(obj.get("apiVersion", "")).rpartition("/")[0]
    out: list[FieldError] = []
    name = md.get("name")
    if not name and not md.get("generateName"):
        out.append(required("metadata.name", "name or generateName is required"))
    elif isinstance(name, str) and name:
        out += [invalid("metadata.name", name, m) for m in name_problems(kind, name, group)]
    namespace = md.get("namespace")
    # A cluster-scoped object's namespace is cleared on create (EnsureObjectNamespaceMatchesRequestNamespace).
    if isinstance(namespace, str) and namespace and namespaced:
        out += [invalid("metadata.namespace", namespace, m) for m in dns1123_label(namespace)]
    out += validate_labels(md.get("labels"), "metadata.labels")
    out += validate_annotations(md.get("annotations"), "metadata.annotations")
    return out
