"""The fabric model: a tree of switches (tier 1 = closest to the nodes), nodes under leaf switches,
optional accelerator (NVLink) domains, and what each node can allocate.

Built once per render by ``build_fabric(ctx)`` and shared: the fabric module renders HyperNodes
from it, policies and the simulator ask it capacity questions.

Two kinds of fabric:

* **static** (sources inline, generated, topograph, file): ``switches`` holds every switch that has
  nodes below it (each becomes one HyperNode), ``nodes`` every node the source declares. Switches
  without nodes are dropped (``empty_switches`` names them): Volcano would only see empty HyperNodes.
* **label-defined** (source labels): Volcano's label discoverer builds the tree at run time from node
  labels. ``discovery`` holds its configuration, ``tier_names`` the tiers it will create, and
  ``switches`` and ``nodes`` are empty: capacity questions have no answer (``capacity_known`` is
  False) and callers must say so rather than report "does not fit".
"""
from __future__ import annotations

import functools
import operator
import re
from collections import Counter
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Callable, Iterator

from modules.core.errors import InputError, show
from modules.core.patterns import Pattern, PatternError, compile_go
from modules.core.quantity import parse_quantity
from modules.core.vocabulary.names import is_dns1123_subdomain
from modules.semantics.capacity import Domain  # noqa: F401 (re-exported: the model answers capacity questions)

if TYPE_CHECKING:
    from modules.core.context import RenderContext

    from .hostlist import NumberedRange

_LABEL_BAD = re.compile(r"[^a-z0-9-]")


def is_k8s_name(name: str) -> bool:
    """A valid name for a Node or HyperNode (DNS-1123 subdomain)."""
    return is_dns1123_subdomain(name)


def k8s_name(raw: str) -> str:
    """A valid Kubernetes object name for a source name (``I21`` -> ``i21``, ``Rack 1`` -> ``rack-1``).

    Lower-cases and turns every other character into ``-`` (as topograph's node names do), trims
    ``-`` around each dot-separated part and drops empty parts, and shortens names over 253 characters
    with a hash suffix so they stay distinct.
    """
    if is_k8s_name(raw):
        return raw
    parts = [_LABEL_BAD.sub("-", part).strip("-") for part in raw.lower().split(".")]
    name = ".".join(p for p in parts if p)    # "" when nothing usable is left: callers report it
    if len(name) > 253:
        import hashlib   # a rare name; OpenSSL's load costs every command 3 ms

        digest = hashlib.sha256(raw.encode()).hexdigest()[:10]
        name = name[:242].rstrip("-.") + "-" + digest
    return name


@dataclass(frozen=True)
class NodePool:
    """What every node of a pool can allocate."""

    name: str
    match: Pattern   # an RE2 pattern (compile_go) or our own re.Pattern
    gpus: int
    gpu_resource: str
    gpu_type: str | None
    cpu_milli: int
    memory_bytes: int
    resources: dict[str, int]   # other extended resources, e.g. RDMA devices
    taints: tuple[dict, ...] = ()

    def allocatable(self) -> dict[str, Decimal]:
        """Resource -> amount one node can allocate (a fresh dict: callers may change it)."""
        return dict(self._allocatable)

    @functools.cached_property
    def _allocatable(self) -> dict[str, Decimal]:   # asked for once per node and candidate: build it once
        out = {"cpu": Decimal(self.cpu_milli) / 1000, "memory": Decimal(self.memory_bytes)}
        if self.gpus:
            out[self.gpu_resource] = Decimal(self.gpus)
        out.update({k: Decimal(v) for k, v in self.resources.items()})
        return out


@dataclass(slots=True)            # slots: fabrics hold tens of thousands of nodes
class Node:
    """A Kubernetes node of the fabric: the leaf switch it hangs off and its node pool."""
    name: str                      # the Kubernetes node name
    leaf: str | None               # the switch the node hangs off; None: under no switch (no HyperNode)
    pool: NodePool
    domain: str | None = None      # accelerator (NVLink) domain, if any
    labels: dict = field(default_factory=dict)   # node labels the source knows (topograph blocks)
    subdomain: str | None = None   # accelerator sub-domain (topograph), if any

    @property
    def gpus(self) -> int:
        return self.pool.gpus


