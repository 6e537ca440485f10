"""How the Kubernetes API server's built-in validation judges an object on CREATE (kubernetes v1.35:
``pkg/apis/core/validation``, ``pkg/apis/apps|batch|autoscaling|scheduling/validation`` and
apimachinery's ``pkg/util/validation``), written in our own code.

Every check returns ``(field path, message)`` pairs. The path is ours (``spec.containers[0].name``;
map keys as ``metadata.labels[key]``), the message is worded as the API server words its field
errors (``Invalid value: "Foo": a lowercase RFC 1123 label must ...``, ``Not found: "data"``,
``Required value``), so a finding can quote upstream's reason. An empty list: the API server
admits the object (as far as these checks go: see ``docs/policies.md`` for what is evaluated).

The object is judged as the API server sees it after its v1 defaulting: a missing
``restartPolicy`` is ``Always``, a port's missing ``protocol`` is ``TCP``, a volume with no source
is an ``emptyDir``, an HPA's missing ``minReplicas`` is 1, a Service's missing ``type`` is
``ClusterIP``. Custom resources get only the object-metadata checks (name, labels, annotations):
the API server validates their bodies against the CRD schema, not with these rules (Volcano's job
webhook calls ``validate_pod_template`` itself for every task).

Values are read leniently: a field of the wrong shape is skipped here (the CRD or OpenAPI schema
check reports it); nothing raises.
"""
from __future__ import annotations

import base64
import binascii
import functools
import re
from decimal import Decimal
from typing import Any, Iterable

from modules.core.quantity import parse_quantity
from modules.core.selectors import selector_matches
from modules.semantics.shapes import as_dict, as_int, as_list
from modules.upstream.vocabulary.go import atoi

Problem = tuple[str, str]

# --- apimachinery pkg/util/validation: the string formats ---------------------------------------

# The formats are checked with character sets rather than regular expressions: the same languages as
# upstream's patterns (quoted in the messages below), without compiling a pattern in every run.
_LOWER_ALNUM = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")
_ALNUM = _LOWER_ALNUM | frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
_LOWER_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyz")


def _edged(value: str, inner: frozenset[str], edge: frozenset[str]) -> bool:
    """Non-empty, every character in ``inner``, first and last in ``edge``."""
    return bool(value) and value[0] in edge and value[-1] in edge and inner.issuperset(value)


_LABEL_CHARS = _LOWER_ALNUM | {"-"}
_NAME_CHARS = _ALNUM | {"-", "_", "."}
_CONFIG_KEY_CHARS = _ALNUM | {"-", "_", "."}


def _is_label(value: str) -> bool:            # [a-z0-9]([-a-z0-9]*[a-z0-9])?
    return _edged(value, _LABEL_CHARS, _LOWER_ALNUM)


def _is_subdomain(value: str) -> bool:        # labels joined by '.'
    return all(_is_label(part) for part in value.split("."))


def _is_dns1035(value: str) -> bool:          # [a-z]([-a-z0-9]*[a-z0-9])?
    return _is_label(value) and value[0] in _LOWER_LETTERS


def _is_qualified_part(value: str) -> bool:   # ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]
    return _edged(value, _NAME_CHARS, _ALNUM)


_NAME_RE = {"label": r"[a-z0-9]([-a-z0-9]*[a-z0-9])?",
            "subdomain": r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*",
            "dns1035": r"[a-z]([-a-z0-9]*[a-z0-9])?",
            "qualified": r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]",
            "label-value": r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?",
            "config-key": r"[-._a-zA-Z0-9]+"}

DNS1123_LABEL_MAX, DNS1123_SUBDOMAIN_MAX, QUALIFIED_NAME_MAX, LABEL_VALUE_MAX = 63, 253, 63, 63
TOTAL_ANNOTATION_SIZE = 256 * 1024
MAX_CONFIG_SIZE = 1024 * 1024          # api.MaxSecretSize, which ConfigMaps share


def _regex_error(message: str, pattern: str, *examples: str) -> str:
    shown = ",  or ".join(f"'{e}'" for e in examples)
    return f"{message} (e.g. {shown}, regex used for validation is '{pattern}')"


def _max_len(n: int) -> str:
    return f"must be no more than {n} characters"


_LABEL_MSG = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "
              "and end with an alphanumeric character")
_SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
                  "must start and end with an alphanumeric character")
_DNS1035_MSG = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "
                "character, and end with an alphanumeric character")
_QUALIFIED_MSG = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
                  "alphanumeric character")
_LABEL_VALUE_MSG = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and "
                    "must start and end with an alphanumeric character")
_CONFIG_KEY_MSG = "a valid config key must consist of alphanumeric characters, '-', '_' or '.'"
_ENV_MSG = "a valid environment variable name must consist only of printable ASCII characters other than '='"


def _format(value: str, limit: int, valid: bool, message: str, pattern: str, *examples: str) -> list[str]:
    """Upstream's two complaints about a formatted string: too long, and not matching its pattern."""
    out = [_max_len(limit)] if len(value) > limit else []
    if not valid:
        out.append(_regex_error(message, _NAME_RE[pattern], *examples))
    return out


def dns1123_label(value: str) -> list[str]:
    """IsDNS1123Label: what is wrong with ``value`` as a DNS label (empty: nothing)."""
    return _format(value, DNS1123_LABEL_MAX, _is_label(value), _LABEL_MSG, "label", "my-name", "123-abc")


def dns1123_subdomain(value: str) -> list[str]:
    return _format(value, DNS1123_SUBDOMAIN_MAX, _is_subdomain(value), _SUBDOMAIN_MSG, "subdomain", "example.com")


def dns1035_label(value: str) -> list[str]:
    return _format(value, DNS1123_LABEL_MAX, _is_dns1035(value), _DNS1035_MSG, "dns1035", "my-name", "abc-123")


# A stack repeats its label and annotation keys and values on every object: their problems are
# remembered by text (short texts only, as names are; anything else is judged each time).
_REMEMBERED_CHARS = 320


def qualified_name(value: str) -> list[str]:
    """IsQualifiedName: a label or annotation key, ``[prefix/]name``."""
    if isinstance(value, str) and len(value) <= _REMEMBERED_CHARS:
        return list(_remembered_qualified_name(value))
    return list(_qualified_name(value))


def _qualified_name(value: str) -> tuple[str, ...]:
    parts = value.split("/")
    if len(parts) == 1:
        name, prefix = parts[0], None
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            return ("prefix part must be non-empty",)
    else:
        return ("a qualified name " + _regex_error(_QUALIFIED_MSG, _NAME_RE["qualified"], "MyName", "my.name",
                                                   "123-abc") + " with an optional DNS subdomain prefix and '/' "
                "(e.g. 'example.com/MyName')",)
    out = []
    if prefix is not None:
        out += ["prefix part " + m for m in dns1123_subdomain(prefix)]
    if not name:
        out.append("name part must be non-empty")
    elif len(name) > QUALIFIED_NAME_MAX:
        out.append("name part " + _max_len(QUALIFIED_NAME_MAX))
    if name and not _is_qualified_part(name):
        out.append("name part " + _regex_error(_QUALIFIED_MSG, _NAME_RE["qualified"], "MyName", "my.name", "123-abc"))
    return tuple(out)


_remembered_qualified_name = functools.lru_cache(maxsize=4096)(_qualified_name)


def label_value(value: str) -> list[str]:
    if isinstance(value, str) and len(value) <= _REMEMBERED_CHARS:
        return list(_remembered_label_value(value))
    return list(_label_value(value))


def _label_value(value: str) -> tuple[str, ...]:
    return tuple(_format(value, LABEL_VALUE_MAX, not value or _is_qualified_part(value), _LABEL_VALUE_MSG,
                         "label-value", "MyValue", "my_value", "12345"))


_remembered_label_value = functools.lru_cache(maxsize=4096)(_label_value)


def port_number(value: int) -> list[str]:
    return [] if 1 <= value <= 65535 else ["must be between 1 and 65535, inclusive"]


def port_name(value: str) -> list[str]:
    """IsValidPortName: an IANA_SVC_NAME."""
    out = []
    if len(value) > 15:
        out.append("must be no more than 15 characters")
    if not value or any(c not in _LABEL_CHARS for c in value):
        out.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not any(c in _LOWER_LETTERS for c in value):
        out.append("must contain at least one letter (a-z)")
    if "--" in value:
        out.append("must not contain consecutive hyphens")
    if value.startswith("-") or value.endswith("-"):
        out.append("must not begin or end with a hyphen")
    return out


def env_var_name(value: str) -> list[str]:
    """IsRelaxedEnvVarName (RelaxedEnvironmentVariableValidation, on by default since v1.32)."""
    if not value or "=" in value or any(not " " <= c <= "~" for c in value):
        return [_ENV_MSG]
    return []


def config_map_key(value: str) -> list[str]:
    valid = bool(value) and all(c in _CONFIG_KEY_CHARS for c in value)
    out = _format(value, DNS1123_SUBDOMAIN_MAX, valid, _CONFIG_KEY_MSG, "config-key", "key.name", "KEY_NAME",
                  "key-name")
    if value == ".":
        out.append("must not be '.'")
    elif value == "..":
        out.append("must not be '..'")
    elif value.startswith(".."):
        out.append("must not start with '..'")
    return out


