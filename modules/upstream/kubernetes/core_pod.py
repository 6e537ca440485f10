"""The pod spec and pod template (``pkg/apis/core/validation/validation.go`` ``ValidatePodSpec``,
``ValidatePodTemplateSpec``): volumes, containers, restart policy, tolerations, affinity, topology
spread, DNS."""
from __future__ import annotations

from typing import Any

from modules.semantics.shapes import as_dict, as_int, as_list
from modules.upstream.vocabulary.names import dns1123_label, dns1123_subdomain, label_value, qualified_name
from .core_container import (RESTART_POLICIES, SOURCE_REQUIRED, VOLUME_SOURCES, host_port_conflicts, named,
                             validate_container)
from .meta import validate_annotations, validate_labels
from modules.upstream.field import FieldError, duplicate, forbidden, invalid, not_supported, required
from .values import as_str


def _volumes(spec: dict, base: str) -> tuple[set[str], list[FieldError]]:
    """ValidateVolumes: the names that mounts may use (valid volumes only, as upstream) and the problems."""
    names: set[str] = set()
    out: list[FieldError] = []
    for i, vol in enumerate(as_list(spec.get("volumes"))):
        vol = as_dict(vol)
        path = f"{base}.volumes[{i}]"
        errs: list[FieldError] = []
        name = as_str(vol.get("name")) or ""
        if not name:
            errs.append(required(f"{path}.name"))
        else:
            errs += [invalid(f"{path}.name", name, m) for m in dns1123_label(name)]
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


def validate_pod_spec(spec: Any, path: str, restart_policies: tuple[str, ...] = RESTART_POLICIES) -> list[FieldError]:
    """ValidatePodSpec on a defaulted spec at ``path`` (``spec``, ``spec.template.spec``, ...).
    ``restart_policies``: what the owning kind allows (Deployments: Always; Jobs: OnFailure, Never)."""
    spec = as_dict(spec)
    volumes, out = _volumes(spec, path)
    containers = as_list(spec.get("containers"))
    if not containers:
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
                out += validate_container(c, p, volumes, field_name == "initContainers")
        if field_name == "containers":
            out += host_port_conflicts(as_list(spec.get(field_name)), f"{path}.{field_name}")
        elif field_name == "initContainers":   # they run one at a time: each on its own
            for i, c in enumerate(as_list(spec.get(field_name))):
                out += host_port_conflicts([c], f"{path}.{field_name}", i)
    if as_list(spec.get("ephemeralContainers")):
        out.append(forbidden(f"{path}.ephemeralContainers", "cannot be set on create"))
    policy = spec.get("restartPolicy", "Always")
    if policy == "":
        out.append(required(f"{path}.restartPolicy"))
    elif policy not in RESTART_POLICIES:
        out.append(not_supported(f"{path}.restartPolicy", policy, RESTART_POLICIES))
    elif policy not in restart_policies:
        out.append(not_supported(f"{path}.restartPolicy", policy, restart_policies))
    out += validate_labels(spec.get("nodeSelector"), f"{path}.nodeSelector")
    for key in ("serviceAccountName", "priorityClassName"):
        value = as_str(spec.get(key))
        if value:
            out += [invalid(f"{path}.{key}", value, m) for m in dns1123_subdomain(value)]
    for key in ("hostname", "subdomain"):
        value = as_str(spec.get(key))
        if value:
            out += [invalid(f"{path}.{key}", value, m) for m in dns1123_label(value)]
    if spec.get("hostNetwork") is True:   # validateHostNetwork; an unset hostPort is defaulted to containerPort
        for field_name in ("containers", "initContainers"):
            for i, c in enumerate(as_list(spec.get(field_name))):
                for j, port in enumerate(as_list(as_dict(c).get("ports"))):
                    host, container = as_int(as_dict(port).get("hostPort")), as_int(as_dict(port).get("containerPort"))
                    if host and host != container:
                        out.append(invalid(f"{path}.{field_name}[{i}].ports[{j}].hostPort",
                                           host, "must match `containerPort` when `hostNetwork` is true"))
    out += _tolerations(spec.get("tolerations"), f"{path}.tolerations")
    out += _affinity(as_dict(spec.get("affinity")), f"{path}.affinity")
    out += _spread(spec.get("topologySpreadConstraints"), f"{path}.topologySpreadConstraints")
    out += _dns(spec, path)
    grace = spec.get("terminationGracePeriodSeconds")
    if as_int(grace) is not None and as_int(grace) < 0:
        out.append(invalid(f"{path}.terminationGracePeriodSeconds", grace, "must be greater than or equal to 0"))
    deadline = spec.get("activeDeadlineSeconds")
    if as_int(deadline) is not None and as_int(deadline) <= 0:
        out.append(invalid(f"{path}.activeDeadlineSeconds", deadline, "must be between 1 and 2147483647, inclusive"))
    return out


TOLERATION_OPERATORS = ("Equal", "Exists")
TAINT_EFFECTS = ("NoExecute", "NoSchedule", "PreferNoSchedule")


def _tolerations(tolerations: Any, path: str) -> list[FieldError]:
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
            out += [invalid(f"{p}.operator", value, m) for m in label_value(value)]
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
    return out


def _weight(weight: Any, path: str) -> list[FieldError]:
    value = as_int(weight)
    if value is None or 1 <= value <= 100:
        return []
    return [invalid(path, value, "must be in the range 1-100")]


def _affinity(affinity: dict, path: str) -> list[FieldError]:
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
                key = as_str(term.get("topologyKey")) or ""
                if not key:
                    out.append(required(f"{p}.topologyKey", "can not be empty"))
                else:
                    out += [invalid(f"{p}.topologyKey", key, m) for m in qualified_name(key)]
    return out


SPREAD_ACTIONS = ("DoNotSchedule", "ScheduleAnyway")


def _spread(constraints: Any, path: str) -> list[FieldError]:
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
        if not key:
            out.append(required(f"{p}.topologyKey", "can not be empty"))
        else:
            out += [invalid(f"{p}.topologyKey", key, m) for m in qualified_name(key)]
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
    return out


def validate_pod_template(spec: dict, path: str, restart_policies: tuple[str, ...] = RESTART_POLICIES
                          ) -> list[FieldError]:
    """ValidatePodTemplateSpec: a pod template (``metadata`` + ``spec``) at ``path``
    (``spec.template``, ``spec.tasks[0].template``), as the API server (and Volcano's job webhook, for
    each task) judges it after defaulting. ``restart_policies``: what the owning kind allows."""
    template = as_dict(spec)
    md = as_dict(template.get("metadata"))
    base = f"{path}." if path else ""
    out = validate_labels(md.get("labels"), f"{base}metadata.labels")
    out += validate_annotations(md.get("annotations"), f"{base}metadata.annotations")
    out += validate_pod_spec(template.get("spec"), f"{base}spec", restart_policies)
    return out