@dataclass
class Switch:
    """A switch of the fabric (one HyperNode): its tier, its parent and what hangs below it."""
    name: str                      # as the source names it
    tier: int
    parent: str | None = None
    children: list[str] = field(default_factory=list)   # child switches with nodes below them
    nodes: list[str] = field(default_factory=list)      # nodes directly below (leaves only)
    labels: dict = field(default_factory=dict)
    hypernode: str = ""            # the normalized HyperNode name
    where: str = ""                # path of its declaration in ``Fabric.file``, for messages
    selector: dict | None = None   # leaf defined by node labels: a Kubernetes LabelSelector
    numbered: "NumberedRange | None" = None   # the leaf's nodes are exactly this range (from its source)

    @property
    def is_leaf(self) -> bool:
        return not self.children


@dataclass(frozen=True)
class Link:
    """Bus bandwidth (GB/s = 1e9 B/s, per node) and per-step latency for traffic crossing a tier."""

    bandwidth_gbps: float
    latency_us: float


class Fabric:
    """A validated switch tree (or a label-defined fabric with ``discovery`` and no switches)."""

    def __init__(self, source: str, tier_names: dict[int, str], switches: dict[str, Switch],
                 nodes: dict[str, Node], pools: dict[str, NodePool], discovery: list[dict] | None = None,
                 mixed_depth: bool = False, links: dict[int, Link] | None = None, file: str = "",
                 empty_switches: list[str] | None = None, declared_in_stack: bool = True,
                 one_pool: NodePool | None = None):
        self.source = source
        self.tier_names = tier_names
        self.switches = switches
        self.nodes = nodes
        self.pools = pools
        self.discovery = discovery      # Volcano networkTopologyDiscovery entries (label-defined fabrics)
        self.mixed_depth = mixed_depth  # the stack accepts leaves at different depths (allowMixedDepth)
        self.links = links or {}        # tier -> Link; tier 0 is inside a node (NVLink)
        self.file = file                # where the switches are declared (stack or fabric file)
        self.empty_switches = empty_switches or []   # declared switches with no node below: no HyperNode
        self.declared_in_stack = declared_in_stack   # switch paths are below trainstack: in the stack file
        self.graph = None               # the HyperNode graph its checks ran on (semantics/hypernodes.py)
        self._node_count: dict[str, int] = {}
        self._gpu_count: dict[str, int] = {}
        self._own_pools: dict[str, dict[str, int]] = {}   # switch -> its own nodes (a leaf's) per pool
        self._pool_counts: dict[str, dict[str, int]] = {}
        self._reachable_counts: dict[str, dict[str, int]] = {}
        self._reachable_tier: int | None | bool = False   # False: not computed yet
        self._count_shapes: dict[int, list[dict[str, int]]] = {}
        self._compute_aggregates(one_pool)

    def error(self, where: str, message: str) -> InputError:
        """A mistake in the fabric, at a declaration path such as ``Switch.where``."""
        return InputError(self.file, f"trainstack:{where}" if self.declared_in_stack else where, message)

    # --- structure -------------------------------------------------------------------------
    @property
    def label_defined(self) -> bool:
        """Volcano discovers this fabric from node labels; trainstack knows no switches or nodes."""
        return self.discovery is not None

    @property
    def capacity_known(self) -> bool:
        """Whether node/GPU counts mean anything (False for label-defined fabrics)."""
        return not self.label_defined

    @property
    def tiers(self) -> list[int]:
        """Tiers that have HyperNodes (for label fabrics: the tiers the discoverer will create)."""
        return sorted(set(self.tier_names) | {s.tier for s in self.switches.values()})

    @property
    def lowest_tier(self) -> int | None:
        tiers = self.tiers
        return tiers[0] if tiers else None

    @property
    def highest_tier(self) -> int | None:
        tiers = self.tiers
        return tiers[-1] if tiers else None

    def tier_of_name(self, tier_name: str) -> int | None:
        for tier, name in self.tier_names.items():
            if name == tier_name:
                return tier
        return None

    def roots(self) -> list[Switch]:
        return [s for s in self.switches.values() if s.parent is None]

    def leaves(self) -> list[Switch]:
        return [s for s in self.switches.values() if s.is_leaf]

    def at_tier(self, tier: int) -> list[Switch]:
        return [s for s in self.switches.values() if s.tier == tier]

    def ancestors(self, switch: str) -> Iterator[Switch]:
        """The switch itself, then its parent, up to the root."""
        current: str | None = switch
        while current is not None:
            node = self.switches[current]
            yield node
            current = node.parent

    def leaf_of(self, node: str) -> Switch | None:
        """The leaf switch a node hangs off, or None when it is under no switch."""
        leaf = self.nodes[node].leaf
        return self.switches[leaf] if leaf is not None else None

    def unattached(self) -> list[str]:
        """Nodes the source declares that hang off no switch (they are in no HyperNode)."""
        return [n.name for n in self.nodes.values() if n.leaf is None]

    def lca(self, a: str, b: str) -> Switch | None:
        """Lowest common ancestor switch of two switches, or None if they are in different trees."""
        seen = {s.name for s in self.ancestors(a)}
        for s in self.ancestors(b):
            if s.name in seen:
                return s
        return None

    def nodes_under(self, switch: str) -> list[str]:
        """Every node below a switch, in fabric order."""
        out: list[str] = []
        stack = [switch]
        while stack:
            current = self.switches[stack.pop()]
            out.extend(current.nodes)
            stack.extend(reversed(current.children))
        return out

    def accelerator_domains(self) -> dict[str, list[str]]:
        """Accelerator (NVLink) domain -> its nodes, in fabric order."""
        out: dict[str, list[str]] = {}
        for node in self.nodes.values():
            if node.domain is not None:
                out.setdefault(node.domain, []).append(node.name)
        return out

    # --- capacity ---------------------------------------------------------------------------
    def node_count(self, switch: str) -> int:
        return self._node_count[switch]

    def gpu_count(self, switch: str) -> int:
        return self._gpu_count[switch]

    @property
    def total_gpus(self) -> int:
        return sum(n.pool.gpus for n in self.nodes.values())

    def largest_domain(self, tier: int) -> Domain | None:
        """The switch at ``tier`` with the most GPUs (then nodes, then name), or None."""
        best = None
        for s in self.at_tier(tier):
            cand = (self._gpu_count[s.name], self._node_count[s.name], s.name)
            if best is None or cand[:2] > best[:2] or (cand[:2] == best[:2] and cand[2] < best[2]):
                best = cand
        if best is None:
            return None
        return Domain(switch=best[2], tier=tier, nodes=best[1], gpus=best[0])

    def domains_up_to(self, tier: int) -> list[Domain]:
        """Every non-empty switch at or below ``tier``, as a Domain."""
        return [Domain(s.name, s.tier, self._node_count[s.name], self._gpu_count[s.name])
                for s in self.switches.values() if s.tier <= tier and self._node_count[s.name]]

    def link(self, tier: int) -> Link:
        """The link crossing ``tier`` (0 = inside a node); tiers beyond the list reuse the last one."""
        if tier in self.links:
            return self.links[tier]
        known = [t for t in self.links if t <= tier] or sorted(self.links)
        return self.links[max(known)]

    @property
    def reachable_leaf_tier(self) -> int | None:
        """The tier Volcano searches for nodes: the lowest tier that has nodes below it."""
        if self._reachable_tier is False:
            tiers = [s.tier for s in self.switches.values() if self._node_count[s.name]]
            self._reachable_tier = min(tiers) if tiers else None
        return self._reachable_tier

    def reachable_pool_counts(self, switch: str) -> dict[str, int]:
        """Like pool_counts, but only nodes whose leaf sits at the reachable tier: Volcano finds no
        other node for a hard-mode job (a mixed-depth tree's higher leaves are invisible to it)."""
        return self._count_pools(switch, self._reachable_counts,
                                 lambda s: s.tier == self.reachable_leaf_tier)

    def pool_counts(self, switch: str) -> dict[str, int]:
        """Nodes of each pool below a switch (capacity questions are asked per pool)."""
        return self._count_pools(switch, self._pool_counts, lambda s: True)

    def nodes_per_pool(self) -> dict[str, int]:
        """Pool -> how many of the fabric's nodes it holds, under a switch or not."""
        counts: dict[str, int] = {}
        for own in self._own_pools.values():   # each leaf's, counted once when the model was built
            for pool, k in own.items():
                counts[pool] = counts.get(pool, 0) + k
        if sum(counts.values()) != len(self.nodes):   # nodes under no switch: count them all
            return dict(Counter(map(_POOL_NAME, self.nodes.values())))
        return counts

    def pool_count_shapes(self, tier: int) -> list[dict[str, int]]:
        """The distinct ``pool_counts`` of the switches at or below ``tier``: a largest domain is
        found among these few (the 512 leaves of a 16,384-node fat-tree have one), not per switch."""
        shapes = self._count_shapes.get(tier)
        if shapes is None:
            distinct: dict[tuple, dict[str, int]] = {}
            known = self._pool_counts   # most switches were counted for a lower tier already
            for s in self.switches.values():
                if s.tier <= tier:
                    counts = known.get(s.name)
                    if counts is None:
                        counts = self.pool_counts(s.name)
                    distinct.setdefault(tuple(counts.items()), counts)
            shapes = self._count_shapes[tier] = list(distinct.values())
        return shapes

    def _count_pools(self, switch: str, cache: dict[str, dict[str, int]],
                     counts_own_nodes: Callable[["Switch"], bool]) -> dict[str, int]:
        """Pool -> node count below ``switch``, bottom-up and cached (each switch is summed once)."""
        cached = cache.get(switch)
        if cached is None:
            s = self.switches[switch]
            counts: dict[str, int] = {}
            if counts_own_nodes(s):
                counts.update(self._own_pools[switch])
            for child in s.children:
                for pool, k in self._count_pools(child, cache, counts_own_nodes).items():
                    counts[pool] = counts.get(pool, 0) + k
            cached = cache[switch] = counts
        return cached

    def _compute_aggregates(self, one_pool: NodePool | None) -> None:
        """``one_pool``: the builder put every node in this pool, so a leaf's nodes per pool is its
        node count (no pass over 16,384 nodes to count them again)."""
        # Children before parents: sort by tier (parents are always above their children).
        nodes_by_name, pools = self.nodes, self.pools
        for s in sorted(self.switches.values(), key=lambda s: s.tier):
            count = len(s.nodes)
            if one_pool is not None:
                self._own_pools[s.name] = {one_pool.name: count} if count else {}
                gpus = one_pool.gpus * count
            else:   # one pass over a leaf's nodes, in C: its nodes per pool, and from them its GPUs
                own = self._own_pools[s.name] = dict(Counter(map(_POOL_NAME, map(nodes_by_name.__getitem__,
                                                                                  s.nodes))))
                if all(name in pools for name in own):
                    gpus = sum(pools[name].gpus * k for name, k in own.items())
                else:   # a model built by hand, its pools not listed
                    gpus = sum(map(_POOL_GPUS, map(nodes_by_name.__getitem__, s.nodes)))
            for c in s.children:
                count += self._node_count[c]
                gpus += self._gpu_count[c]
            self._node_count[s.name] = count
            self._gpu_count[s.name] = gpus


