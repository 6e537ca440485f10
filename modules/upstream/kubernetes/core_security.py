"""Security contexts (``pkg/apis/core/validation/validation.go`` ``ValidateSecurityContext``,
``validatePodSpecSecurityContext``, ``validateSysctls``): user and group ids, sysctls (names,
duplicates, namespaced ones on a pod sharing the host's network or IPC), seccomp profile types, and the
combinations the API server refuses (``allowPrivilegeEscalation: false`` with ``privileged`` or with
``capabilities.add: [CAP_SYS_ADMIN]``)."""
from __future__ import annotations

import re
from typing import Any

from modules.semantics.shapes import as_dict, as_int, as_list
from modules.upstream.field import OMIT, FieldError, duplicate, invalid, not_supported, required
from modules.core.vocabulary.go import INT32_MAX

from .pod_options import PodValidationOptions

ID_RANGE = "must be between 0 and 2147483647, inclusive"   # IsValidUserID / IsValidGroupID
SECCOMP_TYPES = ("Localhost", "RuntimeDefault", "Unconfined")
FS_GROUP_CHANGE_POLICIES = ("Always", "OnRootMismatch")
SYSCTL_MAX = 253
_SYSCTL_SEGMENT = r"[a-z0-9]([-_a-z0-9]*[a-z0-9])?"
SYSCTL_PATTERN = rf"^({_SYSCTL_SEGMENT}[\./])*{_SYSCTL_SEGMENT}$"   # as Go prints the compiled regexp
_SYSCTL = re.compile(rf"({_SYSCTL_SEGMENT}[\./])*{_SYSCTL_SEGMENT}")
# component-helpers node/util/sysctl: the sysctls a pod's IPC namespace holds; net.* is the network's.
_IPC_SYSCTLS = frozenset({"kernel.sem", "kernel.shmall", "kernel.shmmax", "kernel.shmmni", "kernel.shm_rmid_forced",
                          "kernel.msgmax", "kernel.msgmnb", "kernel.msgmni"})


def _ids(context: dict, path: str, keys: tuple[str, ...]) -> list[FieldError]:
    out: list[FieldError] = []
    for key in keys:
        value = as_int(context.get(key))
        if value is not None and not 0 <= value <= INT32_MAX:
            out.append(invalid(f"{path}.{key}", value, ID_RANGE))
    return out


def _seccomp(profile: Any, path: str) -> list[FieldError]:
    """validateSeccompProfileField: a known type; Localhost with its profile."""
    if not isinstance(profile, dict):
        return []
    kind = profile.get("type") or ""
    if not kind:
        return [required(f"{path}.type", "type is required when seccompProfile is set")]
    if kind not in SECCOMP_TYPES:
        return [not_supported(f"{path}.type", kind, SECCOMP_TYPES)]
    if kind == "Localhost" and profile.get("localhostProfile") is None:
        return [required(f"{path}.localhostProfile", "must be set when seccomp type is Localhost")]
    return []


def validate_security_context(context: Any, path: str) -> list[FieldError]:
    """ValidateSecurityContext of a container (the API server runs with --allow-privileged, its
    default). The struct upstream prints as the value of the escalation errors (Go's ``%#v`` of the
    internal type, pointer addresses included) is not reproduced: the value is omitted."""
    if not isinstance(context, dict):
        return []
    out = _ids(context, path, ("runAsUser", "runAsGroup"))
    out += _seccomp(context.get("seccompProfile"), f"{path}.seccompProfile")
    if context.get("allowPrivilegeEscalation") is False:
        if context.get("privileged") is True:
            out.append(invalid(path, OMIT, "cannot set `allowPrivilegeEscalation` to false and `privileged` to true"))
        for cap in as_list(as_dict(context.get("capabilities")).get("add")):
            if cap == "CAP_SYS_ADMIN":
                out.append(invalid(path, OMIT, "cannot set `allowPrivilegeEscalation` to false and "
                                               "`capabilities.Add` CAP_SYS_ADMIN"))
    return out


