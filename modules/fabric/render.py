"""HyperNodes from the fabric model: one per switch that has nodes below it (the model holds only
those), never one per node. Label-defined fabrics render none: Volcano's discoverer writes them.

Leaf members, most compact first:

* ``labelMatch`` when the leaf is declared by a node-label selector;
* one anchored ``regexMatch`` when the leaf's nodes are exactly one numbered range
  (``gpu-0001`` ... ``gpu-0032`` -> ``^gpu-00(0[1-9]|[12][0-9]|3[0-2])$``);
* otherwise an ``exactMatch`` per node, in declared order.

The pattern is built to match exactly the range's names and nothing else, and the range holds
exactly the leaf's nodes; node names are unique across the whole fabric (``assemble`` checks), so
no node of any other leaf, and no node under no switch, can match it.
"""
from __future__ import annotations

from modules.core.bundle import Resource, object_key
from modules.core.context import RenderContext

from . import hostlist
from .model import Fabric, Switch, build_fabric

API_VERSION = "topology.volcano.sh/v1alpha1"
MODULE = "fabric"


def leaf_members(switch: Switch) -> list[dict]:
    if switch.selector is not None:
        return [{"type": "Node", "selector": {"labelMatch": dict(switch.selector)}}]
    if len(switch.nodes) > 1:
        numbered = switch.numbered or hostlist.numbered_range(switch.nodes)
        if numbered is not None:
            return [{"type": "Node", "selector": {"regexMatch": {"pattern": numbered.regex()}}}]
    return [{"type": "Node", "selector": {"exactMatch": {"name": n}}} for n in switch.nodes]


def hypernode(ctx: RenderContext, fabric: Fabric, switch: Switch) -> dict:
    if switch.is_leaf:
        members = leaf_members(switch)
    else:
        members = [{"type": "HyperNode", "selector": {"exactMatch": {"name": fabric.switches[c].hypernode}}}
                   for c in switch.children]
    return {
        "apiVersion": API_VERSION,
        "kind": "HyperNode",
        "metadata": ctx.metadata(MODULE, switch.hypernode),
        "spec": {"tier": switch.tier, "tierName": fabric.tier_names[switch.tier], "members": members},
    }


def hypernodes(ctx: RenderContext, fabric: Fabric) -> list[dict]:
    """Every HyperNode of the fabric, in fabric order."""
    return [hypernode(ctx, fabric, s) for s in fabric.switches.values()]


def prepare(ctx: RenderContext) -> None:
    """Build the stack's fabric model once, before any capability renders (core/render.py calls it)."""
    ctx.fabric = build_fabric(ctx)


def render(ctx: RenderContext) -> list[Resource]:
    fabric = ctx.fabric
    if fabric is None or fabric.label_defined:
        return []
    out = []
    for switch, obj in zip(fabric.switches.values(), hypernodes(ctx, fabric)):
        # Children first, so a parent never points at a HyperNode that does not exist yet.
        needs = tuple(object_key({"kind": "HyperNode", "metadata": {"name": fabric.switches[c].hypernode}})
                      for c in switch.children) if switch.children else ()
        out.append(Resource(module=MODULE, obj=obj, depends_on=needs))
    return out
