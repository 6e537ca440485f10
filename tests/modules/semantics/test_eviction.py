"""The eviction tier walk (Volcano v1.15.1 Session.Preemptable / Reclaimable / UnifiedEvictable),
modelled once in modules/semantics/eviction.py and read by render, the rule and the simulator."""
from __future__ import annotations

import pytest
import yaml

from modules.semantics import eviction
from tests.support.cli import ROOT

OLD_PROD = {"actions": "enqueue, allocate, gangpreempt, gangreclaim, backfill", "tiers": [
    {"plugins": [{"name": "priority"}, {"name": "gang", "enablePreemptable": False}, {"name": "conformance"}]},
    {"plugins": [{"name": "overcommit"}, {"name": "drf", "enablePreemptable": False}, {"name": "predicates"},
                 {"name": "capacity"}, {"name": "nodeorder"}]}]}


def rendered_prod_conf() -> dict:
    release = yaml.safe_load((ROOT / "deploy/prod/flux/charts/helmrelease.volcano.yaml").read_text())
    return yaml.safe_load(release["spec"]["values"]["custom"]["scheduler_config_override"])


def test_old_prod_conf_decides_gangreclaim_in_tier_1_without_capacity():
    walk = eviction.reach(OLD_PROD, "gangreclaim")
    assert walk.tier == 0 and walk.plugins == ("priority", "gang", "conformance") and not walk.share_aware
    assert walk.skipped == ((1, "capacity"),)
    assert "capacity in tier 2 is never asked" in walk.describe()
    assert [r.action for r in eviction.unprotected(OLD_PROD)] == ["gangreclaim"]


def test_rendered_prod_puts_capacity_where_every_eviction_walk_decides():
    conf = rendered_prod_conf()
    for action in eviction.actions_of(conf):
        if action in eviction.CROSS_QUEUE:
            assert "capacity" in eviction.reach(conf, action).share_aware
    assert not eviction.unprotected(conf)


def test_flags_gate_preempt_and_reclaim_but_not_the_unified_walk():
    conf = {"tiers": [{"plugins": [{"name": "gang", "enablePreemptable": False, "enableReclaimable": False}]},
                      {"plugins": [{"name": "proportion"}, {"name": "priority"}]}]}
    assert eviction.filters_by_tier(conf, "preempt") == [[], ["priority"]]
    assert eviction.filters_by_tier(conf, "reclaim") == [[], ["proportion"]]
    assert eviction.filters_by_tier(conf, "gangreclaim") == [["gang"], ["priority"]]   # proportion has no filter


def test_walk_intersects_in_a_tier_and_falls_through_an_empty_one():
    conf = {"tiers": [{"plugins": [{"name": "conformance"}, {"name": "priority"}]},
                      {"plugins": [{"name": "gang"}, {"name": "capacity"}]}]}
    pods = ["a", "b", "c"]
    empty = eviction.walk(conf, "gangpreempt", pods, {"conformance": lambda c: c, "priority": lambda c: [],
                                                       "gang": lambda c: c, "capacity": lambda c: ["b", "c"]}, key=str)
    assert (empty.victims, empty.tier, empty.plugins) == (["b", "c"], 1, ("gang", "capacity"))
    first = eviction.walk(conf, "gangpreempt", pods, {"conformance": lambda c: ["a", "b"], "priority": lambda c: ["b"]},
                          key=str)
    assert (first.victims, first.tier) == (["b"], 0)
    none = eviction.walk(conf, "gangpreempt", pods, {"conformance": lambda c: None}, key=str)
    assert (none.victims, none.tier) == ([], None)


@pytest.mark.parametrize("volcano", [
    {"actions": ["enqueue", "allocate", "preempt", "reclaim", "backfill"]},
    {"actions": ["enqueue", "allocate", "gangreclaim"]},
    {"queues": [{"name": "dev", "deserved": {"nvidia.com/gpu": 64}}]},
    {"queues": [{"name": "dev", "guarantee": {"nvidia.com/gpu": 8}, "deserved": {"nvidia.com/gpu": 16}}]},
])
def test_render_puts_capacity_and_overcommit_in_the_tier_the_walk_reaches(volcano):
    from modules.core.render import render
    from tests.modules.volcano.test_volcano import parsed_conf
    from tests.support.stacks import variant
    conf = parsed_conf(render(variant("dev", volcano=volcano)))
    first = [p["name"] for p in conf["tiers"][0]["plugins"]]
    assert first[-2:] == ["overcommit", "capacity"]
    assert all(p["name"] not in ("capacity", "proportion", "overcommit") for p in conf["tiers"][1]["plugins"])
    assert not eviction.unprotected(conf)
    for action in ("reclaim", "gangreclaim"):
        assert eviction.reach(conf, action).share_aware == ("capacity",)


def test_without_eviction_or_shares_allocation_keeps_proportion_in_tier_2():
    from tests.modules.volcano.test_volcano import parsed_conf
    from tests.support.stacks import shipped_bundle
    conf = parsed_conf(shipped_bundle("dev"))
    assert [p["name"] for p in conf["tiers"][0]["plugins"]] == ["priority", "gang", "conformance"]
    assert [p["name"] for p in conf["tiers"][1]["plugins"]][:4] == ["overcommit", "drf", "predicates", "proportion"]