def _normalized(name: str) -> str:
    """sysctl.NormalizeName: with '/' as the first separator, '/' and '.' trade places."""
    first = re.search(r"[./]", name)
    if first is None or first.group() == ".":
        return name
    return name.translate(str.maketrans("/.", "./"))


def _sysctl_namespace(name: str) -> str:
    """sysctl.GetNamespace: ``net`` for net.*, ``ipc`` for the IPC sysctls and fs.mqueue.*."""
    name = _normalized(name)
    if name.startswith("net."):
        return "net"
    if name in _IPC_SYSCTLS or name.startswith("fs.mqueue."):
        return "ipc"
    return ""


def _host_sysctl(name: str, spec: dict, path: str) -> FieldError | None:
    """ValidateHostSysctl: a namespaced sysctl on a pod that shares that namespace with the node."""
    namespace = _sysctl_namespace(name)
    if spec.get("hostNetwork") is True and namespace == "net":
        return invalid(path, name, "may not be specified when 'hostNetwork' is true")
    if spec.get("hostIPC") is True and namespace == "ipc":
        return invalid(path, name, "may not be specified when 'hostIPC' is true")
    return None


def validate_sysctls(spec: dict, path: str, options: PodValidationOptions) -> list[FieldError]:
    """validateSysctls: each name set, in the sysctl format and once; namespaced ones refused where the
    pod shares the host's network or IPC (unless the options allow it)."""
    out: list[FieldError] = []
    seen: set[str] = set()
    for i, entry in enumerate(as_list(as_dict(spec.get("securityContext")).get("sysctls"))):
        name = as_dict(entry).get("name")
        name = name if isinstance(name, str) else ""
        at = f"{path}[{i}].name"
        if not name:
            out.append(required(at))
        elif len(name.encode()) > SYSCTL_MAX or not _SYSCTL.fullmatch(name):
            out.append(invalid(at, name, f"must have at most {SYSCTL_MAX} characters and match regex "
                                         f"{SYSCTL_PATTERN}"))
        elif name in seen:
            out.append(duplicate(at, name))
        if not options.allow_namespaced_sysctls_for_host_net_and_host_ipc:
            error = _host_sysctl(name, spec, at)
            if error:
                out.append(error)
        seen.add(name)
    return out


def validate_pod_security_context(spec: dict, path: str, options: PodValidationOptions) -> list[FieldError]:
    """validatePodSpecSecurityContext: ids, shareProcessNamespace with hostPID, sysctls, the
    fsGroupChangePolicy and seccomp profile."""
    # The internal pod's security context also holds hostNetwork, hostPID, hostIPC and
    # shareProcessNamespace, so it is never absent there and these paths sit under it.
    context = as_dict(spec.get("securityContext"))
    at = f"{path}.securityContext"
    out = _ids(context, at, ("fsGroup", "runAsUser", "runAsGroup"))
    for i, gid in enumerate(as_list(context.get("supplementalGroups"))):
        value = as_int(gid)
        if value is not None and not 0 <= value <= INT32_MAX:
            out.append(invalid(f"{at}.supplementalGroups[{i}]", value, ID_RANGE))
    if spec.get("shareProcessNamespace") is True and spec.get("hostPID") is True:
        out.append(invalid(f"{at}.shareProcessNamespace", True,
                           "ShareProcessNamespace and HostPID cannot both be enabled"))
    out += validate_sysctls(spec, f"{at}.sysctls", options)
    policy = context.get("fsGroupChangePolicy")
    if policy is not None and policy not in FS_GROUP_CHANGE_POLICIES:
        out.append(not_supported(f"{at}.fsGroupChangePolicy", policy, FS_GROUP_CHANGE_POLICIES))
    out += _seccomp(context.get("seccompProfile"), f"{at}.seccompProfile")
    return out
