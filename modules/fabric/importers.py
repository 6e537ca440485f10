"""Fabric sources -> one assembled ``Fabric``.

Every static source turns its input into ``RawSwitch`` and ``RawBlock`` records and hands them to
``assemble``, which runs the HyperNode graph's structural checks (``modules/semantics/hypernodes.py``:
one parent per switch, no cycles, each node under one leaf, tiers increasing upward) and reports a
problem as a stack error at the file and path of the declaration, carrying the rule id.
``labels`` has no tree: it becomes Volcano label-discoverer configuration (``Fabric.discovery``).
"""
from __future__ import annotations

import copy
import functools
import itertools
import operator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

import yaml

from modules.core import schema as schemas
from modules.core import yamlio
from modules.core.config import module_schema
from modules.core.patterns import whole_matcher
from modules.core.errors import InputError
from modules.core.secrets import find_credentials
from modules.semantics import hypernodes as hn
from modules.core.vocabulary.names import is_qualified_name

from . import hostlist
from .model import Fabric, Node, NodePool, Switch, build_links, build_pools, is_k8s_name, k8s_name

if TYPE_CHECKING:
    from modules.core.context import RenderContext

ErrorAt = Callable[[str, str], InputError]
DEFAULT_TIER_NAMES = ("leaf", "spine", "core")
# Options that only one source reads; giving one with another source is a mistake worth naming.
SOURCE_OPTIONS = {"path": ("topograph", "file"), "generated": ("generated",), "switches": ("inline",),
                  "nodes": ("inline",), "labels": ("labels",)}


@dataclass
class RawBlock:
    """Nodes declared together (a topograph block, a leaf's node list, one accelerator domain)."""

    where: str                          # path of the declaration, for messages
    nodes: list[str]
    domain: str | None = None
    subdomain: str | None = None
    labels: dict = field(default_factory=dict)   # node labels, shared by the block's nodes
    checked: bool = False               # names are known to be valid Kubernetes names
    numbered: hostlist.NumberedRange | None = None   # the nodes are exactly this range


@dataclass
class RawSwitch:
    """A switch as a fabric source declares it, before the model checks and normalizes it."""
    name: str
    where: str                          # path of its declaration, for messages
    tier: int | None = None
    children: list[str] = field(default_factory=list)
    blocks: list[RawBlock] = field(default_factory=list)
    labels: dict = field(default_factory=dict)
    selector: dict | None = None        # leaf members chosen by node labels (labelMatch)


def tier_names_for(section: dict, tiers: list[int]) -> dict[int, str]:
    given = section.get("tierNames") or []
    names = {}
    for tier in tiers:
        if tier - 1 < len(given):
            names[tier] = given[tier - 1]
        elif tier - 1 < len(DEFAULT_TIER_NAMES):
            names[tier] = DEFAULT_TIER_NAMES[tier - 1]
        else:
            names[tier] = f"tier-{tier}"
    return names


# --- assembling a tree ----------------------------------------------------------------------