def path_segment_name(value: str) -> list[str]:
    """IsValidPathSegmentName: what RBAC objects and scale targets are named with."""
    if value in (".", ".."):
        return [f"may not be '{value}'"]
    return [f"may not contain '{c}'" for c in ("/", "%") if c in value]


# --- field errors, worded as the API server words them -----------------------------------------

def _q(value: Any) -> str:
    """Go's %q of a string; other values as Go's %v prints them."""
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, dict) and all(isinstance(v, str) for v in value.values()):   # labels: Go's %#v
        return "map[string]string{" + ", ".join(f"{_q(str(k))}:{_q(v)}" for k, v in sorted(value.items())) + "}"
    return str(value)


def required(detail: str = "") -> str:
    return "Required value" + (f": {detail}" if detail else "")


def invalid(value: Any, detail: str) -> str:
    return f"Invalid value: {_q(value)}: {detail}"


def duplicate(value: Any) -> str:
    return f"Duplicate value: {_q(value)}"


def not_found(value: Any) -> str:
    return f"Not found: {_q(value)}"


def not_supported(value: Any, supported: Iterable[str]) -> str:
    return f"Unsupported value: {_q(value)}: supported values: " + ", ".join(_q(s) for s in supported)


def forbidden(detail: str) -> str:
    return f"Forbidden: {detail}"


def too_long(limit: int) -> str:
    return f"Too long: may not be more than {limit} bytes"


def _key(path: str, key: object) -> str:
    return f"{path}[{key}]"


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _quantity(value: Any) -> Decimal | None:
    try:
        return parse_quantity(value) if isinstance(value, (str, int, float)) and not isinstance(value, bool) else None
    except Exception:   # a malformed quantity is the schema check's to report
        return None


# --- object metadata (apimachinery pkg/api/validation/objectmeta.go) ---------------------------

def validate_labels(labels: Any, path: str) -> list[Problem]:
    out: list[Problem] = []
    for key, value in as_dict(labels).items():
        key = str(key)
        out += [(path, invalid(key, m)) for m in qualified_name(key)]
        if isinstance(value, str):
            out += [(path, invalid(value, m)) for m in label_value(value)]
    return out


def validate_annotations(annotations: Any, path: str) -> list[Problem]:
    out: list[Problem] = []
    size = 0
    for key, value in as_dict(annotations).items():
        key = str(key)
        out += [(path, invalid(key, m)) for m in qualified_name(key.lower())]
        size += len(key.encode()) + len(str(value if value is not None else "").encode())
    if size > TOTAL_ANNOTATION_SIZE:
        out.append((path, too_long(TOTAL_ANNOTATION_SIZE)))
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
        out.append(_max_len(CRONJOB_NAME_MAX))
    return out


def validate_object_meta(obj: dict, namespaced: bool = True) -> list[Problem]:
    """ValidateObjectMeta: name (or generateName), namespace, labels, annotations."""
    md = as_dict(obj.get("metadata"))
    kind = str(obj.get("kind", ""))
    group = str(obj.get("apiVersion", "")).rpartition("/")[0]
    out: list[Problem] = []
    name = md.get("name")
    if not name and not md.get("generateName"):
        out.append(("metadata.name", required("name or generateName is required")))
    elif isinstance(name, str) and name:
        out += [("metadata.name", invalid(name, m)) for m in name_problems(kind, name, group)]
    namespace = md.get("namespace")
    # A cluster-scoped object's namespace is cleared on create (EnsureObjectNamespaceMatchesRequestNamespace).
    if isinstance(namespace, str) and namespace and namespaced:
        out += [("metadata.namespace", invalid(namespace, m)) for m in dns1123_label(namespace)]
    out += validate_labels(md.get("labels"), "metadata.labels")
    out += validate_annotations(md.get("annotations"), "metadata.annotations")
    return out


# --- the pod spec (pkg/apis/core/validation/validation.go ValidatePodSpec) -------------------------

RESTART_POLICIES = ("Always", "OnFailure", "Never")
PORT_PROTOCOLS = ("SCTP", "TCP", "UDP")
VOLUME_SOURCES = ("hostPath", "emptyDir", "gcePersistentDisk", "awsElasticBlockStore", "gitRepo", "secret", "nfs",
                  "iscsi", "glusterfs", "persistentVolumeClaim", "rbd", "flexVolume", "cinder", "cephfs", "flocker",
                  "downwardAPI", "fc", "azureFile", "configMap", "vsphereVolume", "quobyte", "azureDisk",
                  "photonPersistentDisk", "projected", "portworxVolume", "scaleIO", "storageos", "csi", "ephemeral",
                  "image")
# A volume source's field that must not be empty (validateVolumeSource and the per-source checks).
_SOURCE_REQUIRED = {"persistentVolumeClaim": "claimName", "configMap": "name", "secret": "secretName",
                    "hostPath": "path", "nfs": "server"}
PROBE_HANDLERS = ("exec", "httpGet", "tcpSocket", "grpc")
RESIZE_RESTART_POLICIES = ("NotRequired", "RestartContainer")
TERMINATION_MESSAGE_POLICIES = ("File", "FallbackToLogsOnError")
IMAGE_PULL_POLICIES = ("Always", "IfNotPresent", "Never")
LIFECYCLE_HANDLERS = ("exec", "httpGet", "tcpSocket", "sleep")
_PROBE_FIELDS = ("initialDelaySeconds", "timeoutSeconds", "periodSeconds", "successThreshold", "failureThreshold")


def _volumes(spec: dict, base: str) -> tuple[set[str], list[Problem]]:
    """ValidateVolumes: the names that mounts may use (valid volumes only, as upstream) and the problems."""
    names: set[str] = set()
    out: list[Problem] = []
    for i, vol in enumerate(as_list(spec.get("volumes"))):
        vol = as_dict(vol)
        path = f"{base}.volumes[{i}]"
        errs: list[Problem] = []
        name = _str(vol.get("name")) or ""
        if not name:
            errs.append((f"{path}.name", required()))
        else:
            errs += [(f"{path}.name", invalid(name, m)) for m in dns1123_label(name)]
        if name and name in names:
            errs.append((f"{path}.name", duplicate(name)))
        sources = [s for s in VOLUME_SOURCES if vol.get(s) is not None]
        for extra in sources[1:]:
            errs.append((f"{path}.{extra}", forbidden("may not specify more than 1 volume type")))
        if len(sources) == 1 and sources[0] in _SOURCE_REQUIRED:
            field_name = _SOURCE_REQUIRED[sources[0]]
            if not as_dict(vol.get(sources[0])).get(field_name):
                errs.append((f"{path}.{sources[0]}.{field_name}", required()))
        if errs:
            out += errs
        else:
            names.add(name)
    return names, out


def _named(name: str, path: str, check, seen: set[str]) -> list[Problem]:
    """A list entry's name: in its format (``check``), and unique among the valid ones seen so far."""
    problems = [(path, invalid(name, m)) for m in check(name)]
    if not problems and name in seen:
        problems.append((path, duplicate(name)))
    seen.add(name)
    return problems


def _resources(resources: Any, path: str) -> list[Problem]:
    """validateResourceRequirements: quantities not negative; requests not above limits, and equal to
    them for resources that cannot be overcommitted (extended resources such as nvidia.com/gpu)."""
    resources = as_dict(resources)
    limits, requests = as_dict(resources.get("limits")), as_dict(resources.get("requests"))
    out: list[Problem] = []
    for part, amounts in (("limits", limits), ("requests", requests)):
        for name, amount in amounts.items():
            out += [(_key(f"{path}.{part}", name), invalid(str(name), m)) for m in _resource_name(str(name))]
            value = _quantity(amount)
            if value is not None and value < 0:
                out.append((_key(f"{path}.{part}", name), invalid(str(amount), "must be greater than or equal to 0")))
            elif value is not None and _extended(str(name)) and value != value.to_integral_value():
                out.append((_key(f"{path}.{part}", name), invalid(str(amount), "must be an integer")))
    for name, amount in requests.items():
        request = _quantity(amount)
        overcommit = _overcommit_allowed(str(name))
        if name in limits:
            limit = _quantity(limits[name])
            if request is None or limit is None:
                continue
            if request != limit and not overcommit:
                out.append((f"{path}.requests",
                            invalid(str(amount), f"must be equal to {name} limit of {limits[name]}")))
            elif request > limit:
                out.append((f"{path}.requests",
                            invalid(str(amount), f"must be less than or equal to {name} limit of {limits[name]}")))
        elif not overcommit:
            out.append((f"{path}.limits", required("Limit must be set for non overcommitable resources")))
    return out


CONTAINER_RESOURCES = ("cpu", "memory", "ephemeral-storage")


def _resource_name(name: str) -> list[str]:
    """validateContainerResourceName: a qualified name; without a domain, a standard container
    resource (cpu, memory, ephemeral-storage, hugepages-<size>)."""
    out = qualified_name(name)
    if "/" not in name and name not in CONTAINER_RESOURCES and not name.startswith("hugepages-"):
        out += ["must be a standard resource type or fully qualified", "must be a standard resource for containers"]
    return out


