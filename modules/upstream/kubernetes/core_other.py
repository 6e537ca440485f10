"""Core kinds beside pods (``pkg/apis/core/validation/validation.go``): PersistentVolumeClaims,
Services, ConfigMaps, Secrets."""
from __future__ import annotations

import base64
import binascii
from typing import Any

from modules.semantics.shapes import as_dict, as_int, as_list
from modules.upstream.field import OMIT, FieldError, duplicate, forbidden, invalid, not_supported, required, too_long
from modules.core.vocabulary.names import config_map_key, dns1123_label, dns1123_subdomain, port_number

from .core_container import PORT_PROTOCOLS, named, port_ref
from .meta import validate_labels
from .values import as_str, key_path, quantity

MAX_CONFIG_SIZE = 1024 * 1024          # api.MaxSecretSize, which ConfigMaps share


ACCESS_MODES = ("ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod")


def _data_source(source: Any, path: str, namespaced_ref: bool) -> list[FieldError]:
    """validateDataSource / validateDataSourceRef: a name and kind; in the core group only a
    PersistentVolumeClaim; an API group a DNS subdomain; a ref's namespace a DNS label."""
    if not isinstance(source, dict):
        return []
    out: list[FieldError] = []
    if not as_str(source.get("name")):
        out.append(required(f"{path}.name"))
    kind = as_str(source.get("kind")) or ""
    if not kind:
        out.append(required(f"{path}.kind"))
    group = as_str(source.get("apiGroup")) or ""
    if not group and kind != "PersistentVolumeClaim":
        out.append(invalid(path, kind, "must be 'PersistentVolumeClaim' when referencing the default apiGroup"))
    if group:
        out += [invalid(f"{path}.apiGroup", group, m) for m in dns1123_subdomain(group)]
    namespace = as_str(source.get("namespace")) if namespaced_ref else None
    if namespace:
        out += [invalid(f"{path}.namespace", namespace, m) for m in dns1123_label(namespace)]
    return out


def _data_sources(spec: dict) -> list[FieldError]:
    """A claim's dataSource and dataSourceRef, each valid, and the two the same when both are set (the
    API server copies one to the other when only one is). Upstream's value for the last two errors is a
    field path printed with Go's ``%#v``; it is omitted here."""
    source, ref = spec.get("dataSource"), spec.get("dataSourceRef")
    out = _data_source(source, "spec.dataSource", False) + _data_source(ref, "spec.dataSourceRef", True)
    if isinstance(ref, dict) and as_str(ref.get("namespace")):
        if isinstance(source, dict):
            out.append(invalid("spec", OMIT, "may not be specified when dataSourceRef.namespace is specified"))
    elif isinstance(source, dict) and isinstance(ref, dict):
        if any(source.get(k) != ref.get(k) for k in ("apiGroup", "kind", "name")):
            out.append(invalid("spec", OMIT, "must match dataSourceRef"))
    return out


def validate_pvc(obj: dict) -> list[FieldError]:
    """ValidatePersistentVolumeClaimSpec: access modes, a positive storage request, the class names,
    volume mode and data sources."""
    spec = as_dict(obj.get("spec"))
    out: list[FieldError] = []
    modes = as_list(spec.get("accessModes"))
    if not modes:
        out.append(required("spec.accessModes", "at least 1 access mode is required"))
    for mode in modes:
        if mode not in ACCESS_MODES:
            out.append(not_supported("spec.accessModes", mode, ACCESS_MODES))
    if "ReadWriteOncePod" in modes and any(m in ACCESS_MODES and m != "ReadWriteOncePod" for m in modes):
        out.append(forbidden("spec.accessModes", "may not use ReadWriteOncePod with other access modes"))
    requests = as_dict(as_dict(spec.get("resources")).get("requests"))
    if "storage" not in requests:   # required even when a data source (a snapshot, a clone) fills the claim
        out.append(required("spec.resources[storage]"))
    else:
        value = quantity(requests["storage"])
        if value is not None and value <= 0:
            out.append(invalid("spec.resources[storage]", str(requests["storage"]), "must be greater than zero"))
    mode = spec.get("volumeMode")
    if mode is not None and mode not in ("Block", "Filesystem"):
        out.append(not_supported("spec.volumeMode", mode, ("Block", "Filesystem")))
    for key in ("storageClassName", "volumeAttributesClassName"):
        name = as_str(spec.get(key))
        if name:
            out += [invalid(f"spec.{key}", name, m) for m in dns1123_subdomain(name)]
    return out + _data_sources(spec)


SERVICE_TYPES = ("ClusterIP", "ExternalName", "LoadBalancer", "NodePort")


