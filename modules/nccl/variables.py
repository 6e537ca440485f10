"""The NCCL environment variables trainstack knows, and what values each accepts.

One table serves the renderer (stack values are refused early with an InputError) and the
``nccl-env-valid`` policy (user manifests and ConfigMaps). Facts: NCCL 2.30's documented variables and its src/debug.cc.
"""
from __future__ import annotations

import re
from typing import Callable, Mapping

from modules.core.vocabulary.go import atoi, is_ascii_digits

Check = Callable[[str], "str | None"]   # returns what was expected, or None when the value is fine


def _int_range(lo: int, hi: int | None = None) -> Check:
    def check(value: str) -> str | None:
        try:
            number = int(value)
        except ValueError:
            return f"an integer {lo}-{hi}" if hi is not None else f"an integer >= {lo}"
        if number < lo or (hi is not None and number > hi):
            return f"an integer {lo}-{hi}" if hi is not None else f"an integer >= {lo}"
        return None
    return check


def _one_of(*options: str, case: bool = True) -> Check:
    allowed = set(options) if case else {o.upper() for o in options}

    def check(value: str) -> str | None:
        v = value if case else value.upper()
        return None if v in allowed else "one of " + ", ".join(options)
    return check


def _flag(value: str) -> str | None:
    return None if value in ("0", "1") else "0 or 1"


def _any_text(value: str) -> str | None:
    return None if value.strip() else "a non-empty value"


def _path(value: str) -> str | None:
    return None if value.strip() else "a file path"


_LEVELS = ("LOC", "PIX", "PXB", "PHB", "SYS")


def _level(*names: str) -> Check:
    def check(value: str) -> str | None:
        if value.upper() in names:
            return None
        if is_ascii_digits(value):  # legacy integer levels 0-4 (larger means SYS)
            return None
        return "one of " + ", ".join(names) + " (or a legacy integer level)"
    return check


_ALGOS = ("ring", "tree", "collnetchain", "collnetdirect", "nvls", "nvlstree", "pat")
_PROTOS = ("ll", "ll128", "simple")
_FUNCS = ("allreduce", "allgather", "reducescatter", "broadcast", "reduce", "sendrecv", "alltoall")


def _token_list(tokens: tuple[str, ...], what: str) -> Check:
    """``Ring,Tree`` or ``^Tree``; since NCCL 2.24 also ``allreduce:tree;allgather:ring``."""
    def check(value: str) -> str | None:
        for part in value.split(";"):
            func, sep, body = part.rpartition(":")
            if sep and func.strip().lower() not in _FUNCS:
                return f"{what} names, optionally per function (allreduce:ring;allgather:^nvls)"
            body = body.strip().lstrip("^")
            names = [t.strip().lower() for t in body.split(",")]
            if not body or any(n not in tokens for n in names):
                return f"a comma list of {what} names: " + ", ".join(tokens)
        return None
    return check


_HCA_ENTRY = re.compile(r"^[A-Za-z0-9_.-]+(:[0-9]+){0,3}\Z")


def _hca_list(value: str) -> str | None:
    body = value.lstrip("^").lstrip("=")
    entries = body.split(",")
    if not body or len(entries) > 32 or not all(_HCA_ENTRY.match(e) for e in entries):
        return "an HCA list such as =mlx5_0:1,mlx5_1:1 (optional ^ to exclude, = for exact names)"
    return None


_IFNAME_ENTRY = re.compile(r"^[A-Za-z0-9_.:@-]+\Z")


def _ifname_list(value: str) -> str | None:
    body = value.lstrip("^").lstrip("=")
    if not body or not all(_IFNAME_ENTRY.match(e) for e in body.split(",")):
        return "interface name prefixes such as eth, =eth0 or ^docker,lo"
    return None


def _nthreads(value: str) -> str | None:
    return None if value in ("64", "128", "256", "512") else "one of 64, 128, 256, 512"


def _subsys(value: str) -> str | None:
    known = {"INIT", "COLL", "P2P", "SHM", "NET", "GRAPH", "TUNING", "ENV", "ALLOC", "ALLOC_HOST", "CALL",
             "PROXY", "NVLS", "BOOTSTRAP", "REG", "PROFILE", "RAS", "DESTROY", "ALL"}
    names = [n.strip().lstrip("^").upper() for n in value.split(",")]
    if names and all(n in known for n in names):
        return None
    return "a comma list of subsystems: " + ", ".join(sorted(known))


def _netdevs(value: str) -> str | None:
    return None if value in ("AUTO", "ALL") or re.fullmatch(r"MAX:[0-9]+", value) else "AUTO, ALL or MAX:<n>"


def _bytes(value: str) -> str | None:
    return None if (atoi(value) or 0) > 0 else "a positive number of bytes"