def assemble(ctx: "RenderContext", source: str, raws: list[RawSwitch], error_at: ErrorAt,
             section: dict, file: str, unattached: list[RawBlock] = (),
             inventory: list[RawBlock] | None = None) -> Fabric:
    """Check the declared tree and build the Fabric.

    ``unattached``: nodes the source declares under no switch. ``inventory``: every node the
    cluster has, when the source lists them; nodes under leaves must be in it.
    """
    graph = _graph(raws)
    declared = _declared_once(raws, list(unattached))
    checks = (hn.duplicates, hn.unknown_children, hn.two_parents, hn.cycles, hn.mixed_members)
    # A node under two leaves is shared_nodes' problem: there is none when every node is declared once.
    _raise_first(graph, checks if declared is not None else checks + (hn.shared_nodes,), error_at)
    switches = {name: v.ref for name, v in graph.vertices.items()}
    parent = {child: owners[0][0] for child, owners in graph.parents().items()}

    owner_of = _owners(raws, list(unattached), inventory, error_at, declared)

    order = _children_first(switches, parent)
    counts: dict[str, int] = {}
    for name in order:
        raw = switches[name]
        counts[name] = sum([len(b.nodes) for b in raw.blocks]) + sum([counts[c] for c in raw.children])
    tiers = _assign_tiers(switches, order, counts)
    graph.prune(name for name in switches if counts[name])   # empty switches become no HyperNode
    tier_names = tier_names_for(section, sorted({tiers[name] for name in graph.vertices}))
    for name, vertex in graph.vertices.items():
        vertex.tier, vertex.tier_name = tiers[name], tier_names[tiers[name]]
    _raise_first(graph, (hn.tier_order,), error_at)

    kept = [raw for raw in raws if counts[raw.name]]
    hypernode_names: dict[str, str] = {}   # HyperNode name -> switch
    hypernode_of: dict[str, str] = {}      # switch -> HyperNode name
    for raw in kept:
        name = hypernode_of[raw.name] = k8s_name(raw.name)
        if not name:
            raise error_at(raw.where, f"switch name {raw.name!r} has no letters or digits to make a "
                           "HyperNode name from; rename it")
        if name in hypernode_names:
            raise error_at(raw.where, f"switches {hypernode_names[name]!r} and {raw.name!r} both become "
                           f"HyperNode {name!r}; rename one")
        hypernode_names[name] = raw.name

    out: dict[str, Switch] = {}
    for raw in kept:
        out[raw.name] = Switch(name=raw.name, tier=tiers[raw.name], parent=parent.get(raw.name),
                               children=[c for c in raw.children if counts[c]],
                               nodes=list(itertools.chain.from_iterable([b.nodes for b in raw.blocks])),   # in C
                               labels=dict(raw.labels),
                               hypernode=hypernode_of[raw.name], where=raw.where, selector=raw.selector,
                               numbered=raw.blocks[0].numbered if len(raw.blocks) == 1 else None)

    if unattached or inventory is not None:   # else every node is under a leaf: no scan of them all
        _check_coverage(ctx, section, graph, owner_of, error_at)
    pools = build_pools(ctx, section)
    only = _only_pool(pools)
    nodes = _make_nodes(ctx, pools, only, owner_of)
    fabric = Fabric(source=source, tier_names=tier_names, switches=out, nodes=nodes,
                    pools={p.name: p for p in pools}, mixed_depth=section.get("allowMixedDepth", False),
                    links=build_links(section), file=file, declared_in_stack=file == ctx.stack.file,
                    empty_switches=[raw.name for raw in raws if not counts[raw.name]], one_pool=only)
    fabric.graph = graph
    return fabric


def _declared_once(raws: list[RawSwitch], unattached: list[RawBlock]) -> dict[str, tuple[str | None, RawBlock]] | None:
    """Node -> (its leaf or None, the block declaring it) when no node is declared twice, else None
    (``_owners`` then names the first one, after the graph's checks). Raises nothing."""
    # One dictionary entry per node, shared by its whole block, keeps this loop cheap on 65k-node fabrics.
    owner_of: dict[str, tuple[str | None, RawBlock]] = {}
    for owner, blocks in [(raw.name, raw.blocks) for raw in raws] + [(None, unattached)]:
        for block in blocks:
            before = len(owner_of)
            owner_of.update(zip(block.nodes, itertools.repeat((owner, block))))
            if len(owner_of) - before != len(block.nodes):   # a node seen before, here or in another block
                return None
    return owner_of


def _owners(raws: list[RawSwitch], unattached: list[RawBlock], inventory: list[RawBlock] | None,
            error_at: ErrorAt, declared: dict | None = None) -> dict[str, tuple[str | None, RawBlock]]:
    """Node -> (its leaf or None, the block declaring it). Each node declared once (a node under two
    leaves is the graph's ``shared_nodes`` problem, raised before), each a valid Kubernetes node
    name; with an ``inventory``, nodes under leaves must be in it. ``declared``: what
    ``_declared_once`` found (every node once), so only the names are left to check."""
    owner_of: dict[str, tuple[str | None, RawBlock]] = {} if declared is None else declared
    for owner, blocks in [(raw.name, raw.blocks) for raw in raws] + [(None, list(unattached))]:
        for block in blocks:
            if declared is None:
                entry = (owner, block)
                before = len(owner_of)
                for node in block.nodes:
                    other = owner_of.setdefault(node, entry)
                    if other is not entry:
                        raise error_at(block.where, _twice_message(node, owner, *other))
                if len(owner_of) - before != len(block.nodes):
                    twice = next(n for i, n in enumerate(block.nodes) if n in block.nodes[:i])
                    raise error_at(block.where, _twice_message(twice, owner, owner, block))
            if not block.checked:
                bad = next((n for n in block.nodes if not is_k8s_name(n)), None)
                if bad is not None:
                    raise error_at(block.where, f"node name {bad!r} is not a valid Kubernetes node name "
                                   "(lower-case letters, digits, '-' and '.', at most 253 characters)")
    if inventory is not None:
        listed = {node for block in inventory for node in block.nodes}
        for node, (owner, block) in owner_of.items():
            if node not in listed:
                raise error_at(block.where, f"node {node!r} is under switch {owner!r} but not in "
                               "the node list; list every node or leave the node list out")
        for block in inventory:
            if not block.checked:
                bad = next((n for n in block.nodes if not is_k8s_name(n)), None)
                if bad is not None:
                    raise error_at(block.where, f"node name {bad!r} is not a valid Kubernetes node name")
            for node in block.nodes:
                owner_of.setdefault(node, (None, block))
    return owner_of


