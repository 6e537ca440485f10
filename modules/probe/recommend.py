"""`trainstack recommend`: from probe results to a parallel layout and NCCL settings.

1. Fit, per tier, a latency-bandwidth (alpha-beta) model to the probe's times: for each result,
   time = intra_steps x alpha_node + inter_steps x alpha_tier + S x factor / busbw_tier, where the
   step counts are the ring's (NCCL's tuning model) and S x factor are the bytes every rank moves
   (nccl-tests' busbw definition). Weighted least squares on relative error, so 1 MiB and 1 GiB
   count alike. Tiers without results use the stack's fabric links, and the output says so.
2. Predict all-reduce (ring, double binary tree, two-level hierarchical) and all-gather (ring;
   NCCL has no tree all-gather) times for a gradient size on the stack's fabric, with the formulas
   of NCCL's ring and tree costs (modules/simulate/README.md, "Cost model").
3. Recommend a layout: tensor parallel inside the NVLink domain (the node unless accelerator
   domains say larger) as far as memory needs, pipeline parallel as far as memory needs and then
   across any tier whose bandwidth would throttle the data-parallel all-reduce, data parallel over
   the rest. And NCCL settings, each checked by modules/nccl/variables like the ConfigMaps.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from modules.core import yamlio
from modules.core.config import profile_of
from modules.core.errors import InputError
from modules.fabric.model import Fabric, NodePool
from modules.nccl import variables

from . import measure, results

NCCL_BASE_LATENCY_S = 8.4e-6   # Ring/Simple base latency in NCCL's tuning model (src/graph/tuning.cc)
NODE_TIER_NAME = results.NODE_TIER
BYTES_PER = {"bf16": 2, "fp16": 2, "fp32": 4}
# GPU memory (GB) by model name fragment; the first match wins.
GPU_MEMORY_GB = (("GB300", 288), ("B300", 288), ("GB200", 186), ("B200", 180), ("H200", 141), ("H20", 96),
                 ("H100", 80), ("H800", 80), ("A100-40", 40), ("A100", 80), ("A800", 80), ("L40", 48))
# bf16 weights may take this share of a GPU's memory (rest: grads, optimizer, activations)
WEIGHT_SHARE = 0.25
BANDWIDTH_KEEP = 0.9           # PP takes a tier when DP would keep less than this share of the best bandwidth
MAX_PP = 64


# --- the alpha-beta model -----------------------------------------------------------------------

@dataclass(frozen=True)
class TierModel:
    """The alpha-beta cost of a ring step across one fabric tier."""
    tier: int
    name: str
    alpha_s: float          # latency per ring step crossing this tier
    busbw_gbps: float       # bus bandwidth through this tier (GB/s = 1e9 B/s)
    source: str             # "measured" or "fabric links"
    detail: str = ""

    @property
    def bytes_per_s(self) -> float:
        return self.busbw_gbps * 1e9


def ring_steps(collective: str, ranks: int, nodes: int) -> tuple[int, int]:
    """(intra-node, inter-node) latency steps of NCCL's ring for one operation."""
    if collective == "all_reduce":
        total, inter = 2 * (ranks - 1), 2 * (nodes - 1)
    elif collective == "sendrecv":
        total, inter = 1, 1 if nodes > 1 else 0
    else:   # all_gather, reduce_scatter, broadcast: one pass around the ring
        total, inter = ranks - 1, nodes - 1
    return total - inter, inter


def _wls(rows: list[tuple[float, float, float]]) -> tuple[float, float]:
    """Least squares of y = a*u + b*v without intercept, weighted by 1/y^2 (relative error)."""
    suu = suv = svv = suy = svy = 0.0
    for u, v, y in rows:
        w = 1.0 / (y * y)
        suu, suv, svv = suu + w * u * u, suv + w * u * v, svv + w * v * v
        suy, svy = suy + w * u * y, svy + w * v * y
    det = suu * svv - suv * suv
    if abs(det) <= 1e-12 * max(suu * svv, 1e-300):
        return 0.0, svy / svv if svv else 0.0
    a = (suy * svv - svy * suv) / det
    b = (suu * svy - suv * suy) / det
    if a < 0:   # latency cannot be negative: refit bandwidth alone
        a, b = 0.0, svy / svv
    return a, b


