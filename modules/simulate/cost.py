"""Modeled all-reduce time of a placed job: the two-level alpha-beta model of reference/nccl.md §5.

A job's ranks are its GPUs (one per pod for GPU-less pods). With g ranks on each of m nodes:

  T = 2(g-1)·(α₀ + n/(g·B₀))                       intra-node reduce-scatter + all-gather (NVLink, tier 0)
    + 2(m-1)·α_L + 2(m-1)/m · n/(B_L · g/G)          inter-node all-reduce of the shards over g rails

run sequentially (the conservative variant). n is the gradient size in bytes, L the tier of the
lowest common ancestor switch of the job's nodes (the bottleneck link), B_L that tier's bus
bandwidth per node and G the node's GPU count: a node that runs g of its G GPUs drives g of its G
rail NICs. Uneven placements take the largest g for the intra step and the smallest g/G for the
inter step, i.e. the slowest node.

A job split into partitions (Volcano SubJobs) reduces hierarchically, the way partitions are
meant to be used: the inter-node step runs inside each partition (m_p nodes, bottleneck L_p), and
only the shards, n/m_p per node, cross between the P partitions at the job's tier L:

  inter = max_p [2(m_p-1)·α_Lp + 2(m_p-1)/m_p · n/(B_Lp·g/G)] + 2(P-1)·α_L + 2(P-1)/P · (n/m_p)/(B_L·g/G)

With P = 1 this is the flat formula; at equal tiers it moves the same bytes with fewer latency
steps, so partitions never cost more than the flat ring, and a placement that keeps each
partition inside its own leaf pays the high tier only for the shards.

Links come from the stack (``trainstack:fabric.links``, tier 0 = inside a node) or from probe
results fitted per tier (``fit_links``): the interface is a ``{tier: Link}`` mapping.
"""
from __future__ import annotations

from typing import Mapping, Sequence

from modules.fabric.model import Link


def link_for(links: Mapping[int, Link], tier: int) -> Link:
    """The link crossing ``tier``; tiers beyond the table reuse its last entry (as Fabric.link does)."""
    if tier in links:
        return links[tier]
    known = [t for t in links if t <= tier] or sorted(links)
    return links[max(known)]


def ring_seconds(link: Link, members: int, nbytes: float, share: float) -> float:
    """A ring all-reduce of ``nbytes`` per member over ``members`` nodes at ``share`` of the link."""
    if members <= 1:
        return 0.0
    return (2 * (members - 1) * link.latency_us * 1e-6
            + 2 * (members - 1) / members * nbytes / (link.bandwidth_gbps * 1e9 * share))


def allreduce_seconds(links: Mapping[int, Link], span_tier: int, ranks: Sequence[int],
                      node_gpus: Sequence[int], nbytes: float,
                      partitions: Sequence[tuple[int, int]] = ()) -> float:
    """Modeled time of one all-reduce of ``nbytes`` per rank.

    ``ranks[i]`` ranks run on node i, which has ``node_gpus[i]`` GPUs (0: a CPU node, full NIC
    bandwidth per rank); ``span_tier`` is the tier of the LCA of the nodes (0 for one node).
    ``partitions``, for a job split into two or more, holds each partition's (span tier, node count).
    """
    if sum(ranks) <= 1:
        return 0.0
    g = max(ranks)
    seconds = 0.0
    if g > 1:
        node = link_for(links, 0)
        seconds += 2 * (g - 1) * (node.latency_us * 1e-6 + nbytes / (g * node.bandwidth_gbps * 1e9))
    m = len(ranks)
    if m > 1:
        share = min((r / gpus if gpus and r < gpus else 1.0) for r, gpus in zip(ranks, node_gpus))
        if len(partitions) > 1:
            seconds += max(ring_seconds(link_for(links, tier), count, nbytes, share) for tier, count in partitions)
            shard = nbytes / max(min(count for _, count in partitions), 1)
            seconds += ring_seconds(link_for(links, span_tier), len(partitions), shard, share)
        else:
            seconds += ring_seconds(link_for(links, span_tier), m, nbytes, share)
    return seconds


# --- probe results (read by modules/probe/results.py) ----------------------------------------------

def fit_links(records: list[dict], node_latency_us: float = 0.0) -> dict[int, Link]:
    """Fit α (latency per step) and β (1/bandwidth) per tier to all_reduce records with a ``tier``.

    Ring model, as nccl-tests reports busbw: T = 2(p-1)·α + 2(p-1)/p·n·β, least squares over the
    tier's records (α clamped at 0). Records of other collectives or without a tier are skipped.
    A record whose p ranks sit on several nodes crosses the tier on only 2(nodes-1) of its ring
    steps, the α that allreduce_seconds charges per inter-node step: its 2(p-nodes) intra-node
    steps are charged at tier 0's latency (fitted, else ``node_latency_us``) and taken off first,
    as ``recommend`` does (NCCL's ring latency, reference/nccl.md §5).
    """
    by_tier: dict[int, list[tuple[float, float, float, int]]] = {}
    for rec in records:
        if str(rec.get("collective", "all_reduce")).replace("-", "_") not in ("all_reduce", "allreduce"):
            continue
        if rec.get("tier") is None:
            continue
        p, n, t = float(rec["world_size"]), float(rec["bytes"]), float(rec["time_s"])
        if p < 2:
            continue
        nodes = min(max(int(rec.get("nodes") or 1), 1), int(p))
        by_tier.setdefault(int(rec["tier"]), []).append((2 * (p - 1), 2 * (p - 1) / p * n, t, nodes))
    out: dict[int, Link] = {}
    for tier, raw in sorted(by_tier.items()):   # tier 0 first: the others subtract its latency
        node_alpha = out[0].latency_us * 1e-6 if 0 in out else node_latency_us * 1e-6
        rows = []
        for steps, moved, t, nodes in raw:
            if nodes > 1:
                inter = 2 * (nodes - 1)
                fixed = (steps - inter) * node_alpha
                steps, t = inter, (t - fixed if t > fixed else t)
            rows.append((steps, moved, t))
        alpha, beta = _least_squares(rows)
        if beta > 0:
            out[tier] = Link(bandwidth_gbps=1 / beta / 1e9, latency_us=alpha * 1e6)
    return out


def _least_squares(rows: list[tuple[float, float, float]]) -> tuple[float, float]:
    sxx = sum(a * a for a, _, _ in rows)
    syy = sum(b * b for _, b, _ in rows)
    sxy = sum(a * b for a, b, _ in rows)
    sxt = sum(a * t for a, _, t in rows)
    syt = sum(b * t for _, b, t in rows)
    det = sxx * syy - sxy * sxy
    if abs(det) > 1e-12 * max(sxx * syy, 1e-300):
        alpha = (sxt * syy - syt * sxy) / det
        beta = (syt * sxx - sxt * sxy) / det
        if alpha >= 0 and beta > 0:
            return alpha, beta
    # One message size, or a negative intercept: bandwidth only.
    return 0.0, (syt / syy if syy else 0.0)
