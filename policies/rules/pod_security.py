"""Kubernetes Pod Security Standards over every pod template trainstack knows.

Two rules, because the two profiles are enforced differently: `pod-security-baseline` (mandatory)
holds the Baseline profile's controls, which stop known privilege escalations; `pod-security-restricted`
(advisory) holds the Restricted profile's hardening and the service-account token advice. Field
names, values and safe lists follow https://kubernetes.io/docs/concepts/security/pod-security-standards/
(v1.33). The walk covers Pods, core workloads, Volcano Jobs, CronJobs and JobFlow JobTemplates,
Kubeflow v1 jobs, JobSets, (Cluster)TrainingRuntimes, and TrainJobs after their runtime patches are
merged (a TrainJob is judged only on what its patches add; its runtime is judged on its own).
"""
from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Iterator

from ..framework import (ADVISORY, MANDATORY, CheckContext, Finding, Rule, annotations, as_dict, as_list, meta,
                         pod_templates, where)
from modules.semantics.workloads import find_runtime, job_patches, replicated_jobs
from .security import HOST_NETWORK_ANNOTATION

BASELINE = "pod-security-baseline"
RESTRICTED = "pod-security-restricted"

# Baseline "Capabilities": what a container may add without the profile objecting, plus IPC_LOCK,
# which RDMA needs to register (pin) memory for NCCL over InfiniBand/RoCE.
BASELINE_CAPABILITIES = ["AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
                         "NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT", "IPC_LOCK"]
RESTRICTED_CAPABILITIES = ["NET_BIND_SERVICE", "IPC_LOCK"]
# Baseline "Sysctls": the safe set (namespaced, cannot affect other pods).
SAFE_SYSCTLS = ["kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.ip_unprivileged_port_start",
                "net.ipv4.tcp_syncookies", "net.ipv4.ping_group_range", "net.ipv4.ip_local_reserved_ports",
                "net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl",
                "net.ipv4.tcp_keepalive_probes"]