def fit(records: list[dict], alpha_node: float | None) -> tuple[float, float, str]:
    """(alpha per step, busbw GB/s, description) for the records of one tier.

    For tier 0 (one node) every step is intra-node. Above it, the intra-node steps are charged at
    ``alpha_node`` and the fit finds the alpha of the inter-node steps and the busbw."""
    rows = []
    for r in records:
        nodes = int(r.get("nodes") or 1)
        intra, inter = ring_steps(r["collective"], r["world_size"], nodes)
        moved = r["bytes"] * measure.busbw_factor(r["collective"], r["world_size"])
        fixed = intra * (alpha_node or 0.0) if inter else 0.0
        steps = inter if inter else intra
        rows.append((float(steps), moved, r["time_s"] - fixed if r["time_s"] > fixed else r["time_s"]))
    if len({v for _, v, _ in rows}) < 2:
        raise ValueError("needs at least two message sizes")
    alpha, beta = _wls(rows)
    if beta <= 0:
        raise ValueError("times do not grow with message size")
    worst = max(abs((a * alpha + b * beta) - y) / y for a, b, y in rows)
    collectives = ", ".join(sorted({r["collective"] for r in records}))
    ranks = sorted({(r["world_size"], int(r.get("nodes") or 1)) for r in records})
    backends = ", ".join(sorted({str(r.get("backend") or "?") for r in records}))
    shape = "; ".join(f"{w} ranks on {n} node{'s' if n > 1 else ''}" for w, n in ranks)
    detail = (f"fit of {len(rows)} results ({collectives}; {shape}; backend {backends}), "
              f"worst relative error {worst:.0%}")
    return alpha, 1.0 / beta / 1e9, detail


def tier_models(fabric: Fabric, records: list[dict]) -> tuple[dict[int, TierModel], list[str]]:
    """Per-tier models: measured where results exist, else the fabric's links. Also the notes to print."""
    names = {0: NODE_TIER_NAME, **{t: fabric.tier_names.get(t, f"tier-{t}") for t in fabric.tiers}}
    notes: list[str] = []
    grouped: dict[int, list[dict]] = {}
    for r in records:
        tier = results.tier_number(r, names)
        if tier not in names:
            notes.append(f"results for tier {r['tier']!r} ignored: the stack's tiers are {', '.join(names.values())}")
            continue
        grouped.setdefault(tier, []).append(r)
    fits = fit_tiers(grouped, fabric.link(0).latency_us * 1e-6)
    models: dict[int, TierModel] = {}
    for tier in sorted(names):
        link = fabric.link(tier)
        fitted = fits.get(tier)
        if isinstance(fitted, ValueError):
            notes.append(f"tier {names[tier]}: results not usable ({fitted}); using the fabric's links")
        elif fitted is not None:
            alpha, busbw, detail = fitted
            models[tier] = TierModel(tier, names[tier], alpha, busbw, "measured", detail)
            ratio = busbw / link.bandwidth_gbps
            if ratio < 0.5:
                notes.append(f"tier {names[tier]}: measured busbw {busbw:.3g} GB/s is {ratio:.1%} of the fabric's "
                             f"{link.bandwidth_gbps:g} GB/s link" + _backend_hint(grouped[tier]))
            continue
        models[tier] = TierModel(tier, names[tier], link.latency_us * 1e-6, link.bandwidth_gbps, "fabric links",
                                 "no probe results for this tier: trainstack:fabric.links")
    return models, notes