# --- the HyperNode graph of the declarations, and its problems as stack errors ----------------

def _graph(raws: list[RawSwitch]) -> hn.Graph:
    """Members of a switch: its child switches (``switches[i]``), then its node blocks."""
    graph = hn.Graph(noun="switch", compress=hostlist.compress)
    for raw in raws:
        members = [hn.Member("HyperNode", child=c) for c in raw.children]
        members += [hn.Member("Node", nodes=b.nodes) for b in raw.blocks]
        graph.add(hn.Vertex(raw.name, raw.tier, members, ref=raw))
    return graph


def member_where(raw: RawSwitch, member: int | None) -> str:
    """The declaration path of a switch's member (see ``_graph``), or of the switch itself."""
    if member is None:
        return raw.where
    if member < len(raw.children):
        return f"{raw.where}.switches[{member}]"
    return raw.blocks[member - len(raw.children)].where


def stack_error(graph: hn.Graph, problem: hn.Problem, error_at: ErrorAt) -> InputError:
    """A graph problem as the stack error ``render`` and ``validate`` print (exit 2) and ``check``
    reports as a ``hypernode-tree-valid`` violation."""
    if problem.check == "duplicate":
        first, again = graph.copies[problem.vertex][:2]
        err = error_at(again.ref.where, f"{problem.message} (also at {first.ref.where})")
    else:
        raw = graph.vertices[problem.vertex].ref
        err = error_at(member_where(raw, problem.member if problem.field == "members" else None), problem.message)
    err.rule = hn.RULE
    return err


def _raise_first(graph: hn.Graph, checks, error_at: ErrorAt) -> None:
    for problem in hn.problems(graph, checks):
        if problem.level == hn.ERROR:
            raise stack_error(graph, problem, error_at)


def _check_coverage(ctx: "RenderContext", section: dict, graph: hn.Graph, owner_of: dict,
                    error_at: ErrorAt) -> None:
    """Nodes under no leaf: a warning, an error with fullCoverage (semantics/hypernodes.py)."""
    if None not in map(_OWNER, owner_of.values()):   # in C: every node under a leaf
        return
    graph.inventory = list(owner_of)
    for problem in hn.uncovered(graph):
        where = owner_of[problem.nodes[0]][1].where
        if section["fullCoverage"]:
            err = error_at(where, problem.message + " (trainstack:fabric.fullCoverage is on)")
            err.rule = hn.RULE
            raise err
        ctx.warn(str(error_at(where, problem.message)))


_OWNER = operator.itemgetter(0)


def _twice_message(node: str, owner: str | None, other: str | None, other_block: RawBlock) -> str:
    if owner is not None and owner == other:
        return f"node {node!r} is listed twice under switch {owner!r}"
    return f"node {node!r} is declared twice (also at {other_block.where})"


def _only_pool(pools: list[NodePool]) -> NodePool | None:
    """The pool of every node when there is one pool and it matches any name (no regular expression
    to run per node)."""
    return pools[0] if len(pools) == 1 and pools[0].match.pattern in (".*", ".+") else None


def _make_nodes(ctx: "RenderContext", pools: list[NodePool], only: NodePool | None,
                owner_of: dict) -> dict[str, Node]:
    # The hot loop of big fabrics: ``only`` (see _only_pool) spares the pool match per node.
    nodes: dict[str, Node] = {}
    entry = None
    for name, owner in owner_of.items():
        if owner is not entry:   # a block's nodes share one entry: read it once per block
            entry = owner
            leaf, block = owner
            domain, labels, subdomain = block.domain, block.labels, block.subdomain
        nodes[name] = Node(name, leaf, only or _pool_for(ctx, pools, name), domain, labels, subdomain)
    return nodes


def _pool_for(ctx: "RenderContext", pools, node: str):
    for pool in pools:
        if whole_matcher(pool.match)(node):
            return pool
    raise ctx.error("fabric.nodePools", f"node {node!r} matches no node pool; add a pool whose "
                    "`match` covers it (a pool with match '.*' catches every node)")


def _children_first(switches: dict[str, RawSwitch], parent: dict[str, str]) -> list[str]:
    """Every switch after all of its children (iterative post-order from the roots)."""
    order: list[str] = []
    for root in (name for name in switches if name not in parent):
        stack = [(root, False)]
        while stack:
            name, expanded = stack.pop()
            if expanded:
                order.append(name)
                continue
            stack.append((name, True))
            stack.extend((c, False) for c in reversed(switches[name].children))
    return order


