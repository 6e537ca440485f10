"""Capacity questions the policies and the simulator ask the model."""
from __future__ import annotations

from decimal import Decimal

from modules.fabric.model import k8s_name
from modules.semantics.capacity import pods_fitting, smallest_fitting_domain
from tests.modules.fabric.helpers import build

TWO_POOLS = {
    "source": "inline",
    "nodePools": [{"name": "h100", "match": "h-.*", "gpus": 8, "resources": {"rdma/ib": 1}},
                  {"name": "l40", "gpus": 4, "cpu": "64", "memory": "512Gi"}],
    "switches": {
        "core": {"switches": ["s1", "s2"]},
        "s1": {"switches": ["l1", "l2"]}, "s2": {"switches": ["l3", "empty"]},
        "l1": {"nodes": ["h-[01-04]"]}, "l2": {"nodes": ["h-[05-06]", "x-1"]},
        "l3": {"nodes": ["x-[2-9]"], "domain": "nvl-x"}, "empty": {},
    },
}


def test_counts_and_domains():
    fabric, objs, _ = build(TWO_POOLS)
    assert fabric.node_count("core") == 15 and fabric.gpu_count("core") == 6 * 8 + 9 * 4
    assert fabric.pool_counts("s1") == {"h100": 6, "l40": 1}
    assert fabric.pool_counts("core") == {"h100": 6, "l40": 9}
    assert fabric.largest_domain(1).switch == "l3" and fabric.largest_domain(1).gpus == 32
    assert fabric.largest_domain(2).switch == "s1" and fabric.largest_domain(2).gpus == 52
    assert [d.switch for d in fabric.domains_up_to(1)] == ["l1", "l2", "l3"]
    assert fabric.empty_switches == ["empty"] and "empty" not in fabric.switches
    assert fabric.switches["s2"].children == ["l3"] and len(objs) == 6
    assert fabric.accelerator_domains() == {"nvl-x": [f"x-{i}" for i in range(2, 10)]}
    assert fabric.nodes["h-01"].pool.allocatable()["rdma/ib"] == 1


def test_structure_queries():
    fabric, _, _ = build(TWO_POOLS)
    assert [s.name for s in fabric.roots()] == ["core"]
    assert [s.name for s in fabric.leaves()] == ["l1", "l2", "l3"]
    assert [s.name for s in fabric.ancestors("l2")] == ["l2", "s1", "core"]
    assert fabric.lca("l1", "l2").name == "s1" and fabric.lca("l1", "l3").name == "core"
    assert fabric.leaf_of("x-3").name == "l3"
    assert fabric.nodes_under("s1") == ["h-01", "h-02", "h-03", "h-04", "h-05", "h-06", "x-1"]
    assert fabric.tier_of_name("spine") == 2 and fabric.tier_of_name("nope") is None
    assert fabric.link(0).bandwidth_gbps == 370 and fabric.link(9) == fabric.link(3)


def test_gang_capacity_uses_pools():
    fabric, _, _ = build(TWO_POOLS)
    gpu8 = {"nvidia.com/gpu": Decimal(8)}
    assert pods_fitting(fabric, "s1", gpu8) == 6
    assert smallest_fitting_domain(fabric, 4, gpu8, 3).switch == "l1"
    assert smallest_fitting_domain(fabric, 6, gpu8, 3).switch == "s1"
    assert smallest_fitting_domain(fabric, 7, gpu8, 3) is None


def test_unattached_nodes_count_in_totals_but_no_switch():
    fabric, _, _ = build({"source": "inline", "nodes": ["n[1-3]"], "switches": {"l": {"nodes": ["n1"]}}})
    assert fabric.unattached() == ["n2", "n3"] and fabric.leaf_of("n2") is None
    assert fabric.total_gpus == 24 and fabric.gpu_count("l") == 8


def test_k8s_name():
    assert k8s_name("I21") == "i21"
    assert k8s_name("Rack 1/A") == "rack-1-a"
    assert k8s_name("a..b_") == "a.b"
    assert k8s_name("gpu-01.example.com") == "gpu-01.example.com"
    assert k8s_name("___") == ""
    long = k8s_name("x" * 300)
    assert len(long) <= 253 and long != k8s_name("x" * 301)
