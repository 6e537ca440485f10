"""Checks on an assembled fabric that Volcano itself does not make (reference/volcano.md §5, §8).

Structural mistakes (cycles, two parents, duplicates, a node under two leaves, tiers not above
children, uncovered nodes) are found while assembling (importers.py), where the declaration
paths are at hand. This module checks the finished tree: depth, tier names, leaf selectors.
"""
from __future__ import annotations

import json
from typing import TYPE_CHECKING

from .model import Fabric

if TYPE_CHECKING:
    from modules.core.context import RenderContext

MIXED_DEPTH_HINT = "set trainstack:fabric.allowMixedDepth: true to accept it"


def check(ctx: "RenderContext", fabric: Fabric) -> None:
    _check_tier_names(ctx, fabric)
    if fabric.label_defined:
        return          # the discoverer builds the tree at run time; there is nothing static to check
    if not fabric.switches:
        where = "fabric" if fabric.declared_in_stack else "switches"
        loose = f" ({len(fabric.nodes)} node(s) are declared, none under a switch)" if fabric.nodes else ""
        raise fabric.error(where, f"no switch has nodes below it{loose}; HyperNodes without nodes schedule "
                           "nothing (attach nodes to leaf switches)")
    _check_depth(ctx, fabric)
    _check_selectors(fabric)


def depth_problems(fabric: Fabric) -> list[tuple[str, str]]:
    """(switch, why) for every place where the tree is not uniform: a leaf above the lowest leaf
    tier, or a parent more than one tier above a child."""
    problems = []
    leaves = fabric.leaves()
    lowest = min(s.tier for s in leaves)
    for leaf in leaves:
        if leaf.tier != lowest:
            problems.append((leaf.name, (
                f"leaf switch {leaf.name!r} sits at tier {leaf.tier}, above the lowest leaves (tier {lowest}); "
                f"Volcano looks for nodes only in tier-{lowest} HyperNodes, so its "
                f"{fabric.node_count(leaf.name)} node(s) are reachable by no job with a hard network topology")))
    for switch in fabric.switches.values():
        for name in switch.children:
            child = fabric.switches[name]
            if switch.tier != child.tier + 1:
                problems.append((switch.name, (
                    f"switch {switch.name!r} (tier {switch.tier}) sits more than one tier above its child "
                    f"{name!r} (tier {child.tier}): its leaves are at different depths, so tiers are not "
                    f"contiguous and a job limited to tier {child.tier + 1} can never span {name!r} and "
                    "a sibling")))
    return problems


def _check_depth(ctx: "RenderContext", fabric: Fabric) -> None:
    problems = depth_problems(fabric)
    if not problems:
        return
    switch, message = problems[0]
    more = f" ({len(problems) - 1} more place(s) like it)" if len(problems) > 1 else ""
    where = fabric.switches[switch].where
    if not fabric.mixed_depth:
        raise fabric.error(where, f"{message}{more}; {MIXED_DEPTH_HINT}")
    ctx.warn(str(fabric.error(where, f"{message}{more} (accepted: allowMixedDepth is on)")))


def _check_tier_names(ctx: "RenderContext", fabric: Fabric) -> None:
    seen: dict[str, int] = {}
    for tier, name in sorted(fabric.tier_names.items()):
        if name in seen:
            message = (f"tier name {name!r} is used for tiers {seen[name]} and {tier}; Volcano resolves "
                       "highestTierName to one tier only (the last one it happens to read)")
            given = (ctx.stack.given.get("fabric") or {}).get("tierNames")
            if given is None and fabric.source == "file":
                raise fabric.error("tierNames", message)
            raise ctx.error("fabric.tierNames", message)
        seen[name] = tier


def _check_selectors(fabric: Fabric) -> None:
    seen: dict[str, str] = {}
    for switch in fabric.switches.values():
        if switch.selector is None:
            continue
        key = json.dumps(switch.selector, sort_keys=True)
        if key in seen:
            raise fabric.error(f"{switch.where}.selector", f"leaf switches {seen[key]!r} and {switch.name!r} "
                               "select nodes with the same labels, so every such node would be in two leaves")
        seen[key] = switch.name
