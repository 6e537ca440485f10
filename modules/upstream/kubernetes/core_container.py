"""A container of a pod spec (``pkg/apis/core/validation/validation.go`` ``validateContainers``):
ports, env, volume mounts, resources, probes, lifecycle hooks."""
from __future__ import annotations

from typing import Any

from modules.semantics.shapes import as_dict, as_int, as_list
from modules.upstream.field import (FieldError, duplicate, forbidden, formatted, invalid, not_found, not_supported,
                                    required)
from modules.core.vocabulary.names import (dns1123_subdomain, env_var_name, port_name, port_number,
                                               qualified_name, strict_env_var_name)

from .core_resources import validate_resources
from .core_security import validate_security_context
from .pod_options import API_SERVER_CREATE, PodValidationOptions
from .values import as_str


RESTART_POLICIES = ("Always", "OnFailure", "Never")
PORT_PROTOCOLS = ("SCTP", "TCP", "UDP")
VOLUME_SOURCES = ("hostPath", "emptyDir", "gcePersistentDisk", "awsElasticBlockStore", "gitRepo", "secret", "nfs",
                  "iscsi", "glusterfs", "persistentVolumeClaim", "rbd", "flexVolume", "cinder", "cephfs", "flocker",
                  "downwardAPI", "fc", "azureFile", "configMap", "vsphereVolume", "quobyte", "azureDisk",
                  "photonPersistentDisk", "projected", "portworxVolume", "scaleIO", "storageos", "csi", "ephemeral",
                  "image")
# A volume source's field that must not be empty (validateVolumeSource and the per-source checks).
SOURCE_REQUIRED = {"persistentVolumeClaim": "claimName", "configMap": "name", "secret": "secretName",
                    "hostPath": "path", "nfs": "server"}
PROBE_HANDLERS = ("exec", "httpGet", "tcpSocket", "grpc")
RESIZE_RESTART_POLICIES = ("NotRequired", "RestartContainer")
TERMINATION_MESSAGE_POLICIES = ("File", "FallbackToLogsOnError")
IMAGE_PULL_POLICIES = ("Always", "IfNotPresent", "Never")
LIFECYCLE_HANDLERS = ("exec", "httpGet", "tcpSocket", "sleep")
_PROBE_FIELDS = ("initialDelaySeconds", "timeoutSeconds", "periodSeconds", "successThreshold", "failureThreshold")


def named(name: str, path: str, check, seen: set[str]) -> list[FieldError]:
    """A list entry's name: in its format (``check``), and unique among the valid ones seen so far."""
    problems = [invalid(path, name, m) for m in check(name)]
    if not problems and name in seen:
        problems.append(duplicate(path, name))
    seen.add(name)
    return problems


def port_ref(value: Any, path: str) -> list[FieldError]:
    """An IntOrString port of a probe or Service targetPort: a number in range or an IANA name."""
    if isinstance(value, bool):
        return []
    if isinstance(value, int):
        return [invalid(path, value, m) for m in port_number(value)]
    if isinstance(value, str):   # an IntOrString written as a string is a port name, digits or not
        return [invalid(path, value, m) for m in port_name(value)]
    return []


def _handler(handler: dict, path: str, kinds: tuple[str, ...], required_detail: str) -> list[FieldError]:
    present = [k for k in kinds if handler.get(k) is not None]
    out: list[FieldError] = []
    if not present:
        out.append(required(path, required_detail))
    for extra in present[1:]:
        out.append(forbidden(f"{path}.{extra}", "may not specify more than 1 handler type"))
    for k in ("httpGet", "tcpSocket"):
        if k in present:   # an absent port is the IntOrString zero value, 0
            out += port_ref(as_dict(handler.get(k)).get("port", 0), f"{path}.{k}.port")
    if "exec" in present and not as_list(as_dict(handler.get("exec")).get("command")):
        out.append(required(f"{path}.exec.command"))
    scheme = as_dict(handler.get("httpGet")).get("scheme")   # absent: defaulted to HTTP
    if "httpGet" in present and scheme is not None and scheme not in ("HTTP", "HTTPS"):
        out.append(not_supported(f"{path}.httpGet.scheme", scheme, ("HTTP", "HTTPS")))
    return out