VARIABLES: dict[str, Check] = {
    "NCCL_ALGO": _token_list(_ALGOS, "algorithm"),
    "NCCL_PROTO": _token_list(_PROTOS, "protocol"),
    "NCCL_IB_HCA": _hca_list,
    "NCCL_IB_GID_INDEX": _int_range(-1, 255),
    "NCCL_IB_ADDR_FAMILY": _one_of("AF_INET", "AF_INET6"),
    "NCCL_IB_ADDR_RANGE": _any_text,
    "NCCL_IB_ROCE_VERSION_NUM": _one_of("1", "2"),
    "NCCL_IB_TIMEOUT": _int_range(0, 31),
    "NCCL_IB_RETRY_CNT": _int_range(0, 7),
    "NCCL_IB_QPS_PER_CONNECTION": _int_range(1, 128),
    "NCCL_IB_SPLIT_DATA_ON_QPS": _flag,
    "NCCL_IB_SL": _int_range(0, 15),
    "NCCL_IB_TC": _int_range(0, 255),
    "NCCL_IB_FIFO_TC": _int_range(0, 255),
    "NCCL_IB_DISABLE": _flag,
    "NCCL_IB_ADAPTIVE_ROUTING": _flag,
    "NCCL_IB_PCI_RELAXED_ORDERING": _int_range(0, 2),
    "NCCL_IB_MERGE_NICS": _flag,
    "NCCL_NET_GDR_LEVEL": _level(*_LEVELS),
    "NCCL_P2P_LEVEL": _level("LOC", "NVL", "PIX", "PXB", "PHB", "SYS"),
    "NCCL_NET_GDR_READ": _flag,
    "NCCL_NET_GDR_C2C": _flag,
    "NCCL_SOCKET_IFNAME": _ifname_list,
    "NCCL_SOCKET_FAMILY": _one_of("AF_INET", "AF_INET6"),
    "NCCL_SOCKET_NTHREADS": _int_range(1, 16),
    "NCCL_NSOCKS_PERTHREAD": _int_range(1, 64),
    "NCCL_SOCKET_RETRY_CNT": _int_range(0),
    "NCCL_SOCKET_RETRY_SLEEP_MSEC": _int_range(0),
    "NCCL_SOCKET_POLL_TIMEOUT_MSEC": _int_range(0),
    "NCCL_DEBUG": _one_of("VERSION", "WARN", "INFO", "TRACE", case=False),   # strcasecmp in src/debug.cc
    "NCCL_DEBUG_SUBSYS": _subsys,
    "NCCL_DEBUG_FILE": _path,
    "NCCL_MIN_CTAS": _int_range(1, 64),
    "NCCL_MAX_CTAS": _int_range(1, 64),
    "NCCL_MIN_NCHANNELS": _int_range(1, 64),
    "NCCL_MAX_NCHANNELS": _int_range(1, 64),
    "NCCL_MIN_NRINGS": _int_range(1, 64),    # legacy aliases of the NCHANNELS pair, still read (graph/connect.cc)
    "NCCL_MAX_NRINGS": _int_range(1, 64),
    "NCCL_NTHREADS": _nthreads,
    "NCCL_BUFFSIZE": _bytes,
    "NCCL_P2P_DISABLE": _flag,
    "NCCL_SHM_DISABLE": _flag,
    "NCCL_CROSS_NIC": _one_of("0", "1", "2"),
    "NCCL_NET": _any_text,
    "NCCL_NET_PLUGIN": _any_text,
    "NCCL_TUNER_PLUGIN": _any_text,
    "NCCL_PROFILER_PLUGIN": _any_text,
    "NCCL_TOPO_FILE": _path,
    "NCCL_TOPO_DUMP_FILE": _path,
    "NCCL_GRAPH_FILE": _path,
    "NCCL_GRAPH_DUMP_FILE": _path,
    "NCCL_COLLNET_ENABLE": _flag,
    "NCCL_COLLNET_NODE_THRESHOLD": _int_range(1),
    "NCCL_NVLS_ENABLE": _one_of("0", "1", "2"),
    "NCCL_MNNVL_ENABLE": _one_of("0", "1", "2"),
    "NCCL_PXN_DISABLE": _flag,
    "NCCL_P2P_PXN_LEVEL": _int_range(0, 2),
    "NCCL_NVB_DISABLE": _flag,
    "NCCL_CUMEM_ENABLE": _flag,
    "NCCL_NETDEVS_POLICY": _netdevs,
    "NCCL_RAS_ENABLE": _flag,
    "NCCL_RUNTIME_CONNECT": _flag,
}

# Names people copy from blog posts that NCCL never reads, with what to use instead.
NOT_SETTINGS = {
    "nrings": "NCCL_MIN_CTAS / NCCL_MAX_CTAS",
    "crossNic": "NCCL_CROSS_NIC (0, 1 or 2)",
    "socketTimeout": "NCCL_SOCKET_RETRY_CNT / NCCL_IB_TIMEOUT, or init_process_group(timeout=...)",
    "NCCL_RINGS": "NCCL_MIN_CTAS / NCCL_MAX_CTAS (NCCL_RINGS is not read since 2.4)",
    "NCCL_IB_GDR_LEVEL": "NCCL_NET_GDR_LEVEL (renamed in NCCL 2.4.0)",
    "NCCL_SOCKET_TIMEOUT": "NCCL_SOCKET_RETRY_CNT and NCCL_SOCKET_RETRY_SLEEP_MSEC",
}