_POOL_NAME = operator.attrgetter("pool.name")
_POOL_GPUS = operator.attrgetter("pool.gpus")


def build_pools(ctx: "RenderContext", section: dict) -> list[NodePool]:
    pools = []
    for i, raw in enumerate(section["nodePools"]):
        where = f"fabric.nodePools[{i}]"
        try:
            match = compile_go(raw["match"])
        except PatternError as exc:
            raise ctx.error(f"{where}.match", f"the pattern {show(raw['match'], 80)} {exc}") from None
        memory = parse_quantity(raw["memory"])
        pools.append(NodePool(
            name=raw["name"], match=match, gpus=raw["gpus"], gpu_resource=raw["gpuResource"],
            gpu_type=raw.get("gpuType"), cpu_milli=int(parse_quantity(raw["cpu"]) * 1000),
            memory_bytes=int(memory), resources=dict(raw.get("resources", {})),
            taints=tuple(raw.get("taints", ()))))
    names = [p.name for p in pools]
    for i, name in enumerate(names):
        if names.index(name) != i:
            raise ctx.error(f"fabric.nodePools[{i}].name", f"pool name {name!r} is used twice")
    return pools


def build_links(section: dict) -> dict[int, Link]:
    links = section["links"]
    out = {0: Link(float(links["node"]["bandwidthGBps"]), float(links["node"]["latencyUs"]))}
    for i, tier in enumerate(links["tiers"], start=1):
        out[i] = Link(float(tier["bandwidthGBps"]), float(tier["latencyUs"]))
    return out


def build_fabric(ctx: "RenderContext") -> Fabric:
    """Build the stack's fabric from its source (see importers.py) and validate it."""
    from . import importers, validate

    fabric = importers.load(ctx)
    validate.check(ctx, fabric)
    return fabric
