"""How many pods fit where: the capacity logic shared by the simulator and the
``topology-satisfiable`` policy.

A pod fits on a node when every resource it requests is available there; a gang fits in a
HyperNode (switch) when the nodes below it can hold all its pods, packing several per node.
"""
from __future__ import annotations

from decimal import Decimal
from typing import Mapping

from modules.core.quantity import parse_quantity
from modules.fabric.model import Domain, Fabric, NodePool


def requests_of(resources: Mapping[str, object]) -> dict[str, Decimal]:
    """Parse a container-style resource map (``{"cpu": "4", "nvidia.com/gpu": 8}``); bad values raise ValueError."""
    return {str(name): parse_quantity(value) for name, value in resources.items()}


def pods_per_node(pool: NodePool, per_pod: Mapping[str, Decimal],
                  used: Mapping[str, Decimal] | None = None) -> int:
    """How many such pods one node of the pool can hold (after ``used`` is taken)."""
    allocatable = pool.allocatable()
    best: int | None = None
    for name, amount in per_pod.items():
        if amount <= 0:
            continue
        free = allocatable.get(name, Decimal(0)) - Decimal((used or {}).get(name, 0))
        count = int(free // amount) if free > 0 else 0
        best = count if best is None else min(best, count)
    return best if best is not None else 1_000_000   # requests nothing: only pod limits would bound it


def pods_fitting(fabric: Fabric, switch: str, per_pod: Mapping[str, Decimal]) -> int:
    """Pods with these requests that the empty nodes below ``switch`` can hold."""
    return sum(count * pods_per_node(fabric.pools[pool], per_pod)
               for pool, count in fabric.pool_counts(switch).items())


def smallest_fitting_domain(fabric: Fabric, pods: int, per_pod: Mapping[str, Decimal],
                            highest_tier: int) -> Domain | None:
    """The tightest HyperNode at tier <= ``highest_tier`` that holds the whole gang on empty nodes.

    Lowest tier first, as Volcano's gradient search does; within a tier the one with the fewest
    GPUs, then the name. None means a hard-mode job with this tier stays Pending forever.
    """
    for tier in fabric.tiers:
        if tier > highest_tier:
            break
        fits = [s for s in fabric.at_tier(tier) if fabric.node_count(s.name)
                and pods_fitting(fabric, s.name, per_pod) >= pods]
        if fits:
            best = min(fits, key=lambda s: (fabric.gpu_count(s.name), s.name))
            return Domain(best.name, tier, fabric.node_count(best.name), fabric.gpu_count(best.name))
    return None