_SELINUX_TYPES = {"", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"}
_APPARMOR_PREFIX = "container.apparmor.security.beta.kubernetes.io/"
_SECCOMP_ANNOTATIONS = ("seccomp.security.alpha.kubernetes.io/pod", "container.seccomp.security.alpha.kubernetes.io/")
_CONTAINER_FIELDS = ("initContainers", "containers", "ephemeralContainers")


@dataclass(frozen=True)
class Hit:
    """One control's violation, at a path relative to the pod template ("spec.containers[0]...")."""

    control: str
    path: str
    message: str


def _containers(pod_spec: dict) -> Iterator[tuple[str, dict]]:
    for field_name in _CONTAINER_FIELDS:
        for i, c in enumerate(as_list(pod_spec.get(field_name))):
            if isinstance(c, dict):
                yield f"spec.{field_name}[{i}]", c


def _cap(name: object) -> str:
    """Capabilities are compared without the CAP_ prefix some manifests carry."""
    text = str(name).upper()
    return text[4:] if text.startswith("CAP_") else text


def _opted_in(obj: dict, template: dict) -> bool:
    return any(str(annotations(o).get(HOST_NETWORK_ANNOTATION, "")).lower() == "true" for o in (obj, template))


# --- Baseline ---------------------------------------------------------------------------------

def baseline_hits(obj: dict, template: dict, config: dict) -> Iterator[Hit]:
    pod_spec = as_dict(template.get("spec"))
    pod_sc = as_dict(pod_spec.get("securityContext"))
    if as_dict(pod_sc.get("windowsOptions")).get("hostProcess") is True:
        yield Hit("hostProcess", "spec.securityContext.windowsOptions.hostProcess",
                  "a Windows HostProcess pod runs with the node's full privileges")
    for field_name, shared in (("hostNetwork", "network"), ("hostPID", "process"), ("hostIPC", "IPC")):
        if pod_spec.get(field_name) is not True:
            continue
        if field_name == "hostNetwork" and config.get("hostNetworkOptIn", True) and _opted_in(obj, template):
            continue   # the host-network runtimes' documented need; host-network-opt-in checks the rest
        extra = (f" (annotate the object with {HOST_NETWORK_ANNOTATION}: \"true\" when host networking is "
                 "intended, e.g. RDMA without SR-IOV)") if field_name == "hostNetwork" else ""
        yield Hit("hostNamespaces", f"spec.{field_name}",
                  f"{field_name}: true shares the node's {shared} namespace with the pod{extra}")
    allowed_paths = [str(p) for p in config.get("allowedHostPaths") or []]
    prefixes = [p.rstrip("/") for p in allowed_paths]   # "/" allows every path
    for i, volume in enumerate(as_list(pod_spec.get("volumes"))):
        host = as_dict(volume).get("hostPath")
        if host is None:
            continue
        path = str(as_dict(host).get("path", ""))
        if not any(path == p or path.startswith(p + "/") for p in prefixes):
            yield Hit("hostPathVolumes", f"spec.volumes[{i}].hostPath",
                      f"hostPath volume {path!r} gives the pod the node's filesystem (allowed prefixes: "
                      f"{allowed_paths or 'none'})")
    allowed_ports = {int(p) for p in config.get("allowedHostPorts") or []}
    allowed_caps = {_cap(c) for c in config.get("allowedCapabilities") or []}
    for cpath, c in _containers(pod_spec):
        sc = as_dict(c.get("securityContext"))
        if as_dict(sc.get("windowsOptions")).get("hostProcess") is True:
            yield Hit("hostProcess", f"{cpath}.securityContext.windowsOptions.hostProcess",
                      "a Windows HostProcess container runs with the node's full privileges")
        if sc.get("privileged") is True:
            yield Hit("privileged", f"{cpath}.securityContext.privileged",
                      "a privileged container has every capability and every host device")
        for j, cap in enumerate(as_list(as_dict(sc.get("capabilities")).get("add"))):
            if _cap(cap) not in allowed_caps:
                yield Hit("capabilities", f"{cpath}.securityContext.capabilities.add[{j}]",
                          f"adds capability {cap!r}, outside the allowed set ({', '.join(sorted(allowed_caps))})")
        for j, port in enumerate(as_list(c.get("ports"))):
            host_port = as_dict(port).get("hostPort")
            if host_port not in (None, 0) and not (isinstance(host_port, int) and host_port in allowed_ports):
                yield Hit("hostPorts", f"{cpath}.ports[{j}].hostPort",
                          f"hostPort {host_port} binds a port of the node (allowed: {sorted(allowed_ports) or 'none'})")
        if sc.get("procMount") not in (None, "", "Default"):
            yield Hit("procMount", f"{cpath}.securityContext.procMount",
                      f"procMount {sc.get('procMount')!r} unmasks /proc")
    yield from _profile_overrides(pod_spec, template)
    safe = set(config.get("allowedSysctls") or [])
    for i, sysctl in enumerate(as_list(pod_sc.get("sysctls"))):
        name = as_dict(sysctl).get("name")
        if not (isinstance(name, str) and name in safe):
            yield Hit("sysctls", f"spec.securityContext.sysctls[{i}].name",
                      f"sysctl {name!r} is not in the safe set; it can affect other pods on the node")


def _profile_overrides(pod_spec: dict, template: dict) -> Iterator[Hit]:
    """AppArmor, SELinux and seccomp: nothing may switch the node's confinement off."""
    for key, value in sorted(as_dict(as_dict(template.get("metadata")).get("annotations")).items(), key=str):
        key, value = str(key), str(value)
        if key.startswith(_APPARMOR_PREFIX) and not (value == "runtime/default" or value.startswith("localhost/")):
            yield Hit("appArmor", f"metadata.annotations.{key}", f"AppArmor profile {value!r} disables confinement")
        if key.startswith(_SECCOMP_ANNOTATIONS) and value == "unconfined":
            yield Hit("seccomp", f"metadata.annotations.{key}", "seccomp profile 'unconfined' allows every system call")
    scopes = [("spec.securityContext", as_dict(pod_spec.get("securityContext")))]
    scopes += [(f"{cpath}.securityContext", as_dict(c.get("securityContext"))) for cpath, c in _containers(pod_spec)]
    for base, sc in scopes:
        if as_dict(sc.get("appArmorProfile")).get("type") == "Unconfined":
            yield Hit("appArmor", f"{base}.appArmorProfile.type", "appArmorProfile Unconfined disables confinement")
        if as_dict(sc.get("seccompProfile")).get("type") == "Unconfined":
            yield Hit("seccomp", f"{base}.seccompProfile.type", "seccompProfile Unconfined allows every system call")
        selinux = as_dict(sc.get("seLinuxOptions"))
        if str(selinux.get("type", "") or "") not in _SELINUX_TYPES:
            yield Hit("seLinux", f"{base}.seLinuxOptions.type",
                      f"SELinux type {selinux.get('type')!r} is not a container type")
        for field_name in ("user", "role"):
            if selinux.get(field_name):
                yield Hit("seLinux", f"{base}.seLinuxOptions.{field_name}",
                          f"SELinux {field_name} {selinux.get(field_name)!r} overrides the container's label")


# --- Restricted and service-account tokens ------------------------------------------------------

def restricted_hits(obj: dict, template: dict, config: dict) -> Iterator[Hit]:
    pod_spec = as_dict(template.get("spec"))
    pod_sc = as_dict(pod_spec.get("securityContext"))
    containers = list(_containers(pod_spec))
    allowed_caps = {_cap(c) for c in config.get("allowedCapabilities") or []}
    pod_seccomp = as_dict(pod_sc.get("seccompProfile")).get("type") in ("RuntimeDefault", "Localhost")
    for cpath, c in containers:
        sc = as_dict(c.get("securityContext"))
        if sc.get("allowPrivilegeEscalation") is not False:
            yield Hit("allowPrivilegeEscalation", f"{cpath}.securityContext.allowPrivilegeEscalation",
                      "allowPrivilegeEscalation is not false, so setuid binaries can gain privileges; set "
                      "securityContext.allowPrivilegeEscalation: false")
        caps = as_dict(sc.get("capabilities"))
        if "ALL" not in {_cap(d) for d in as_list(caps.get("drop"))}:
            yield Hit("capabilities", f"{cpath}.securityContext.capabilities.drop",
                      "does not drop ALL capabilities; set capabilities.drop: [ALL] and add back only what the "
                      "container needs (IPC_LOCK for RDMA)")
        for j, cap in enumerate(as_list(caps.get("add"))):
            if _cap(cap) not in allowed_caps:
                yield Hit("capabilities", f"{cpath}.securityContext.capabilities.add[{j}]",
                          f"adds {cap!r}; the Restricted profile allows only {', '.join(sorted(allowed_caps))}")
        container_seccomp = as_dict(sc.get("seccompProfile")).get("type")
        if not pod_seccomp and container_seccomp not in ("RuntimeDefault", "Localhost"):
            yield Hit("seccompProfile", f"{cpath}.securityContext.seccompProfile",
                      "runs without a seccomp profile; set spec.securityContext.seccompProfile.type: RuntimeDefault "
                      "on the pod")
    if config.get("requireRunAsNonRoot", False) and containers:
        pod_non_root = pod_sc.get("runAsNonRoot") is True
        for cpath, c in containers:
            sc = as_dict(c.get("securityContext"))
            if sc.get("runAsNonRoot") is False or not (pod_non_root or sc.get("runAsNonRoot") is True):
                yield Hit("runAsNonRoot", f"{cpath}.securityContext.runAsNonRoot",
                          "may run as root; set runAsNonRoot: true (pod or container) and a non-zero runAsUser")
            if sc.get("runAsUser") == 0:
                yield Hit("runAsNonRoot", f"{cpath}.securityContext.runAsUser", "runs as user 0 (root)")
        if pod_sc.get("runAsUser") == 0:
            yield Hit("runAsNonRoot", "spec.securityContext.runAsUser", "the pod runs as user 0 (root)")
    if config.get("serviceAccountToken", True) and containers and pod_spec.get("automountServiceAccountToken") \
            is not False and str(pod_spec.get("serviceAccountName") or "default") == "default":
        # A pod that names its own service account is taken to use it (the probe launcher does).
        yield Hit("serviceAccountToken", "spec.automountServiceAccountToken",
                  "mounts the default service account's API token although the pod names no service account "
                  "of its own; set automountServiceAccountToken: false unless it talks to the API server")


# --- walking every template -------------------------------------------------------------------

def _full(template_path: str, local: str) -> str:
    return f"{template_path}.{local}" if template_path else local


def _patches(trainjob: dict) -> Iterator[tuple[str, str, dict]]:
    """``(replicated job name, path, pod template patch)`` of a TrainJob: Trainer v2.3's
    spec.runtimePatches and the older spec.podTemplateOverrides."""
    for patch in job_patches(trainjob):
        if patch.template:
            yield str(patch.name if patch.name is not None else ""), patch.template_path, patch.template
    spec = as_dict(trainjob.get("spec"))
    for i, override in enumerate(as_list(spec.get("podTemplateOverrides"))):
        override = as_dict(override)
        for target in as_list(override.get("targetJobs")):
            yield (str(as_dict(target).get("name", "")), f"spec.podTemplateOverrides[{i}]",
                   {"metadata": override.get("metadata"), "spec": override.get("spec")})


def _merge(base: dict, patch: dict, patch_path: str) -> tuple[dict, dict[str, str]]:
    """The runtime's pod template with a TrainJob patch applied as Trainer applies it (pod fields and
    securityContext replaced, volumes appended, containers patched by name), and which local paths
    came from the patch (local path -> the patch's path)."""
    merged = copy.deepcopy(base)
    if not isinstance(merged.get("spec"), dict):
        merged["spec"] = {}
    spec = merged["spec"]
    pspec = as_dict(patch.get("spec"))
    origin: dict[str, str] = {}
    if "securityContext" in pspec:
        spec["securityContext"] = {**as_dict(spec.get("securityContext")), **as_dict(pspec["securityContext"])}
        for key in as_dict(pspec["securityContext"]):   # only what the patch sets is the TrainJob's doing
            origin[f"spec.securityContext.{key}"] = f"{patch_path}.spec.securityContext.{key}"
    for key in ("serviceAccountName", "automountServiceAccountToken", "hostNetwork", "hostPID", "hostIPC"):
        if key in pspec:
            spec[key] = pspec[key]
            origin[f"spec.{key}"] = f"{patch_path}.spec.{key}"
    volumes = as_list(spec.get("volumes"))
    for j, volume in enumerate(as_list(pspec.get("volumes"))):
        origin[f"spec.volumes[{len(volumes)}]"] = f"{patch_path}.spec.volumes[{j}]"
        volumes = [*volumes, volume]
    if volumes:
        spec["volumes"] = volumes
    for field_name in ("initContainers", "containers"):
        mine = as_list(spec.get(field_name))
        for j, cpatch in enumerate(as_list(pspec.get(field_name))):
            cpatch = as_dict(cpatch)
            index = next((k for k, c in enumerate(mine) if as_dict(c).get("name") == cpatch.get("name")), None)
            if index is None or "securityContext" not in cpatch:
                continue
            container = as_dict(mine[index])
            mine[index] = {**container, "securityContext": {**as_dict(container.get("securityContext")),
                                                            **as_dict(cpatch["securityContext"])}}
            for key in as_dict(cpatch["securityContext"]):
                origin[f"spec.{field_name}[{index}].securityContext.{key}"] = \
                    f"{patch_path}.spec.{field_name}[{j}].securityContext.{key}"
    pmeta = as_dict(patch.get("metadata"))
    if as_dict(pmeta.get("annotations")):
        m = merged.setdefault("metadata", {})
        m["annotations"] = {**as_dict(m.get("annotations")), **pmeta["annotations"]}
        for key in pmeta["annotations"]:
            origin[f"metadata.annotations.{key}"] = f"{patch_path}.metadata.annotations.{key}"
    return merged, origin


def _from_patch(local: str, origin: dict[str, str]) -> str | None:
    for prefix, target in origin.items():
        if local == prefix or local.startswith(prefix + ".") or local.startswith(prefix + "["):
            return target + local[len(prefix):]
    return None


def _templates(obj: dict, ctx: CheckContext) -> Iterator[tuple[str, dict, dict[str, str] | None]]:
    """``(template path, template, origin)``; origin is None for an object's own templates and maps
    the merged fields of a TrainJob to the patch that set them."""
    for path, template in pod_templates(obj):
        yield path, template, None
    if obj.get("kind") != "TrainJob" or not str(obj.get("apiVersion", "")).startswith("trainer.kubeflow.org/"):
        return
    patches = list(_patches(obj))
    if not patches:
        return
    runtime = find_runtime(obj, ctx.manifests)
    jobs = {str(as_dict(rj).get("name", "")): rj for rj in replicated_jobs(runtime)} if runtime else {}
    for name, path, patch in patches:
        base = as_dict(as_dict(as_dict(as_dict(jobs.get(name)).get("template")).get("spec")).get("template"))
        merged, origin = _merge(base, patch, path)
        yield path, merged, origin


def _run(obj: dict, ctx: CheckContext, hits, what: str, advice: str) -> Iterator[Finding]:
    if str(meta(obj).get("namespace")) in set(ctx.config.get("exemptNamespaces") or []):
        return
    skip = set(ctx.config.get("skipControls") or [])
    for template_path, template, origin in _templates(obj, ctx):
        for hit in hits(obj, template, ctx.config):
            if hit.control in skip:
                continue
            if origin is None:
                path = _full(template_path, hit.path)
            else:
                path = _from_patch(hit.path, origin)
                if path is None:   # the runtime's own field: reported on the runtime
                    continue
            yield Finding(path, f"{where(obj, path)}: {what} control {hit.control!r}: {hit.message}. {advice}")


def _baseline(obj: dict, ctx: CheckContext) -> Iterator[Finding]:
    yield from _run(obj, ctx, baseline_hits, "Pod Security Standards Baseline",
                    "Remove the setting, or list the exception in the rule's allow-lists in "
                    "policies/config.<stack>.json if the workload really needs it.")


def _restricted(obj: dict, ctx: CheckContext) -> Iterator[Finding]:
    yield from _run(obj, ctx, restricted_hits, "Pod Security Standards Restricted", "")


_CONTROL_LIST = {"type": "array", "items": {"type": "string", "minLength": 1}}
_EXEMPT_NAMESPACES = {**_CONTROL_LIST, "default": ["kube-system"],
                      "description": "Namespaces whose pods are not judged (node agents, CNI, device plugins)."}

RULES = (
    Rule(
        id=BASELINE,
        description="Every pod template (Pods, Deployments and other core workloads, Volcano Jobs, CronJobs and "
                    "JobFlow JobTemplates, Kubeflow v1 jobs, JobSets, (Cluster)TrainingRuntimes, TrainJobs after "
                    "their runtime patches) meets the Kubernetes Pod Security Standards Baseline profile: no "
                    "privileged containers, host namespaces, hostPath volumes, added capabilities, hostPorts, "
                    "unmasked /proc, unsafe sysctls, AppArmor/SELinux/seccomp overrides or Windows HostProcess, "
                    "beyond the stack's allow-lists.",
        why="Each Baseline control stops a known escape from the container to the node; a training pod is "
            "scheduled onto GPU nodes that hold every other team's data and credentials. Checkov and kube-linter "
            "do not read Volcano, JobFlow, Trainer or JobSet templates, and namespace-level Pod Security "
            "Admission judges them only at pod creation, long after the manifest was merged.",
        fix="Remove the setting. RDMA needs only capabilities.add [IPC_LOCK] (allowed by default); host "
            f"networking is allowed with the {HOST_NETWORK_ANNOTATION}: \"true\" opt-in; list any other real need "
            "in the rule's allow-lists in policies/config.<stack>.json.",
        severity="high", enforcement=MANDATORY, check=_baseline,
        config_schema={
            "exemptNamespaces": _EXEMPT_NAMESPACES,
            "allowedCapabilities": {**_CONTROL_LIST, "default": BASELINE_CAPABILITIES,
                                    "description": "Capabilities a container may add (Baseline's list plus "
                                                   "IPC_LOCK for RDMA)."},
            "allowedHostPaths": {**_CONTROL_LIST, "default": [],
                                 "description": "hostPath prefixes pods may mount (e.g. /dev/infiniband)."},
            "allowedHostPorts": {"type": "array", "items": {"type": "integer", "minimum": 1, "maximum": 65535},
                                 "default": [], "description": "hostPorts containers may bind."},
            "allowedSysctls": {**_CONTROL_LIST, "default": SAFE_SYSCTLS,
                               "description": "Sysctls pods may set (Baseline's safe set)."},
            "hostNetworkOptIn": {"type": "boolean", "default": True,
                                 "description": f"hostNetwork: true is allowed where the object or its pod template "
                                                f"carries {HOST_NETWORK_ANNOTATION}: \"true\" (host-network "
                                                "runtimes for RDMA without SR-IOV)."},
            "skipControls": {**_CONTROL_LIST, "default": [],
                             "description": "Controls not judged: hostProcess, hostNamespaces, privileged, "
                                            "capabilities, hostPathVolumes, hostPorts, appArmor, seLinux, procMount, "
                                            "seccomp, sysctls."},
        }),
    Rule(
        id=RESTRICTED,
        description="Every pod template also follows the Restricted profile: allowPrivilegeEscalation: false, "
                    "capabilities drop ALL (adding back only NET_BIND_SERVICE and IPC_LOCK), a RuntimeDefault or "
                    "Localhost seccomp profile, runAsNonRoot where the stack asks for it; and pods that name no "
                    "service account of their own "
                    "do not mount its API token.",
        why="These settings turn a container compromise into a contained one: no setuid escalation, no kernel "
            "attack surface beyond the runtime's seccomp filter, no capabilities beyond need, and no API token "
            "for pods that never call the API server.",
        fix="Set securityContext {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}} on each container, "
            "seccompProfile {type: RuntimeDefault} and automountServiceAccountToken: false on the pod, and "
            "runAsNonRoot where the image allows it.",
        severity="medium", enforcement=ADVISORY, check=_restricted,
        config_schema={
            "exemptNamespaces": _EXEMPT_NAMESPACES,
            "allowedCapabilities": {**_CONTROL_LIST, "default": RESTRICTED_CAPABILITIES,
                                    "description": "Capabilities a container may add back after dropping ALL."},
            "requireRunAsNonRoot": {"type": "boolean", "default": False,
                                    "description": "Require runAsNonRoot: true and no runAsUser 0. Off by default: "
                                                   "the PyTorch, NGC and vLLM images run as root and the kubelet "
                                                   "refuses to start them under runAsNonRoot; turn it on where "
                                                   "the images have a non-root USER."},
            "serviceAccountToken": {"type": "boolean", "default": True,
                                    "description": "Flag pods that mount the default service account's token."},
            "skipControls": {**_CONTROL_LIST, "default": [],
                             "description": "Controls not judged: allowPrivilegeEscalation, capabilities, "
                                            "seccompProfile, runAsNonRoot, serviceAccountToken."},
        }),
)
