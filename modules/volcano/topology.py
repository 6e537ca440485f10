"""Volcano network-topology semantics shared by runtimes and workloads.

What a `networkTopology` (mode, highestTierAllowed | highestTierName) may say on this stack's
fabric, and whether a gang can ever be placed under it. Volcano checks none of this: a tier below
the lowest real tier leaves a hard job Pending forever, a tier above the top (or an unknown tier
name) silently means "no constraint" in Volcano v1.15.1.
"""
from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Mapping

from modules.semantics.capacity import pods_per_node
from modules.semantics.volcano import discovery_tiers

if TYPE_CHECKING:
    from modules.core.context import RenderContext
    from modules.fabric.model import Fabric


@dataclass(frozen=True)
class FabricTiers:
    """The real HyperNode tiers of a fabric and the names `highestTierName` may use."""

    tiers: tuple[int, ...]
    by_name: dict[str, int]
    static: bool              # a tree we render (capacity known) rather than label discovery

    @property
    def lowest(self) -> int | None:
        return self.tiers[0] if self.tiers else None

    @property
    def highest(self) -> int | None:
        return self.tiers[-1] if self.tiers else None

    def describe(self) -> str:
        if not self.tiers:
            return "none (the fabric has no HyperNodes)"
        return f"{self.lowest}..{self.highest}" if len(self.tiers) > 1 else str(self.lowest)


def label_levels(discovery: list[dict]) -> dict[int, list[str]]:
    """Tier -> node-label keys, as Volcano's label discoverer derives them (the semantic core's
    ``discovery_tiers``: the node-level key is dropped, the key above it is tier 1 and its tierName)."""
    levels: dict[int, list[str]] = {}
    for tier, key, source in discovery_tiers(discovery):
        if source == "label discovery" and key and key not in levels.setdefault(tier, []):
            levels[tier].append(key)
    return {tier: keys for tier, keys in levels.items() if keys}


def fabric_tiers(fabric: "Fabric") -> FabricTiers:
    if fabric.discovery is not None:
        levels = label_levels(fabric.discovery)
        by_name = {key: tier for tier in sorted(levels) for key in levels[tier]}
        return FabricTiers(tuple(sorted(levels)), by_name, static=False)
    tiers = tuple(fabric.tiers)
    by_name = {name: tier for tier, name in sorted(fabric.tier_names.items()) if tier in tiers}
    return FabricTiers(tiers, by_name, static=True)


def tier_setting(spec: Mapping | None) -> tuple[Any, Any]:
    """``(highestTierAllowed, highestTierName)`` of a stack file's ``topology`` block (schema.yaml),
    None where unset: the one place the renderers read these config keys (a workload object's
    fields are read by ``modules.semantics``)."""
    spec = spec or {}
    return spec.get("highestTierAllowed"), spec.get("highestTierName")


def resolve(ctx: "RenderContext", path: str, spec: Mapping, allow_name: bool = True,
            given: bool = True) -> int | None:
    """Validate a networkTopology spec from the stack; return the tier that bounds the gang.

    Returns the highest tier allowed (resolved from a name when needed), or None when the spec
    sets no tier (soft mode without one). Raises InputError for anything Volcano would accept
    but never honour. ``given`` says the tier came from the stack (not a trainstack default).
    """
    tiers = fabric_tiers(ctx.fabric)
    mode = spec.get("mode", "hard")
    number, name = tier_setting(spec)
    if name is not None and not allow_name:
        raise ctx.error(f"{path}.highestTierName", "expected highestTierAllowed here: this API has no "
                        "highestTierName (Trainer v2.3 vendors Volcano's API from before it existed)")
    if number is not None and name is not None:
        raise ctx.error(path, "set highestTierAllowed or highestTierName, not both "
                        "(Volcano's webhook rejects the pair)")
    if not tiers.tiers:
        raise ctx.error(path, "the fabric defines no HyperNode tiers, so a network topology cannot be "
                        "honoured; drop it or describe the fabric")
    if mode == "soft" and given and (number is not None or name is not None):
        ctx.warn(f"{ctx.stack.file}: trainstack:{path}: soft mode ignores the tier (Volcano bounds a "
                 "soft gang only by the top of the fabric, or by its job's tier for partitions); use "
                 "hard mode to enforce it")
    if name is not None:
        if name not in tiers.by_name:
            known = ", ".join(sorted(tiers.by_name)) or "none"
            raise ctx.expected(f"{path}.highestTierName", f"one of the fabric's tier names ({known}); "
                               "Volcano ignores an unknown name and applies no constraint", name,
                               rule="topology-tier-exists")
        return tiers.by_name[name]
    if number is None:
        if mode == "hard":
            raise ctx.error(path, "hard mode needs highestTierAllowed or highestTierName; without one "
                            "Volcano applies no constraint at all")
        return None
    if not tiers.lowest <= number <= tiers.highest:
        raise ctx.expected(f"{path}.highestTierAllowed", f"a tier of this fabric ({tiers.describe()}); "
                           "below it a hard job is Pending forever, above it there is no constraint",
                           number, rule="topology-tier-exists")
    return number