def fit_tiers(grouped: dict[int, list[dict]],
              node_alpha_s: float) -> dict[int, "tuple[float, float, str] | ValueError"]:
    """The one fit of probe results, per tier number: ``(alpha per step, busbw GB/s, description)``,
    or the ValueError that says why a tier's results are not usable. `recommend` and `simulate
    --probe` both read a results file through it, so they print the same figures.

    A tier with all_reduce results is fitted on those alone (the collective the models predict;
    other collectives' implementations differ: gloo's reduce_scatter is far slower than its
    all_reduce). Tiers are fitted from tier 0 up: the intra-node ring steps of a multi-node result
    are charged at tier 0's fitted latency, else at ``node_alpha_s`` (the fabric's node link)."""
    out: dict[int, tuple[float, float, str] | ValueError] = {}
    for tier in sorted(grouped):
        measured = grouped[tier]
        if any(r["collective"] == "all_reduce" for r in measured):
            measured = [r for r in measured if r["collective"] == "all_reduce"]
        node = out.get(0)
        alpha_node = node[0] if tier and isinstance(node, tuple) else node_alpha_s
        try:
            out[tier] = fit(measured, alpha_node)
        except ValueError as exc:
            out[tier] = exc
    return out


def _backend_hint(records: list[dict]) -> str:
    if any(r.get("backend") == "gloo" for r in records):
        return " (measured with gloo on CPUs, which says nothing about NVLink or InfiniBand; probe with NCCL)"
    return "; check NCCL_IB_HCA, GPUDirect RDMA and the links of that tier"


# --- spans and collective times -----------------------------------------------------------------

@dataclass(frozen=True)
class Span:
    """How a group of ranks spreads over the fabric: ranks per node, nodes, and ring hops per tier."""

    ranks_per_node: int
    nodes: int
    hops: dict[int, int] = field(default_factory=dict)    # tier -> ring hops crossing exactly that tier
    levels: dict[int, int] = field(default_factory=dict)  # tier -> tree levels combining at that tier

    @property
    def ranks(self) -> int:
        return self.ranks_per_node * self.nodes

    @property
    def top(self) -> int:
        return max(self.hops, default=0)

    def crossed(self) -> list[int]:
        return ([0] if self.ranks_per_node > 1 else []) + sorted(self.hops)


def span(fabric: Fabric, nodes: int, ranks_per_node: int, domain_nodes: dict[int, int] | None = None) -> Span:
    """A group packed into the fewest domains: ``nodes`` nodes fill tier-1 domains, then tier-2, ..."""
    sizes = domain_nodes or {t: fabric.largest_domain(t).nodes for t in fabric.tiers}
    used = {0: nodes}
    hops: dict[int, int] = {}
    levels: dict[int, int] = {}
    if nodes > 1:
        for tier in sorted(sizes):
            used[tier] = math.ceil(nodes / sizes[tier])
            below = used[tier - 1] if tier - 1 in used else nodes
            if used[tier] == 1:
                hops[tier] = below - 1
                levels[tier] = math.ceil(math.log2(below)) if below > 1 else 0
                break
            hops[tier] = below - used[tier]
            levels[tier] = math.ceil(math.log2(math.ceil(below / used[tier])))
        else:
            raise ValueError(f"{nodes} nodes do not fit in the fabric's largest domain")
    return Span(ranks_per_node, nodes, {t: h for t, h in hops.items() if h}, {t: n for t, n in levels.items() if n})


def _bottleneck(s: Span, models: dict[int, TierModel], share: int = 1) -> float:
    """Bus bandwidth (bytes/s) of the slowest tier the group crosses; ``share`` groups per node split
    the node's network bandwidth (not NVLink, which NVSwitch gives every GPU in full)."""
    rates = [models[t].bytes_per_s / (share if t else 1) for t in s.crossed()]
    return min(rates) if rates else math.inf


def allreduce_ring(n: float, s: Span, models: dict[int, TierModel], share: int = 1) -> float:
    if s.ranks < 2:
        return 0.0
    intra = 2 * (s.ranks - 1) - 2 * (s.nodes - 1)
    latency = (NCCL_BASE_LATENCY_S + intra * models[0].alpha_s
               + sum(2 * h * models[t].alpha_s for t, h in s.hops.items()))
    return latency + 2 * (s.ranks - 1) / s.ranks * n / _bottleneck(s, models, share)


