"""Checks on an assembled fabric that Volcano itself does not make.

Every structural check lives once in ``modules/semantics/hypernodes.py`` and runs over the graph
``assemble`` built (importers.py). Structural mistakes found while assembling (cycles, two parents,
duplicates, a node under two leaves, tiers not above children, uncovered nodes) are raised there,
where the declaration paths are at hand. This module checks the finished tree: depth and tier
names (same checks, same graph), and leaf selectors.
"""
from __future__ import annotations

import json
from typing import TYPE_CHECKING

from modules.semantics import hypernodes as hn

from .model import Fabric

if TYPE_CHECKING:
    from modules.core.context import RenderContext

MIXED_DEPTH_HINT = "set trainstack:fabric.allowMixedDepth: true to accept it"


def check(ctx: "RenderContext", fabric: Fabric) -> None:
    if fabric.label_defined:
        return          # the discoverer builds the tree at run time; there is nothing static to check
    _check_tier_names(ctx, fabric)
    if not fabric.switches:
        where = "fabric" if fabric.declared_in_stack else "switches"
        loose = f" ({len(fabric.nodes)} node(s) are declared, none under a switch)" if fabric.nodes else ""
        raise fabric.error(where, f"no switch has nodes below it{loose}; HyperNodes without nodes schedule "
                           "nothing (attach nodes to leaf switches)")
    _check_depth(ctx, fabric)
    _check_selectors(fabric)


def _check_depth(ctx: "RenderContext", fabric: Fabric) -> None:
    problems = list(hn.mixed_depth(fabric.graph))
    if not problems:
        return
    first = problems[0]
    more = f" ({len(problems) - 1} more place(s) like it)" if len(problems) > 1 else ""
    where = fabric.switches[first.vertex].where
    if not fabric.mixed_depth:
        err = fabric.error(where, f"{first.message}{more}; {MIXED_DEPTH_HINT}")
        err.rule = hn.RULE
        raise err
    ctx.warn(str(fabric.error(where, f"{first.message}{more} (accepted: allowMixedDepth is on)")))


def _check_tier_names(ctx: "RenderContext", fabric: Fabric) -> None:
    problem = next(hn.tier_names(fabric.graph), None)
    if problem is None:
        return
    given = (ctx.stack.given.get("fabric") or {}).get("tierNames")
    if given is None and fabric.source == "file":
        err = fabric.error("tierNames", problem.message)
    else:
        err = ctx.error("fabric.tierNames", problem.message)
    err.rule = hn.RULE
    raise err


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