def _extended(name: str) -> bool:
    """helper.IsExtendedResourceName: a resource with a domain outside kubernetes.io (nvidia.com/gpu,
    rdma/ib); ValidateResourceQuantityValue allows such amounts only as whole numbers."""
    return "/" in name and not name.split("/", 1)[0].endswith("kubernetes.io")


def _overcommit_allowed(name: str) -> bool:
    """helper.IsOvercommitAllowed: native resources (no domain, or *kubernetes.io/) but hugepages."""
    native = "/" not in name or name.split("/", 1)[0].endswith("kubernetes.io")
    return native and not name.startswith("hugepages-")


def _port_ref(value: Any, path: str) -> list[Problem]:
    """An IntOrString port of a probe or Service targetPort: a number in range or an IANA name."""
    if isinstance(value, bool):
        return []
    if isinstance(value, int):
        return [(path, invalid(value, m)) for m in port_number(value)]
    if isinstance(value, str):   # an IntOrString written as a string is a port name, digits or not
        return [(path, invalid(value, m)) for m in port_name(value)]
    return []


def _handler(handler: dict, path: str, kinds: tuple[str, ...], required_detail: str) -> list[Problem]:
    present = [k for k in kinds if handler.get(k) is not None]
    out: list[Problem] = []
    if not present:
        out.append((path, required(required_detail)))
    for extra in present[1:]:
        out.append((f"{path}.{extra}", forbidden("may not specify more than 1 handler type")))
    for k in ("httpGet", "tcpSocket"):
        if k in present:   # an absent port is the IntOrString zero value, 0
            out += _port_ref(as_dict(handler.get(k)).get("port", 0), f"{path}.{k}.port")
    if "exec" in present and not as_list(as_dict(handler.get("exec")).get("command")):
        out.append((f"{path}.exec.command", required()))
    scheme = as_dict(handler.get("httpGet")).get("scheme")   # absent: defaulted to HTTP
    if "httpGet" in present and scheme is not None and scheme not in ("HTTP", "HTTPS"):
        out.append((f"{path}.httpGet.scheme", not_supported(scheme, ("HTTP", "HTTPS"))))
    return out


def _probe(probe: Any, path: str, success_must_be_one: bool) -> list[Problem]:
    if not isinstance(probe, dict):
        return []
    out = _handler(probe, path, PROBE_HANDLERS, "must specify a handler type")
    for name in _PROBE_FIELDS:
        value = as_int(probe.get(name))
        if value is not None and value < 0:
            out.append((f"{path}.{name}", invalid(value, "must be greater than or equal to 0")))
    success = as_int(probe.get("successThreshold"))
    if success_must_be_one and success not in (None, 0, 1):
        out.append((f"{path}.successThreshold", invalid(success, "must be 1")))
    grace = probe.get("terminationGracePeriodSeconds")
    if as_int(grace) is not None and as_int(grace) <= 0:
        out.append((f"{path}.terminationGracePeriodSeconds", invalid(grace, "must be greater than 0")))
    if grace is not None and path.endswith(".readinessProbe"):
        out.append((f"{path}.terminationGracePeriodSeconds", invalid(grace, "must not be set for readinessProbes")))
    return out


def _env(env: Any, path: str) -> list[Problem]:
    out: list[Problem] = []
    for i, var in enumerate(as_list(env)):
        var = as_dict(var)
        p = f"{path}[{i}]"
        name = _str(var.get("name")) or ""
        if not name:
            out.append((f"{p}.name", required()))
        else:
            out += [(f"{p}.name", invalid(name, m)) for m in env_var_name(name)]
        source = as_dict(var.get("valueFrom"))
        refs = [k for k in ("fieldRef", "resourceFieldRef", "configMapKeyRef", "secretKeyRef", "fileKeyRef")
                if source.get(k) is not None]
        if var.get("valueFrom") is not None:
            if var.get("value"):
                out.append((f"{p}.valueFrom", invalid("", "may not be specified when `value` is not empty")))
            if not refs:
                out.append((f"{p}.valueFrom", invalid("", "must specify one of: `fieldRef`, `resourceFieldRef`, "
                                                           "`configMapKeyRef` or `secretKeyRef`")))
            elif len(refs) > 1:
                out.append((f"{p}.valueFrom", invalid("", "may not have more than one field specified at a time")))
            out += _downward(source, f"{p}.valueFrom")
    return out


# What a container's env may read through the downward API (validEnvDownwardAPIFieldPathExpressions,
# validContainerResourceFieldPathExpressions; hugepages through their prefixes).
ENV_FIELD_PATHS = ("metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName",
                   "spec.serviceAccountName", "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs")
RESOURCE_FIELD_PATHS = ("limits.cpu", "limits.ephemeral-storage", "limits.memory",
                        "requests.cpu", "requests.ephemeral-storage", "requests.memory")


def _downward(source: dict, path: str) -> list[Problem]:
    """validateObjectFieldSelector / validateContainerResourceFieldSelector of an env var's source."""
    out: list[Problem] = []
    field_ref = source.get("fieldRef")
    if isinstance(field_ref, dict):
        field_path = _str(field_ref.get("fieldPath")) or ""
        base, _, subscript = field_path.partition("[")
        if not field_path:
            out.append((f"{path}.fieldRef.fieldPath", required()))
        elif subscript and base in ("metadata.labels", "metadata.annotations"):
            key = subscript.rstrip("]").strip("'\"")
            out += [(f"{path}.fieldRef.fieldPath", invalid(key, m)) for m in qualified_name(key.lower())]
        elif subscript:
            out.append((f"{path}.fieldRef.fieldPath", invalid(field_path, "does not support subscript")))
        elif field_path not in ENV_FIELD_PATHS:
            out.append((f"{path}.fieldRef.fieldPath", not_supported(field_path, ENV_FIELD_PATHS)))
    resource_ref = source.get("resourceFieldRef")
    if isinstance(resource_ref, dict):
        resource = _str(resource_ref.get("resource")) or ""
        if not resource:
            out.append((f"{path}.resourceFieldRef.resource", required()))
        elif resource not in RESOURCE_FIELD_PATHS and not resource.startswith(("limits.hugepages-",
                                                                               "requests.hugepages-")):
            out.append((f"{path}.resourceFieldRef.resource", not_supported(resource, RESOURCE_FIELD_PATHS)))
    return out


def _container(c: dict, path: str, volumes: set[str], init: bool) -> list[Problem]:
    out: list[Problem] = []
    if not _str(c.get("image")):
        out.append((f"{path}.image", required()))
    names: set[str] = set()
    for i, port in enumerate(as_list(c.get("ports"))):
        port = as_dict(port)
        p = f"{path}.ports[{i}]"
        name = _str(port.get("name"))
        if name:
            out += _named(name, f"{p}.name", port_name, names)
        number = as_int(port.get("containerPort"))
        if number is not None:
            if number == 0:
                out.append((f"{p}.containerPort", required()))
            else:
                out += [(f"{p}.containerPort", invalid(number, m)) for m in port_number(number)]
        elif "containerPort" not in port:
            out.append((f"{p}.containerPort", required()))
        host = as_int(port.get("hostPort"))
        if host:
            out += [(f"{p}.hostPort", invalid(host, m)) for m in port_number(host)]
        protocol = port.get("protocol", "TCP")
        if protocol == "":
            out.append((f"{p}.protocol", required()))
        elif protocol not in PORT_PROTOCOLS:
            out.append((f"{p}.protocol", not_supported(protocol, PORT_PROTOCOLS)))
    out += _env(c.get("env"), f"{path}.env")
    mount_paths: set[str] = set()
    for i, mount in enumerate(as_list(c.get("volumeMounts"))):
        mount = as_dict(mount)
        p = f"{path}.volumeMounts[{i}]"
        name = _str(mount.get("name")) or ""
        if not name:
            out.append((f"{p}.name", required()))
        elif name not in volumes:
            out.append((f"{p}.name", not_found(name)))
        mount_path = _str(mount.get("mountPath")) or ""
        if not mount_path:
            out.append((f"{p}.mountPath", required()))
        elif mount_path in mount_paths:
            out.append((f"{p}.mountPath", invalid(mount_path, "must be unique")))
        mount_paths.add(mount_path)
        sub = _str(mount.get("subPath")) or ""
        if sub.startswith("/"):
            out.append((f"{p}.subPath", invalid(sub, "must be a relative path")))
        elif ".." in sub.split("/"):
            out.append((f"{p}.subPath", invalid(sub, "must not contain '..'")))
    out += _resources(c.get("resources"), f"{path}.resources")
    restartable = init and c.get("restartPolicy") == "Always"
    if init and not restartable:
        for probe in ("lifecycle", "livenessProbe", "readinessProbe", "startupProbe"):
            if c.get(probe) is not None:
                out.append((f"{path}.{probe}", forbidden("may not be set for init containers without "
                                                         "restartPolicy=Always")))
    else:
        out += _probe(c.get("livenessProbe"), f"{path}.livenessProbe", True)
        out += _probe(c.get("readinessProbe"), f"{path}.readinessProbe", False)
        out += _probe(c.get("startupProbe"), f"{path}.startupProbe", True)
        for hook in ("postStart", "preStop"):
            handler = as_dict(c.get("lifecycle")).get(hook)
            if isinstance(handler, dict):
                out += _handler(handler, f"{path}.lifecycle.{hook}", LIFECYCLE_HANDLERS,
                                "must specify a handler type")
        for entry in as_list(c.get("resizePolicy")):
            entry = as_dict(entry)
            if entry.get("resourceName") not in ("cpu", "memory"):
                out.append((f"{path}.resizePolicy", not_supported(entry.get("resourceName", ""), ("cpu", "memory"))))
            if entry.get("restartPolicy") not in RESIZE_RESTART_POLICIES:
                out.append((f"{path}.resizePolicy", not_supported(entry.get("restartPolicy", ""),
                                                                  RESIZE_RESTART_POLICIES)))
    for key, allowed in (("terminationMessagePolicy", TERMINATION_MESSAGE_POLICIES),
                         ("imagePullPolicy", IMAGE_PULL_POLICIES)):
        value = c.get(key)
        if value and value not in allowed:   # empty: defaulted (File; Always or IfNotPresent)
            out.append((f"{path}.{key}", not_supported(value, allowed)))
    for i, source in enumerate(as_list(c.get("envFrom"))):
        for ref in ("configMapRef", "secretRef"):
            name = _str(as_dict(as_dict(source).get(ref)).get("name"))
            if name:
                out += [(f"{path}.envFrom[{i}].{ref}.name", invalid(name, m)) for m in dns1123_subdomain(name)]
    policy = c.get("restartPolicy")
    if policy is not None:
        if not init:
            out.append((f"{path}.restartPolicy", forbidden("may not be set for non-init containers")))
        elif policy != "Always":
            out.append((f"{path}.restartPolicy", not_supported(policy, ("Always",))))
    return out


