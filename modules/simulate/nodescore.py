"""The network-topology-aware plugin's node scores (volcano-sh/volcano v1.15.1,
``pkg/scheduler/plugins/network-topology-aware``, ``batchNodeOrderFn``), over the simulated cluster.

* **A task of a SubJob with a network topology** (the job's ``networkTopology``, or its
  ``subGroupPolicy``'s): nothing when its job has no allocated HyperNode yet (the first placement:
  every node scores 0, the other plugins decide). Otherwise each node scores by the tier of the
  lowest common ancestor of its lowest-tier HyperNode and the allocated one:
  ``(maxTier - tier) / (maxTier - minTier)``, 1 for the allocated HyperNode itself, 0 for a node in
  no lowest-tier HyperNode; tiers run from the lowest to the virtual cluster-top's. The nodes with
  the best score then add the share of the SubJob's tasks already on their HyperNode.
* **A task without a network topology**, when ``hypernode.binpack.normal-pod.enable`` (default
  true): the HyperNode binpack score of the task on the node's HyperNode at each tier (1 at a tier
  where the node is in none), weighted ``fading ** (tier - 1)`` (``normal-pod.fading``, default
  0.8) and averaged, the cluster-top included.

Both are scaled by 100 x the plugin's ``weight``. ``fidelity.py`` checks them against upstream's
``TestNetworkTopologyAwareNodeScore_Hard/_Soft`` and ``TestBatchNodeOrderFn``; the topology-aware
strategy orders nodes by them inside a HyperNode (``Cluster.node_order``'s ``near``: a partly
running job's allocated HyperNode first).
"""
from __future__ import annotations

from collections import Counter
from typing import Iterable

from .cluster import LOOSE_NAME, Cluster, Need

MAX_NODE_SCORE = 100      # Kubernetes' framework.MaxNodeScore


def lowest_hypernode(c: Cluster, node: int) -> int | None:
    """The node's HyperNode at the lowest tier (Volcano's FindHyperNodeForNode), or None."""
    g = c.node_chain[node][0]
    return g if c.g_tier[g] == c.lowest_tier and c.g_name[g] != LOOSE_NAME else None


def ancestors(c: Cluster, g: int) -> list[int]:
    """``g`` and every group above it, up to the cluster-top."""
    out = []
    while g is not None:
        out.append(g)
        g = c.g_parent[g]
    return out


def tier_score(c: Cluster, tier: int) -> float:
    low, high = c.lowest_tier, c.top_tier
    if low == high:
        return 1.0
    return (high - tier) / (high - low) if low <= tier <= high else 0.0


def lca_score(c: Cluster, leaf: int | None, allocated: int | None, allocated_chain: set[int]) -> float:
    """networkTopologyAwareScore: 1 on the allocated HyperNode, else by the tier of the LCA."""
    if leaf is None or allocated is None:
        return 0.0
    if leaf == allocated:
        return 1.0
    for g in ancestors(c, leaf):
        if g in allocated_chain:
            return tier_score(c, c.g_tier[g])
    return 0.0


def node_scores(c: Cluster, need: Need, nodes: Iterable[int], *, plugin_weight: int, topology: bool,
                allocated: str | None, task_nodes: Iterable[str | None] = (), normal_binpack: bool = True,
                fading: float = 0.8) -> dict[int, float]:
    """The plugin's score of each of ``nodes`` for a task asking ``need`` (a missing node: 0).

    ``topology``: the task's SubJob has a network topology; ``allocated``: its job's allocated
    HyperNode (None before the first placement); ``task_nodes``: the node of every task of the
    SubJob (None for a pending one)."""
    nodes = list(nodes)
    if topology:
        raw = _network_scores(c, nodes, allocated, list(task_nodes))
    elif normal_binpack:
        raw = _normal_scores(c, need, nodes, fading)
    else:
        raw = {}
    scale = MAX_NODE_SCORE * plugin_weight
    return {n: scale * s for n, s in raw.items()}


def _network_scores(c: Cluster, nodes: list[int], allocated: str | None, task_nodes: list[str | None]
                    ) -> dict[int, float]:
    if not allocated:
        return {}
    a = c.g_index.get(allocated)
    chain = set(ancestors(c, a)) if a is not None else set()
    out = {}
    for n in nodes:
        leaf = lowest_hypernode(c, n)
        out[n] = lca_score(c, leaf, a, chain)
    best = max(out.values(), default=0.0)
    tied = [n for n, s in out.items() if s == best]
    if len(tied) > 1 and task_nodes:
        on: Counter = Counter()
        for name in task_nodes:
            if name is not None and name in c.node_index:
                leaf = lowest_hypernode(c, c.node_index[name])
                if leaf is not None:
                    on[leaf] += 1
        for n in tied:
            leaf = lowest_hypernode(c, n)
            out[n] += (on[leaf] if leaf is not None else 0) / len(task_nodes)
    return out


def _normal_scores(c: Cluster, need: Need, nodes: list[int], fading: float) -> dict[int, float]:
    tiers = range(c.lowest_tier, c.top_tier + 1)
    weights = {t: fading ** (t - 1) for t in tiers}          # 0 ** 0 is 1, as Go's math.Pow
    total = sum(weights.values())
    if total <= 0:
        return {}
    out = {}
    memo: dict[int, float] = {}
    for n in nodes:
        at = {c.g_tier[g]: g for g in c.node_chain[n] if c.g_name[g] != LOOSE_NAME}
        score = 0.0
        for t, w in weights.items():
            g = at.get(t)
            if g is None:
                score += w                                   # in no HyperNode at this tier: full score
                continue
            if g not in memo:
                memo[g] = c.binpack(g, need)
            score += w * memo[g]
        out[n] = score / total
    return out
