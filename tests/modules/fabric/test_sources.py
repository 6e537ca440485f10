"""Each source builds the model it should and renders HyperNodes Volcano accepts."""
from __future__ import annotations

from decimal import Decimal

import pytest

from modules.core.config import load_project, load_stack
from modules.core.render import render
from modules.semantics.capacity import smallest_fitting_domain
from tests.modules.fabric.helpers import build, check_tree, project, topograph_dir
from tests.support.cli import ROOT, run
from tests.support.crds import validate_cr


def members(objs, name):
    return next(o for o in objs if o["metadata"]["name"] == name)["spec"]["members"]


def test_generated_spine_leaf():
    fabric, objs, _ = build({"source": "generated", "generated": {"leaves": 3, "nodesPerLeaf": 4}})
    assert [s.name for s in fabric.switches.values()] == ["leaf-001", "leaf-002", "leaf-003", "spine-01"]
    assert fabric.tier_names == {1: "leaf", 2: "spine"}
    assert members(objs, "leaf-002") == [{"type": "Node", "selector": {"regexMatch": {"pattern": "^gpu-000[5-8]$"}}}]
    check_tree(objs, list(fabric.nodes))


def test_generated_fat_tree_with_nvlink_domains():
    fabric, objs, _ = build({"source": "generated", "generated": {
        "topology": "fat-tree", "pods": 3, "leavesPerPod": 2, "nodesPerLeaf": 18, "nvlinkPerLeaf": True,
        "nodeName": "n{pod}-{leaf}-{i:02d}"}})
    assert len(fabric.nodes) == 108 and len(objs) == 6 + 3 + 1
    assert fabric.nodes["n2-3-01"].domain == "leaf-003"
    assert fabric.largest_domain(3).gpus == 864
    check_tree(objs, list(fabric.nodes))


def test_prod_file_stack():
    stack = load_stack(load_project(ROOT), "prod")
    bundle = render(stack)
    hypernodes = [r for r in bundle.resources if r.kind == "HyperNode"]
    assert len(hypernodes) == 37 == len(bundle.fabric.switches)
    check_tree([r.obj for r in hypernodes], list(bundle.fabric.nodes))
    # leaves come before the spines and core that point at them
    order = [r.name for r in hypernodes]
    assert order.index("leaf-01") < order.index("spine-1") < order.index("core")


def test_inline_with_label_leaf_inventory_and_domains():
    fabric, objs, ctx = build({"source": "inline", "tierNames": ["rack", "row"],
                               "nodes": ["gpu-[01-10]"],
                               "switches": {
                                   "row-a": {"switches": ["rack-1", "rack-2"]},
                                   "rack-1": {"domains": {"nvl-1": ["gpu-[01-04]"]}},
                                   "rack-2": {"nodes": ["gpu-05", "gpu-07"],
                                              "selector": {"matchLabels": {"example.com/rack": "rack-2"}}},
                               }})
    assert fabric.tier_names == {1: "rack", 2: "row"}
    assert members(objs, "rack-2") == [{"type": "Node", "selector": {"labelMatch": {
        "matchLabels": {"example.com/rack": "rack-2"}}}}]
    assert fabric.nodes["gpu-03"].domain == "nvl-1"
    assert fabric.unattached() == ["gpu-06", "gpu-08", "gpu-09", "gpu-10"]
    assert any("4 node(s) hang off no leaf switch (gpu-06, gpu-[08-10])" in w for w in ctx.warnings)
    for obj in objs:
        validate_cr(obj)
    assert fabric.node_count("row-a") == 6     # capacity still comes from the listed nodes


def test_exact_match_when_names_do_not_form_one_range():
    fabric, objs, _ = build({"source": "inline", "switches": {
        "s": {"switches": ["a", "b"]}, "a": {"nodes": ["gpu-1", "gpu-2", "gpu-10"]}, "b": {"nodes": ["cpu-7"]}}})
    assert [m["selector"] for m in members(objs, "a")] == [
        {"exactMatch": {"name": n}} for n in ("gpu-1", "gpu-2", "gpu-10")]
    assert members(objs, "b") == [{"type": "Node", "selector": {"exactMatch": {"name": "cpu-7"}}}]
    check_tree(objs, list(fabric.nodes))


def test_default_tier_names_beyond_three():
    fabric, _, _ = build({"source": "inline", "switches": {
        "t4": {"switches": ["t3"]}, "t3": {"switches": ["t2"]}, "t2": {"switches": ["t1"]}, "t1": {"nodes": ["n1"]}}})
    assert fabric.tier_names == {1: "leaf", 2: "spine", 3: "core", 4: "tier-4"}


UNEVEN = ("switches:\n  core: {switches: [spine, rackx]}\n  spine: {switches: [l1, l2]}\n"
          "blocks:\n- {switch: l1, nodes: ['n[1-2]']}\n- {switch: l2, nodes: ['n[3-4]']}\n"
          "- {switch: rackx, nodes: ['n[5-6]']}\n")