def check_fits(ctx: "RenderContext", path: str, pods: int, per_pod: Mapping[str, Decimal],
               tier: int | None, what: str, one_per_node: bool = False) -> None:
    """A hard gang that no HyperNode at tier <= `tier` can hold would stay Pending forever."""
    if tier is None or pods <= 0:
        return
    largest = max_pods(ctx, per_pod, tier, one_per_node)
    if largest is not None and largest < pods:
        raise ctx.error(path, f"{what} needs {pods} pods in one tier-{tier} domain, but the largest "
                        f"holds {largest}; Volcano would keep it Pending forever (raise the tier or "
                        "shrink the gang)", rule="topology-satisfiable")


def max_pods(ctx: "RenderContext", per_pod: Mapping[str, Decimal], tier: int,
             one_per_node: bool = False) -> int | None:
    """The biggest gang of such pods that one domain at tier <= `tier` holds (static fabrics)."""
    if not fabric_tiers(ctx.fabric).static:
        return None
    fabric = ctx.fabric
    # What one node of each pool holds depends on the pool only: work it out once, not per switch.
    per_node = {name: pods_per_node(pool, per_pod) for name, pool in fabric.pools.items()}
    if one_per_node:
        per_node = {name: min(1, k) for name, k in per_node.items()}
    return max((sum(count * per_node[pool] for pool, count in counts.items())
                for counts in fabric.pool_count_shapes(tier)), default=0)


def _domains_under(fabric: "Fabric", switch: str, tier: int) -> list[str]:
    """The highest switches at or below `switch` whose tier is <= `tier` (disjoint domains)."""
    current = fabric.switches[switch]
    if current.tier <= tier:
        return [switch]
    out: list[str] = []
    for child in current.children:
        out.extend(_domains_under(fabric, child, tier))
    return out


def check_partitions_fit(ctx: "RenderContext", path: str, needed: int, size: int,
                         per_pod: Mapping[str, Decimal], partition_tier: int | None,
                         job_tier: int | None) -> None:
    """`needed` partitions of `size` pods, each inside one domain of tier <= partition_tier, must
    fit together inside one domain of tier <= job_tier (the whole fabric when the job has none)."""
    tiers = fabric_tiers(ctx.fabric)
    if not tiers.static or (partition_tier is None and job_tier is None) or needed <= 0:
        return
    fabric = ctx.fabric
    per_node = {name: pods_per_node(pool, per_pod) for name, pool in fabric.pools.items()}   # once per pool
    per_domain: dict[str, int] = {}

    def partitions_of(domain: str) -> int:
        if domain not in per_domain:
            pods = sum(count * per_node[pool] for pool, count in fabric.pool_counts(domain).items())
            per_domain[domain] = pods // size
        return per_domain[domain]

    def partitions_in(tops: list[str]) -> int:
        return sum(partitions_of(domain) for top in tops
                   for domain in (_domains_under(fabric, top, partition_tier) if partition_tier else [top]))

    if job_tier is None:
        best = partitions_in([s.name for s in fabric.roots()])
    else:
        best = max((partitions_in([s.name]) for s in fabric.switches.values() if s.tier <= job_tier),
                   default=0)
    if best < needed:
        where = f"one tier-{job_tier} domain" if job_tier is not None else "the fabric"
        each = f", each within tier {partition_tier}" if partition_tier is not None else ""
        raise ctx.error(path, f"needs {needed} partitions of {size} pods{each}, inside {where}, but at most "
                        f"{best} fit; Volcano would keep it Pending forever", rule="topology-satisfiable")