def allreduce_tree(n: float, s: Span, models: dict[int, TierModel], share: int = 1) -> float:
    """NCCL's double binary tree: log-depth latency, about 2n/busbw of bandwidth time."""
    if s.ranks < 2:
        return 0.0
    latency = NCCL_BASE_LATENCY_S + 2 * ((s.ranks_per_node - 1) * models[0].alpha_s
                                         + sum(k * models[t].alpha_s for t, k in s.levels.items()))
    return latency + 2 * n / _bottleneck(s, models, share)


def allreduce_hierarchical(n: float, s: Span, models: dict[int, TierModel], share: int = 1,
                           pipelined: bool = False) -> float:
    """Reduce-scatter in the node, all-reduce of the shard across nodes on every rail, all-gather in the node."""
    if s.ranks < 2:
        return 0.0
    g, m = s.ranks_per_node, s.nodes
    intra_bw = models[0].bytes_per_s
    inter_bw = min((models[t].bytes_per_s / share for t in s.hops), default=math.inf)
    latency = NCCL_BASE_LATENCY_S + 2 * (g - 1) * models[0].alpha_s \
        + sum(2 * h * models[t].alpha_s for t, h in s.hops.items())
    intra = 2 * (g - 1) / g * n / intra_bw
    inter = 2 * (m - 1) / m * n / inter_bw if m > 1 else 0.0
    return latency + (max(intra, inter) if pipelined else intra + inter)


def allgather_ring(n_total: float, s: Span, models: dict[int, TierModel], share: int = 1) -> float:
    """Ring all-gather of ``n_total`` gathered bytes (NCCL's only all-gather besides PAT and NVLS)."""
    if s.ranks < 2:
        return 0.0
    intra = (s.ranks - 1) - (s.nodes - 1)
    latency = NCCL_BASE_LATENCY_S + intra * models[0].alpha_s + sum(h * models[t].alpha_s for t, h in s.hops.items())
    return latency + (s.ranks - 1) / s.ranks * n_total / _bottleneck(s, models, share)


def allreduce_times(n: float, s: Span, models: dict[int, TierModel], share: int = 1) -> dict[str, float]:
    return {"ring": allreduce_ring(n, s, models, share), "tree": allreduce_tree(n, s, models, share),
            "hierarchical": allreduce_hierarchical(n, s, models, share, pipelined=True)}


# --- layout -------------------------------------------------------------------------------------

@dataclass
class JobShape:
    """The training job a layout is recommended for: its size, gradient bytes and GPUs."""
    params: float
    grad_bytes_per_param: int
    gpus: int
    gpu_memory_gb: float
    gpu_memory_source: str


@dataclass
class Layout:
    """A parallel layout (tensor, pipeline and data parallel degrees) and why it was chosen."""
    tp: int
    pp: int
    dp: int
    reasons: list[str]


def params_text(params: float) -> str:
    return f"{params / 1e12:g}T" if params >= 1e12 else f"{params / 1e9:g}B"


MAX_MODEL_PARAMS = 1e15   # a thousand times the largest models trained today


def parse_model_size(text: str) -> float:
    """``350M``, ``7B``, ``1.5T`` or ``7e10``. A bare number is refused: ``70`` is far more likely a
    forgotten ``B`` than a 70-parameter model."""
    text = str(text).strip()
    match = re.fullmatch(r"([0-9]+(?:\.[0-9]+)?)\s*([kKmMbBtT])", text)
    if match:
        value = float(match.group(1)) * {"k": 1e3, "m": 1e6, "b": 1e9, "t": 1e12}[match.group(2).lower()]
    elif re.fullmatch(r"[0-9]+(?:\.[0-9]+)?[eE]\+?[0-9]+", text):
        value = float(text)
    else:
        raise ValueError(f"expected a parameter count with a unit such as 350M, 7B, 70B or 1.5T (or 7e10), "
                         f"got {text!r}")
    if not 1 <= value <= MAX_MODEL_PARAMS:   # also inf: 1e400 parses as infinity
        raise ValueError(f"expected a parameter count from 1 to {MAX_MODEL_PARAMS:.0e}, got {text!r}")
    return value