def _host_port_conflicts(containers: list, base: str, first: int = 0) -> list[Problem]:
    """checkHostPortConflicts: a protocol/hostIP/hostPort used once among ``containers`` (indexed
    from ``first``)."""
    seen: set[str] = set()
    out: list[Problem] = []
    for i, c in enumerate(containers, first):
        for j, port in enumerate(as_list(as_dict(c).get("ports"))):
            port = as_dict(port)
            host = as_int(port.get("hostPort"))
            if not host:
                continue
            key = f"{port.get('protocol', 'TCP')}/{port.get('hostIP', '')}/{host}"
            if key in seen:
                out.append((f"{base}[{i}].ports[{j}].hostPort", duplicate(key)))
            seen.add(key)
    return out


def validate_pod_spec(spec: Any, path: str, restart_policies: tuple[str, ...] = RESTART_POLICIES) -> list[Problem]:
    """ValidatePodSpec on a defaulted spec at ``path`` (``spec``, ``spec.template.spec``, ...).
    ``restart_policies``: what the owning kind allows (Deployments: Always; Jobs: OnFailure, Never)."""
    spec = as_dict(spec)
    volumes, out = _volumes(spec, path)
    containers = as_list(spec.get("containers"))
    if not containers:
        out.append((f"{path}.containers", required()))
    seen: set[str] = set()
    for field_name in ("containers", "initContainers", "ephemeralContainers"):
        for i, c in enumerate(as_list(spec.get(field_name))):
            c = as_dict(c)
            p = f"{path}.{field_name}[{i}]"
            name = _str(c.get("name")) or ""
            if not name:
                out.append((f"{p}.name", required()))
            else:
                out += _named(name, f"{p}.name", dns1123_label, seen)
            if field_name != "ephemeralContainers":
                out += _container(c, p, volumes, field_name == "initContainers")
        if field_name == "containers":
            out += _host_port_conflicts(as_list(spec.get(field_name)), f"{path}.{field_name}")
        elif field_name == "initContainers":   # they run one at a time: each on its own
            for i, c in enumerate(as_list(spec.get(field_name))):
                out += _host_port_conflicts([c], f"{path}.{field_name}", i)
    if as_list(spec.get("ephemeralContainers")):
        out.append((f"{path}.ephemeralContainers", forbidden("cannot be set on create")))
    policy = spec.get("restartPolicy", "Always")
    if policy == "":
        out.append((f"{path}.restartPolicy", required()))
    elif policy not in RESTART_POLICIES:
        out.append((f"{path}.restartPolicy", not_supported(policy, RESTART_POLICIES)))
    elif policy not in restart_policies:
        out.append((f"{path}.restartPolicy", not_supported(policy, restart_policies)))
    out += validate_labels(spec.get("nodeSelector"), f"{path}.nodeSelector")
    for key in ("serviceAccountName", "priorityClassName"):
        value = _str(spec.get(key))
        if value:
            out += [(f"{path}.{key}", invalid(value, m)) for m in dns1123_subdomain(value)]
    for key in ("hostname", "subdomain"):
        value = _str(spec.get(key))
        if value:
            out += [(f"{path}.{key}", invalid(value, m)) for m in dns1123_label(value)]
    if spec.get("hostNetwork") is True:   # validateHostNetwork; an unset hostPort is defaulted to containerPort
        for field_name in ("containers", "initContainers"):
            for i, c in enumerate(as_list(spec.get(field_name))):
                for j, port in enumerate(as_list(as_dict(c).get("ports"))):
                    host, container = as_int(as_dict(port).get("hostPort")), as_int(as_dict(port).get("containerPort"))
                    if host and host != container:
                        out.append((f"{path}.{field_name}[{i}].ports[{j}].hostPort",
                                    invalid(host, "must match `containerPort` when `hostNetwork` is true")))
    out += _tolerations(spec.get("tolerations"), f"{path}.tolerations")
    out += _affinity(as_dict(spec.get("affinity")), f"{path}.affinity")
    out += _spread(spec.get("topologySpreadConstraints"), f"{path}.topologySpreadConstraints")
    out += _dns(spec, path)
    grace = spec.get("terminationGracePeriodSeconds")
    if as_int(grace) is not None and as_int(grace) < 0:
        out.append((f"{path}.terminationGracePeriodSeconds", invalid(grace, "must be greater than or equal to 0")))
    deadline = spec.get("activeDeadlineSeconds")
    if as_int(deadline) is not None and as_int(deadline) <= 0:
        out.append((f"{path}.activeDeadlineSeconds", invalid(deadline, "must be between 1 and 2147483647, inclusive")))
    return out


TOLERATION_OPERATORS = ("Equal", "Exists")
TAINT_EFFECTS = ("NoExecute", "NoSchedule", "PreferNoSchedule")


def _tolerations(tolerations: Any, path: str) -> list[Problem]:
    """ValidateTolerations (the comparison operators Lt/Gt are behind a feature gate that is off)."""
    out: list[Problem] = []
    for i, t in enumerate(as_list(tolerations)):
        t = as_dict(t)
        p = f"{path}[{i}]"
        key, operator = _str(t.get("key")) or "", t.get("operator") or ""
        value, effect = _str(t.get("value")) or "", t.get("effect") or ""
        if key:
            out += [(f"{p}.key", invalid(key, m)) for m in qualified_name(key)]
        elif operator != "Exists":
            out.append((f"{p}.operator", invalid(operator, "operator must be Exists when `key` is empty, which "
                                                           'means "match all values and all keys"')))
        if t.get("tolerationSeconds") is not None and effect != "NoExecute":
            out.append((f"{p}.effect", invalid(effect, "effect must be 'NoExecute' when `tolerationSeconds` is set")))
        if operator in ("", "Equal"):
            out += [(f"{p}.operator", invalid(value, m)) for m in label_value(value)]
        elif operator == "Exists":
            if value:
                out.append((f"{p}.operator", invalid(value, "value must be empty when `operator` is 'Exists'")))
        else:
            out.append((f"{p}.operator", not_supported(operator, TOLERATION_OPERATORS)))
        if effect and effect not in TAINT_EFFECTS:
            out.append((f"{p}.effect", not_supported(effect, TAINT_EFFECTS)))
    return out


def _node_selector_term(term: Any, path: str) -> list[Problem]:
    """ValidateNodeSelectorTerm: each requirement's operator and the values it needs."""
    out: list[Problem] = []
    term = as_dict(term)
    for part in ("matchExpressions", "matchFields"):
        for j, req in enumerate(as_list(term.get(part))):
            req = as_dict(req)
            p = f"{path}.{part}[{j}]"
            operator, values = req.get("operator"), as_list(req.get("values"))
            if operator in ("In", "NotIn"):
                if not values:
                    out.append((f"{p}.values", required("must be specified when `operator` is 'In' or 'NotIn'")))
            elif operator in ("Exists", "DoesNotExist"):
                if values:
                    out.append((f"{p}.values", forbidden("may not be specified when `operator` is 'Exists' or "
                                                         "'DoesNotExist'")))
            elif operator in ("Gt", "Lt"):
                if len(values) != 1:
                    out.append((f"{p}.values", required("must be specified single value when `operator` is "
                                                        "'Lt' or 'Gt'")))
            else:
                out.append((f"{p}.operator", invalid(operator if isinstance(operator, str) else "",
                                                     "not a valid selector operator")))
            key = _str(req.get("key")) or ""
            if part == "matchExpressions":
                out += [(f"{p}.key", invalid(key, m)) for m in qualified_name(key)]
    return out


def _weight(weight: Any, path: str) -> list[Problem]:
    value = as_int(weight)
    if value is None or 1 <= value <= 100:
        return []
    return [(path, invalid(value, "must be in the range 1-100"))]