def _probe(probe: Any, path: str, success_must_be_one: bool) -> list[FieldError]:
    if not isinstance(probe, dict):
        return []
    out = _handler(probe, path, PROBE_HANDLERS, "must specify a handler type")
    for name in _PROBE_FIELDS:
        value = as_int(probe.get(name))
        if value is not None and value < 0:
            out.append(invalid(f"{path}.{name}", value, "must be greater than or equal to 0"))
    success = as_int(probe.get("successThreshold"))
    if success_must_be_one and success not in (None, 0, 1):
        out.append(invalid(f"{path}.successThreshold", success, "must be 1"))
    grace = probe.get("terminationGracePeriodSeconds")
    if as_int(grace) is not None and as_int(grace) <= 0:
        out.append(invalid(f"{path}.terminationGracePeriodSeconds", grace, "must be greater than 0"))
    if grace is not None and path.endswith(".readinessProbe"):
        out.append(invalid(f"{path}.terminationGracePeriodSeconds", grace, "must not be set for readinessProbes"))
    return out


def _env(env: Any, path: str, options: PodValidationOptions) -> list[FieldError]:
    out: list[FieldError] = []
    for i, var in enumerate(as_list(env)):
        var = as_dict(var)
        p = f"{path}[{i}]"
        out += formatted(f"{p}.name", as_str(var.get("name")) or "", _env_name_check(options))
        source = as_dict(var.get("valueFrom"))
        refs = [k for k in ("fieldRef", "resourceFieldRef", "configMapKeyRef", "secretKeyRef", "fileKeyRef")
                if source.get(k) is not None]
        if var.get("valueFrom") is not None:
            if var.get("value"):
                out.append(invalid(f"{p}.valueFrom", "", "may not be specified when `value` is not empty"))
            if not refs:
                out.append(invalid(f"{p}.valueFrom", "", "must specify one of: `fieldRef`, `resourceFieldRef`, "
                                                           "`configMapKeyRef` or `secretKeyRef`"))
            elif len(refs) > 1:
                out.append(invalid(f"{p}.valueFrom", "", "may not have more than one field specified at a time"))
            out += _downward(source, f"{p}.valueFrom")
    return out


# What a container's env may read through the downward API (validEnvDownwardAPIFieldPathExpressions,
# validContainerResourceFieldPathExpressions; hugepages through their prefixes).
ENV_FIELD_PATHS = ("metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName",
                   "spec.serviceAccountName", "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs")
RESOURCE_FIELD_PATHS = ("limits.cpu", "limits.ephemeral-storage", "limits.memory",
                        "requests.cpu", "requests.ephemeral-storage", "requests.memory")


def _downward(source: dict, path: str) -> list[FieldError]:
    """validateObjectFieldSelector / validateContainerResourceFieldSelector of an env var's source."""
    out: list[FieldError] = []
    field_ref = source.get("fieldRef")
    if isinstance(field_ref, dict):
        field_path = as_str(field_ref.get("fieldPath")) or ""
        base, _, subscript = field_path.partition("[")
        if not field_path:
            out.append(required(f"{path}.fieldRef.fieldPath"))
        elif subscript and base in ("metadata.labels", "metadata.annotations"):
            key = subscript.rstrip("]").strip("'\"")
            out += [invalid(f"{path}.fieldRef.fieldPath", key, m) for m in qualified_name(key.lower())]
        elif subscript:
            out.append(invalid(f"{path}.fieldRef.fieldPath", field_path, "does not support subscript"))
        elif field_path not in ENV_FIELD_PATHS:
            out.append(not_supported(f"{path}.fieldRef.fieldPath", field_path, ENV_FIELD_PATHS))
    resource_ref = source.get("resourceFieldRef")
    if isinstance(resource_ref, dict):
        resource = as_str(resource_ref.get("resource")) or ""
        if not resource:
            out.append(required(f"{path}.resourceFieldRef.resource"))
        elif resource not in RESOURCE_FIELD_PATHS and not resource.startswith(("limits.hugepages-",
                                                                               "requests.hugepages-")):
            out.append(not_supported(f"{path}.resourceFieldRef.resource", resource, RESOURCE_FIELD_PATHS))
    return out


