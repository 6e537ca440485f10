"""NCCL variables must be real NCCL settings with valid values, and sane for production."""
from __future__ import annotations

from typing import Callable, Iterator

from modules.nccl import variables

from ..framework import (ADVISORY, MANDATORY, CheckContext, Finding, Rule, as_dict, as_list, containers, labels,
                         meta, pod_templates, where)
from modules.semantics.workloads import find_runtime, job_patches

PROFILE_LABEL = "trainstack.io/nccl-profile"


def _env_of(items: object) -> dict[str, object]:
    """Literal values of a container-style env list (valueFrom entries are not ours to judge)."""
    out: dict[str, object] = {}
    for item in as_list(items):
        if isinstance(item, dict) and "name" in item and "value" in item:
            out[str(item["name"])] = item["value"]
    return out


def nccl_environments(obj: dict) -> Iterator[tuple[str, dict[str, object], bool]]:
    """``(path, variables, is_configmap)`` for every place an object sets NCCL variables: NCCL
    ConfigMaps, container env in every pod template, a TrainJob's trainer.env and runtimePatches."""
    if obj.get("kind") == "ConfigMap":
        data = as_dict(obj.get("data"))
        if PROFILE_LABEL in labels(obj) or any(str(k).startswith("NCCL_") or k in variables.NOT_SETTINGS for k in data):
            yield "data", data, True
        return
    for template_path, template in pod_templates(obj):
        for path, container in containers(template, template_path):
            yield f"{path}.env", _env_of(container.get("env")), False
    if obj.get("kind") == "TrainJob":
        spec = as_dict(obj.get("spec"))
        yield "spec.trainer.env", _env_of(as_dict(spec.get("trainer")).get("env")), False
        for patch in job_patches(obj):   # init containers and containers alike
            for path, env in patch.envs():
                yield path, _env_of(env), False


def _at(path: str, name: str, configmap: bool) -> str:
    return f"{path}.{name}" if configmap else f"{path}[{name}]"


def _nccl_env_valid(obj: dict, ctx: CheckContext) -> Iterator[Finding]:
    for path, env, configmap in nccl_environments(obj):
        for name, problem in variables.problems(env):
            at = _at(path, name, configmap)
            yield Finding(at, f"{where(obj, at)}: {problem}. NCCL ignores or replaces such a value at run time "
                          "without failing the job (NCCL_NTHREADS=4 silently becomes 512), so the setting only hides "
                          "a mistake. Fix the value or remove the variable (see modules/nccl/variables.py; "
                          "trainstack:nccl renders valid profiles).")


def _nccl_debug_production(obj: dict, ctx: CheckContext) -> Iterator[Finding]:
    if not ctx.production:
        return
    flagged = {str(level).upper() for level in ctx.config.get("levels") or ("INFO", "TRACE")}
    for path, env, configmap in nccl_environments(obj):
        value = env.get("NCCL_DEBUG")
        if value is not None and str(value).strip().upper() in flagged:
            at = _at(path, "NCCL_DEBUG", configmap)
            yield Finding(at, f"{where(obj, at)}: NCCL_DEBUG={value} in a production stack: every rank logs its "
                          "topology detection, every connection and (with TRACE) every call, which floods logs "
                          "at thousands of ranks and slows start-up. Use WARN in production (trainstack:nccl.debug) "
                          "and raise it only while debugging one job.")


IFNAME = "NCCL_SOCKET_IFNAME"


def _ifname_configmaps(manifests: list[dict]) -> dict[str, list[tuple[str | None, dict]]]:
    """ConfigMap name -> ``[(namespace, data)]`` of the checked ConfigMaps with a key that ends in
    NCCL_SOCKET_IFNAME's tail (an envFrom prefix may supply the rest)."""
    out: dict[str, list[tuple[str | None, dict]]] = {}
    for obj in manifests:
        data = as_dict(obj.get("data"))
        if obj.get("kind") == "ConfigMap" and any(IFNAME.endswith(str(key)) for key in data):
            out.setdefault(str(meta(obj).get("name")), []).append((meta(obj).get("namespace"), data))
    return out


