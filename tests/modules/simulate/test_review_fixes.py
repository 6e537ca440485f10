"""Review fixes in modules/simulate (cost.py): the per-tier fit charges a tier only for the ring
steps that cross it."""
from __future__ import annotations

import pytest

from modules.simulate.cost import fit_links

MiB = 2**20


def _records(alpha_node: float, alpha_tier: float, busbw: float, ranks: int, nodes: int, tier: int) -> list[dict]:
    """Exact times of NCCL's ring (reference/nccl.md §5): 2(p-nodes) intra-node steps at the node's
    latency, 2(nodes-1) steps across the tier, and 2(p-1)/p·n at busbw."""
    out = []
    for n in (MiB, 16 * MiB, 256 * MiB, 1024 * MiB):
        t = (2 * (ranks - nodes) * alpha_node + 2 * (nodes - 1) * alpha_tier
             + 2 * (ranks - 1) / ranks * n / busbw)
        out.append({"collective": "all_reduce", "bytes": n, "world_size": ranks, "time_s": t, "tier": tier,
                    "nodes": nodes})
    return out


def test_a_multi_node_fit_recovers_the_inter_node_step_latency():
    # 16 ranks on 2 nodes: 28 NVLink steps at 3.4 us, 2 leaf steps at 14 us, busbw 40 GB/s.
    links = fit_links(_records(3.4e-6, 14e-6, 40e9, ranks=16, nodes=2, tier=1), node_latency_us=3.4)
    assert links[1].latency_us == pytest.approx(14, rel=1e-6)     # was ~4.1: the 30-step average
    assert links[1].bandwidth_gbps == pytest.approx(40, rel=1e-6)


def test_the_node_latency_comes_from_tier_0_results_when_there_are_some():
    records = (_records(3.4e-6, 0.0, 300e9, ranks=8, nodes=1, tier=0)
               + _records(3.4e-6, 14e-6, 40e9, ranks=16, nodes=2, tier=1))
    links = fit_links(records)                    # no node_latency_us: tier 0's fit is used
    assert links[0].latency_us == pytest.approx(3.4, rel=1e-6)
    assert links[1].latency_us == pytest.approx(14, rel=1e-6)