def _assign_tiers(switches: dict[str, RawSwitch], order: list[str], counts: dict[str, int]) -> dict[str, int]:
    """Explicit tiers are kept; missing ones are inferred bottom-up: a leaf is tier 1, a parent one
    above its highest child that has nodes. Bottom-up puts every leaf at tier 1, the only tier where
    Volcano looks for nodes (top-down numbering would strand a shallow rack's nodes above it)."""
    tiers: dict[str, int] = {}
    for name in order:
        raw = switches[name]
        if raw.tier is not None:
            tiers[name] = raw.tier
            continue
        below = [tiers[c] for c in raw.children if counts[c]] or [tiers[c] for c in raw.children]
        tiers[name] = 1 + max(below, default=0)
    return tiers


# --- compact format (source inline and file) ------------------------------------------------

def _expand(exprs: object, where: str, error_at: ErrorAt) -> list[str]:
    if isinstance(exprs, str):
        exprs = [exprs]
    out: list[str] = []
    for i, expr in enumerate(exprs):
        try:
            out.extend(hostlist.expand(expr))
        except hostlist.HostlistError as exc:
            raise error_at(f"{where}[{i}]", str(exc)) from None
    return out


def _expand_block(exprs: object, where: str, error_at: ErrorAt) -> tuple[list[str], hostlist.NumberedRange | None]:
    """Names of a node list, and the numbered range they are when the list is one range expression
    (``gpu-[0001-0032]``): then the leaf's regex needs no second look at every name."""
    if isinstance(exprs, str):
        exprs = [exprs]
    if len(exprs) == 1 and isinstance(exprs[0], str):
        numbered = hostlist.single_range(exprs[0])
        if numbered is not None:
            try:
                hostlist.take(len(numbered))   # before a name is built: [1-100000000] is one line
            except hostlist.HostlistError as exc:
                raise error_at(f"{where}[0]", str(exc)) from None
            return numbered.names(), numbered
    return _expand(exprs, where, error_at), None


def parse_compact(switch_map: dict, prefix: str, error_at: ErrorAt) -> list[RawSwitch]:
    """Switch records from a structurally valid compact switch map (see README)."""
    raws = []
    for name, spec in switch_map.items():
        where = f"{prefix}.{name}"
        spec = spec or {}
        blocks = []
        if "nodes" in spec:
            nodes, numbered = _expand_block(spec["nodes"], f"{where}.nodes", error_at)
            if nodes:
                blocks.append(RawBlock(f"{where}.nodes", nodes, domain=spec.get("domain"), numbered=numbered,
                                       checked=numbered is not None and _range_names_valid(nodes)))
        for domain, exprs in (spec.get("domains") or {}).items():
            nodes = _expand(exprs, f"{where}.domains.{domain}", error_at)
            if nodes:
                blocks.append(RawBlock(f"{where}.domains.{domain}", nodes, domain=str(domain)))
        if "domain" in spec and "nodes" not in spec:
            raise error_at(f"{where}.domain", "a domain names the accelerator domain of the switch's "
                           "`nodes`; this switch lists none")
        selector = spec.get("selector")
        if selector is not None and spec.get("switches"):
            raise error_at(f"{where}.selector", f"switch {name!r} has child switches; a label selector "
                           "chooses nodes and belongs on a leaf switch only")
        for i, expr in enumerate((selector or {}).get("matchExpressions", [])):
            wants_values = expr["operator"] in ("In", "NotIn")
            if wants_values != bool(expr.get("values")):
                raise error_at(f"{where}.selector.matchExpressions[{i}].values",
                               f"operator {expr['operator']} needs " + ("a non-empty list of values" if wants_values
                                                                        else "no values"))
        if selector is not None and not blocks:
            raise error_at(f"{where}.selector", "a leaf chosen by labels must still list its nodes "
                           "(trainstack plans capacity with them); add `nodes`")
        children = _expand(spec.get("switches", []), f"{where}.switches", error_at)
        raws.append(RawSwitch(name=str(name), where=where, tier=spec.get("tier"), children=children,
                              blocks=blocks, labels=dict(spec.get("labels") or {}), selector=selector))
    return raws


@functools.lru_cache(maxsize=None)
def _compact_schema() -> dict:
    """The file's schema, from the stack schema's ``switches`` and ``nodes``. Name lists are only
    checked as lists here: ``_expand`` checks every entry (jsonschema per entry is slow on big
    files) and names the entry that is wrong."""
    props = {key: copy.deepcopy(value) for key, value in module_schema("fabric")["properties"].items()
             if key in ("tierNames", "switches", "nodes")}   # the only ones it keeps
    switch = props["switches"]["additionalProperties"]["properties"]
    for key in ("switches", "nodes"):
        del switch[key]["items"]
    del switch["domains"]["additionalProperties"]["items"]
    del props["nodes"]["items"]
    return {"type": "object", "additionalProperties": False, "required": ["switches"],
            "x-expected": "a fabric file: a mapping with tierNames, switches and nodes",
            "properties": {"tierNames": props["tierNames"], "switches": {**props["switches"], "minProperties": 1},
                           "nodes": props["nodes"]}}


