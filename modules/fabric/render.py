"""HyperNodes from the fabric model: one per switch that has nodes below it."""
from __future__ import annotations

from modules.core.bundle import Resource
from modules.core.context import RenderContext

API_VERSION = "topology.volcano.sh/v1alpha1"
MODULE = "fabric"


def hypernode(ctx: RenderContext, fabric, switch) -> dict:
    if switch.is_leaf:
        members = [{"type": "Node", "selector": {"exactMatch": {"name": n}}} for n in switch.nodes]
    else:
        members = [{"type": "HyperNode", "selector": {"exactMatch": {"name": fabric.switches[c].hypernode}}}
                   for c in switch.children if fabric.node_count(c)]
    return {
        "apiVersion": API_VERSION,
        "kind": "HyperNode",
        "metadata": ctx.metadata(MODULE, switch.hypernode),
        "spec": {"tier": switch.tier, "tierName": fabric.tier_names[switch.tier], "members": members},
    }


def render(ctx: RenderContext) -> list[Resource]:
    fabric = ctx.fabric
    return [Resource(module=MODULE, obj=hypernode(ctx, fabric, s))
            for s in fabric.switches.values() if fabric.node_count(s.name)]