def gpu_memory(pool: NodePool, override: float | None) -> tuple[float, str]:
    if override is not None:
        return override, "--gpu-memory-gb"
    kind = (pool.gpu_type or "").upper()
    for fragment, gb in GPU_MEMORY_GB:
        if fragment in kind:
            return float(gb), f"{pool.gpu_type} in pool {pool.name}"
    return 80.0, f"pool {pool.name} names no known GPU type; assuming 80 GB (pass --gpu-memory-gb)"


def nvlink_domain_gpus(fabric: Fabric, pool: NodePool) -> tuple[int, str]:
    domains: dict[str, int] = {}
    for node in fabric.nodes.values():
        if node.domain and node.pool.name == pool.name:
            domains[node.domain] = domains.get(node.domain, 0) + node.gpus
    if domains and max(domains.values()) > pool.gpus:
        return max(domains.values()), "the fabric's accelerator (NVLink) domains"
    return pool.gpus, "one node; the fabric has no larger accelerator domains"


def _pow2_at_least(x: float) -> int:
    return 1 << max(0, math.ceil(math.log2(max(x, 1))))


def dp_group(fabric: Fabric, g: int, gpus: int, tp: int, pp: int) -> Span:
    """The data-parallel group of one (TP, PP) index: TP innermost, PP outermost (Megatron's order),
    so a pipeline stage is a contiguous block of gpus/pp GPUs and the group spans that block."""
    stage = gpus // pp
    return span(fabric, max(1, math.ceil(stage / g)), max(1, min(g, stage) // tp))


def choose_layout(fabric: Fabric, pool: NodePool, job: JobShape, models: dict[int, TierModel]) -> Layout:
    g = pool.gpus
    reasons: list[str] = []
    weights_gb = job.params * 2 / 1e9
    budget = WEIGHT_SHARE * job.gpu_memory_gb
    domain, domain_why = nvlink_domain_gpus(fabric, pool)
    tp_need = _pow2_at_least(weights_gb / budget)
    tp = min(tp_need, domain, job.gpus)
    while tp > 1 and (job.gpus % tp or (tp > g and tp % g)):
        tp //= 2
    reasons.append(f"TP={tp}: bf16 weights are {weights_gb:.1f} GB; keeping them under {WEIGHT_SHARE:.0%} of "
                   f"{job.gpu_memory_gb:g} GB per GPU ({budget:.1f} GB) needs TP>={tp_need}; TP stays inside the "
                   f"NVLink domain of {domain} GPUs ({domain_why}), where its per-layer all-reduces run at "
                   f"{models[0].busbw_gbps:.3g} GB/s")
    pp_mem = _pow2_at_least(weights_gb / tp / budget)
    pp = pp_mem
    if pp_mem > 1:
        reasons.append(f"PP>={pp_mem}: with TP={tp} each GPU would still hold {weights_gb / tp:.1f} GB of weights")
    # PP across a tier when the data-parallel all-reduce would otherwise cross a slower one: compare
    # the slowest network tier each candidate's data-parallel group crosses (a leaf at least).
    def network_bw(s: Span) -> float:
        leaf = models[1] if 1 in models else models[0]
        return min((models[t].busbw_gbps for t in s.hops), default=leaf.busbw_gbps)

    candidates = []
    p = pp_mem
    while p <= min(MAX_PP, job.gpus // tp):
        if job.gpus % (tp * p) == 0:
            candidates.append((p, dp_group(fabric, g, job.gpus, tp, p)))
        p *= 2
    if not candidates:
        raise ValueError(f"{params_text(job.params)} parameters need TP={tp} x PP>={pp_mem} GPUs by this estimate "
                         f"(bf16 weights under {WEIGHT_SHARE:.0%} of each GPU's memory), more than {job.gpus}")
    best = max(network_bw(s) for _, s in candidates)
    first = candidates[0][1]
    for p, dp_span in candidates:
        if network_bw(dp_span) >= BANDWIDTH_KEEP * best:
            if p > pp_mem:
                slow = min(first.hops, key=lambda t: (models[t].busbw_gbps, -t))
                reasons.append(f"PP={p}: with PP={pp_mem} the data-parallel all-reduce would cross tier "
                               f"{models[slow].name} at {models[slow].busbw_gbps:.3g} GB/s; with PP={p} each pipeline "
                               f"stage spans {dp_span.nodes} node(s) and its slowest tier runs at "
                               f"{network_bw(dp_span):.3g} GB/s. Pipeline traffic (activations, point to point) "
                               f"crosses the slow tier instead")
            pp = p
            break
    if pp == pp_mem and pp == 1:
        reasons.append("PP=1: the model fits and the data-parallel all-reduce is not held back by a slower tier")
    elif pp == pp_mem:
        reasons.append(f"PP={pp}: memory needs it; the data-parallel groups then cross no tier slower than the "
                       "ones below it")
    dp = job.gpus // (tp * pp)
    reasons.append(f"DP={dp}: the remaining factor of {job.gpus} GPUs; gradients are all-reduced (or "
                   f"reduce-scattered, with sharded optimizers) across it")
    return Layout(tp, pp, dp, reasons)


# --- NCCL settings ------------------------------------------------------------------------------

def check_settings(env: dict[str, str]) -> None:
    """Raise if a recommendation is invalid: the same table as the nccl-env-valid policy, plus the
    settings that are valid names but break collectives."""
    problems = variables.problems(env)
    if problems:
        raise RuntimeError(f"recommend produced invalid NCCL settings: {problems}")
    if "tree" in env.get("NCCL_ALGO", "").lower():
        raise RuntimeError("recommend must not force Tree: AllGather and ReduceScatter have no Tree algorithm")
    if "NCCL_NTHREADS" in env and int(env["NCCL_NTHREADS"]) < 64:
        raise RuntimeError("NCCL_NTHREADS below 64 is raised to 64 by NCCL")


def nccl_settings(stack_values: dict, current: dict[str, str], models: dict[int, TierModel],
                  dp_span: Span) -> tuple[dict[str, str], list[str]]:
    """Settings to set (name -> value) and the reasoning, from the stack's transport and the model."""
    transport = stack_values["nccl"]["transport"]
    env: dict[str, str] = {}
    why: list[str] = []
    if transport in ("infiniband", "roce"):
        cross = current.get("NCCL_CROSS_NIC", "2")
        env["NCCL_CROSS_NIC"] = cross
        why.append(f"NCCL_CROSS_NIC={cross} (as the stack sets it): 0 keeps each ring on one rail, right for "
                   "rail-optimised fabrics; 2 (NCCL's default) crosses NICs only when faster")
        if transport == "roce" and dp_span.top >= 2:
            env["NCCL_IB_QPS_PER_CONNECTION"] = "4"
            why.append("NCCL_IB_QPS_PER_CONNECTION=4: the data-parallel rings cross tier "
                       f"{models[dp_span.top].name}; more queue pairs give ECMP more flows to spread over RoCE spines")
        else:
            env["NCCL_IB_QPS_PER_CONNECTION"] = current.get("NCCL_IB_QPS_PER_CONNECTION", "1")
    elif transport == "ethernet":
        env["NCCL_SOCKET_NTHREADS"], env["NCCL_NSOCKS_PERTHREAD"] = "4", "4"
        why.append("NCCL_SOCKET_NTHREADS=4 x NCCL_NSOCKS_PERTHREAD=4 (16 sockets, within NCCL's limit of 64): "
                   "one TCP stream cannot fill a 100 Gb/s link")
    env["NCCL_DEBUG"] = "WARN" if profile_of(stack_values) == "production" else current.get("NCCL_DEBUG", "WARN")
    why.append(f"NCCL_DEBUG={env['NCCL_DEBUG']}: INFO/TRACE logging slows start-up and floods logs in production")
    why.append("NCCL_ALGO, NCCL_PROTO: leave unset. NCCL's tuner picks per collective and size; forcing Tree "
               "makes AllGather/ReduceScatter fail (only Ring, PAT, NVLS and CollnetDirect implement them) and "
               "disables NVLS inside NVSwitch nodes")
    why.append("NCCL_NTHREADS: leave unset (512 on current GPUs); only 64, 128, 256 and 512 are valid")
    for name in ("NCCL_ALGO", "NCCL_PROTO"):
        if name in current:
            why.append(f"remove {name}={current[name]} from trainstack:nccl.env: it is a debugging setting")
    check_settings(env)
    return env, why


# --- the report ---------------------------------------------------------------------------------

def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:,.3f} ms"


def _gb(nbytes: float) -> str:
    return f"{nbytes / 1e9:,.2f} GB"


def recommend(stack, fabric: Fabric, records: list[dict], model_size: str, gpus: int | None,
              grad_dtype: str, gpu_memory_gb: float | None) -> dict:
    """Everything the report prints, as data (deterministic for the same inputs)."""
    from modules.nccl.render import profile_env   # the stack's current NCCL variables

    try:
        params = parse_model_size(model_size)
    except ValueError as exc:
        raise InputError("trainstack recommend", "--model-size", str(exc)) from None
    if not fabric.switches:
        raise InputError(stack.file, "trainstack:fabric", "recommend needs the fabric's switches and nodes to size "
                          "its domains; a label-defined fabric has no static inventory")
    pools = [p for p in fabric.pools.values() if p.gpus]
    if not pools:
        raise InputError(stack.file, "trainstack:fabric.nodePools",
                          "expected a pool with GPUs to recommend a layout for")
    pool = pools[0]
    pool_nodes = sum(1 for n in fabric.nodes.values() if n.pool.name == pool.name)
    top = fabric.highest_tier
    largest = fabric.largest_domain(top).gpus if top else pool.gpus
    gpus = largest if gpus is None else gpus   # 0 is a mistake to report, not "the default"
    if gpus < 1 or gpus > largest or (gpus > pool.gpus and gpus % pool.gpus):
        raise InputError("trainstack recommend", "--gpus", f"expected a whole number of {pool.gpus}-GPU nodes "
                          f"up to {largest} GPUs (the largest domain of the fabric), got {gpus}")
    if gpu_memory_gb is not None and not (math.isfinite(gpu_memory_gb) and gpu_memory_gb > 0):
        raise InputError("trainstack recommend", "--gpu-memory-gb", f"expected a positive number of GB such as 80, "
                          f"got {gpu_memory_gb:g}")
    memory, memory_why = gpu_memory(pool, gpu_memory_gb)
    job = JobShape(params, BYTES_PER[grad_dtype], gpus, memory, memory_why)
    models, notes = tier_models(fabric, records)
    try:
        layout = choose_layout(fabric, pool, job, models)
    except ValueError as exc:   # the model does not fit these GPUs
        raise InputError("trainstack recommend", "--gpus",
                          f"{exc}; give more GPUs or a smaller --model-size") from None
    g = pool.gpus
    dp_span = dp_group(fabric, g, gpus, layout.tp, layout.pp)
    share = max(1, min(layout.tp, g))
    grad_shard = params * job.grad_bytes_per_param / (layout.tp * layout.pp)
    weight_shard = params * 2 / (layout.tp * layout.pp)
    allreduce = allreduce_times(grad_shard, dp_span, models, share)
    allgather = allgather_ring(weight_shard, dp_span, models, share)
    ctx = _values_context(stack)
    current = profile_env(ctx, stack.values["nccl"]["transport"])
    env, why = nccl_settings(stack.values, {k: v for k, v in current.items()}, models, dp_span)
    return {"stack": stack.name, "pool": pool.name, "gpus_per_node": g, "pool_nodes": pool_nodes,
            "params": params, "grad_dtype": grad_dtype, "gpus": gpus, "gpu_memory_gb": memory,
            "gpu_memory_source": memory_why, "models": models, "notes": notes, "layout": layout,
            "dp_span": dp_span, "share": share, "grad_shard_bytes": grad_shard, "weight_shard_bytes": weight_shard,
            "allreduce": allreduce, "allgather": allgather, "nccl": env, "nccl_why": why,
            "current_nccl": current, "tier_names": {t: m.name for t, m in models.items()}}


def _values_context(stack):
    from modules.core.context import RenderContext
    return RenderContext(stack)


def text_report(r: dict) -> str:
    lines: list[str] = []
    add = lines.append
    add(f"trainstack recommend for stack {r['stack']}: {r['params'] / 1e9:g}B parameters on {r['gpus']} GPUs "
        f"({r['gpus'] // r['gpus_per_node'] or 1} x {r['gpus_per_node']}-GPU nodes of pool {r['pool']}, "
        f"{r['gpu_memory_gb']:g} GB each: {r['gpu_memory_source']})")
    add("")
    add("Per-tier model (alpha = latency per ring step, busbw = bus bandwidth):")
    for tier, m in sorted(r["models"].items()):
        add(f"  tier {tier} {m.name:<8} {m.source:<13} alpha {m.alpha_s * 1e6:9.2f} us"
            f"   busbw {m.busbw_gbps:10.3f} GB/s   {m.detail}")
    for note in r["notes"]:
        add(f"  note: {note}")
    layout = r["layout"]
    add("")
    add(f"Layout: TP={layout.tp} x PP={layout.pp} x DP={layout.dp}")
    for reason in layout.reasons:
        add(f"  - {reason}")
    s = r["dp_span"]
    where = ", ".join(f"{h} hop(s) across {r['tier_names'][t]}" for t, h in sorted(s.hops.items())) or "inside one node"
    add("")
    add(f"Predicted per step (data-parallel group: {s.ranks} ranks, {s.ranks_per_node} per node on {s.nodes} node(s); "
        f"ring {where}; " + ("one such group per node" if r["share"] == 1 else
                             f"{r['share']} such groups share each node's network") + "):")
    times = r["allreduce"]
    best = min(times, key=lambda k: (times[k], k))
    add(f"  gradient all-reduce of {_gb(r['grad_shard_bytes'])} per rank ({r['grad_dtype']}):")
    for name in ("ring", "tree", "hierarchical"):
        add(f"    {name:<13} {_ms(times[name]):>16}{'   <- fastest in this model' if name == best else ''}")
    add(f"  parameter all-gather of {_gb(r['weight_shard_bytes'])} per rank (bf16, sharded data parallel): "
        f"ring {_ms(r['allgather'])} (NCCL has no tree all-gather)")
    add("")
    add("NCCL settings (validated with modules/nccl/variables.py, as the nccl-env-valid policy does):")
    for name, value in sorted(r["nccl"].items()):
        now = r["current_nccl"].get(name)
        state = ("as the stack has it" if now == value
                 else f"stack has {now}" if now is not None else "not set in the stack")
        add(f"  {name}={value}   ({state})")
    for reason in r["nccl_why"]:
        add(f"  - {reason}")
    add(f"  NCCL chooses ring or tree itself; the model predicts {best} fastest for this gradient size.")
    return "\n".join(lines) + "\n"


def json_report(r: dict) -> str:
    layout = r["layout"]
    doc = {
        "stack": r["stack"], "gpus": r["gpus"], "params": r["params"], "grad_dtype": r["grad_dtype"],
        "tiers": [{"tier": m.tier, "name": m.name, "source": m.source, "alpha_us": m.alpha_s * 1e6,
                   "busbw_gbps": m.busbw_gbps, "detail": m.detail} for _, m in sorted(r["models"].items())],
        "notes": r["notes"],
        "layout": {"tp": layout.tp, "pp": layout.pp, "dp": layout.dp, "reasons": layout.reasons},
        "predicted_s": {"allreduce": r["allreduce"], "allgather_ring": r["allgather"]},
        "nccl": r["nccl"], "nccl_reasons": r["nccl_why"],
    }
    return yamlio.dumps_json(doc, indent=1, sort_keys=True) + "\n"