def _file_path(parts: list) -> str:
    path = ""
    for part in parts:
        path = yamlio.join_path(path, part)
    return path or "(document)"


def load_inline(ctx: "RenderContext", section: dict) -> Fabric:
    """Switches listed in the stack file (``trainstack:fabric.switches``)."""
    def error_at(where: str, message: str) -> InputError:
        return ctx.error(where, message)

    if not section["switches"]:
        raise ctx.error("fabric.switches", "missing: source inline needs its switches here "
                        "(name -> {switches: [...]} or {nodes: [...]})")
    raws = parse_compact(section["switches"], "fabric.switches", error_at)
    inventory = _inventory(section["nodes"], "fabric.nodes", error_at) if section["nodes"] else None
    return assemble(ctx, "inline", raws, error_at, section, ctx.stack.file, inventory=inventory)


def _inventory(exprs: list, where: str, error_at: ErrorAt) -> list[RawBlock]:
    """One block per entry of a node list, so messages can name the entry."""
    out = []
    for i, expr in enumerate(exprs):
        try:
            nodes = hostlist.expand(expr)
        except hostlist.HostlistError as exc:
            raise error_at(f"{where}[{i}]", str(exc)) from None
        one_range = isinstance(expr, str) and hostlist.single_range(expr) is not None
        out.append(RawBlock(f"{where}[{i}]", nodes, checked=one_range and _range_names_valid(nodes)))
    return out


def _range_names_valid(nodes: list[str]) -> bool:
    """Whether the names of one numbered range are all valid Kubernetes names: they differ in their
    digits only (a digit may start or end a label, and adds no dot), and the last is the longest,
    so the first and the last stand for all."""
    return is_k8s_name(nodes[0]) and is_k8s_name(nodes[-1])


def _must_be_mapping(data: object, shown: str, what: str) -> None:
    """A file that is no mapping may be anything (a token file named by mistake): its contents are
    never echoed, only their type."""
    if not isinstance(data, dict):
        kind = "nothing" if data is None else f"a {type(data).__name__}"
        raise InputError(shown, "(document)", f"expected {what}, got {kind}")
    for where, found in find_credentials(data):   # names become HyperNode names, labels, annotations
        raise InputError(shown, where, f"looks like a credential ({found}; not shown); a fabric file names "
                         "switches and nodes, never a secret")


def load_file(ctx: "RenderContext", section: dict) -> Fabric:
    """trainstack's compact fabric file (see modules/fabric/README.md)."""
    path = ctx.stack.resolve("fabric.path", section.get("path"))
    shown = ctx.stack.project.show(path)
    data = yamlio.load_file(path, shown, limit=yamlio.MAX_FABRIC_FILE_BYTES)

    def error_at(where: str, message: str) -> InputError:
        return InputError(shown, where, message)

    _must_be_mapping(data, shown, "a fabric file: a mapping with switches")
    schemas.validate(_compact_schema(), data, shown, _file_path)
    if "tierNames" in data:
        if ctx.stack.given.get("fabric", {}).get("tierNames") not in (None, data["tierNames"]):
            raise ctx.error("fabric.tierNames", f"the fabric file {shown} names the tiers already; "
                            "set tierNames in one place")
        section = {**section, "tierNames": data["tierNames"]}
    raws = parse_compact(data["switches"], "switches", error_at)
    inventory = _inventory(data["nodes"], "nodes", error_at) if data.get("nodes") else None
    return assemble(ctx, "file", raws, error_at, section, shown, inventory=inventory)


# --- generated ------------------------------------------------------------------------------