def _affinity(affinity: dict, path: str) -> list[Problem]:
    """validateAffinity: node selector terms and their requirements, preference weights, pod
    (anti-)affinity terms with a topology key."""
    out: list[Problem] = []
    node = as_dict(affinity.get("nodeAffinity"))
    required_terms = node.get("requiredDuringSchedulingIgnoredDuringExecution")
    if isinstance(required_terms, dict):
        p = f"{path}.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
        terms = as_list(required_terms.get("nodeSelectorTerms"))
        if not terms:
            out.append((p, required("must have at least one node selector term")))
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
                key = _str(term.get("topologyKey")) or ""
                if not key:
                    out.append((f"{p}.topologyKey", required("can not be empty")))
                else:
                    out += [(f"{p}.topologyKey", invalid(key, m)) for m in qualified_name(key)]
    return out


SPREAD_ACTIONS = ("DoNotSchedule", "ScheduleAnyway")


def _spread(constraints: Any, path: str) -> list[Problem]:
    """validateTopologySpreadConstraints: a positive maxSkew, a topology key, a known action (each
    key/action pair once), a positive minDomains only with DoNotSchedule."""
    out: list[Problem] = []
    seen: set[tuple[str, str]] = set()
    for i, c in enumerate(as_list(constraints)):
        c = as_dict(c)
        p = f"{path}[{i}]"
        skew = as_int(c.get("maxSkew"))
        if skew is not None and skew <= 0:
            out.append((f"{p}.maxSkew", invalid(skew, "must be greater than zero")))
        key = _str(c.get("topologyKey")) or ""
        if not key:
            out.append((f"{p}.topologyKey", required("can not be empty")))
        else:
            out += [(f"{p}.topologyKey", invalid(key, m)) for m in qualified_name(key)]
        action = c.get("whenUnsatisfiable") or ""
        if action not in SPREAD_ACTIONS:
            out.append((f"{p}.whenUnsatisfiable", not_supported(action, SPREAD_ACTIONS)))
        elif (key, action) in seen:
            out.append((p, duplicate(f"{{{key}, {action}}}")))
        seen.add((key, action))
        domains = as_int(c.get("minDomains"))
        if domains is not None and domains <= 0:
            out.append((f"{p}.minDomains", invalid(domains, "must be greater than zero")))
        elif domains is not None and action != "DoNotSchedule":
            out.append((f"{p}.minDomains", invalid(domains, "can only use minDomains if "
                                                            f"whenUnsatisfiable=DoNotSchedule, not {action}")))
    return out


DNS_POLICIES = ("ClusterFirst", "ClusterFirstWithHostNet", "Default", "None")


def _dns(spec: dict, path: str) -> list[Problem]:
    """validateDNSPolicy and validatePodDNSConfig: a known policy; `None` needs a dnsConfig with 1-3
    nameservers."""
    policy = spec.get("dnsPolicy") or "ClusterFirst"
    config = spec.get("dnsConfig")
    if policy not in DNS_POLICIES:
        return [(f"{path}.dnsPolicy", not_supported(policy, DNS_POLICIES))]
    out: list[Problem] = []
    servers = as_list(as_dict(config).get("nameservers"))
    if policy == "None" and not isinstance(config, dict):
        return [(f"{path}.dnsConfig", required("must provide `dnsConfig` when `dnsPolicy` is None"))]
    if policy == "None" and not servers:
        out.append((f"{path}.dnsConfig.nameservers",
                    required("must provide at least one DNS nameserver when `dnsPolicy` is None")))
    if len(servers) > 3:
        out.append((f"{path}.dnsConfig.nameservers", invalid(servers, "must not have more than 3 nameservers")))
    return out


def validate_pod_template(spec: dict, path: str, restart_policies: tuple[str, ...] = RESTART_POLICIES
                          ) -> list[Problem]:
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


# --- the kinds -----------------------------------------------------------------------------------

# Where each core kind keeps its pod template, and the restart policies it allows.
_APPS = ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet")
_BATCH_POLICIES = ("OnFailure", "Never")


def _stateful_set_template(template: dict) -> list[Problem]:
    """ValidatePodTemplateSpecForStatefulSet: a StatefulSet's pod template gets only its labels and
    annotations checked, and restartPolicy Always: not the pod spec, whose volumeMounts may name the
    volumeClaimTemplates rather than a volume (upstream leaves that union unchecked)."""
    md = as_dict(template.get("metadata"))
    out = validate_labels(md.get("labels"), "spec.template.metadata.labels")
    out += validate_annotations(md.get("annotations"), "spec.template.metadata.annotations")
    policy = as_dict(template.get("spec")).get("restartPolicy") or "Always"
    if policy != "Always":
        out.append(("spec.template.spec.restartPolicy", not_supported(policy, ("Always",))))
    return out


def _apps_selector(kind: str, spec: dict) -> list[Problem]:
    """ValidateDeploymentSpec, ValidateStatefulSetSpec, ValidateDaemonSetSpec, ValidateReplicaSetSpec:
    apps/v1 needs a selector, not an empty one, and the pod template's labels must satisfy it."""
    selector = spec.get("selector")
    if not isinstance(selector, dict):
        return [("spec.selector", required())]
    if not as_dict(selector.get("matchLabels")) and not as_list(selector.get("matchExpressions")):
        noun = {"ReplicaSet": "deployment"}.get(kind, kind.lower())   # the ReplicaSet check reuses the words
        return [("spec.selector", invalid(selector, f"empty selector is invalid for {noun}"))]
    labels = as_dict(as_dict(as_dict(spec.get("template")).get("metadata")).get("labels"))
    if not selector_matches(selector, labels):
        return [("spec.template.metadata.labels", invalid(labels, "`selector` does not match template `labels`"))]
    return []


