"""The alpha-beta cost model (NCCL's ring, hand-computed) and the probe fit."""
import pytest

from modules.fabric.model import Link
from modules.simulate.cost import allreduce_seconds, fit_links, link_for

GiB, MiB = 2**30, 2**20
# The worked example of nccl.md §5: g = 8, NVLink 370 GB/s and 3.4 us, one 48 GB/s NIC per GPU
# (384 GB/s per node) and 14 us per inter-node step. Its table adds NCCL's 8.4 us base latency.
EXAMPLE = {0: Link(370, 3.4), 1: Link(8 * 48, 14)}
BASE_MS = 0.0084


@pytest.mark.parametrize("nodes, size, table_ms", [(1, GiB, 5.135), (16, MiB, 0.486), (16, GiB, 10.797),
                                                   (128, GiB, 14.239)])
def test_matches_the_worked_example_hierarchical_sequential(nodes, size, table_ms):
    seconds = allreduce_seconds(EXAMPLE, 0 if nodes == 1 else 1, [8] * nodes, [8] * nodes, size)
    assert seconds * 1e3 + BASE_MS == pytest.approx(table_ms, abs=0.001)


def test_one_rank_needs_no_all_reduce():
    assert allreduce_seconds(EXAMPLE, 0, [1], [8], GiB) == 0.0


def test_hand_computed_two_nodes_across_a_spine():
    links = {0: Link(370, 3.4), 1: Link(350, 14), 2: Link(350, 16)}
    intra = 2 * 7 * (3.4e-6 + GiB / (8 * 370e9))
    inter = 2 * 1 * 16e-6 + 2 * 1 / 2 * GiB / 350e9
    assert allreduce_seconds(links, 2, [8, 8], [8, 8], GiB) == pytest.approx(intra + inter)


def test_half_used_nodes_drive_half_their_nics():
    full = allreduce_seconds(EXAMPLE, 1, [8, 8], [8, 8], GiB)
    half = allreduce_seconds(EXAMPLE, 1, [4, 4, 4, 4], [8, 8, 8, 8], GiB)
    assert half > full


def test_higher_tiers_cost_more_with_the_stack_defaults():
    links = {0: Link(370, 3.4), 1: Link(350, 14), 2: Link(350, 16), 3: Link(175, 18)}
    times = [allreduce_seconds(links, tier, [8] * 4, [8] * 4, GiB) for tier in (1, 2, 3, 4)]
    assert times == sorted(times) and times[2] > times[1]
    assert times[3] == times[2]                    # tiers beyond the table reuse its last entry


def test_link_lookup_reuses_the_last_tier():
    assert link_for({0: Link(1, 1), 1: Link(2, 2)}, 5) == Link(2, 2)


def test_fit_recovers_alpha_and_beta_per_tier():
    alpha, beta = 20e-6, 1 / 40e9
    records = []
    for p in (2, 4, 8):
        for n in (MiB, 16 * MiB, 256 * MiB):
            t = 2 * (p - 1) * alpha + 2 * (p - 1) / p * n * beta
            records.append({"collective": "all_reduce", "bytes": n, "world_size": p, "time_s": t, "tier": 1,
                            "algbw_gbps": n / t / 1e9, "busbw_gbps": n / t / 1e9 * 2 * (p - 1) / p})
    records.append({"collective": "all_gather", "bytes": MiB, "world_size": 2, "time_s": 1.0, "tier": 1})
    records.append({"collective": "all_reduce", "bytes": MiB, "world_size": 2, "time_s": 1.0})    # no tier
    links = fit_links(records)
    assert set(links) == {1}
    assert links[1].latency_us == pytest.approx(20, rel=1e-6)
    assert links[1].bandwidth_gbps == pytest.approx(40, rel=1e-6)


def test_one_size_keeps_the_fabric_link_and_says_why():
    """One message size fixes no latency: the tier keeps the fabric's link, as `recommend` does."""
    notes: list[str] = []
    records = [{"collective": "all_reduce", "bytes": GiB, "world_size": 2, "time_s": GiB / 10e9, "tier": 2}]
    assert fit_links(records, notes=notes) == {}
    assert notes == ["tier 2: probe results not usable (needs at least two message sizes); using the fabric's link"]


def test_partitions_reduce_inside_first_then_the_shards_cross():
    links = {0: Link(370, 3.4), 1: Link(350, 14), 2: Link(100, 16)}
    ranks, gpus = [8] * 4, [8] * 4
    flat = allreduce_seconds(links, 2, ranks, gpus, GiB)
    assert allreduce_seconds(links, 2, ranks, gpus, GiB, [(2, 4)]) == flat      # one partition: the flat ring
    intra = 2 * 7 * (3.4e-6 + GiB / (8 * 370e9))
    inside = 2 * 1 * 14e-6 + 2 * 1 / 2 * GiB / 350e9             # 2 nodes per partition, each in a leaf
    across = 2 * 1 * 16e-6 + 2 * 1 / 2 * (GiB / 2) / 100e9       # the two partitions swap half-size shards
    split = allreduce_seconds(links, 2, ranks, gpus, GiB, [(1, 2), (1, 2)])
    assert split == pytest.approx(intra + inside + across)
    assert split < flat
    # At the same tier, partitions move the same bytes in fewer steps: never more than the flat ring.
    assert allreduce_seconds(links, 2, ranks, gpus, GiB, [(2, 2), (2, 2)]) <= flat
