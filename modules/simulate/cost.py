"""Modeled all-reduce time of a placed job: the two-level alpha-beta model (README, "Cost model").

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

def fit_links(records: list[dict], node_latency_us: float = 0.0, notes: list[str] | None = None) -> dict[int, Link]:
    """Per-tier links from probe records with a ``tier`` number: the probe's one fit
    (``modules.probe.recommend.fit_tiers``, the fit `recommend` uses), as latency per ring step and
    bus bandwidth. Records without a tier are skipped; a tier whose results cannot be fitted keeps
    the fabric's link, with a line in ``notes``. ``node_latency_us``: the node link's latency, for the
    intra-node steps of multi-node results when tier 0 was not measured."""
    from modules.probe.recommend import fit_tiers

    grouped: dict[int, list[dict]] = {}
    for rec in records:
        if rec.get("tier") is not None:
            grouped.setdefault(int(rec["tier"]), []).append(rec)
    out: dict[int, Link] = {}
    for tier, fitted in fit_tiers(grouped, node_latency_us * 1e-6).items():
        if isinstance(fitted, ValueError):
            if notes is not None:
                notes.append(f"tier {tier}: probe results not usable ({fitted}); using the fabric's link")
            continue
        alpha, busbw, _ = fitted
        out[tier] = Link(bandwidth_gbps=busbw, latency_us=alpha * 1e6)
    return out
