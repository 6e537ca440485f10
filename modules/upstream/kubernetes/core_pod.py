"""The pod spec and pod template (``pkg/apis/core/validation/validation.go`` ``ValidatePodSpec``,
``ValidatePodTemplateSpec``, ``ValidatePodCreate``): volumes, containers, pod-level resources,
restart policy, security context, DNS, the pod-specific annotations; placement is in
``core_placement``, a container's own checks in ``core_container``."""
from __future__ import annotations

from typing import Any

from modules.semantics.shapes import as_dict, as_int, as_list
from modules.upstream.field import FieldError, duplicate, forbidden, formatted, invalid, not_supported, required
from modules.core.vocabulary.go import INT32_MAX, atoi
from modules.core.vocabulary.names import dns1123_label, dns1123_subdomain, legacy_ip_address, qualified_name

from .core_container import (RESTART_POLICIES, SOURCE_REQUIRED, VOLUME_SOURCES, host_port_conflicts, named,
                             validate_container)
from .core_placement import validate_affinity, validate_spread, validate_tolerations
from .core_resources import validate_pod_resources
from .core_security import validate_pod_security_context
from .meta import validate_annotations, validate_labels
from .pod_options import API_SERVER_CREATE, PodValidationOptions
from .values import as_str, key_path


def _volumes(spec: dict, base: str) -> tuple[set[str], list[FieldError]]:
    """ValidateVolumes: the names that mounts may use (valid volumes only, as upstream) and the problems."""
    names: set[str] = set()
    out: list[FieldError] = []
    for i, vol in enumerate(as_list(spec.get("volumes"))):
        vol = as_dict(vol)
        path = f"{base}.volumes[{i}]"
        errs: list[FieldError] = []
        name = as_str(vol.get("name")) or ""
        errs += formatted(f"{path}.name", name, dns1123_label)
        if name and name in names:
            errs.append(duplicate(f"{path}.name", name))
        sources = [s for s in VOLUME_SOURCES if vol.get(s) is not None]
        for extra in sources[1:]:
            errs.append(forbidden(f"{path}.{extra}", "may not specify more than 1 volume type"))
        if len(sources) == 1 and sources[0] in SOURCE_REQUIRED:
            field_name = SOURCE_REQUIRED[sources[0]]
            if not as_dict(vol.get(sources[0])).get(field_name):
                errs.append(required(f"{path}.{sources[0]}.{field_name}"))
        if errs:
            out += errs
        else:
            names.add(name)
    return names, out


def _containers(spec: dict, path: str, volumes: set[str], options: PodValidationOptions) -> list[FieldError]:
    """validateContainers / validateInitContainers / validateEphemeralContainers: names (DNS labels,
    unique across the three lists), each container, host port conflicts."""
    out: list[FieldError] = []
    if not as_list(spec.get("containers")):
        out.append(required(f"{path}.containers"))
    seen: set[str] = set()
    for field_name in ("containers", "initContainers", "ephemeralContainers"):
        for i, c in enumerate(as_list(spec.get(field_name))):
            c = as_dict(c)
            p = f"{path}.{field_name}[{i}]"
            name = as_str(c.get("name")) or ""
            if not name:
                out.append(required(f"{p}.name"))
            else:
                out += named(name, f"{p}.name", dns1123_label, seen)
            if field_name != "ephemeralContainers":
                out += validate_container(c, p, volumes, field_name == "initContainers", options)
        if field_name == "containers":
            out += host_port_conflicts(as_list(spec.get(field_name)), f"{path}.{field_name}")
        elif field_name == "initContainers":   # they run one at a time: each on its own
            for i, c in enumerate(as_list(spec.get(field_name))):
                out += host_port_conflicts([c], f"{path}.{field_name}", i)
    if as_list(spec.get("ephemeralContainers")):
        out.append(forbidden(f"{path}.ephemeralContainers", "cannot be set on create"))
    return out


def _restart_policy(spec: dict, path: str, restart_policies: tuple[str, ...]) -> list[FieldError]:
    policy = spec.get("restartPolicy", "Always")
    if policy == "":
        return [required(f"{path}.restartPolicy")]
    if policy not in RESTART_POLICIES:
        return [not_supported(f"{path}.restartPolicy", policy, RESTART_POLICIES)]
    if policy not in restart_policies:
        return [not_supported(f"{path}.restartPolicy", policy, restart_policies)]
    return []