def _container_ifnames(container: dict, cpath: str, namespace: str | None,
                       configmaps: Callable[[], dict]) -> Iterator[tuple[str, str, str]]:
    """``(field path, value, where it comes from)`` of the NCCL_SOCKET_IFNAME a container gets: its own
    env wins over envFrom (the last envFrom source that sets it wins among those). An envFrom entry
    names each key ``prefix + key``."""
    env = _env_of(container.get("env"))
    if IFNAME in env:
        yield f"{cpath}.env[{IFNAME}]", str(env[IFNAME]), "its env"
        return
    found = None
    for i, source in enumerate(as_list(container.get("envFrom"))):
        prefix = str(as_dict(source).get("prefix") or "")
        if not IFNAME.startswith(prefix):
            continue
        key = IFNAME[len(prefix):]
        name = as_dict(as_dict(source).get("configMapRef")).get("name")
        for home, data in configmaps().get(str(name), ()):
            if key in data and (namespace is None or home in (None, namespace)):
                found = (f"{cpath}.envFrom[{i}].configMapRef.name", str(data[key]),
                         f"ConfigMap {str(home) + '/' if home else ''}{name}")
                break
    if found:
        yield found


def _nccl_ifname_pod_network(obj: dict, ctx: CheckContext) -> Iterator[Finding]:
    extra = tuple(str(n) for n in ctx.config.get("podInterfaces") or ())
    # Only a container with envFrom consults the other objects: a HyperNode or a ConfigMap judged
    # alone must not build the whole context (the pack judges one object per call).
    def configmaps() -> dict:
        return ctx.remember("nccl-ifname-configmaps", lambda: _ifname_configmaps(ctx.manifests or [obj]))
    namespace = meta(obj).get("namespace") if obj.get("kind") != "ClusterTrainingRuntime" else None
    checks: list[tuple[str, str, str]] = []
    if obj.get("kind") == "TrainJob":   # its trainer.env lands in the runtime's pods (never host-network here)
        runtime = find_runtime(obj, ctx.manifests)
        if runtime is not None and any(as_dict(t.get("spec")).get("hostNetwork") for _, t in pod_templates(runtime)):
            return
        for path, env, _ in nccl_environments(obj):
            if IFNAME in env and not path.startswith("spec.template"):
                checks.append((f"{path}[{IFNAME}]", str(env[IFNAME]), "its env"))
    for template_path, template in pod_templates(obj):
        if as_dict(template.get("spec")).get("hostNetwork"):
            continue   # host-network pods see the host's interfaces
        for cpath, container in containers(template, template_path):
            checks.extend(_container_ifnames(container, cpath, namespace, configmaps))
    for path, value, source in checks:
        problem = variables.pod_ifname_problem(value, extra)
        if problem:
            yield Finding(path, f"{where(obj, path)}: its pods are not host-network, and {problem} (the value comes "
                          f"from {source}). Use the pods' own interface (=eth0, eth) or an exclusion (^lo,docker); "
                          "keep host names for host-network pods (trainstack:nccl.hostSocketIfname), or list an "
                          "interface the CNI adds in the rule's podInterfaces setting.")


def _forces_tree_for_all(value: str) -> bool:
    """NCCL_ALGO that leaves Tree (or only tree-like algorithms) for every collective."""
    for part in value.split(";"):
        func, sep, body = part.rpartition(":")
        if sep:
            continue   # per-function forms only affect the named collective
        names = {t.strip().lower() for t in body.split(",") if t.strip()}
        if not body.strip().startswith("^") and names and names <= {"tree", "collnetchain", "nvlstree"}:
            return True
    return False