def validate_service(obj: dict) -> list[FieldError]:
    """ValidateService: ports (names, numbers, protocols, uniqueness) and the type/clusterIP rules."""
    spec = as_dict(obj.get("spec"))
    kind = spec.get("type", "ClusterIP")
    cluster_ip = spec.get("clusterIP")
    out: list[FieldError] = []
    if kind not in SERVICE_TYPES:
        out.append(not_supported("spec.type", kind, SERVICE_TYPES))
    ports = as_list(spec.get("ports"))
    headless = cluster_ip == "None"
    if not ports and not headless and kind != "ExternalName":
        out.append(required("spec.ports"))
    names: set[str] = set()
    keys: set[tuple] = set()
    for i, port in enumerate(ports):
        port = as_dict(port)
        p = f"spec.ports[{i}]"
        name = as_str(port.get("name")) or ""
        if len(ports) > 1 and not name:
            out.append(required(f"{p}.name"))
        elif name:
            out += named(name, f"{p}.name", dns1123_label, names)
        number = as_int(port.get("port"))
        if number is not None:
            out += [invalid(f"{p}.port", number, m) for m in port_number(number)]
        protocol = port.get("protocol", "TCP")
        if protocol not in PORT_PROTOCOLS:
            out.append(not_supported(f"{p}.protocol", protocol, PORT_PROTOCOLS))
        if "targetPort" in port:
            out += port_ref(port["targetPort"], f"{p}.targetPort")
        node_port = as_int(port.get("nodePort"))
        if node_port:
            if kind == "ClusterIP":
                out.append(forbidden(f"{p}.nodePort", "may not be used when `type` is 'ClusterIP'"))
            else:
                out += [invalid(f"{p}.nodePort", node_port, m) for m in port_number(node_port)]
        key = (number, protocol)
        if key in keys:
            out.append(duplicate(p, f"{number}/{protocol}"))
        keys.add(key)
    if headless and kind in ("LoadBalancer", "NodePort"):
        out.append(invalid("spec.clusterIPs[0]", "None", f"may not be set to 'None' for {kind} services"))
    if kind == "ExternalName":
        external = as_str(spec.get("externalName")) or ""
        if not external:
            out.append(required("spec.externalName"))
    out += validate_labels(spec.get("selector"), "spec.selector")
    return out


def validate_config_map(obj: dict) -> list[FieldError]:
    """ValidateConfigMap: key syntax, no key in both data and binaryData, at most 1 MiB in all."""
    data, binary = as_dict(obj.get("data")), as_dict(obj.get("binaryData"))
    out: list[FieldError] = []
    size = 0
    for key, value in data.items():
        key = str(key)
        out += [invalid(key_path("data", key), key, m) for m in config_map_key(key)]
        if key in binary:
            out.append(invalid(key_path("data", key), key, "duplicate of key present in binaryData"))
        size += len(str(value if value is not None else "").encode())
    for key, value in binary.items():
        key = str(key)
        out += [invalid(key_path("binaryData", key), key, m) for m in config_map_key(key)]
        try:
            size += len(base64.b64decode(str(value), validate=True))
        except (binascii.Error, ValueError):
            size += len(str(value)) * 3 // 4
    if size > MAX_CONFIG_SIZE:
        out.append(too_long("", MAX_CONFIG_SIZE))
    return out


SECRET_REQUIRED_KEYS = {"kubernetes.io/dockercfg": (".dockercfg",),
                        "kubernetes.io/dockerconfigjson": (".dockerconfigjson",),
                        "kubernetes.io/ssh-auth": ("ssh-privatekey",), "kubernetes.io/tls": ("tls.crt", "tls.key")}


def validate_secret(obj: dict) -> list[FieldError]:
    """ValidateSecret after ``stringData`` is merged into ``data``: key syntax, and the keys (or the
    annotation) each built-in secret type needs."""
    data = {**as_dict(obj.get("data")), **as_dict(obj.get("stringData"))}
    out: list[FieldError] = []
    for key in data:
        out += [invalid(key_path("data", key), str(key), m) for m in config_map_key(str(key))]
    kind = obj.get("type")
    for key in SECRET_REQUIRED_KEYS.get(kind, ()):
        if key not in data or (kind == "kubernetes.io/ssh-auth" and not data[key]):
            out.append(required(key_path("data", key)))
    if kind == "kubernetes.io/basic-auth" and "username" not in data and "password" not in data:
        out += [required(key_path("data", "username")), required(key_path("data", "password"))]
    if kind == "kubernetes.io/service-account-token":
        annotations = as_dict(as_dict(obj.get("metadata")).get("annotations"))
        if not annotations.get("kubernetes.io/service-account.name"):
            out.append(required(key_path("metadata.annotations", "kubernetes.io/service-account.name")))
    return out