def _names_and_numbers(spec: dict, path: str) -> list[FieldError]:
    """The names a pod spec refers to, its host-network ports and its two durations."""
    out: list[FieldError] = []
    for key in ("serviceAccountName", "priorityClassName", "nodeName", "runtimeClassName"):
        value = as_str(spec.get(key))
        if value:
            out += [invalid(f"{path}.{key}", value, m) for m in dns1123_subdomain(value)]
    for key in ("hostname", "subdomain"):
        value = as_str(spec.get(key))
        if value:
            out += [invalid(f"{path}.{key}", value, m) for m in dns1123_label(value)]
    if spec.get("hostNetwork") is True:   # validatePodHostNetworkDeps: regular containers; 0 is defaulted
        for i, c in enumerate(as_list(spec.get("containers"))):
            for j, port in enumerate(as_list(as_dict(c).get("ports"))):
                host, container = as_int(as_dict(port).get("hostPort")), as_int(as_dict(port).get("containerPort"))
                if host and host != container:
                    out.append(invalid(f"{path}.containers[{i}].ports[{j}].hostPort",
                                       host, "must match `containerPort` when `hostNetwork` is true"))
    grace = as_int(spec.get("terminationGracePeriodSeconds"))
    if grace is not None and grace < 0:
        out.append(invalid(f"{path}.terminationGracePeriodSeconds", grace, "must be greater than or equal to 0"))
    deadline = as_int(spec.get("activeDeadlineSeconds"))
    if deadline is not None and not 1 <= deadline <= INT32_MAX:
        out.append(invalid(f"{path}.activeDeadlineSeconds", deadline, "must be between 1 and 2147483647, inclusive"))
    return out


PREEMPTION_POLICIES = ("Never", "PreemptLowerPriority")


def _gates_aliases_and_namespaces(spec: dict, path: str) -> list[FieldError]:
    """validateReadinessGates, validateSchedulingGates, ValidateHostAliases, ValidatePreemptionPolicy and
    validateHostUsers: condition types and gate names qualified names (gates once each), host aliases an
    IP with subdomain host names, no host namespaces for a pod in its own user namespace. Addresses are
    read as the legacy fields are (upstream's own table admits the nameserver
    ``FE80::0202:B3FF:FE1E:8329``), so only an unparsable one is refused."""
    out: list[FieldError] = []
    for i, gate in enumerate(as_list(spec.get("readinessGates"))):
        kind = as_str(as_dict(gate).get("conditionType")) or ""
        out += [invalid(f"{path}.readinessGates[{i}].conditionType", kind, m) for m in qualified_name(kind)]
    seen: set[str] = set()
    for i, gate in enumerate(as_list(spec.get("schedulingGates"))):
        name = as_str(as_dict(gate).get("name")) or ""
        out += [invalid(f"{path}.schedulingGates[{i}]", name, m) for m in qualified_name(name)]
        if name in seen:
            out.append(duplicate(f"{path}.schedulingGates[{i}]", name))
        seen.add(name)
    for i, alias in enumerate(as_list(spec.get("hostAliases"))):
        alias = as_dict(alias)
        ip = as_str(alias.get("ip")) or ""
        out += [invalid(f"{path}.hostAliases[{i}].ip", ip, m) for m in legacy_ip_address(ip)]
        for j, host in enumerate(as_list(alias.get("hostnames"))):
            if isinstance(host, str):
                out += [invalid(f"{path}.hostAliases[{i}].hostnames[{j}]", host, m) for m in dns1123_subdomain(host)]
    policy = spec.get("preemptionPolicy")
    if policy is not None and policy not in PREEMPTION_POLICIES:
        out.append(not_supported(f"{path}.preemptionPolicy", policy, PREEMPTION_POLICIES))
    if spec.get("hostUsers") is False:
        for key, child in (("hostNetwork", "hostNetwork"), ("hostPID", "HostPID"), ("hostIPC", "HostIPC")):
            if spec.get(key) is True:   # upstream's own spelling of the last two paths
                out.append(forbidden(f"{path}.{child}", "when `pod.Spec.HostUsers` is false"))
    return out


def validate_pod_spec(spec: Any, path: str, restart_policies: tuple[str, ...] = RESTART_POLICIES,
                      options: PodValidationOptions = API_SERVER_CREATE) -> list[FieldError]:
    """ValidatePodSpec on a defaulted spec at ``path`` (``spec``, ``spec.template.spec``, ...).
    ``restart_policies``: what the owning kind allows (Deployments: Always; Jobs: OnFailure, Never);
    ``options``: the caller's PodValidationOptions (the API server's on create unless told)."""
    spec = as_dict(spec)
    volumes, out = _volumes(spec, path)
    out += _containers(spec, path, volumes, options)
    if options.pod_level_resources_enabled:
        out += validate_pod_resources(spec, f"{path}.resources", options)
    out += _restart_policy(spec, path, restart_policies)
    out += validate_labels(spec.get("nodeSelector"), f"{path}.nodeSelector")
    out += validate_pod_security_context(spec, path, options)
    out += validate_affinity(as_dict(spec.get("affinity")), f"{path}.affinity")
    out += _dns(spec, path)
    out += validate_spread(spec.get("topologySpreadConstraints"), f"{path}.topologySpreadConstraints")
    out += validate_tolerations(spec.get("tolerations"), f"{path}.tolerations")
    out += _names_and_numbers(spec, path)
    out += _gates_aliases_and_namespaces(spec, path)
    return out