def _env_name_check(options: PodValidationOptions):
    """ValidateEnv's name check: IsRelaxedEnvVarName, or IsEnvVarName without the relaxed option."""
    return env_var_name if options.allow_relaxed_environment_variable_validation else strict_env_var_name


def _ports(c: dict, path: str) -> list[FieldError]:
    """validateContainerPorts: names (IANA, unique), container and host port numbers, protocols."""
    out: list[FieldError] = []
    names: set[str] = set()
    for i, port in enumerate(as_list(c.get("ports"))):
        port = as_dict(port)
        p = f"{path}.ports[{i}]"
        name = as_str(port.get("name"))
        if name:
            out += named(name, f"{p}.name", port_name, names)
        number = as_int(port.get("containerPort"))
        if number is not None:
            if number == 0:
                out.append(required(f"{p}.containerPort"))
            else:
                out += [invalid(f"{p}.containerPort", number, m) for m in port_number(number)]
        elif "containerPort" not in port:
            out.append(required(f"{p}.containerPort"))
        host = as_int(port.get("hostPort"))
        if host:
            out += [invalid(f"{p}.hostPort", host, m) for m in port_number(host)]
        protocol = port.get("protocol", "TCP")
        if protocol == "":
            out.append(required(f"{p}.protocol"))
        elif protocol not in PORT_PROTOCOLS:
            out.append(not_supported(f"{p}.protocol", protocol, PORT_PROTOCOLS))
    return out


def _mounts(c: dict, path: str, volumes: set[str]) -> list[FieldError]:
    """ValidateVolumeMounts: each names a volume, has a unique mount path and a relative subPath."""
    out: list[FieldError] = []
    mount_paths: set[str] = set()
    for i, mount in enumerate(as_list(c.get("volumeMounts"))):
        mount = as_dict(mount)
        p = f"{path}.volumeMounts[{i}]"
        name = as_str(mount.get("name")) or ""
        if not name:
            out.append(required(f"{p}.name"))
        elif name not in volumes:
            out.append(not_found(f"{p}.name", name))
        mount_path = as_str(mount.get("mountPath")) or ""
        if not mount_path:
            out.append(required(f"{p}.mountPath"))
        elif mount_path in mount_paths:
            out.append(invalid(f"{p}.mountPath", mount_path, "must be unique"))
        mount_paths.add(mount_path)
        sub = as_str(mount.get("subPath")) or ""
        if sub.startswith("/"):
            out.append(invalid(f"{p}.subPath", sub, "must be a relative path"))
        elif ".." in sub.split("/"):
            out.append(invalid(f"{p}.subPath", sub, "must not contain '..'"))
    return out


