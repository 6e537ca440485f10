"""The simulated cluster: what each node can allocate and has in use, with per-HyperNode aggregates
kept up to date on every allocation, so choosing a HyperNode never reads nodes; a gradient's
HyperNodes are filed by state (``buckets.py``), so a choice reads each state once, not each
HyperNode.

Resources are integer vectors (CPU in millicores, everything else in base units). Groups are the
HyperNodes Volcano sees: index 0 is the virtual cluster-top (every node), then one per switch with
nodes below it. A switch's aggregates count only the nodes Volcano reaches through the lowest tier
(README, "What it models"): a leaf that sits at a higher tier in a mixed-depth tree is an
"orphan", reachable only from the cluster-top.
"""
from __future__ import annotations

import math
from decimal import Decimal
from typing import Iterator, Mapping, Sequence

from modules.fabric.model import Fabric
from modules.core.vocabulary import resource as vres

from .buckets import StateBuckets
from .jobs import TOP_NAME

TOP = 0
LOOSE_NAME = "<no HyperNode>"   # the virtual leaf of nodes in no HyperNode
Need = list[tuple[int, int]]          # sparse request vector: (resource index, amount), amounts > 0
BUCKETS_FROM = 8                      # candidate lists shorter than this are scanned, not bucketed


def units(resource: str, amount: Decimal, *, round_up: bool) -> int:
    """A quantity in the integer unit the placement model counts in: Volcano's (``vres.scale``:
    millicores, bytes, pods) for cpu, memory and pods; other resources in whole units, not
    Volcano's thousandths, so a node's free GPUs index the per-HyperNode histograms. Integers make
    ``LessEqual``'s 0.1 tolerance an exact comparison."""
    scaled = amount * (vres.scale(resource) if resource in (vres.CPU, vres.MEMORY, vres.PODS) else 1)
    return math.ceil(scaled) if round_up else math.floor(scaled)


