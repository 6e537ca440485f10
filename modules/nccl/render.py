"""One NCCL ConfigMap per transport profile, in every training namespace."""
from __future__ import annotations

from modules.core.bundle import Resource
from modules.core.context import RenderContext

from . import variables

MODULE = "nccl"
DEBUG_BY_PROFILE = {"development": "INFO", "standard": "WARN", "production": "WARN"}


def configmap_name(profile: str) -> str:
    return f"nccl-{profile}"


def debug_level(ctx: RenderContext) -> str:
    return ctx.section(MODULE).get("debug") or DEBUG_BY_PROFILE[ctx.stack.profile]


def _hca_value(cfg: dict) -> str:
    return ("=" if cfg["exactHcaNames"] else "") + ",".join(cfg["hcas"])


def profile_env(ctx: RenderContext, profile: str) -> dict[str, str]:
    """The variables of one profile, as ConfigMap data (all strings)."""
    cfg = ctx.section(MODULE)
    env: dict[str, object] = {"NCCL_DEBUG": debug_level(ctx)}
    if cfg["debugSubsys"]:
        env["NCCL_DEBUG_SUBSYS"] = cfg["debugSubsys"]
    if cfg["socketIfname"]:
        env["NCCL_SOCKET_IFNAME"] = cfg["socketIfname"]
    if profile in ("infiniband", "roce"):
        env["NCCL_IB_DISABLE"] = 0
        if cfg["hcas"]:
            env["NCCL_IB_HCA"] = _hca_value(cfg)
        env["NCCL_IB_TIMEOUT"] = cfg["ibTimeout"]
        env["NCCL_IB_RETRY_CNT"] = cfg["ibRetryCount"]
        env["NCCL_IB_QPS_PER_CONNECTION"] = cfg["qpsPerConnection"]
        env["NCCL_CROSS_NIC"] = cfg["crossNic"]
        if "gdrLevel" in cfg:
            env["NCCL_NET_GDR_LEVEL"] = cfg["gdrLevel"]
    if profile == "roce":
        env["NCCL_IB_GID_INDEX"] = cfg["gidIndex"]
        if "trafficClass" in cfg:
            env["NCCL_IB_TC"] = cfg["trafficClass"]
    if profile == "ethernet":
        env["NCCL_IB_DISABLE"] = 1
        env["NCCL_SOCKET_NTHREADS"] = cfg["socketThreads"]
        env["NCCL_NSOCKS_PERTHREAD"] = cfg["socketsPerThread"]
    if profile == "nvlink-only":  # single-node jobs: no network transport at all
        env["NCCL_IB_DISABLE"] = 1
        env["NCCL_P2P_LEVEL"] = "NVL"
    if "nthreads" in cfg:
        env["NCCL_NTHREADS"] = cfg["nthreads"]
    env.update(cfg["env"])
    return {k: str(v) for k, v in env.items()}


def host_socket_ifname(ctx: RenderContext) -> str:
    """NCCL_SOCKET_IFNAME for host-network pods ("" = the ConfigMap's value applies)."""
    return ctx.section(MODULE)["hostSocketIfname"]


def _check_ifnames(ctx: RenderContext) -> None:
    cfg = ctx.section(MODULE)
    for path in ("socketIfname", "hostSocketIfname"):   # NCCL's syntax first
        for _, problem in variables.problems({"NCCL_SOCKET_IFNAME": cfg[path]} if cfg[path] else {}):
            raise ctx.error(f"nccl.{path}", problem, rule="nccl-env-valid")
    problem = variables.pod_ifname_problem(cfg["socketIfname"]) if cfg["socketIfname"] else None
    if problem:   # the ConfigMaps serve every pod of the namespace, most of them not host-network
        raise ctx.error("nccl.socketIfname", f"{problem}. Use a name the pods have (=eth0, eth) or an exclusion "
                        "(^lo,docker), and put host names in nccl.hostSocketIfname for host-network runtimes",
                        rule="nccl-ifname-pod-network")


def _check_names(ctx: RenderContext) -> None:
    """nccl.env holds NCCL variables only, by their exact upper-case names."""
    for name in ctx.section(MODULE)["env"]:
        problem = None if name in variables.NOT_SETTINGS else variables.name_problem(name)
        if problem:   # (names people copy from blog posts get their own message from _check)
            raise ctx.error(f"nccl.env.{name}", problem, rule="nccl-env-valid")


def _check(ctx: RenderContext, env: dict[str, str]) -> None:
    cfg = ctx.section(MODULE)
    for name, problem in variables.problems(env):
        where = f"nccl.env.{name}" if name in cfg["env"] else "nccl"
        raise ctx.error(where, problem, rule="nccl-env-valid")
    for name in ("NCCL_ALGO", "NCCL_PROTO"):
        if name in env:
            ctx.warn(f"{ctx.stack.file}: trainstack:nccl.env.{name}: {name}={env[name]}: "
                     + variables.ALGO_OVERRIDE_WARNING)


def render(ctx: RenderContext) -> list[Resource]:
    cfg = ctx.section(MODULE)
    if cfg["transport"] not in cfg["profiles"]:
        raise ctx.error("nccl.profiles", f"expected the list to include the transport "
                        f"{cfg['transport']!r}, got {cfg['profiles']}")
    _check_ifnames(ctx)
    _check_names(ctx)
    out = []
    for profile in cfg["profiles"]:
        data = profile_env(ctx, profile)
        _check(ctx, data)
        for namespace in ctx.stack.values["trainingNamespaces"]:
            meta = ctx.metadata(MODULE, configmap_name(profile), namespace,
                                labels={"trainstack.io/nccl-profile": profile})
            out.append(Resource(module=MODULE, obj={"apiVersion": "v1", "kind": "ConfigMap",
                                                    "metadata": meta, "data": dict(sorted(data.items()))}))
    return out