def load_generated(ctx: "RenderContext", section: dict) -> Fabric:
    """Spine-leaf (2 tiers) or three-tier fat-tree from a few numbers and name patterns."""
    gen = section["generated"]
    where = "fabric.generated"
    topology = gen["topology"]
    pods = gen["pods"] if topology == "fat-tree" else 1
    leaves_per_pod = gen["leavesPerPod"] if topology == "fat-tree" else gen["leaves"]
    per_leaf = gen["nodesPerLeaf"]

    def fmt(pattern_key: str, **values: int) -> str:
        pattern = gen[pattern_key]
        try:
            return pattern.format(**values)
        except (KeyError, IndexError, ValueError, AttributeError):
            raise ctx.expected(f"{where}.{pattern_key}", "a name pattern using only "
                               + ", ".join("{" + k + "}" for k in values), pattern) from None

    fmt("nodeName", n=1, leaf=1, pod=1, i=1)           # report a bad pattern once, up front
    try:
        hostlist.take(pods * leaves_per_pod * per_leaf)   # before building: a typo can ask for 10^12
    except hostlist.HostlistError as exc:
        raise ctx.error(where, str(exc)) from None
    node_pattern = gen["nodeName"]
    numbers = hostlist.number_pattern(node_pattern)   # `gpu-{n:04d}`: each leaf one numbered range
    raws: list[RawSwitch] = []
    spine_names = []
    leaf_index = 0
    node_where, leaf_where = f"{where}.nodeName", f"{where}.leafName"   # the same for every leaf
    for pod in range(1, pods + 1):
        leaf_names = []
        for _ in range(leaves_per_pod):
            leaf_index += 1
            first = (leaf_index - 1) * per_leaf
            numbered = numbers and hostlist.pattern_range(*numbers, first + 1, first + per_leaf)
            if numbered:
                nodes = numbered.names()
                checked = _range_names_valid(nodes)
            else:
                nodes = [node_pattern.format(n=first + i, leaf=leaf_index, pod=pod, i=i)
                         for i in range(1, per_leaf + 1)]
                checked = False
            leaf = fmt("leafName", leaf=leaf_index, pod=pod)
            leaf_names.append(leaf)
            block = RawBlock(node_where, nodes, domain=leaf if gen["nvlinkPerLeaf"] else None,
                             checked=checked, numbered=numbered or None)
            raws.append(RawSwitch(name=leaf, where=leaf_where, tier=1, blocks=[block]))
        spine = fmt("spineName", pod=pod)
        spine_names.append(spine)
        raws.append(RawSwitch(name=spine, where=f"{where}.spineName", tier=2, children=leaf_names))
    if topology == "fat-tree":
        raws.append(RawSwitch(name=gen["coreName"], where=f"{where}.coreName", tier=3, children=spine_names))
    return assemble(ctx, "generated", raws, lambda w, m: ctx.error(w, m), section, ctx.stack.file)


# --- topograph ------------------------------------------------------------------------------

class _TopographLoader(yaml.CSafeLoader):
    """Every scalar stays a string, as topograph decodes them into Go strings (``0101`` is a
    name, not octal 65); only null is null."""


    _NULLS = frozenset(("", "~", "null", "Null", "NULL"))

    def resolve(self, kind, value, implicit):     # called once per node: keep it short
        if kind is yaml.ScalarNode and implicit[0]:
            return "tag:yaml.org,2002:null" if value in self._NULLS else "tag:yaml.org,2002:str"
        return super().resolve(kind, value, implicit)

_STRING_MAP = {"type": ["object", "null"], "additionalProperties": {"type": ["string", "null"]},
               "x-expected": "a mapping of keys to string values"}
_TOPOGRAPH_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "x-expected": "a topograph model: a mapping with switches and blocks",
    "properties": {
        "switches": {
            "type": ["object", "null"],
            "x-expected": "a mapping of switch name -> switch",
            "propertyNames": {"type": "string", "minLength": 1, "x-expected": "switch names as strings"},
            "additionalProperties": {
                "type": "object",
                "x-expected": "a switch with labels, annotations or switches (topograph rejects an empty "
                              "definition; leave leaf switches out instead)",
                "additionalProperties": False,
                "properties": {
                    "name": {"type": "string"},
                    "labels": _STRING_MAP,
                    "annotations": _STRING_MAP,
                    "switches": {"type": ["array", "null"], "items": {"type": "string", "minLength": 1},
                                 "x-expected": "a list of child switch names"},
                },
            },
        },
        "blocks": {
            "type": ["array", "null"],
            "x-expected": "a list of blocks (switch, nodes, labels, annotations)",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["nodes"],
                "properties": {
                    "switch": {"type": ["string", "null"], "minLength": 1, "x-expected": "a switch name"},
                    "nodes": {"type": "array", "minItems": 1, "items": {"type": "string", "minLength": 1},
                              "x-expected": "a non-empty list of node names or ranges such as node[01-08]"},
                    "labels": _STRING_MAP,
                    "annotations": _STRING_MAP,
                },
            },
        },
    },
}
DOMAIN_KEYS = ("accelerator.topology.test/domain", "accelerator.topograph.run/domain")
SUBDOMAIN_KEYS = ("accelerator.topology.test/sub-domain", "accelerator.topograph.run/sub-domain")


