"""Object metadata (apimachinery ``pkg/api/validation/objectmeta.go``): names by kind, namespace,
labels, annotations."""
from __future__ import annotations

from typing import Any

from modules.semantics.shapes import as_dict
from modules.upstream.field import FieldError, invalid, required, too_long
from modules.core.vocabulary.names import (dns1035_label, dns1123_label, dns1123_subdomain, ip_address,
                                               label_value, max_len_error, path_segment_name, qualified_name)
from modules.core.vocabulary.scope import api_group, is_cluster_scoped

TOTAL_ANNOTATION_SIZE = 256 * 1024


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


# How each kind's name is validated (the name function each group's validation.go passes to
# ValidateObjectMeta, kubernetes v1.35); custom resources and anything unlisted: a DNS-1123 subdomain.
_NAME_FORMATS = {
    ("", "Namespace"): dns1123_label,                       # ValidateNamespaceName
    ("", "Service"): dns1035_label,                         # ValidateServiceName
    ("apps", "StatefulSet"): dns1123_label,                 # ValidateStatefulSetName (its pods' hostnames)
    **{("rbac.authorization.k8s.io", k): path_segment_name  # ValidateRBACName
       for k in ("Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding")},
    ("certificates.k8s.io", "CertificateSigningRequest"): path_segment_name,   # ValidateCertificateRequestName
    ("networking.k8s.io", "IPAddress"): ip_address,         # ValidateIPAddressName
}
CRONJOB_NAME_MAX = 52   # a CronJob's Jobs append 11 characters and must stay DNS-1035 labels


def name_problems(kind: str, name: str, group: str = "") -> list[str]:
    """What the API server says about ``name`` as the name of a ``kind`` of ``group``."""
    check = _NAME_FORMATS.get((group, kind), dns1123_subdomain)
    out = check(name)
    if kind == "CronJob" and group == "batch" and len(name) > CRONJOB_NAME_MAX:
        out.append(max_len_error(CRONJOB_NAME_MAX))
    return out


def validate_object_meta(obj: dict) -> list[FieldError]:
    """ValidateObjectMeta: name (or generateName) in its kind's format, namespace (a DNS label; for a
    cluster-scoped kind the API server clears it, so it is not judged), labels, annotations."""
    md = as_dict(obj.get("metadata"))
    kind = str(obj.get("kind", ""))
    out: list[FieldError] = []
    name = md.get("name")
    if not name and not md.get("generateName"):
        out.append(required("metadata.name", "name or generateName is required"))
    elif isinstance(name, str) and name:
        out += [invalid("metadata.name", name, m) for m in name_problems(kind, name, api_group(obj))]
    namespace = md.get("namespace")
    if isinstance(namespace, str) and namespace and not is_cluster_scoped(obj):
        out += [invalid("metadata.namespace", namespace, m) for m in dns1123_label(namespace)]
    out += validate_labels(md.get("labels"), "metadata.labels")
    out += validate_annotations(md.get("annotations"), "metadata.annotations")
    return out