class Cluster:
    """Allocatable and used resources per node and per HyperNode (incrementally aggregated)."""

    use_buckets = True      # False: every choice among HyperNodes scans its gradient (the reference)

    def __init__(self, fabric: Fabric, resources: Sequence[str], weights: Mapping[str, int],
                 gpu_resource: str | None):
        self.fabric = fabric
        self.resources = list(resources)
        self.rindex = {r: i for i, r in enumerate(self.resources)}
        width = len(self.resources)
        self._init_nodes(fabric, gpu_resource, width)
        rendered, gid, loose = self._init_groups(fabric, width)
        chains = self._init_links(fabric, rendered, gid, width)
        self._init_loose(rendered, gid, loose, chains)
        self.g_index = {name: g for g, name in enumerate(self.g_name)}
        # A leaf's one allocatable vector when all its nodes share it (one pool), else None.
        self.g_pool_alloc = [self.node_alloc[nodes[0]] if nodes and all(self.node_alloc[n] is self.node_alloc[nodes[0]]
                                                                       for n in nodes) else None
                             for nodes in self.g_nodes]
        self._sorted_nodes: dict[int, list[int]] = {}
        self.candidates_at = {t: [gid[s.name] for s in rendered if s.tier == t and self.g_reach[gid[s.name]]]
                              for t in self.tiers}
        self._below: dict[int, dict[int, list[int]]] = {}
        self._nodes_below: dict[int, list[int]] = {}
        self._init_histograms(chains, len(self.g_name))
        self.weights = [(self.rindex[r], w) for r, w in sorted(weights.items()) if r in self.rindex and w > 0]
        self.all_weights = {self.rindex[r]: w for r, w in weights.items() if r in self.rindex and w >= 0}

    def _init_nodes(self, fabric: Fabric, gpu_resource: str | None, width: int) -> None:
        self.node_names = list(fabric.nodes)
        self.node_index = {n: i for i, n in enumerate(self.node_names)}
        self.gpu = self.rindex.get(gpu_resource) if gpu_resource else None
        by_pool: dict[str, list[int]] = {}
        for pool in fabric.pools.values():
            alloc = pool.allocatable()
            by_pool[pool.name] = [units(r, alloc.get(r, Decimal(0)), round_up=False) for r in self.resources]
        self.node_alloc = [by_pool[fabric.nodes[name].pool.name] for name in self.node_names]   # shared, read-only
        self.node_used = [[0] * width for _ in self.node_names]
        self.offered = {r for i, r in enumerate(self.resources) if any(a[i] > 0 for a in self.node_alloc)}


    def _init_groups(self, fabric: Fabric, width: int) -> tuple[list, dict[str, int], list[int]]:
        """HyperNodes with nodes below them, plus the cluster-top (and a virtual leaf for loose nodes)."""
        rendered = [s for s in fabric.switches.values() if fabric.node_count(s.name)]
        self.lowest_tier = min((s.tier for s in rendered), default=1)
        self.tiers = sorted({s.tier for s in rendered})
        self.top_tier = (max(self.tiers) + 1) if self.tiers else 1
        self.g_name = [TOP_NAME]
        self.g_tier = [self.top_tier]
        self.g_switch: list[str | None] = [None]
        gid = {}
        for s in rendered:
            gid[s.name] = len(self.g_name)
            self.g_name.append(s.hypernode or s.name)
            self.g_tier.append(s.tier)
            self.g_switch.append(s.name)
        # Nodes in no HyperNode: a virtual leaf that only the cluster-top reaches (never a candidate).
        loose = [i for i, name in enumerate(self.node_names) if fabric.nodes[name].leaf not in gid]
        if loose:
            self.g_name.append(LOOSE_NAME)
            self.g_tier.append(self.top_tier)
            self.g_switch.append(None)
        count = len(self.g_name)
        self.g_nodes: list[list[int]] = [[] for _ in range(count)]      # leaves: their nodes
        self.g_children: list[list[int]] = [[] for _ in range(count)]   # reachable child groups
        self.g_reach = [0] * count                                        # reachable nodes below
        self.g_alloc = [[0] * width for _ in range(count)]
        self.g_used = [[0] * width for _ in range(count)]
        self.node_chain: list[tuple[int, ...]] = [()] * len(self.node_names)
        self.orphans: list[int] = []                                      # leaves above the lowest tier

        return rendered, gid, loose

    def _init_links(self, fabric: Fabric, rendered: list, gid: dict[str, int], width: int) -> dict:
        """Leaves' nodes, reachable counts, children and each leaf's chain up to the cluster-top."""
        for s in rendered:
            g = gid[s.name]
            self.g_nodes[g] = [self.node_index[n] for n in s.nodes]
            if s.nodes and s.tier != self.lowest_tier:
                self.orphans.append(g)
        for s in rendered:                           # reachable node counts, leaves first
            if s.nodes and s.tier == self.lowest_tier:
                for sw in fabric.ancestors(s.name):
                    self.g_reach[gid[sw.name]] += len(s.nodes)
        self.g_reach[TOP] = len(self.node_names)
        for s in rendered:
            g = gid[s.name]
            self.g_children[g] = [gid[c] for c in s.children if c in gid and self.g_reach[gid[c]]]
        self.g_children[TOP] = [gid[s.name] for s in rendered if s.parent is None and self.g_reach[gid[s.name]]]
        self.g_children[TOP] += self.orphans
        chains: dict[str, tuple[int, ...]] = {}
        for s in rendered:                           # each leaf's sums go up its chain once
            if not s.nodes:
                continue
            g = gid[s.name]
            chain = (g, TOP) if g in self.orphans else tuple(gid[sw.name] for sw in fabric.ancestors(s.name)) + (TOP,)
            chains[s.name] = chain
            sums = [0] * width
            for n in self.g_nodes[g]:
                self.node_chain[n] = chain
                for r, amount in enumerate(self.node_alloc[n]):
                    sums[r] += amount
            for up in chain:
                row = self.g_alloc[up]
                for r, amount in enumerate(sums):
                    row[r] += amount
        return chains

    def _init_loose(self, rendered: list, gid: dict[str, int], loose: list[int], chains: dict) -> None:
        self.g_parent: list[int | None] = [None] + [gid[s.parent] if s.parent in gid else TOP for s in rendered]
        if loose:
            loose_group = len(self.g_name) - 1     # the virtual leaf is the last group
            chain = chains[LOOSE_NAME] = (loose_group, TOP)
            self.g_nodes[loose_group] = loose
            self.g_reach[loose_group] = len(loose)
            self.g_children[TOP].append(loose_group)
            self.g_parent.append(TOP)
            for n in loose:
                self.node_chain[n] = chain
                for up in chain:
                    row = self.g_alloc[up]
                    for r, amount in enumerate(self.node_alloc[n]):
                        row[r] += amount

    def _init_histograms(self, chains: dict, count: int) -> None:
        # Free-GPU histograms: how many nodes below each group have k GPUs free.
        self.max_gpus = max((a[self.gpu] for a in self.node_alloc), default=0) if self.gpu is not None else 0
        self.g_hist = [[0] * (self.max_gpus + 1) for _ in range(count)]
        if self.gpu is not None:
            for name, chain in chains.items():
                counts: dict[int, int] = {}
                for n in self.g_nodes[chain[0]]:
                    free = self.node_alloc[n][self.gpu]
                    counts[free] = counts.get(free, 0) + 1
                for up in chain:
                    for free, k in counts.items():
                        self.g_hist[up][free] += k
        # A group's state (used resources, free-GPU histogram) as a hashable key, refreshed only
        # after an allocation touched it: HyperNodes in the same state share eligibility and score.
        self.g_fixed = [tuple(row) for row in self.g_alloc]
        self.g_key: list[tuple | None] = [None] * count
        # Groups whose state changed since the state buckets last looked, and the buckets of the
        # candidate lists this cluster hands out (by the list's id; the list is kept alive with them).
        self.g_dirty: set[int] = set()
        self._buckets: dict[int, tuple[list[int], StateBuckets | None]] = {
            id(cands): (cands, None) for cands in self.candidates_at.values()}
        self._filed_in: dict[int, list[StateBuckets]] = {}    # group -> the built buckets it is in
        # Idle nodes below each group (nothing in use): alike pods that idle nodes alone hold need
        # no node-by-node look.
        self.g_idle = [0] * count
        for chain in chains.values():
            for up in chain:
                self.g_idle[up] += len(self.g_nodes[chain[0]])
        self.pool_allocs = list({tuple(a) for a in self.node_alloc})
        # futureIdle - idle per group (resources of releasing pods, less pipelined ones); None: none known
        self.g_future: list[list[int]] | None = None

    def group_of(self, hypernode: str | None) -> int | None:
        """The group of a HyperNode by its name (None when unknown or without nodes)."""
        return self.g_index.get(hypernode) if hypernode else None

    # --- state ------------------------------------------------------------------------------
    def need(self, requests: Mapping[str, Decimal]) -> Need:
        return [(self.rindex[r], units(r, amount, round_up=True)) for r, amount in sorted(requests.items())
                if amount > 0]

    def fits(self, node: int, need: Need) -> bool:
        alloc, used = self.node_alloc[node], self.node_used[node]
        return all(alloc[r] - used[r] >= amount for r, amount in need)

    def apply(self, node: int, need: Need, sign: int = 1) -> None:
        """Take (sign 1) or give back (sign -1) ``need`` on ``node`` and every group above it."""
        used = self.node_used[node]
        gpu = self.gpu
        before = self.node_alloc[node][gpu] - used[gpu] if gpu is not None else 0
        was_idle = not any(used)
        for r, amount in need:
            used[r] += sign * amount
        chain = self.node_chain[node]
        keys = self.g_key
        idle_change = (not any(used)) - was_idle
        for g in chain:
            row = self.g_used[g]
            for r, amount in need:
                row[r] += sign * amount
            keys[g] = None
            if idle_change:
                self.g_idle[g] += idle_change
        self.g_dirty.update(chain)
        if gpu is not None:
            after = self.node_alloc[node][gpu] - used[gpu]
            if after != before:
                lo, hi = min(max(before, 0), self.max_gpus), min(max(after, 0), self.max_gpus)
                for g in chain:
                    self.g_hist[g][lo] -= 1
                    self.g_hist[g][hi] += 1

    def rollback(self, txn: list[tuple[int, Need]]) -> None:
        for node, need in reversed(txn):
            self.apply(node, need, -1)
        txn.clear()

    def touch(self, g: int) -> None:
        """After ``g``'s used, futureIdle or histogram changed other than by ``apply``."""
        self.g_key[g] = None
        self.g_dirty.add(g)

    # --- group questions ------------------------------------------------------------------
    def state_key(self, g: int) -> tuple:
        key = self.g_key[g]
        if key is None:
            future = tuple(self.g_future[g]) if self.g_future is not None else ()
            key = self.g_key[g] = (self.g_fixed[g], tuple(self.g_used[g]), tuple(self.g_hist[g]), future)
        return key

    def add_future(self, node: int, need: Need, sign: int = 1) -> None:
        """Resources of a releasing pod on ``node`` (sign 1; a pipelined one: -1): idle once it is
        gone, so they count in the futureIdle of every group above the node."""
        if self.g_future is None:
            self.g_future = [[0] * len(self.resources) for _ in self.g_name]
        for g in self.node_chain[node]:
            row = self.g_future[g]
            for r, amount in need:
                row[r] += sign * amount
            self.touch(g)

    def idle_fits(self, g: int, need: Need) -> bool:
        """Volcano's allocate pre-filter (``isEligibleHyperNode``): the gang's minResources <= the
        HyperNode's idle resources, or <= its futureIdle (idle + releasing - pipelined)."""
        alloc, used = self.g_alloc[g], self.g_used[g]
        if all(alloc[r] - used[r] >= amount for r, amount in need):
            return True
        if self.g_future is None:
            return False
        future = self.g_future[g]
        return all(alloc[r] - used[r] + future[r] >= amount for r, amount in need)

    def eligible(self, g: int, need: Need, evict: bool = False) -> bool:
        """The gradient pre-filter for a purpose: allocation (``idle_fits``), or eviction
        (minResources <= the HyperNode's allocatable)."""
        if evict:
            alloc = self.g_alloc[g]
            return all(alloc[r] >= amount for r, amount in need)
        return self.idle_fits(g, need)

    def gpu_slots(self, g: int, per_pod: int) -> int:
        """Pods asking ``per_pod`` GPUs that the free GPUs below ``g`` could hold, node by node (a bound)."""
        hist = self.g_hist[g]
        return sum(nodes * (free // per_pod) for free, nodes in enumerate(hist) if nodes and free >= per_pod)

    def binpack(self, g: int, need: Need) -> float:
        """The plugin's HyperNode binpack score (volcano.md §4.5c, getSubJobHyperNodeBinPackingScore):
        over the weighted resources the pods request, the weighted mean of (used + request) /
        allocatable; 0 if any of them overflows (a weight of 0 still checks it)."""
        alloc, used = self.g_alloc[g], self.g_used[g]
        total = weight_sum = 0.0
        weight = self.all_weights
        for r, amount in need:
            w = weight.get(r)
            if w is None:
                continue
            want = used[r] + amount
            if want > alloc[r]:
                return 0.0
            total += w * want / alloc[r]
            weight_sum += w
        return total / weight_sum if weight_sum else 0.0

    def packing(self, g: int, need: Need) -> float:
        """How full ``g`` would be with ``need`` over every weighted resource it has (the node
        order's own measure, requested or not): 0 if a weighted resource overflows."""
        req = dict(need)
        alloc, used = self.g_alloc[g], self.g_used[g]
        total = weight_sum = 0.0
        for r, w in self.weights:
            want = used[r] + req.get(r, 0)
            if alloc[r] <= 0:
                if want > 0:
                    return 0.0
                continue
            if want > alloc[r]:
                return 0.0
            total += w * want / alloc[r]
            weight_sum += w
        return total / weight_sum if weight_sum else 0.0

    def node_packing(self, node: int) -> float:
        """How full a node is under the same weights (binpack node order: fuller first)."""
        alloc, used = self.node_alloc[node], self.node_used[node]
        total = weight_sum = 0.0
        for r, w in self.weights:
            if alloc[r] > 0:
                total += w * used[r] / alloc[r]
                weight_sum += w
        return total / weight_sum if weight_sum else 0.0

    def below(self, g: int, tier: int) -> list[int]:
        """Candidate groups at ``tier`` inside ``g`` (``g`` itself at its own tier)."""
        if g == TOP:
            return self.candidates_at.get(tier, [])
        cache = self._below.setdefault(g, {})
        if tier not in cache:
            out, stack = [], [g]
            while stack:
                current = stack.pop()
                if self.g_tier[current] == tier:
                    out.append(current)
                elif self.g_tier[current] > tier:
                    stack.extend(reversed(self.g_children[current]))
            cache[tier] = out
            self._buckets[id(out)] = (out, None)
        return cache[tier]

    def state_buckets(self, cands: list[int]) -> StateBuckets | None:
        """The state buckets of a candidate list from ``candidates_at`` or ``below`` (built on first
        use, brought up to date with every group changed since), None for any other list."""
        if not self.use_buckets:
            return None
        held = self._buckets.get(id(cands))
        if held is None or held[0] is not cands or len(cands) < BUCKETS_FROM:
            return None
        dirty, filed_in = self.g_dirty, self._filed_in
        if dirty:
            for g in dirty:
                for buckets in filed_in.get(g, ()):
                    buckets.refile(g)
            dirty.clear()
        buckets = held[1]
        if buckets is None:
            buckets = StateBuckets(cands, self.g_name, self.state_key)
            self._buckets[id(cands)] = (cands, buckets)
            for g in cands:
                filed_in.setdefault(g, []).append(buckets)
        return buckets

    def nodes_below(self, g: int) -> list[int]:
        """The nodes Volcano reaches through ``g`` (its reachable leaves' nodes), fabric order."""
        nodes = self._nodes_below.get(g)
        if nodes is None:
            if g == TOP:
                nodes = list(range(len(self.node_names)))
            elif self.g_nodes[g]:
                nodes = self.g_nodes[g]
            else:
                nodes = sorted(n for c in self.g_children[g] for n in self.nodes_below(c))
            self._nodes_below[g] = nodes
        return nodes

    def node_slots(self, node: int, need: Need) -> int:
        """How many more pods asking ``need`` fit on ``node`` (every resource counts)."""
        alloc, used = self.node_alloc[node], self.node_used[node]
        slots = None
        for r, amount in need:
            k = (alloc[r] - used[r]) // amount
            if slots is None or k < slots:
                slots = k
        return 0 if slots is None else slots

    def holds_pods(self, g: int, need: Need, pods: int) -> bool:
        """Do the nodes below ``g`` have room for ``pods`` pods asking ``need``, node by node?"""
        gpus = dict(need).get(self.gpu, 0) if self.gpu is not None else 0
        if gpus and self.gpu_slots(g, gpus) < pods:          # the cheap histogram bound first
            return False
        on_idle = min((min(((a[r]) // amount for r, amount in need), default=0) for a in self.pool_allocs),
                      default=0)
        if self.g_idle[g] * on_idle >= pods:                 # idle nodes alone hold them: no scan
            return True
        room = 0
        for n in self.nodes_below(g):
            room += max(self.node_slots(n, need), 0)
            if room >= pods:
                return True
        return False

    def holds(self, g: int, remaining: list[int], uniform: Need | None, pods: int) -> bool:
        """Could ``g`` take everything still to place? Idle resources, and for alike pods the room
        node by node (fragmented idle resources do not hold whole pods)."""
        alloc, used = self.g_alloc[g], self.g_used[g]
        if any(alloc[r] - used[r] < amount for r, amount in enumerate(remaining) if amount > 0):
            return False
        return not uniform or self.holds_pods(g, uniform, pods)

    def rooms(self, nodes: list[int], need: Need) -> dict[int, int]:
        """``node_slots`` of each of ``nodes`` that has room for a pod asking ``need``, in their
        order. A node short of the pod's GPUs is passed over at once, an idle one reads its
        pool's room (computed once per call)."""
        alloc_of, used_of, gpu = self.node_alloc, self.node_used, self.gpu
        gpus = dict(need).get(gpu, 0) if gpu is not None else 0
        on_idle: dict[int, int] = {}
        out: dict[int, int] = {}
        for n in nodes:
            alloc, used = alloc_of[n], used_of[n]
            if gpus and alloc[gpu] - used[gpu] < gpus:
                continue
            if any(used):
                room = min(((alloc[r] - used[r]) // amount for r, amount in need), default=0)
            else:
                room = on_idle.get(id(alloc))
                if room is None:
                    room = on_idle[id(alloc)] = min((alloc[r] // amount for r, amount in need), default=0)
            if room > 0:
                out[n] = room
        return out

    def may_host(self, g: int, need: Need, gpus: int) -> bool:
        """Might a node below ``g`` take one pod asking ``need`` (``gpus`` of its GPU resource)?
        False when the idle resources of ``g`` or its free-GPU histogram rule out every node."""
        alloc, used = self.g_alloc[g], self.g_used[g]
        if any(alloc[r] - used[r] < amount for r, amount in need):
            return False
        return not gpus or any(self.g_hist[g][gpus:])

    def node_holds(self, node: int, remaining: list[int]) -> bool:
        alloc, used = self.node_alloc[node], self.node_used[node]
        return all(alloc[r] - used[r] >= amount for r, amount in enumerate(remaining) if amount > 0)

    def fractional(self, need: Need) -> bool:
        """Do pods asking ``need`` share nodes (GPU pods smaller than a node), so that a node can end
        up with a sliver of a gang's ranks?"""
        gpus = dict(need).get(self.gpu, 0) if self.gpu is not None else 0
        return bool(gpus) and 2 * gpus <= self.max_gpus

    def sliver_floor(self, g: int, need: Need, pods: int) -> int:
        """The largest k such that the nodes below ``g`` with room for k or more pods hold all
        ``pods``: nodes with less room are used last, so no node gets a sliver it need not."""
        rooms = sorted(self.rooms(self.nodes_below(g), need).values(), reverse=True)
        if not rooms or rooms[0] >= pods:      # one node takes them all: no sliver to avoid
            return 1
        total = 0
        for room in rooms:
            total += room
            if total >= pods:
                return room
        return 1

    def leaf_plan(self, nodes: list[int], need: Need, pods: int, floor: int = 1) -> tuple[list[int], list[int]]:
        """A leaf's nodes in the order ``pods`` alike pods should fill them, and the nodes with
        room for fewer than ``floor`` pods, set aside: as few nodes as possible, none left with a
        sliver of the gang's ranks (a node running 2 of its 8 GPUs drives 2 of its 8 NICs and slows
        the whole ring).

        The nodes with room for the most pods go first until the pods still to place fit on one
        node; that one is the tightest such node, set aside or not (the fullest on ties: binpack).
        A node that holds the whole gang is therefore the tightest one that does. The others
        follow, most room first; nodes without room for one pod are left out (alike pods never
        fit there during the dry-run: usage only grows).
        """
        room = self.rooms(nodes, need)
        used = self.node_used
        packing = {n: self.node_packing(n) if any(used[n]) else 0.0 for n in room}
        low = [n for n, r in room.items() if r < floor]
        rest = [n for *_, n in sorted([(-r, -packing[n], n) for n, r in room.items() if r >= floor])]
        plan: list[int] = []
        want = pods
        while want > 0 and rest:
            if room[rest[0]] < want:         # not even the roomiest node takes the rest: fill it
                want -= room[rest[0]]
                plan.append(rest.pop(0))
                continue
            # The last few pods: the tightest node that takes them, a set-aside one too (a sliver
            # is unavoidable here, and a small node loses the least by it).
            tightest = min((n for n in rest + low if room[n] >= want), key=lambda n: (room[n], -packing[n], n))
            plan.append(tightest)
            (rest if room[tightest] >= floor else low).remove(tightest)
            break
        return plan + rest, low

    def idle_leaf_plan(self, g: int, need: Need, floor: int = 1) -> tuple[list[int], list[int]]:
        """``leaf_plan`` of a leaf whose nodes are all idle and alike: every node has the same room
        and packing, so the plan is the nodes in fabric order (or none, all set aside, when that
        room is under ``floor``)."""
        alloc = self.g_pool_alloc[g]
        room = min((alloc[r] // amount for r, amount in need), default=0)
        if room <= 0:
            return [], []
        if room < floor:
            return [], list(self.g_nodes[g])
        ordered = self._sorted_nodes.get(g)
        if ordered is None:
            ordered = self._sorted_nodes[g] = sorted(self.g_nodes[g])
        return list(ordered), []

    def _near_context(self, root: int, near: int | None,
                      running: Sequence[int]) -> tuple[set[int], dict[int, int], set[int]]:
        """The network-topology-aware plugin's view of a partly running job: the HyperNodes holding
        ``near`` (its allocated HyperNode), its running tasks per HyperNode, and the groups known to
        be below ``near`` (``root`` when it is)."""
        near_chain: set[int] = set()
        tasks: dict[int, int] = {}
        under: set[int] = set()
        if near is None:
            return near_chain, tasks, under
        g = near
        while g is not None:
            near_chain.add(g)
            g = self.g_parent[g]
        for n in running:
            for g in self.node_chain[n]:
                tasks[g] = tasks.get(g, 0) + 1
        g = root
        while g is not None:
            if g == near:
                under.add(root)
                break
            g = self.g_parent[g]
        return near_chain, tasks, under

    def _leaf_order(self, g: int, scope: int, remaining: list[int], uniform: Need | None, alike: int,
                    fractional: bool, floors: dict[int, int], set_aside: dict[int, list[int]]) -> list[int]:
        """The nodes of leaf ``g`` in the order ``node_order`` offers them (see there); the nodes alike
        pods set aside go to ``set_aside[scope]``."""
        if uniform:
            if fractional and scope not in floors:
                floors[scope] = self.sliver_floor(scope, uniform, alike)
            if self.g_idle[g] == len(self.g_nodes[g]) and self.g_pool_alloc[g] is not None:
                plan, low = self.idle_leaf_plan(g, uniform, floors.get(scope, 1))
            else:
                plan, low = self.leaf_plan(self.g_nodes[g], uniform, alike, floors.get(scope, 1))
            set_aside.setdefault(scope, []).extend(low)
            return plan
        keyed = []
        for n in self.g_nodes[g]:
            packing = self.node_packing(n)
            keyed.append((0, -packing, n) if self.node_holds(n, remaining) else (1, packing, n))
        keyed.sort()
        return [n for *_, n in keyed]

    def node_order(self, root: int, remaining: list[int], uniform: Need | None = None,
                   left: list[int] | None = None, near: int | None = None,
                   running: Sequence[int] = ()) -> Iterator[list[int]]:
        """Nodes of ``root`` in binpack order, depth first, so a gang stays as close together as it can;
        a list of nodes at a time (a leaf's, a scope's set-aside ones), computed when asked for.

        At each level, the children that can take everything still to place (``remaining``;
        ``left[0]`` pods asking ``uniform`` each when they are all alike), read when the level is
        reached, come first, the fullest first (binpack). Then the other HyperNodes, fullest
        first. Alike pods pass over the HyperNodes and nodes where not one of them fits (``may_host``,
        ``rooms``). Inside a leaf, alike pods follow ``leaf_plan``; pods smaller than a node set aside
        the nodes below the ``sliver_floor`` of the nearest HyperNode that holds the rest of the
        gang, and take them only after that HyperNode's other nodes. Unlike pods take the nodes
        that hold everything still to place first (fullest first), then the others emptiest
        first. Ties by name, fabric order for nodes.

        ``near`` (a partly running job's allocated HyperNode) puts the network-topology-aware
        plugin's node score first (``nodescore.py``): the children holding ``near`` come first (their
        nodes share the lowest LCA with it), and among the children below ``near``, which tie on
        that score, those holding more of the job's ``running`` tasks (the plugin's taskNum).
        """
        pods = left if left is not None else [0]
        near_chain, tasks, under = self._near_context(root, near, running)
        fractional = uniform is not None and self.fractional(uniform)
        gpus = dict(uniform).get(self.gpu, 0) if uniform and self.gpu is not None else 0
        floors: dict[int, int] = {}
        set_aside: dict[int, list[int]] = {}
        stack = [(~root, root), (root, root)]         # (group, scope); ~scope: the end of a scope
        while stack:
            g, scope = stack.pop()
            if g < 0:
                yield set_aside.pop(~g, [])
                continue
            if self.g_nodes[g]:
                yield self._leaf_order(g, scope, remaining, uniform, pods[0], fractional, floors, set_aside)
                continue
            rest = [(r, a) for r, a in enumerate(remaining) if a > 0]
            keyed = []
            inside = g in under or g == near
            for c in self.g_children[g]:
                if uniform and not self.may_host(c, uniform, gpus):
                    continue                          # alike pods fit on none of its nodes
                fits = self.holds(c, remaining, uniform, pods[0])
                plugin = (0, 0)
                if near is not None:
                    if inside:
                        under.add(c)
                    plugin = (0 if c in near_chain else 1, -tasks.get(c, 0) if inside else 0)
                keyed.append((*plugin, 0 if fits else 1, -self.packing(c, rest if fits else []), self.g_name[c], c))
            keyed.sort()
            for _, _, fits, _, _, c in reversed(keyed):
                if fits == 0:
                    stack.append((~c, c))
                    stack.append((c, c))
                else:
                    stack.append((c, scope))

    # --- reporting ------------------------------------------------------------------------
    def node_gpus(self, node: int) -> int:
        return self.node_alloc[node][self.gpu] if self.gpu is not None else 0