def _probes_and_hooks(c: dict, path: str, init: bool) -> list[FieldError]:
    """Probes, lifecycle hooks and resize policies: not on an init container unless it restarts
    (a sidecar)."""
    out: list[FieldError] = []
    if init and c.get("restartPolicy") != "Always":
        for probe in ("lifecycle", "livenessProbe", "readinessProbe", "startupProbe"):
            if c.get(probe) is not None:
                out.append(forbidden(f"{path}.{probe}", "may not be set for init containers without "
                                                         "restartPolicy=Always"))
        return out
    out += _probe(c.get("livenessProbe"), f"{path}.livenessProbe", True)
    out += _probe(c.get("readinessProbe"), f"{path}.readinessProbe", False)
    out += _probe(c.get("startupProbe"), f"{path}.startupProbe", True)
    for hook in ("postStart", "preStop"):
        handler = as_dict(c.get("lifecycle")).get(hook)
        if isinstance(handler, dict):
            out += _handler(handler, f"{path}.lifecycle.{hook}", LIFECYCLE_HANDLERS, "must specify a handler type")
    for entry in as_list(c.get("resizePolicy")):
        entry = as_dict(entry)
        if entry.get("resourceName") not in ("cpu", "memory"):
            out.append(not_supported(f"{path}.resizePolicy", entry.get("resourceName", ""), ("cpu", "memory")))
        if entry.get("restartPolicy") not in RESIZE_RESTART_POLICIES:
            out.append(not_supported(f"{path}.resizePolicy", entry.get("restartPolicy", ""),
                                     RESIZE_RESTART_POLICIES))
    return out


def _env_from(c: dict, path: str, options: PodValidationOptions) -> list[FieldError]:
    """ValidateEnvFrom: the ConfigMap or Secret named as a subdomain, a prefix a valid env name."""
    out: list[FieldError] = []
    for i, source in enumerate(as_list(c.get("envFrom"))):
        source = as_dict(source)
        prefix = as_str(source.get("prefix"))
        if prefix:
            out += [invalid(f"{path}.envFrom[{i}].prefix", prefix, m) for m in _env_name_check(options)(prefix)]
        for ref in ("configMapRef", "secretRef"):
            name = as_str(as_dict(source.get(ref)).get("name"))
            if name:
                out += [invalid(f"{path}.envFrom[{i}].{ref}.name", name, m) for m in dns1123_subdomain(name)]
    return out


def validate_container(c: dict, path: str, volumes: set[str], init: bool,
                       options: PodValidationOptions = API_SERVER_CREATE) -> list[FieldError]:
    """validateContainerCommon and what validateContainers / validateInitContainers add for one
    container at ``path``."""
    out: list[FieldError] = []
    if not as_str(c.get("image")):
        out.append(required(f"{path}.image"))
    out += _ports(c, path)
    out += _env(c.get("env"), f"{path}.env", options)
    out += _mounts(c, path, volumes)
    out += validate_resources(c.get("resources"), f"{path}.resources", options)
    out += _probes_and_hooks(c, path, init)
    for key, allowed in (("terminationMessagePolicy", TERMINATION_MESSAGE_POLICIES),
                         ("imagePullPolicy", IMAGE_PULL_POLICIES)):
        value = c.get(key)
        if value and value not in allowed:   # empty: defaulted (File; Always or IfNotPresent)
            out.append(not_supported(f"{path}.{key}", value, allowed))
    out += _env_from(c, path, options)
    out += validate_security_context(c.get("securityContext"), f"{path}.securityContext")
    policy = c.get("restartPolicy")
    if policy is not None:
        if not init:
            out.append(forbidden(f"{path}.restartPolicy", "may not be set for non-init containers"))
        elif policy != "Always":
            out.append(not_supported(f"{path}.restartPolicy", policy, ("Always",)))
    return out


def host_port_conflicts(containers: list, base: str, first: int = 0) -> list[FieldError]:
    """checkHostPortConflicts: a protocol/hostIP/hostPort used once among ``containers`` (indexed
    from ``first``)."""
    seen: set[str] = set()
    out: list[FieldError] = []
    for i, c in enumerate(containers, first):
        for j, port in enumerate(as_list(as_dict(c).get("ports"))):
            port = as_dict(port)
            host = as_int(port.get("hostPort"))
            if not host:
                continue
            key = f"{port.get('protocol', 'TCP')}/{port.get('hostIP', '')}/{host}"
            if key in seen:
                out.append(duplicate(f"{base}[{i}].ports[{j}].hostPort", key))
            seen.add(key)
    return out