DNS_POLICIES = ("ClusterFirst", "ClusterFirstWithHostNet", "Default", "None")


def _dns(spec: dict, path: str) -> list[FieldError]:
    """validateDNSPolicy and validatePodDNSConfig: a known policy; `None` needs a dnsConfig with 1-3
    nameservers."""
    policy = spec.get("dnsPolicy") or "ClusterFirst"
    config = spec.get("dnsConfig")
    if policy not in DNS_POLICIES:
        return [not_supported(f"{path}.dnsPolicy", policy, DNS_POLICIES)]
    out: list[FieldError] = []
    servers = as_list(as_dict(config).get("nameservers"))
    if policy == "None" and not isinstance(config, dict):
        return [required(f"{path}.dnsConfig", "must provide `dnsConfig` when `dnsPolicy` is None")]
    if policy == "None" and not servers:
        out.append(required(f"{path}.dnsConfig.nameservers",
                            "must provide at least one DNS nameserver when `dnsPolicy` is None"))
    if len(servers) > 3:
        out.append(invalid(f"{path}.dnsConfig.nameservers", servers, "must not have more than 3 nameservers"))
    for i, server in enumerate(servers):
        if isinstance(server, str):
            out += [invalid(f"{path}.dnsConfig.nameservers[{i}]", server, m) for m in legacy_ip_address(server)]
    return out


DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"


def _deletion_cost_valid(value: Any) -> bool:
    """helper.GetDeletionCostFromPodAnnotations: no '+' and no leading zero, then
    ``strconv.ParseInt(value, 10, 32)``."""
    if not isinstance(value, str) or not value:
        return False
    if not (value[0] == "-" or "1" <= value[0] <= "9" or value == "0"):
        return False
    return atoi(value, bits=32) is not None


def validate_pod_annotations(annotations: Any, path: str, options: PodValidationOptions) -> list[FieldError]:
    """ValidatePodSpecificAnnotations: the pod deletion cost a 32-bit integer."""
    annotations = as_dict(annotations)
    if options.allow_invalid_pod_deletion_cost or DELETION_COST not in annotations:
        return []
    value = annotations[DELETION_COST]
    if _deletion_cost_valid(value):
        return []
    return [invalid(key_path(path, DELETION_COST), value if isinstance(value, str) else str(value),
                    "must be a 32bit integer")]


def validate_pod_template(spec: dict, path: str, restart_policies: tuple[str, ...] = RESTART_POLICIES,
                          options: PodValidationOptions = API_SERVER_CREATE) -> list[FieldError]:
    """ValidatePodTemplateSpec: a pod template (``metadata`` + ``spec``) at ``path``
    (``spec.template``, ``spec.tasks[0].template``), as the API server judges it after defaulting, or
    a caller with its own ``options`` (Volcano's job webhook, for each task: ``pod_options``).
    ``restart_policies``: what the owning kind allows."""
    template = as_dict(spec)
    md = as_dict(template.get("metadata"))
    base = f"{path}." if path else ""
    out = validate_labels(md.get("labels"), f"{base}metadata.labels")
    out += validate_annotations(md.get("annotations"), f"{base}metadata.annotations")
    out += validate_pod_annotations(md.get("annotations"), f"{base}metadata.annotations", options)
    out += validate_pod_spec(template.get("spec"), f"{base}spec", restart_policies, options)
    return out


def validate_pod(obj: dict, options: PodValidationOptions = API_SERVER_CREATE) -> list[FieldError]:
    """ValidatePodCreate beyond the object metadata: the pod's own annotations, its spec, and the
    checks only a Pod gets (no leading or trailing whitespace in an image)."""
    options = options.for_pod()
    out = validate_pod_annotations(as_dict(obj.get("metadata")).get("annotations"), "metadata.annotations", options)
    spec = as_dict(obj.get("spec"))
    out += validate_pod_spec(spec, "spec", RESTART_POLICIES, options)
    if as_str(spec.get("nodeName")) and as_list(spec.get("schedulingGates")):
        out.append(forbidden("spec.nodeName", "cannot be set until all schedulingGates have been cleared"))
    for field_name in ("containers", "initContainers"):
        for i, c in enumerate(as_list(spec.get(field_name))):
            image = as_dict(c).get("image")
            if isinstance(image, str) and image != image.strip():
                out.append(invalid(f"spec.{field_name}[{i}].image", image,
                                   "must not have leading or trailing whitespace"))
    return out
