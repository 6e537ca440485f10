"""Core kinds beside pods (``pkg/apis/core/validation/validation.go``): PersistentVolumeClaims,
Services, ConfigMaps, Secrets."""
from __future__ import annotations

import base64
import binascii

from modules.semantics.shapes import as_dict, as_int, as_list
from modules.upstream.vocabulary.names import config_map_key, dns1123_label, dns1123_subdomain, port_number
from .core_container import PORT_PROTOCOLS, named, port_ref
from .meta import validate_labels
from modules.upstream.field import FieldError, duplicate, forbidden, invalid, not_supported, required, too_long
from .values import as_str, key_path, quantity

MAX_CONFIG_SIZE = 1024 * 1024          # api.MaxSecretSize, which ConfigMaps share


ACCESS_MODES = ("ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod")


def validate_pvc(obj: dict) -> list[FieldError]:
    """ValidatePersistentVolumeClaimSpec: access modes and a positive storage request."""
    spec = as_dict(obj.get("spec"))
    out: list[FieldError] = []
    modes = as_list(spec.get("accessModes"))
    if not modes:
        out.append(required("spec.accessModes", "at least 1 access mode is required"))
    for mode in modes:
        if mode not in ACCESS_MODES:
            out.append(not_supported("spec.accessModes", mode, ACCESS_MODES))
    if "ReadWriteOncePod" in modes and len(modes) > 1:
        out.append(forbidden("spec.accessModes", "may not use ReadWriteOncePod with other access modes"))
    requests = as_dict(as_dict(spec.get("resources")).get("requests"))
    if "storage" not in requests:   # required even when a data source (a snapshot, a clone) fills the claim
        out.append(required("spec.resources[storage]"))
    else:
        value = quantity(requests["storage"])
        if value is not None and value <= 0:
            out.append(invalid("spec.resources.requests[storage]",
                               str(requests["storage"]), "must be greater than zero"))
    mode = spec.get("volumeMode")
    if mode is not None and mode not in ("Block", "Filesystem"):
        out.append(not_supported("spec.volumeMode", mode, ("Block", "Filesystem")))
    storage_class = as_str(spec.get("storageClassName"))
    if storage_class:
        out += [invalid("spec.storageClassName", storage_class, m) for m in dns1123_subdomain(storage_class)]
    return out


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


def validate_secret(obj: dict) -> list[FieldError]:
    out: list[FieldError] = []
    for part in ("data", "stringData"):
        for key in as_dict(obj.get(part)):
            out += [invalid(key_path(part, key), str(key), m) for m in config_map_key(str(key))]
    return out