def _int_or_percent(value: Any) -> int | None:
    """getIntOrPercentValue: an int, or the number of an `N%` string (None: not either)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.endswith("%") and atoi(value[:-1]) is not None:   # Go's Atoi, not isdigit
        return int(value[:-1])
    return None


_ROLLING = "spec.strategy.rollingUpdate"


def _deployment_strategy(strategy: dict) -> list[Problem]:
    """ValidateDeploymentStrategy after v1 defaulting (type RollingUpdate; maxSurge and maxUnavailable
    25%): Recreate takes no rollingUpdate; maxSurge and maxUnavailable not both 0, maxUnavailable at
    most 100%."""
    kind = strategy.get("type") or "RollingUpdate"
    rolling = strategy.get("rollingUpdate")
    if kind == "Recreate":
        if rolling is not None:
            return [("spec.strategy.rollingUpdate",
                     forbidden("may not be specified when strategy `type` is 'Recreate'"))]
        return []
    if kind != "RollingUpdate":
        return [("spec.strategy.type", not_supported(kind, ("Recreate", "RollingUpdate")))]
    rolling = as_dict(rolling)
    unavailable, surge = rolling.get("maxUnavailable", "25%"), rolling.get("maxSurge", "25%")
    out: list[Problem] = []
    for name, value in (("maxUnavailable", unavailable), ("maxSurge", surge)):
        number = _int_or_percent(value)
        if number is not None and number < 0:
            out.append((f"{_ROLLING}.{name}", invalid(value, "must be greater than or equal to 0")))
    if _int_or_percent(unavailable) == 0 and _int_or_percent(surge) == 0:
        out.append((f"{_ROLLING}.maxUnavailable", invalid(unavailable, "may not be 0 when `maxSurge` is 0")))
    if isinstance(unavailable, str) and (_int_or_percent(unavailable) or 0) > 100:
        out.append((f"{_ROLLING}.maxUnavailable", invalid(unavailable, "must not be greater than 100%")))
    return out


# --- cron schedules (robfig/cron v3 ParseStandard: batch CronJobs and Volcano's CronJobs) ----------

_CRON_DESCRIPTORS = ("@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly")
_CRON_FIELDS = ((0, 59, {}), (0, 23, {}), (1, 31, {}),
                (1, 12, {m: i + 1 for i, m in enumerate("jan feb mar apr may jun jul aug sep oct nov dec".split())}),
                (0, 6, {d: i for i, d in enumerate("sun mon tue wed thu fri sat".split())}))
_DURATION = re.compile(r"[-+]?((\d+(\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h))+|[-+]?0")   # Go's ParseDuration


def _cron_field_error(text: str, low: int, high: int, names: dict) -> str | None:
    for part in text.split(","):
        rng, slash, step = part.partition("/")
        if slash and (atoi(step) is None or atoi(step) <= 0):
            return (f"failed to parse int from {step}: strconv.Atoi: parsing {_q(step)}: invalid syntax"
                    if atoi(step) is None else f"step of range should be a positive number: {part}")
        if rng in ("*", "?"):
            continue
        start, dash, end = rng.partition("-")
        values = []
        for v in (start, end) if dash else (start,):
            v = names.get(v.lower(), v)
            if isinstance(v, str) and atoi(v) is None:
                return f"failed to parse int from {v}: strconv.Atoi: parsing {_q(v)}: invalid syntax"
            values.append(int(v))
        if values[0] < low:
            return f"beginning of range ({values[0]}) below minimum ({low}): {part}"
        if values[-1] > high:
            return f"end of range ({values[-1]}) above maximum ({high}): {part}"
        if dash and values[0] > values[1]:
            return f"beginning of range ({values[0]}) beyond end of range ({values[1]}): {part}"
    return None


def cron_schedule_error(schedule: str) -> str | None:
    """Why robfig/cron ``ParseStandard`` refuses ``schedule`` (its error text), or None: five fields
    (minute hour day-of-month month day-of-week) with lists, ranges, steps and month/day names, or a
    descriptor (``@daily``, ``@every 1h30m``)."""
    text = schedule.strip()
    if text.startswith("@"):
        if text.startswith("@every "):
            duration = text[len("@every "):].strip()
            return None if _DURATION.fullmatch(duration) else f"failed to parse duration {text}: time: invalid " \
                                                               f"duration {_q(duration)}"
        return None if text in _CRON_DESCRIPTORS else f"unrecognized descriptor: {text}"
    fields = text.split()
    if len(fields) != 5:
        return f"expected exactly 5 fields, found {len(fields)}: [{' '.join(fields)}]"
    for f, rule in zip(fields, _CRON_FIELDS):
        error = _cron_field_error(f, *rule)
        if error:
            return error
    return None


def _cronjob(spec: dict) -> list[Problem]:
    """ValidateCronJobSpec on create: the schedule parses, no TZ inside it (timeZone is the field for
    that), a known concurrencyPolicy (defaulted to Allow)."""
    out: list[Problem] = []
    schedule = _str(spec.get("schedule")) or ""
    if not schedule:
        out.append(("spec.schedule", required()))
    else:
        error = cron_schedule_error(schedule)
        if error:
            out.append(("spec.schedule", invalid(schedule, error)))
        if "TZ" in schedule:
            out.append(("spec.schedule", invalid(schedule, "cannot use TZ or CRON_TZ in schedule, use timeZone "
                                                           "field instead")))
    policy = spec.get("concurrencyPolicy") or "Allow"
    if policy not in ("Allow", "Forbid", "Replace"):
        out.append(("spec.concurrencyPolicy", not_supported(policy, ("Allow", "Forbid", "Replace"))))
    return out


MAX_INDEXED_PARALLELISM = 100000


def _indexed(spec: dict) -> list[Problem]:
    """validateJobSpec: a known completionMode; an Indexed Job needs completions and at most 100000
    parallel pods."""
    mode = spec.get("completionMode")
    if mode is None or mode == "NonIndexed":
        return []
    if mode != "Indexed":
        return [("spec.completionMode", not_supported(mode, ("NonIndexed", "Indexed")))]
    out: list[Problem] = []
    if spec.get("completions") is None:
        out.append(("spec.completions", required("when completion mode is Indexed")))
    parallelism = as_int(spec.get("parallelism"))
    if parallelism is not None and parallelism > MAX_INDEXED_PARALLELISM:
        out.append(("spec.parallelism", invalid(parallelism, f"must be less than or equal to {MAX_INDEXED_PARALLELISM} "
                                                             "when completion mode is Indexed")))
    return out


def _workload(obj: dict) -> list[Problem]:
    kind, group = obj.get("kind"), str(obj.get("apiVersion", "")).rpartition("/")[0]
    spec = as_dict(obj.get("spec"))
    if kind in _APPS and group == "apps" or kind == "ReplicationController" and group == "":
        if kind == "StatefulSet":
            out = _stateful_set_template(as_dict(spec.get("template")))
        else:
            out = validate_pod_template(spec.get("template"), "spec.template", ("Always",))
        if as_dict(as_dict(spec.get("template")).get("spec")).get("activeDeadlineSeconds") is not None:
            owner = {"Deployment": "ReplicaSet"}.get(str(kind), kind)   # a Deployment's check reuses the words
            out.append(("spec.template.spec.activeDeadlineSeconds",
                        forbidden(f"activeDeadlineSeconds in {owner} is not Supported")))
        replicas = as_int(spec.get("replicas"))
        if replicas is not None and replicas < 0:
            out.append(("spec.replicas", invalid(replicas, "must be greater than or equal to 0")))
        if group == "apps":
            out += _apps_selector(kind, spec)
        if kind == "Deployment":
            out += _deployment_strategy(as_dict(spec.get("strategy")))
        return out
    if kind == "Job" and group == "batch":
        return validate_pod_template(spec.get("template"), "spec.template", _BATCH_POLICIES) + _indexed(spec)
    if kind == "CronJob" and group == "batch":
        template = as_dict(as_dict(spec.get("jobTemplate")).get("spec")).get("template")
        return validate_pod_template(template, "spec.jobTemplate.spec.template", _BATCH_POLICIES) + _cronjob(spec)
    if kind == "PodTemplate" and group == "":
        return validate_pod_template(obj.get("template"), "template")
    if kind == "Pod" and group == "":
        return validate_pod_spec(spec, "spec")
    return []


HPA_METRIC_TYPES = ("ContainerResource", "External", "Object", "Pods", "Resource")
HPA_TARGET_TYPES = ("AverageValue", "Utilization", "Value")
MAX_STABILIZATION_SECONDS, MAX_POLICY_PERIOD_SECONDS = 3600, 1800


def _cross_ref(ref: Any, path: str) -> list[Problem]:
    ref = as_dict(ref)
    out: list[Problem] = []
    for key in ("kind", "name"):
        value = _str(ref.get(key)) or ""
        if not value:
            out.append((f"{path}.{key}", required()))
        else:
            out += [(f"{path}.{key}", invalid(value, m)) for m in path_segment_name(value)]
    return out


def _one_of(value: Any, path: str, allowed: tuple[str, ...], missing: str) -> list[Problem]:
    """A required enum field: set (``missing`` says what to specify) and one of ``allowed``."""
    if not value:
        return [(path, required(missing))]
    return [] if value in allowed else [(path, not_supported(value, allowed))]


def _metric_target(target: dict, path: str) -> list[Problem]:
    kind = target.get("type")
    out = _one_of(kind, f"{path}.type", HPA_TARGET_TYPES, "must specify a metric target type")
    utilization = as_int(target.get("averageUtilization"))
    if kind == "Utilization" and utilization is not None and utilization < 1:
        out.append((f"{path}.averageUtilization", invalid(utilization, "must be greater than 0")))
    for key in ("value", "averageValue"):
        value = _quantity(target.get(key))
        if value is not None and value <= 0:
            out.append((f"{path}.{key}", invalid(str(target[key]), "must be positive")))
    return out


def _metric_id(metric: Any, path: str) -> list[Problem]:
    name = _str(as_dict(metric).get("name")) or ""
    if not name:
        return [(f"{path}.name", required("must specify a metric name"))]
    out = [(f"{path}.name", invalid(name, m)) for m in path_segment_name(name)]
    selector = as_dict(as_dict(metric).get("selector"))
    out += validate_labels(selector.get("matchLabels"), f"{path}.selector.matchLabels")
    return out


def _metric_source(kind: str, src: dict, path: str) -> list[Problem]:
    target = as_dict(src.get("target"))
    out: list[Problem] = []
    if kind in ("object", "pods", "external"):
        out += _metric_id(src.get("metric"), f"{path}.metric")
    if kind == "object":
        out += _cross_ref(src.get("describedObject"), f"{path}.describedObject")
        if target.get("value") is None and target.get("averageValue") is None:
            out.append((f"{path}.target.value", required("must set either a target value or averageValue")))
    elif kind == "pods":
        if target.get("averageValue") is None:
            out.append((f"{path}.target.averageValue", required("must specify a positive target averageValue")))
    elif kind == "external":
        if target.get("value") is None and target.get("averageValue") is None:
            out.append((f"{path}.target.value",
                        required("must set either a target value for metric or a per-pod target")))
        if target.get("value") is not None and target.get("averageValue") is not None:
            out.append((f"{path}.target.value",
                        forbidden("may not set both a target value for metric and a per-pod target")))
    else:   # resource, containerResource
        if not src.get("name"):
            out.append((f"{path}.name", required("must specify a resource name")))
        if kind == "containerResource":
            container = _str(src.get("container")) or ""
            if not container:
                out.append((f"{path}.container", required("must specify a container")))
            else:
                out += [(f"{path}.container", invalid(container, m)) for m in dns1123_label(container)]
        if target.get("averageUtilization") is None and target.get("averageValue") is None:
            out.append((f"{path}.target.averageUtilization",
                        required("must set either a target raw value or a target utilization")))
        if target.get("averageUtilization") is not None and target.get("averageValue") is not None:
            out.append((f"{path}.target.averageValue",
                        forbidden("may not set both a target raw value and a target utilization")))
    return out + _metric_target(target, f"{path}.target")


_SOURCE_FIELD = {"Object": "object", "Pods": "pods", "Resource": "resource", "External": "external",
                 "ContainerResource": "containerResource"}


def _metric(metric: dict, path: str) -> list[Problem]:
    kind = metric.get("type")
    out = _one_of(kind, f"{path}.type", HPA_METRIC_TYPES, "must specify a metric source type")
    present = [f for f in ("object", "pods", "resource", "external", "containerResource") if metric.get(f) is not None]
    if present:
        out += _metric_source(present[0], as_dict(metric.get(present[0])), f"{path}.{present[0]}")
    expected = _SOURCE_FIELD.get(str(kind))
    if expected and metric.get(expected) is None:
        out.append((f"{path}.{expected}", required("must populate information for the given metric source")))
    if len(present) != 1:
        for extra in present:
            if extra != expected:
                out.append((f"{path}.{extra}", forbidden("must populate the given metric source only")))
    return out


def _scaling_rules(rules: Any, path: str) -> list[Problem]:
    rules = as_dict(rules)
    out: list[Problem] = []
    window = as_int(rules.get("stabilizationWindowSeconds"))
    if window is not None and window < 0:
        out.append((f"{path}.stabilizationWindowSeconds", invalid(window, "must be greater than or equal to zero")))
    elif window is not None and window > MAX_STABILIZATION_SECONDS:
        out.append((f"{path}.stabilizationWindowSeconds",
                    invalid(window, f"must be less than or equal to {MAX_STABILIZATION_SECONDS}")))
    select = rules.get("selectPolicy")
    if select is not None and select not in ("Disabled", "Max", "Min"):
        out.append((f"{path}.selectPolicy", not_supported(select, ("Disabled", "Max", "Min"))))
    for i, policy in enumerate(as_list(rules.get("policies"))):
        policy = as_dict(policy)
        p = f"{path}.policies[{i}]"
        if policy.get("type") not in ("Percent", "Pods"):
            out.append((f"{p}.type", not_supported(policy.get("type", ""), ("Percent", "Pods"))))
        value = as_int(policy.get("value"))
        if value is not None and value <= 0:
            out.append((f"{p}.value", invalid(value, "must be greater than zero")))
        period = as_int(policy.get("periodSeconds"))
        if period is not None and period <= 0:
            out.append((f"{p}.periodSeconds", invalid(period, "must be greater than zero")))
        elif period is not None and period > MAX_POLICY_PERIOD_SECONDS:
            out.append((f"{p}.periodSeconds",
                        invalid(period, f"must be less than or equal to {MAX_POLICY_PERIOD_SECONDS}")))
    return out


def validate_hpa(obj: dict, scale_to_zero: bool = False) -> list[Problem]:
    """autoscaling validation.go ``validateHorizontalPodAutoscalerSpec`` (autoscaling/v2; a v1 HPA's
    ``targetCPUUtilizationPercentage`` is its Resource metric). ``scale_to_zero``: the cluster enables
    the HPAScaleToZero feature gate (then minReplicas 0 is allowed with an Object or External metric)."""
    spec = as_dict(obj.get("spec"))
    out: list[Problem] = []
    min_replicas = as_int(spec.get("minReplicas", 1))
    floor = 0 if scale_to_zero else 1
    if min_replicas is not None and min_replicas < floor:
        out.append(("spec.minReplicas", invalid(min_replicas, f"must be greater than or equal to {floor}")))
    max_replicas = as_int(spec.get("maxReplicas"))
    if max_replicas is None or max_replicas < 1:
        out.append(("spec.maxReplicas", invalid(spec.get("maxReplicas", 0), "must be greater than 0")))
    elif min_replicas is not None and max_replicas < min_replicas:
        out.append(("spec.maxReplicas", invalid(max_replicas, "must be greater than or equal to `minReplicas`")))
    out += _cross_ref(spec.get("scaleTargetRef"), "spec.scaleTargetRef")
    has_object = False
    for i, metric in enumerate(as_list(spec.get("metrics"))):
        metric = as_dict(metric)
        out += _metric(metric, f"spec.metrics[{i}]")
        has_object = has_object or metric.get("type") in ("Object", "External")
    if min_replicas == 0 and scale_to_zero and not has_object:
        out.append(("spec.metrics", forbidden("must specify at least one Object or External metric to support "
                                              "scaling to zero replicas")))
    utilization = as_int(spec.get("targetCPUUtilizationPercentage"))
    if utilization is not None and utilization < 1:
        out.append(("spec.targetCPUUtilizationPercentage", invalid(utilization, "must be greater than 0")))
    behavior = as_dict(spec.get("behavior"))
    for direction in ("scaleUp", "scaleDown"):
        if behavior.get(direction) is not None:
            out += _scaling_rules(behavior[direction], f"spec.behavior.{direction}")
    return out


ACCESS_MODES = ("ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod")


def validate_pvc(obj: dict) -> list[Problem]:
    """ValidatePersistentVolumeClaimSpec: access modes and a positive storage request."""
    spec = as_dict(obj.get("spec"))
    out: list[Problem] = []
    modes = as_list(spec.get("accessModes"))
    if not modes:
        out.append(("spec.accessModes", required("at least 1 access mode is required")))
    for mode in modes:
        if mode not in ACCESS_MODES:
            out.append(("spec.accessModes", not_supported(mode, ACCESS_MODES)))
    if "ReadWriteOncePod" in modes and len(modes) > 1:
        out.append(("spec.accessModes", forbidden("may not use ReadWriteOncePod with other access modes")))
    requests = as_dict(as_dict(spec.get("resources")).get("requests"))
    if "storage" not in requests:   # required even when a data source (a snapshot, a clone) fills the claim
        out.append(("spec.resources[storage]", required()))
    else:
        value = _quantity(requests["storage"])
        if value is not None and value <= 0:
            out.append(("spec.resources.requests[storage]",
                        invalid(str(requests["storage"]), "must be greater than zero")))
    mode = spec.get("volumeMode")
    if mode is not None and mode not in ("Block", "Filesystem"):
        out.append(("spec.volumeMode", not_supported(mode, ("Block", "Filesystem"))))
    storage_class = _str(spec.get("storageClassName"))
    if storage_class:
        out += [("spec.storageClassName", invalid(storage_class, m)) for m in dns1123_subdomain(storage_class)]
    return out


SERVICE_TYPES = ("ClusterIP", "ExternalName", "LoadBalancer", "NodePort")


def validate_service(obj: dict) -> list[Problem]:
    """ValidateService: ports (names, numbers, protocols, uniqueness) and the type/clusterIP rules."""
    spec = as_dict(obj.get("spec"))
    kind = spec.get("type", "ClusterIP")
    cluster_ip = spec.get("clusterIP")
    out: list[Problem] = []
    if kind not in SERVICE_TYPES:
        out.append(("spec.type", not_supported(kind, SERVICE_TYPES)))
    ports = as_list(spec.get("ports"))
    headless = cluster_ip == "None"
    if not ports and not headless and kind != "ExternalName":
        out.append(("spec.ports", required()))
    names: set[str] = set()
    keys: set[tuple] = set()
    for i, port in enumerate(ports):
        port = as_dict(port)
        p = f"spec.ports[{i}]"
        name = _str(port.get("name")) or ""
        if len(ports) > 1 and not name:
            out.append((f"{p}.name", required()))
        elif name:
            out += _named(name, f"{p}.name", dns1123_label, names)
        number = as_int(port.get("port"))
        if number is not None:
            out += [(f"{p}.port", invalid(number, m)) for m in port_number(number)]
        protocol = port.get("protocol", "TCP")
        if protocol not in PORT_PROTOCOLS:
            out.append((f"{p}.protocol", not_supported(protocol, PORT_PROTOCOLS)))
        if "targetPort" in port:
            out += _port_ref(port["targetPort"], f"{p}.targetPort")
        node_port = as_int(port.get("nodePort"))
        if node_port:
            if kind == "ClusterIP":
                out.append((f"{p}.nodePort", forbidden("may not be used when `type` is 'ClusterIP'")))
            else:
                out += [(f"{p}.nodePort", invalid(node_port, m)) for m in port_number(node_port)]
        key = (number, protocol)
        if key in keys:
            out.append((p, duplicate(f"{number}/{protocol}")))
        keys.add(key)
    if headless and kind in ("LoadBalancer", "NodePort"):
        out.append(("spec.clusterIPs[0]", invalid("None", f"may not be set to 'None' for {kind} services")))
    if kind == "ExternalName":
        external = _str(spec.get("externalName")) or ""
        if not external:
            out.append(("spec.externalName", required()))
    out += validate_labels(spec.get("selector"), "spec.selector")
    return out


HIGHEST_USER_PRIORITY = 1_000_000_000
SYSTEM_PRIORITY_CLASSES = {"system-cluster-critical": 2_000_000_000, "system-node-critical": 2_000_001_000}


def validate_priority_class(obj: dict) -> list[Problem]:
    """scheduling validation.go ``ValidatePriorityClass``: the system- prefix and the value range."""
    name = str(as_dict(obj.get("metadata")).get("name", ""))
    value = as_int(obj.get("value"))
    out: list[Problem] = []
    if name.startswith("system-"):
        if name not in SYSTEM_PRIORITY_CLASSES:
            reason = f"{name} is not a known system priority class"
        elif value != SYSTEM_PRIORITY_CLASSES[name]:
            reason = f"value of {name} PriorityClass must be {SYSTEM_PRIORITY_CLASSES[name]}"
        else:
            reason = ""
        if reason:
            out.append(("metadata.name", forbidden("priority class names with 'system-' prefix are reserved for "
                                                   f"system use only. error: {reason}")))
    elif value is not None and value > HIGHEST_USER_PRIORITY:
        out.append(("value", forbidden(f"maximum allowed value of a user defined priority is {HIGHEST_USER_PRIORITY}")))
    policy = obj.get("preemptionPolicy")
    if policy is not None and policy not in ("Never", "PreemptLowerPriority"):
        out.append(("preemptionPolicy", not_supported(policy, ("Never", "PreemptLowerPriority"))))
    return out


def validate_config_map(obj: dict) -> list[Problem]:
    """ValidateConfigMap: key syntax, no key in both data and binaryData, at most 1 MiB in all."""
    data, binary = as_dict(obj.get("data")), as_dict(obj.get("binaryData"))
    out: list[Problem] = []
    size = 0
    for key, value in data.items():
        key = str(key)
        out += [(_key("data", key), invalid(key, m)) for m in config_map_key(key)]
        if key in binary:
            out.append((_key("data", key), invalid(key, "duplicate of key present in binaryData")))
        size += len(str(value if value is not None else "").encode())
    for key, value in binary.items():
        key = str(key)
        out += [(_key("binaryData", key), invalid(key, m)) for m in config_map_key(key)]
        try:
            size += len(base64.b64decode(str(value), validate=True))
        except (binascii.Error, ValueError):
            size += len(str(value)) * 3 // 4
    if size > MAX_CONFIG_SIZE:
        out.append(("", too_long(MAX_CONFIG_SIZE)))
    return out


def validate_secret(obj: dict) -> list[Problem]:
    out: list[Problem] = []
    for part in ("data", "stringData"):
        for key in as_dict(obj.get(part)):
            out += [(_key(part, key), invalid(str(key), m)) for m in config_map_key(str(key))]
    return out


RECLAIM_POLICIES = ("Delete", "Recycle", "Retain")
BINDING_MODES = ("Immediate", "WaitForFirstConsumer")


def validate_storage_class(obj: dict) -> list[Problem]:
    """storage validation.go ``ValidateStorageClass``: a provisioner (a qualified name), a known
    reclaim policy (Recycle only for the old in-tree kinds, not judged here) and binding mode."""
    out: list[Problem] = []
    provisioner = _str(obj.get("provisioner")) or ""
    if not provisioner:
        out.append(("provisioner", required()))
    else:
        out += [("provisioner", invalid(provisioner, m)) for m in qualified_name(provisioner.lower())]
    policy = obj.get("reclaimPolicy")
    if policy is not None and policy not in RECLAIM_POLICIES:
        out.append(("reclaimPolicy", not_supported(policy, RECLAIM_POLICIES)))
    mode = obj.get("volumeBindingMode")
    if mode is not None and mode not in BINDING_MODES:
        out.append(("volumeBindingMode", not_supported(mode, BINDING_MODES)))
    return out


def _policy_rules(obj: dict, namespaced: bool) -> list[Problem]:
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


def _binding(obj: dict, namespaced: bool) -> list[Problem]:
    """rbac validation.go ``ValidateRoleBinding`` / ``ValidateClusterRoleBinding``: the role it refers
    to and its subjects."""
    ref = as_dict(obj.get("roleRef"))
    out: list[Problem] = []
    if ref.get("apiGroup") != "rbac.authorization.k8s.io":
        out.append(("roleRef.apiGroup", not_supported(ref.get("apiGroup", ""), ("rbac.authorization.k8s.io",))))
    kinds = ("ClusterRole", "Role") if namespaced else ("ClusterRole",)
    if ref.get("kind") not in kinds:
        out.append(("roleRef.kind", not_supported(ref.get("kind", ""), kinds)))
    name = _str(ref.get("name")) or ""
    if not name:
        out.append(("roleRef.name", required()))
    else:
        out += [("roleRef.name", invalid(name, m)) for m in path_segment_name(name)]
    for i, subject in enumerate(as_list(obj.get("subjects"))):
        subject = as_dict(subject)
        p = f"subjects[{i}]"
        kind, sub_name = subject.get("kind"), _str(subject.get("name")) or ""
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


# Cluster-scoped kinds the stacks render or check (metadata.namespace is forbidden there).
CLUSTER_SCOPED = frozenset({"Namespace", "PriorityClass", "StorageClass", "ClusterRole", "ClusterRoleBinding",
                            "CustomResourceDefinition", "Node", "PersistentVolume", "HyperNode", "Queue",
                            "ClusterTrainingRuntime", "ValidatingAdmissionPolicy",
                            "ValidatingAdmissionPolicyBinding", "MutatingAdmissionPolicy",
                            "MutatingAdmissionPolicyBinding"})

# (API group, kind) -> the kind's own validation, beside the metadata checks every object gets.
_BY_KIND = {
    ("autoscaling", "HorizontalPodAutoscaler"): lambda o, gates: validate_hpa(o, "HPAScaleToZero" in gates),
    ("", "PersistentVolumeClaim"): lambda o, gates: validate_pvc(o),
    ("", "Service"): lambda o, gates: validate_service(o),
    ("scheduling.k8s.io", "PriorityClass"): lambda o, gates: validate_priority_class(o),
    ("", "ConfigMap"): lambda o, gates: validate_config_map(o),
    ("", "Secret"): lambda o, gates: validate_secret(o),
    ("storage.k8s.io", "StorageClass"): lambda o, gates: validate_storage_class(o),
    ("rbac.authorization.k8s.io", "Role"): lambda o, gates: _policy_rules(o, True),
    ("rbac.authorization.k8s.io", "ClusterRole"): lambda o, gates: _policy_rules(o, False),
    ("rbac.authorization.k8s.io", "RoleBinding"): lambda o, gates: _binding(o, True),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"): lambda o, gates: _binding(o, False),
}
WORKLOAD_KINDS = frozenset({("apps", k) for k in _APPS} | {("", "ReplicationController"), ("batch", "Job"),
                                                           ("batch", "CronJob"), ("", "PodTemplate"), ("", "Pod")})

# Where the workload kinds check their own spec (selector and template labels, strategy, completions).
_SPEC_CHECKS = {("apps", k): f"pkg/apis/apps/validation/validation.go Validate{k}Spec" for k in _APPS}
_SPEC_CHECKS[("batch", "Job")] = "pkg/apis/batch/validation/validation.go validateJobSpec"
_SPEC_CHECKS[("batch", "CronJob")] = "pkg/apis/batch/validation/validation.go ValidateCronJobSpec"

# The upstream file that holds each kind's checks (for messages): kubernetes/kubernetes at v1.35.
UPSTREAM = {
    "metadata": "staging/src/k8s.io/apimachinery/pkg/api/validation/objectmeta.go ValidateObjectMeta",
    ("autoscaling", "HorizontalPodAutoscaler"): "pkg/apis/autoscaling/validation/validation.go "
                                                "ValidateHorizontalPodAutoscaler",
    ("scheduling.k8s.io", "PriorityClass"): "pkg/apis/scheduling/validation/validation.go ValidatePriorityClass",
    ("apps", "pod-template"): "pkg/apis/apps/validation/validation.go with pkg/apis/core/validation/validation.go "
                              "ValidatePodTemplateSpec",
    ("batch", "pod-template"): "pkg/apis/batch/validation/validation.go with pkg/apis/core/validation/validation.go "
                               "ValidatePodTemplateSpec",
    ("", "pod-template"): "pkg/apis/core/validation/validation.go ValidatePodSpec",
    "core": "pkg/apis/core/validation/validation.go",
    ("storage.k8s.io", "StorageClass"): "pkg/apis/storage/validation/validation.go ValidateStorageClass",
    **{("rbac.authorization.k8s.io", k): f"pkg/apis/rbac/validation/validation.go Validate{k}"
       for k in ("Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding")},
}


def judged_kind(obj: dict) -> tuple[str, str]:
    return str(obj.get("apiVersion", "")).rpartition("/")[0], str(obj.get("kind", ""))


# Objects trainstack models that the API server never receives: a chart release (``modules/core/
# wire.py`` ``release_manifest``; Helm stores its own Secrets) is judged by no API server rule.
NOT_API_OBJECTS = frozenset({("helm.sh", "Release")})


def validate_object(obj: dict, feature_gates: frozenset[str] | set[str] = frozenset()) -> list[Problem]:
    """Everything the API server's built-in validation refuses in ``obj`` on CREATE: its metadata
    (every kind, custom resources included) and, for the core kinds it knows, its body."""
    group, kind = judged_kind(obj)
    if (group, kind) in NOT_API_OBJECTS:
        return []
    out = validate_object_meta(obj, kind not in CLUSTER_SCOPED)
    if (group, kind) in WORKLOAD_KINDS:
        out += _workload(obj)
    check = _BY_KIND.get((group, kind))
    if check is not None:
        out += check(obj, feature_gates)
    return out


def upstream_file(obj: dict, path: str) -> str:
    """The kubernetes/kubernetes file whose check refused ``path`` of ``obj``."""
    group, kind = judged_kind(obj)
    if path.startswith("metadata."):
        return UPSTREAM["metadata"]
    if (group, kind) in _SPEC_CHECKS and "template.spec." not in path:
        return _SPEC_CHECKS[(group, kind)]   # the controller's own spec: selector, strategy, completions
    if (group, kind) in WORKLOAD_KINDS:
        return UPSTREAM[(group if group in ("apps", "batch") else "", "pod-template")]
    return UPSTREAM.get((group, kind), UPSTREAM["core"] + f" Validate{kind}")
