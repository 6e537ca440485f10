"""How many pods fit where: the capacity logic shared by the renderers (``modules/volcano``), the
``topology-satisfiable`` policy and the simulator. It sits below the capabilities: it reads a
``Fabric`` but imports none of them.

A pod fits on a node when every resource it requests is available there; a gang fits in a
HyperNode (switch) when the nodes below it can hold all its pods, packing several per node.

Volcano finds a node's HyperNode only among the lowest-tier HyperNodes (modules/simulate/README.md,
"What it models"): in a mixed-depth tree, nodes under a leaf that sits at a higher tier belong to no HyperNode
and are reachable only through the virtual cluster-top. ``reachable_only=True`` applies that rule.
"""
from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Mapping

if TYPE_CHECKING:
    from modules.fabric.model import Fabric, NodePool


@dataclass(frozen=True)
class Domain:
    """The biggest place a gang can live at a tier: a switch with its node and GPU counts."""

    switch: str
    tier: int
    nodes: int
    gpus: int


UNBOUNDED = 1_000_000          # a pod that requests nothing: only pod limits would bound it
_SMALLEST = Decimal("1e-9")    # Kubernetes rounds quantities up to 1n


def count_fitting(free: Mapping[str, Decimal], per_pod: Mapping[str, Decimal]) -> int:
    """How many pods with ``per_pod`` requests fit into ``free`` (the rule every fit check uses)."""
    best = UNBOUNDED
    for name, amount in per_pod.items():
        if amount <= 0:
            continue
        have = Decimal(free.get(name, 0))
        count = int(min(have // max(amount, _SMALLEST), UNBOUNDED)) if have > 0 else 0
        best = min(best, count)
    return best


# Node resources a fabric's node pools need not declare: a request for one that a node does not
# declare is not counted against that node, by the fit checks here (render, `topology-satisfiable`)
# and the simulator alike. Any other resource a node does not offer holds no pod at all.
NOT_DECLARED = ("ephemeral-storage", "hugepages-", "pods")


def counted(name: str, declared: Mapping[str, object] | set[str]) -> bool:
    """Whether a request for ``name`` is held against a node that declares ``declared``."""
    return name in declared or not name.startswith(NOT_DECLARED)


def not_counted_note(names: set[str]) -> str:
    """The one line that fit checks and the simulator print when requests were left uncounted."""
    listed = ", ".join(sorted(names))
    return (f"requests for {listed} are not counted against nodes: the fabric's node pools do not declare "
            f"{'it' if len(names) == 1 else 'them'}")


def pods_per_node(pool: "NodePool", per_pod: Mapping[str, Decimal],
                  used: Mapping[str, Decimal] | None = None) -> int:
    """How many such pods one node of the pool can hold (after ``used`` is taken)."""
    allocatable = pool.allocatable()
    per_pod = {name: amount for name, amount in per_pod.items() if counted(name, allocatable)}
    free = {name: allocatable.get(name, Decimal(0)) - Decimal((used or {}).get(name, 0)) for name in per_pod}
    return count_fitting(free, per_pod)


def reachable_leaf_tier(fabric: Fabric) -> int | None:
    """The tier whose HyperNodes Volcano searches for nodes: the lowest tier that has nodes below it."""
    return fabric.reachable_leaf_tier


def reachable_pool_counts(fabric: "Fabric", switch: str) -> dict[str, int]:
    """Nodes of each pool below ``switch`` that Volcano reaches through the lowest tier (cached per fabric)."""
    return fabric.reachable_pool_counts(switch)


def pods_fitting(fabric: "Fabric", switch: str, per_pod: Mapping[str, Decimal], *,
                 reachable_only: bool = False, per_node: dict[str, int] | None = None) -> int:
    """Pods with these requests that the empty nodes below ``switch`` can hold. ``per_node``: pods
    one node of each pool holds with these requests, filled as pools are met (a caller asking about
    many switches for the same requests passes one, so that each pool is worked out once)."""
    counts = reachable_pool_counts(fabric, switch) if reachable_only else fabric.pool_counts(switch)
    per_node = {} if per_node is None else per_node
    total = 0
    for pool, count in counts.items():
        if pool not in per_node:
            per_node[pool] = pods_per_node(fabric.pools[pool], per_pod)
        total += count * per_node[pool]
    return total


def smallest_fitting_domain(fabric: "Fabric", pods: int, per_pod: Mapping[str, Decimal],
                            highest_tier: int, *, reachable_only: bool = False) -> Domain | None:
    """The tightest HyperNode at tier <= ``highest_tier`` that holds the whole gang on empty nodes.

    Lowest tier first, as Volcano's gradient search does; within a tier the one with the fewest
    GPUs, then the name. None means a hard-mode job with this tier stays Pending forever.
    ``reachable_only`` counts only nodes Volcano reaches through the lowest tier (mixed-depth trees).
    """
    per_node: dict[str, int] = {}
    for tier in fabric.tiers:
        if tier > highest_tier:
            break
        fits = [s for s in fabric.at_tier(tier) if fabric.node_count(s.name)
                and pods_fitting(fabric, s.name, per_pod, reachable_only=reachable_only, per_node=per_node) >= pods]
        if fits:
            best = min(fits, key=lambda s: (fabric.gpu_count(s.name), s.name))
            return Domain(best.name, tier, fabric.node_count(best.name), fabric.gpu_count(best.name))
    return None
