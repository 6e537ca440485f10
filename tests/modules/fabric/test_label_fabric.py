"""Label-defined fabrics: Volcano's label discoverer is configured, tiers come from the label levels.

The fabric module builds such a Fabric from `source: labels`; here one is constructed by hand
with the contract the renderers rely on (`discovery` = networkTopologyDiscovery entries).
"""
import pytest

from modules.core.bundle import Bundle
from modules.core.context import RenderContext
from modules.core.errors import InputError
from modules.core.render import ORDER
from modules.fabric.model import Fabric, build_pools
from modules.nccl import render as nccl
from modules.runtimes import render as runtimes
from modules.volcano import render as volcano
from modules.volcano import topology
from modules.workloads import render as workloads
from tests.support.crds import validate_cr

from tests.support.stacks import variant

DISCOVERY = [{
    "source": "label",
    "enabled": True,
    "config": {"networkTopologyTypes": {"gpu-fabric": [
        {"nodeLabel": "example.com/spine"},
        {"nodeLabel": "example.com/leaf"},
        {"nodeLabel": "kubernetes.io/hostname"},
    ]}},
}]


def label_context(**sections) -> RenderContext:
    ctx = RenderContext(variant("staging", "labels", **sections))
    ctx.fabric = Fabric(source="labels", tier_names={}, switches={}, nodes={},
                        pools={p.name: p for p in build_pools(ctx, ctx.section("fabric"))},
                        discovery=[dict(d) for d in DISCOVERY])
    return ctx


def render_ours(ctx: RenderContext) -> Bundle:
    items = volcano.render(ctx) + nccl.render(ctx) + runtimes.render(ctx) + workloads.render(ctx)
    return Bundle.build("labels", items, ORDER, ctx.stack.file)


def test_tiers_are_the_label_levels_above_the_node():
    tiers = topology.fabric_tiers(label_context().fabric)
    assert tiers.tiers == (1, 2)
    assert tiers.by_name == {"example.com/leaf": 1, "example.com/spine": 2}
    assert not tiers.static


def test_discovery_goes_to_the_controller_as_a_mapping():
    ctx = label_context(runtimes={"runtimes": [{"topology": {"mode": "hard", "highestTierAllowed": 2}}]},
                        workloads={"trainJobs": [], "deployments": [], "volcanoJobs": []})
    (release,) = [i for i in render_ours(ctx).releases if i.chart == "volcano"]
    override = release.values["custom"]["controller_config_override"]
    assert isinstance(override, dict)
    assert override == {"networkTopologyDiscovery": DISCOVERY}


def test_runtime_tier_above_the_label_levels_is_refused():
    ctx = label_context(runtimes={"runtimes": [{"topology": {"mode": "hard", "highestTierAllowed": 3}}]},
                        workloads={"trainJobs": [], "deployments": [], "volcanoJobs": []})
    with pytest.raises(InputError) as err:
        runtimes.render(ctx)
    assert err.value.path == "trainstack:runtimes.runtimes[0].topology.highestTierAllowed"
    assert "a tier of this fabric (1..2)" in err.value.message


def test_tier_names_are_the_label_keys():
    ctx = label_context(runtimes={"runtimes": [{"topology": {"mode": "hard", "highestTierAllowed": 1}}]},
                        workloads={"trainJobs": [], "volcanoJobs": [], "deployments": [{
                            "name": "rack-gang", "queue": "team-a", "image": "busybox:1.37", "replicas": 2,
                            "topology": {"mode": "hard", "highestTierName": "example.com/leaf"}}]})
    bundle = render_ours(ctx)
    (group,) = [r.obj for r in bundle.resources if r.kind == "PodGroup"]
    assert group["spec"]["networkTopology"] == {"mode": "hard", "highestTierName": "example.com/leaf"}
    validate_cr(group)
    # No static tree: capacity is unknown, so runtimes carry no max-nodes hint.
    (rt,) = [r.obj for r in bundle.resources if r.kind == "ClusterTrainingRuntime"]
    assert "trainstack.io/max-nodes" not in (rt["metadata"].get("annotations") or {})


def test_unknown_tier_name_is_refused():
    ctx = label_context(workloads={"trainJobs": [], "deployments": [], "volcanoJobs": [{
        "name": "burn", "image": "busybox:1.37", "replicas": 2,
        "topology": {"mode": "hard", "highestTierName": "leaf"}}]},
        runtimes={"runtimes": [{"topology": {"mode": "hard", "highestTierAllowed": 1}}]})
    with pytest.raises(InputError) as err:
        workloads.render(ctx)
    assert err.value.path == "trainstack:workloads.volcanoJobs[0].topology.highestTierName"
    assert "example.com/leaf, example.com/spine" in err.value.message
