"""Checks on an assembled fabric that Volcano itself does not make (reference/volcano.md §5)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from .model import Fabric

if TYPE_CHECKING:
    from modules.core.context import RenderContext


def check(ctx: "RenderContext", fabric: Fabric) -> None:
    section = ctx.section("fabric")
    if not fabric.nodes:
        raise ctx.error("fabric", "the fabric has no nodes; HyperNodes without nodes schedule nothing")
    leaf_tiers = sorted({s.tier for s in fabric.leaves() if s.nodes})
    if len(leaf_tiers) > 1:
        message = (f"leaf switches sit at tiers {leaf_tiers}; Volcano looks for nodes only in the lowest "
                   f"tier ({leaf_tiers[0]}), so nodes under higher leaves are reachable by no hard-mode job")
        if section.get("allowMixedDepth"):
            ctx.warn(f"{ctx.stack.file}: trainstack:fabric: {message}")
        else:
            raise ctx.error("fabric", message + "; set allowMixedDepth: true to accept this")
    seen: dict[str, int] = {}
    for tier, name in sorted(fabric.tier_names.items()):
        if name in seen:
            raise ctx.error("fabric.tierNames", f"tier name {name!r} is used for tiers {seen[name]} and "
                            f"{tier}; Volcano resolves highestTierName to one tier only")
        seen[name] = tier