ALGO_OVERRIDE_WARNING = (
    "forcing NCCL_ALGO/NCCL_PROTO is a debugging setting: with Tree forced, AllGather and "
    "ReduceScatter find no algorithm (they support only PAT, Ring, NVLS and CollnetDirect) and fail "
    "with ncclInvalidUsage, and forcing Tree/LL disables NVLS on NVSwitch nodes")


_NAME = re.compile(r"NCCL_[A-Z0-9_]+")


def name_problem(name: str) -> str | None:
    """Why ``name`` (a key of trainstack:nccl.env) is not an NCCL variable name, or None. NCCL reads
    upper-case ``NCCL_`` names exactly (getenv), so ``nccl_debug`` is never read; a case mistake gets
    a did-you-mean."""
    if _NAME.fullmatch(name):
        return None
    upper = name.upper().replace("-", "_")
    guesses = [g for g in (upper, f"NCCL_{upper}") if g in VARIABLES]
    if not guesses:
        import difflib   # only a mistake needs it

        guesses = difflib.get_close_matches(upper if upper.startswith("NCCL_") else f"NCCL_{upper}",
                                            list(VARIABLES), n=1, cutoff=0.8)
    hint = f"; did you mean {guesses[0]!r}?" if guesses else ""
    return (f"expected an upper-case NCCL_ variable name, got {name!r}: NCCL reads its environment by exact "
            f"name, so {name} would be set but never read{hint}")


def problems(env: Mapping[str, object]) -> list[tuple[str, str]]:
    """``[(variable, what is wrong)]`` for an NCCL environment (ConfigMap data or container env)."""
    out: list[tuple[str, str]] = []
    for name in env:
        value = env[name]
        text = str(value) if not isinstance(value, str) else value
        if name in NOT_SETTINGS:
            out.append((name, f"{name} is not an NCCL setting; use {NOT_SETTINGS[name]}"))
            continue
        if not name.startswith("NCCL_"):
            continue  # not ours to judge (TORCH_*, OMP_*, ...)
        check = VARIABLES.get(name)
        if check is None:
            out.append((name, f"{name} is not a known NCCL variable (NCCL 2.30)"))
            continue
        wanted = check(text.strip())
        if wanted:
            out.append((name, f"{name} expects {wanted}, got {text!r}"))
    threads, socks = env.get("NCCL_SOCKET_NTHREADS"), env.get("NCCL_NSOCKS_PERTHREAD")
    try:
        if threads is not None and socks is not None and int(str(threads)) * int(str(socks)) > 64:
            out.append(("NCCL_NSOCKS_PERTHREAD", "NCCL_SOCKET_NTHREADS x NCCL_NSOCKS_PERTHREAD must be <= 64, "
                        f"got {threads} x {socks}"))
    except ValueError:
        pass  # already reported above
    return out


# Interfaces a pod that is not host-network has in its own network namespace: eth0 from the
# primary CNI, net1, net2, ... (or eth1, ...) from multi-NIC CNIs such as Multus. Host names such
# as bond0, ens3 or ib0 do not exist there (review of 2026-11-23).
_POD_INTERFACE = re.compile(r"(eth|net)[0-9]+")
POD_INTERFACE_EXAMPLES = ("eth0", "net1")


def pod_ifname_problem(value: object, extra: tuple[str, ...] = ()) -> str | None:
    """Why NCCL_SOCKET_IFNAME ``value`` matches no interface of a pod in its own network namespace,
    or None. NCCL's syntax: a comma list of prefixes, ``=`` for exact names, ``^`` to exclude.
    Exclusions always leave the pod's own interfaces; ``extra`` names interfaces the CNI adds."""
    text = str(value).strip()
    if not text or text.startswith("^"):
        return None
    exact = text.startswith("=")
    names = [n.strip() for n in text.lstrip("=").split(",") if n.strip()]

    def exists(name: str) -> bool:
        if name in extra or _POD_INTERFACE.fullmatch(name):
            return True
        # a prefix matches any pod interface that starts with it (eth, et, net, ...)
        return not exact and any(known.startswith(name) for known in (*POD_INTERFACE_EXAMPLES, *extra))

    missing = [n for n in names if not exists(n)]
    if not missing or len(missing) < len(names):
        return None   # NCCL uses the first listed interface that exists
    kind = "exact interface name(s)" if exact else "interface prefix(es)"
    return (f"NCCL_SOCKET_IFNAME={text} lists {kind} {', '.join(missing)}, which match no interface of a pod in "
            "its own network namespace (it has eth0, plus netN/ethN a multi-NIC CNI adds): host interface names "
            "exist only with hostNetwork, so NCCL bootstrap fails with \"no socket interface found\"")