def test_uneven_tree_with_allow_mixed_depth_is_bottom_up(tmp_path):
    root = project(tmp_path, {"source": "topograph", "path": "model.yaml", "allowMixedDepth": True},
                   {"model.yaml": UNEVEN})
    bundle = render(load_stack(load_project(root), "test"))
    assert any("sits more than one tier above its child 'rackx'" in w for w in bundle.warnings)
    tiers = {s.name: s.tier for s in bundle.fabric.switches.values()}
    assert tiers == {"core": 3, "spine": 2, "l1": 1, "l2": 1, "rackx": 1}   # every leaf where Volcano looks
    check_tree([r.obj for r in bundle.resources if r.kind == "HyperNode"], list(bundle.fabric.nodes),
               contiguous=False)
    result = run("validate", "test", "--project", str(root))
    assert result.code == 0 and "warning: stacks/model.yaml: switches.core:" in result.err


def test_explicit_leaf_above_the_lowest_tier_warns_when_allowed():
    fabric, _, ctx = build({"source": "inline", "allowMixedDepth": True, "switches": {
        "core": {"switches": ["s", "l2"]}, "s": {"switches": ["l1"]}, "l1": {"nodes": ["a1"]},
        "l2": {"tier": 2, "nodes": ["b1"]}}})
    assert fabric.switches["l2"].tier == 2
    assert any("reachable by no job with a hard network topology" in w for w in ctx.warnings)


def test_labels_source_renders_discovery_and_no_hypernodes():
    fabric, objs, _ = build({"source": "labels"})
    assert objs == []
    assert fabric.discovery == [{"source": "label", "enabled": True, "config": {"networkTopologyTypes": {
        "fabric": [{"nodeLabel": "fabric.topograph.run/tier-1"}, {"nodeLabel": "fabric.topograph.run/tier-0"},
                   {"nodeLabel": "kubernetes.io/hostname"}]}}}]
    # the discoverer's tierName is the label key; tier 1 is the label just above the node
    assert fabric.tier_names == {1: "fabric.topograph.run/tier-0", 2: "fabric.topograph.run/tier-1"}
    assert fabric.tier_of_name("fabric.topograph.run/tier-1") == 2
    assert fabric.label_defined and not fabric.capacity_known
    assert fabric.switches == {} and fabric.nodes == {} and fabric.total_gpus == 0
    assert fabric.tiers == [1, 2] and fabric.lowest_tier == 1 and fabric.highest_tier == 2
    assert fabric.largest_domain(1) is None and fabric.domains_up_to(2) == []
    # capacity questions do not crash; callers check capacity_known before reading "does not fit"
    assert smallest_fitting_domain(fabric, 4, {"nvidia.com/gpu": Decimal(8)}, 2) is None


def test_labels_source_custom_levels():
    fabric, _, _ = build({"source": "labels", "labels": {
        "levels": ["example.com/spine", "example.com/leaf"], "nodeLevel": "kubernetes.io/hostname",
        "typeName": "ib"}})
    levels = fabric.discovery[0]["config"]["networkTopologyTypes"]["ib"]
    assert [lv["nodeLabel"] for lv in levels] == ["example.com/spine", "example.com/leaf", "kubernetes.io/hostname"]
    assert fabric.tier_names == {1: "example.com/leaf", 2: "example.com/spine"}


def test_static_fabrics_have_no_discovery():
    fabric, _, _ = build({"source": "generated"})
    assert fabric.discovery is None and fabric.capacity_known


def test_topograph_block_labels_override_switch_labels(tmp_path):
    root = project(tmp_path, {"source": "topograph", "path": "m.yaml"}, {"m.yaml": (
        "switches:\n  core:\n    labels: {zone: a, rack: none}\n"
        "    annotations: {accelerator.topology.test/domain: d0}\n"
        "    switches: [leaf]\nblocks:\n- switch: leaf\n  nodes: ['n[1-2]']\n  labels: {rack: r1}\n"
        "- switch: leaf\n  nodes: [n3]\n  annotations: {accelerator.topology.test/domain: d1}\n")})
    fabric = render(load_stack(load_project(root), "test")).fabric
    assert fabric.nodes["n1"].labels == {"zone": "a", "rack": "r1"}
    assert (fabric.nodes["n1"].domain, fabric.nodes["n3"].domain) == ("d0", "d1")
    assert fabric.switches["leaf"].nodes == ["n1", "n2", "n3"]


@pytest.mark.parametrize("model", ["small-tree", "nvl72"])
def test_topograph_with_tier_names_and_pools(model):
    fabric, objs, _ = build({"source": "topograph", "path": str(topograph_dir() / f"{model}.yaml"),
                             "tierNames": ["rack", "spine", "core"],
                             "nodePools": [{"name": "gb200", "gpus": 4, "gpuType": "GB200"}]})
    assert {o["spec"]["tierName"] for o in objs if o["spec"]["tier"] == 1} == {"rack"}
    assert fabric.total_gpus == 4 * len(fabric.nodes)