def _topograph_shape_ok(data: object) -> bool:
    """A fast, conservative check of ``_TOPOGRAPH_SCHEMA`` for big models: True only when the data
    certainly matches it. When False, jsonschema runs and reports the first mistake precisely."""
    def str_map(value: object) -> bool:
        return value is None or (isinstance(value, dict) and all(v is None or isinstance(v, str)
                                                                 for v in value.values()))

    def names(value: object, empty_ok: bool) -> bool:
        return (value is None and empty_ok) or (isinstance(value, list) and (empty_ok or value) and
                                                all(isinstance(v, str) and v for v in value))

    if not isinstance(data, dict) or not set(data) <= {"switches", "blocks"}:
        return False
    switches, blocks = data.get("switches"), data.get("blocks")
    if switches is not None:
        if not isinstance(switches, dict):
            return False
        for name, spec in switches.items():
            if not (isinstance(name, str) and name and isinstance(spec, dict)
                    and set(spec) <= {"name", "labels", "annotations", "switches"}
                    and (spec.get("name") is None or isinstance(spec["name"], str))
                    and str_map(spec.get("labels")) and str_map(spec.get("annotations"))
                    and names(spec.get("switches"), True)):
                return False
    if blocks is not None:
        if not isinstance(blocks, list):
            return False
        for block in blocks:
            if not (isinstance(block, dict) and set(block) <= {"switch", "nodes", "labels", "annotations"}
                    and (block.get("switch") is None or isinstance(block["switch"], str) and block["switch"])
                    and names(block.get("nodes"), False)
                    and str_map(block.get("labels")) and str_map(block.get("annotations"))):
                return False
    return True


def _pick(maps: tuple[dict, ...], keys: tuple[str, ...]) -> str | None:
    for mapping in maps:
        for key in keys:
            if mapping.get(key):
                return mapping[key]
    return None


def _topograph_nodes(exprs: object, where: str, error_at: ErrorAt, renamed: dict[str, tuple[str, str]],
                     kept: set[str]) -> tuple[list[str], "hostlist.NumberedRange | None"]:
    """A block's host names as Kubernetes node names (``I21`` -> ``i21``), as topograph's
    ``kwok-nodes`` makes them; ``renamed`` and ``kept`` collect what was renamed and what was not,
    so two hosts that become one node are named."""
    hosts, numbered = _expand_block(exprs, f"{where}.nodes", error_at)
    if numbered is not None and is_k8s_name(hosts[0]) and is_k8s_name(hosts[-1]):
        kept.update(hosts)                       # the names in between differ only in digits
        return hosts, numbered
    nodes = []
    for host in hosts:
        node = k8s_name(host)
        if not node:
            raise error_at(f"{where}.nodes", f"host name {host!r} has no letters or digits to make "
                           "a Kubernetes node name from")
        if node == host:
            kept.add(node)
        elif renamed.setdefault(node, (host, where))[0] != host:
            raise error_at(f"{where}.nodes", f"host names {renamed[node][0]!r} and {host!r} both "
                           f"become Kubernetes node {node!r}; rename one")
        nodes.append(node)
    return nodes, None


def load_topograph(ctx: "RenderContext", section: dict) -> Fabric:
    """An NVIDIA topograph model (tests/models format): ``switches`` (a map of switches with child
    ``switches``, ``labels``, ``annotations``) and ``blocks`` that attach node ranges to a switch.

    Follows topograph's rules: leaf switches named only as children exist implicitly, a block's
    ``switch`` is optional (its nodes hang off no switch), labels and annotations are inherited
    down the switch path and overridden by the block's, and host names become Kubernetes node
    names as topograph's ``kwok-nodes`` makes them (``I21`` -> ``i21``).
    """
    path = ctx.stack.resolve("fabric.path", section.get("path"))
    shown = ctx.stack.project.show(path)
    data = yamlio.load_file(path, shown, _TopographLoader, plain_strings=True, limit=yamlio.MAX_FABRIC_FILE_BYTES)

    def error_at(where: str, message: str) -> InputError:
        return InputError(shown, where, message)

    _must_be_mapping(data, shown, "a topograph model: a mapping with switches and blocks")
    if not _topograph_shape_ok(data):
        schemas.validate(_TOPOGRAPH_SCHEMA, data, shown, _file_path)   # names the first mistake
    declared = data.get("switches") or {}
    raws: dict[str, RawSwitch] = {}
    annotations: dict[str, dict] = {}
    for name, spec in declared.items():
        where = f"switches.{name}"
        if spec.get("name") not in (None, name):
            raise error_at(f"{where}.name", f"switch key {name!r} does not match its name {spec['name']!r}")
        raws[name] = RawSwitch(name=name, where=where, children=list(spec.get("switches") or []),
                               labels={k: v or "" for k, v in (spec.get("labels") or {}).items()})
        annotations[name] = {k: v or "" for k, v in (spec.get("annotations") or {}).items()}
    for raw in list(raws.values()):              # leaf switches may be named only as children
        for i, child in enumerate(raw.children):
            if child not in raws:
                raws[child] = RawSwitch(name=child, where=f"{raw.where}.switches[{i}]")
                annotations[child] = {}

    parent: dict[str, str] = {}
    for raw in raws.values():
        for child in raw.children:
            parent.setdefault(child, raw.name)

    def inherited(switch: str) -> tuple[dict, dict]:
        """Labels and annotations from the root down to ``switch`` (lower ones win)."""
        path, seen, current = [], set(), switch
        while current is not None and current not in seen:   # cycles are reported by assemble
            seen.add(current)
            path.append(current)
            current = parent.get(current)
        labels: dict = {}
        notes: dict = {}
        for name in reversed(path):
            labels.update(raws[name].labels)
            notes.update(annotations[name])
        return labels, notes

    unattached: list[RawBlock] = []
    renamed: dict[str, tuple[str, str]] = {}     # Kubernetes node name -> (host name, where), when they differ
    kept: set[str] = set()                       # host names that are Kubernetes names already
    for i, block in enumerate(data.get("blocks") or []):
        where = f"blocks[{i}]"
        nodes, numbered = _topograph_nodes(block["nodes"], where, error_at, renamed, kept)
        switch = block.get("switch")
        labels, notes = inherited(switch) if switch in raws else ({}, {})
        labels.update({k: v or "" for k, v in (block.get("labels") or {}).items()})
        notes.update({k: v or "" for k, v in (block.get("annotations") or {}).items()})
        raw_block = RawBlock(where=f"{where}.nodes", nodes=nodes, domain=_pick((notes, labels), DOMAIN_KEYS),
                             subdomain=_pick((notes, labels), SUBDOMAIN_KEYS), labels=labels, checked=True,
                             numbered=numbered)
        if switch is None:
            unattached.append(raw_block)
        elif switch not in raws:
            raise error_at(f"{where}.switch", f"block attaches nodes to switch {switch!r}, which the "
                           "model does not declare (not under switches, nor a child of one)")
        else:
            raws[switch].blocks.append(raw_block)
    for node, (host, where) in renamed.items():
        if node in kept:
            raise error_at(f"{where}.nodes", f"host names {host!r} and {node!r} both become Kubernetes "
                           f"node {node!r}; rename one")
    return assemble(ctx, "topograph", list(raws.values()), error_at, section, shown, unattached=unattached)


