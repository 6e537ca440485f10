"""The fast paths of topology-aware placement place exactly what the plain ones do.

* State buckets (``modules/simulate/buckets.py``) against a scan of every candidate HyperNode
  (``Cluster.use_buckets = False``), on random fabrics, usage and job sequences, with every
  candidate list bucketed (``BUCKETS_FROM = 1``), and the buckets against a fresh filing after
  every job.
* ``_fill_alike`` against ``_fill_each`` on the same node order, and the node order of alike pods
  against the nodes that have room for one of them.
"""
from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import modules.simulate.cluster as cluster_module
from modules.simulate.cluster import TOP, Cluster
from modules.simulate.engine import build_cluster, resource_names, simulate
from modules.simulate.jobs import Job, Pod
from modules.simulate.scheduler import (SchedulerSettings, TopologyAware, _fill_alike, _fill_each, prepare,
                                        total, uniform_need)
from tests.modules.simulate.fabrics import gpus, pool, tree
from tests.modules.simulate.test_properties import TIER_NAMES, jobs
from tests.modules.simulate.test_properties import scenarios as placement_scenarios

FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def wide_fabrics(draw):
    """Spines over many leaves of few nodes: gradients with many HyperNodes in few states."""
    spines = {f"sp{s}": {f"sp{s}-lf{k}": draw(st.integers(1, 4)) for k in range(draw(st.integers(1, 9)))}
              for s in range(draw(st.integers(1, 3)))}
    pools = [pool("small", gpus=4, match="n00[1-6]"), pool("big")] if draw(st.booleans()) else [pool()]
    return tree(spines, pools=pools, tier_names=TIER_NAMES)


@st.composite
def scenarios(draw):
    """test_properties' scenarios on wide fabrics, part of the usage releasing, either plugin weight."""
    fabric, job_list, usage = draw(placement_scenarios(wide_fabrics()))
    used = list(usage)
    releasing = {n: usage[n] for n in used[:draw(st.integers(0, len(used)))]}
    weight = draw(st.sampled_from([1, 0]))
    return fabric, job_list, usage, releasing, SchedulerSettings(plugin_weight=weight)


def outcomes(result) -> dict:
    return {name: [(o.job, o.status, o.reason, o.hypernode, o.tier, o.pods, o.allreduce_s) for o in out]
            for name, out in result.outcomes.items()}


@FAST
@given(scenarios())
def test_state_buckets_choose_what_a_scan_of_the_gradient_chooses(scenario):
    fabric, job_list, usage, releasing, conf = scenario
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(cluster_module, "BUCKETS_FROM", 1)
        fast = simulate(fabric, job_list, usage=usage, releasing=releasing, settings=conf)
        mp.setattr(Cluster, "use_buckets", False)
        scan = simulate(fabric, job_list, usage=usage, releasing=releasing, settings=conf)
    assert outcomes(fast) == outcomes(scan)


def filed_afresh(buckets) -> dict:
    out: dict[tuple, list[int]] = {}
    for rank, g in enumerate(buckets.by_rank):
        out.setdefault(buckets.state_key(g), []).append(rank)
    return out


@FAST
@given(wide_fabrics(), jobs())
def test_state_buckets_follow_every_allocation(fabric, job_list):
    conf = SchedulerSettings()
    c = build_cluster(fabric, resource_names(fabric, job_list, {}), conf)
    aware = TopologyAware(c, conf)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(cluster_module, "BUCKETS_FROM", 1)
        lists = [c.below(TOP, t) for t in c.tiers]
        for job in job_list:
            aware.place(job, prepare(job, c))
            for cands in lists:
                buckets = c.state_buckets(cands)
                assert buckets is not None and sorted(buckets.by_rank) == sorted(cands)
                assert {key: b.ranks for key, b in buckets.buckets.items()} == filed_afresh(buckets)


@FAST
@given(wide_fabrics(), st.sampled_from([1, 2, 4, 8]), st.integers(1, 12), st.data())
def test_alike_pods_fill_as_pod_by_pod_and_skip_only_nodes_without_room(fabric, per_pod, count, data):
    job = Job("j", "Job", [Pod(f"p{i}", gpus(per_pod), per_pod) for i in range(count)], count, None)
    usage = {}
    for name, node in fabric.nodes.items():       # free GPUs around the pod's ask: room is a near thing
        free = data.draw(st.sampled_from(sorted({0, per_pod - 1, per_pod, node.pool.gpus} - {-1})))
        usage[name] = {"nvidia.com/gpu": Decimal(max(node.pool.gpus - free, 0))}
    c = build_cluster(fabric, resource_names(fabric, [job], usage), SchedulerSettings(), usage)
    prep = prepare(job, c)
    root = data.draw(st.sampled_from([g for g in range(len(c.g_name)) if not c.g_nodes[g]] or [TOP]))
    pods = list(range(count))
    need = uniform_need(prep.needs)

    def order():
        remaining, left = total(prep.needs, len(c.resources)), [count]
        return c.node_order(root, remaining, need, left), remaining, left

    yielded = [n for chunk in order()[0] for n in chunk]
    assert len(yielded) == len(set(yielded))
    assert set(yielded) == {n for n in c.nodes_below(root) if c.node_slots(n, need) > 0}

    each_txn, alike_txn = [], []
    chunks, remaining, left = order()
    each = _fill_each(c, chunks, pods, prep, each_txn, remaining, left)
    after_each = [list(u) for u in c.node_used]
    c.rollback(list(each_txn))
    chunks, remaining, left = order()
    alike = _fill_alike(c, chunks, pods, need, alike_txn, remaining, left)
    assert alike == each and alike_txn == each_txn
    assert [list(u) for u in c.node_used] == after_each


@FAST
@given(wide_fabrics(), st.sampled_from([1, 2, 4, 8]), st.integers(1, 40), st.integers(1, 8), st.data())
def test_an_idle_leaf_plans_as_any_leaf(fabric, per_pod, pods, floor, data):
    c = build_cluster(fabric, ["cpu", "memory", "nvidia.com/gpu"], SchedulerSettings())
    leaves = [g for g in range(len(c.g_name)) if c.g_nodes[g] and c.g_pool_alloc[g] is not None]
    g = data.draw(st.sampled_from(leaves))
    need = c.need(gpus(per_pod))
    assert c.idle_leaf_plan(g, need, floor) == c.leaf_plan(c.g_nodes[g], need, pods, floor)