def _nccl_algo_override(obj: dict, ctx: CheckContext) -> Iterator[Finding]:
    if ctx.config.get("productionOnly") and not ctx.production:
        return
    for path, env, configmap in nccl_environments(obj):
        for name in ("NCCL_ALGO", "NCCL_PROTO"):
            if name not in env:
                continue
            value = str(env[name])
            at = _at(path, name, configmap)
            tree = name == "NCCL_ALGO" and _forces_tree_for_all(value)
            specific = ("With Tree forced, AllGather and ReduceScatter (the tensor- and sequence-parallel "
                        "collectives) find no algorithm and fail with \"No algorithm/protocol available\" "
                        "(ncclInvalidUsage): they only run on Ring, PAT, NVLS or CollnetDirect. ") if tree else ""
            yield Finding(at, f"{where(obj, at)}: {name}={value} forces NCCL's "
                          f"{'algorithm' if name == 'NCCL_ALGO' else 'protocol'} "
                          f"{'for the named collectives' if ':' in value else 'for every collective'}, a debugging "
                          f"setting NVIDIA says not to use in production. {specific}Forcing Tree or LL also disables "
                          "NVLS on NVSwitch nodes and caps bandwidth far below NVLink. Remove it and let NCCL tune, "
                          "or restrict it to one collective (e.g. allreduce:ring) while debugging.")


RULES = (
    Rule(
        id="nccl-ifname-pod-network",
        description="Pods that are not host-network get an NCCL_SOCKET_IFNAME (own env or NCCL ConfigMap) that "
                    "matches an interface of their own network namespace.",
        why="A pod without hostNetwork has its own network namespace: eth0, plus netN/ethN when a multi-NIC CNI "
            "adds them. An exact host name (=bond0) or a host prefix (ens, bond) matches nothing there, and NCCL "
            "bootstrap fails with \"no socket interface found\" at the first collective.",
        fix="Set NCCL_SOCKET_IFNAME to the pods' interface (=eth0, eth) or an exclusion (^lo,docker); set host "
            "names only for host-network pods (trainstack:nccl.hostSocketIfname).",
        severity="high", enforcement=MANDATORY, check=_nccl_ifname_pod_network,
        config_schema={"podInterfaces": {
            "type": "array", "items": {"type": "string", "minLength": 1}, "default": [],
            "description": "Extra interface names pods have besides eth0/ethN/netN (e.g. ib0 when a CNI adds "
                           "an IPoIB interface)."}},
        config_defaults={"podInterfaces": []}),
    Rule(
        id="nccl-env-valid",
        description="NCCL variables in ConfigMaps, pod environments and TrainJobs are real NCCL settings with values "
                    "NCCL accepts.",
        why="NCCL silently ignores unknown variables and falls back on invalid values (NCCL_NTHREADS=4 logs at INFO "
            "and uses 512), and names like nrings, crossNic or socketTimeout are not settings at all.",
        fix="Use the variable names and ranges listed in modules/nccl/variables.py, or set them through "
            "trainstack:nccl.",
        severity="high", enforcement=MANDATORY, check=_nccl_env_valid),
    Rule(
        id="nccl-debug-production",
        description="NCCL_DEBUG is not INFO or TRACE in a production stack (trainstack:profile production).",
        why="At INFO every rank logs topology detection and every connection, at TRACE every call; at thousands "
            "of ranks that floods the logging pipeline and slows communicator start-up.",
        fix="Set trainstack:nccl.debug to WARN for production and raise it per job while debugging.",
        severity="low", enforcement=ADVISORY, check=_nccl_debug_production,
        config_schema={"levels": {
            "type": "array", "items": {"type": "string", "enum": ["VERSION", "WARN", "INFO", "TRACE"]},
            "default": ["INFO", "TRACE"], "description": "NCCL_DEBUG levels flagged in production."}},
        config_defaults={"levels": ["INFO", "TRACE"]}),
    Rule(
        id="nccl-algo-override",
        description="NCCL_ALGO and NCCL_PROTO are not forced.",
        why="Forced algorithms are debugging settings: with Tree forced, AllGather and ReduceScatter find no "
            "algorithm and fail with ncclInvalidUsage (they support only PAT, Ring, NVLS and CollnetDirect), "
            "Tree/LL caps bandwidth far below NVLink, and it disables NVLS on NVSwitch nodes.",
        fix="Remove NCCL_ALGO/NCCL_PROTO, or restrict the override to one collective (allreduce:ring) while "
            "debugging.",
        severity="medium", enforcement=ADVISORY, check=_nccl_algo_override,
        config_schema={"productionOnly": {
            "type": "boolean", "default": False, "description": "Flag the override only in production stacks."}},
        config_defaults={"productionOnly": False}),
)