# --- labels ---------------------------------------------------------------------------------



def load_labels(ctx: "RenderContext", section: dict) -> Fabric:
    """No static tree: configure Volcano's label discoverer from ordered node-label levels.

    The discoverer reverses the list and drops the node-level entry, so the label just above the
    node becomes tier 1; each HyperNode it creates has ``tierName`` = the label key, which is
    therefore the tier name here too (``highestTierName`` must use it).
    """
    cfg = section["labels"]
    where = "fabric.labels"
    levels = list(cfg["levels"])
    for i, key in enumerate(levels + [cfg["nodeLevel"]]):
        path = f"{where}.levels[{i}]" if i < len(levels) else f"{where}.nodeLevel"
        if not is_qualified_name(key):
            raise ctx.expected(path, "a node-label key such as fabric.topograph.run/tier-0", key)
        if key in levels[:i]:
            raise ctx.error(path, f"label {key!r} is listed twice; the discoverer ignores a type with "
                            "duplicate keys")
    if section.get("tierNames") and list(section["tierNames"]) != levels[::-1]:
        raise ctx.error("fabric.tierNames", "the label discoverer names each tier after its label key "
                        f"({', '.join(levels[::-1])}, tier 1 first); leave tierNames out")
    tier_names = {tier: key for tier, key in enumerate(reversed(levels), start=1)}
    entry = {"source": "label", "enabled": True, "config": {"networkTopologyTypes": {
        cfg["typeName"]: [{"nodeLabel": key} for key in levels] + [{"nodeLabel": cfg["nodeLevel"]}]}}}
    return Fabric(source="labels", tier_names=tier_names, switches={}, nodes={},
                  pools={p.name: p for p in build_pools(ctx, section)}, discovery=[entry],
                  mixed_depth=section["allowMixedDepth"], links=build_links(section), file=ctx.stack.file)


SOURCES = {"inline": load_inline, "generated": load_generated, "topograph": load_topograph,
           "file": load_file, "labels": load_labels}


def load(ctx: "RenderContext") -> Fabric:
    section = ctx.section("fabric")
    source = section["source"]
    given = ctx.stack.given.get("fabric") or {}
    for option, sources in SOURCE_OPTIONS.items():
        if option in given and source not in sources:
            raise ctx.error(f"fabric.{option}", f"is read only with source {' or '.join(sources)}, "
                            f"not {source}; remove it")
    if source in ("topograph", "file") and "path" not in given:
        raise ctx.error("fabric.path", f"missing: source {source} needs the path of its fabric file, "
                        "relative to the stacks folder")
    token = hostlist.node_budget()
    try:
        return SOURCES[source](ctx, section)
    finally:
        hostlist.end_budget(token)
