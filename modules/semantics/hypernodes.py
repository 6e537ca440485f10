"""One HyperNode graph and the structural checks Volcano does not make.

The graph is built once, from a fabric's switch declarations (``modules/fabric``) or from HyperNode
manifests (``policies/rules/hypernodes.py``). Each check below runs over it and yields ``Problem``s:
what is wrong, on which vertex and member, in words that hold for both sources. Two adapters turn a
problem into what their command reports: the fabric raises a ``InputError`` at the declaration
path with ``rule="hypernode-tree-valid"``; the policy yields a ``Finding`` on the manifest path.
So ``render`` and ``check`` agree by construction.

Severity is decided here once. Every problem is an error except:

* ``uncovered``: a node of the inventory under no leaf. Documented as accepted (the node is in no
  HyperNode, so only jobs without a hard network topology use it): a warning in ``validate`` and
  ``render``, a note in ``check``. ``trainstack:fabric.fullCoverage: true`` makes it an error, and
  then the stack does not render at all.
* ``mixed-depth``: a leaf above the lowest tier, or a parent more than one tier above a child. An
  error, unless the stack accepts it (``trainstack:fabric.allowMixedDepth: true``): then a warning
  everywhere (``accepted=True`` below).
"""
from __future__ import annotations

import bisect
import itertools
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from modules.core.errors import listing

ERROR, WARNING = "error", "warning"
RULE = "hypernode-tree-valid"   # the policy rule these checks back; fabric errors carry its id


@dataclass
class Member:
    """One member of a vertex: a child (``kind`` HyperNode) or a set of nodes (``kind`` Node)."""

    kind: str                                  # "Node" or "HyperNode" (anything else: not a member)
    selector: str = "exactMatch"               # exactMatch | regexMatch | labelMatch
    child: str | None = None                   # HyperNode members: the child's name
    nodes: Sequence[str] | None = ()           # Node members: the nodes selected; None: not known


@dataclass
class Vertex:
    """A HyperNode (or the switch that becomes one)."""

    name: str
    tier: int | None
    members: list[Member] = field(default_factory=list)
    tier_name: str | None = None
    ref: object = None                         # the adapter's handle: a manifest or a declaration

    @property
    def node_members(self) -> list[tuple[int, Member]]:
        return [(i, m) for i, m in enumerate(self.members) if m.kind == "Node"]

    @property
    def is_leaf(self) -> bool:
        for m in self.members:   # a loop, not any() over a generator: asked of every vertex
            if m.kind == "Node":
                return True
        return False


@dataclass(frozen=True)
class Problem:
    """One structural mistake, pinned on ``vertex`` (and ``member``, an index into its members)."""

    check: str            # which check found it (see CHECKS)
    vertex: str
    field: str            # "name" | "tier" | "tierName" | "members"
    message: str          # what is wrong and what Volcano does with it, source-neutral
    member: int | None = None
    level: str = ERROR
    nodes: tuple[str, ...] = ()   # the nodes concerned (uncovered, shared)


class Graph:
    """Vertices by name, in declaration order. ``noun`` names them in messages ("switch" for a
    fabric, "HyperNode" for manifests). ``inventory``: every node the cluster has, when known."""

    def __init__(self, noun: str = "HyperNode", inventory: Iterable[str] | None = None,
                 compress: Callable[[list[str]], list[str]] = sorted):
        self.noun = noun
        self.compress = compress       # node names -> what messages show (a fabric passes hostlist ranges)
        self.vertices: dict[str, Vertex] = {}
        self.copies: dict[str, list[Vertex]] = {}
        self.inventory = list(inventory) if inventory is not None else None
        self._parents: dict[str, list[tuple[str, int]]] | None = None

    @property
    def nouns(self) -> str:
        return self.noun + ("es" if self.noun.endswith("ch") else "s")

    def add(self, vertex: Vertex) -> None:
        self.copies.setdefault(vertex.name, []).append(vertex)
        self.vertices.setdefault(vertex.name, vertex)
        self._parents = None

    def parents(self) -> dict[str, list[tuple[str, int]]]:
        """Child -> every (parent, member index) naming it, over members that resolve (computed once
        per set of vertices; members are not expected to change after ``add``)."""
        if self._parents is None:
            out: dict[str, list[tuple[str, int]]] = {}
            for v in self.vertices.values():
                for i, m in enumerate(v.members):
                    if m.kind == "HyperNode" and m.child in self.vertices:
                        out.setdefault(m.child, []).append((v.name, i))
            self._parents = out
        return self._parents

    def children(self, name: str) -> list[str]:
        return [m.child for m in self.vertices[name].members
                if m.kind == "HyperNode" and m.child in self.vertices]

    def prune(self, keep: Iterable[str]) -> None:
        """Drop every vertex not in ``keep`` (a fabric's empty switches). Members naming them stay, so
        member indices keep pointing at declarations; ``parents`` and ``children`` skip them."""
        keep = set(keep)
        self.vertices = {n: v for n, v in self.vertices.items() if n in keep}
        self.copies = {n: c for n, c in self.copies.items() if n in keep}
        self._parents = None


def _and(items: Sequence[object]) -> str:
    items = [str(i) for i in items]
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


# --- the checks, each once ------------------------------------------------------------------

def duplicates(g: Graph) -> Iterator[Problem]:
    for name, copies in g.copies.items():
        if len(copies) > 1:
            times = "twice" if len(copies) == 2 else f"{len(copies)} times"
            yield Problem("duplicate", name, "name", (
                f"{g.noun} {name!r} is declared {times}; whichever is applied last replaces the others' members"))


def unknown_children(g: Graph) -> Iterator[Problem]:
    for v in g.vertices.values():
        for i, m in enumerate(v.members):
            if m.kind == "HyperNode" and m.child is not None and m.child not in g.vertices:
                yield Problem("unknown-child", v.name, "members", (
                    f"child {g.noun} {m.child!r} is not declared; Volcano keeps an empty placeholder that never "
                    "has capacity"), member=i)


def two_parents(g: Graph) -> Iterator[Problem]:
    """A child named twice: by one parent (a typo) or by two (Volcano refuses a second parent)."""
    for child, owners in g.parents().items():
        if len(owners) == 1:
            continue    # the usual child: named once, by one parent
        seen: set[str] = set()
        for owner, i in owners:
            if owner in seen:
                yield Problem("two-parents", owner, "members",
                              f"{g.noun} {child!r} is listed twice under {owner!r}", member=i)
            seen.add(owner)
        names = list(dict.fromkeys(o for o, _ in owners))
        if len(names) < 2:
            continue
        message = (f"{g.noun} {child!r} has {'two' if len(names) == 2 else len(names)} parents, "
                   f"{_and([repr(n) for n in sorted(names)])}; a HyperNode may have only one (Volcano "
                   "refuses a second parent, marks its HyperNode cache not ready and stops scheduling every "
                   "topology-aware job)")
        firsts = {}
        for owner, i in owners:
            firsts.setdefault(owner, i)
        # The later parents first: the first parent is the child's parent, the others are the mistake.
        for owner in names[1:] + names[:1]:
            yield Problem("two-parents", owner, "members", message, member=firsts[owner])


def cycles(g: Graph) -> Iterator[Problem]:
    """Each cycle once, pinned on every vertex in it (any of them may be the one a user added)."""
    state: dict[str, int] = {}
    kids_of = {v.name: [(j, m.child) for j, m in enumerate(v.members)
                        if m.kind == "HyperNode" and m.child in g.vertices] for v in g.vertices.values()}
    for start in g.vertices:
        if state.get(start):
            continue
        if not kids_of[start]:   # a leaf: in no cycle, and no walk to make
            state[start] = 2
            continue
        stack: list[tuple[str, int]] = [(start, 0)]
        path: list[str] = []
        while stack:
            name, i = stack.pop()
            if i == 0:
                state[name], _ = 1, path.append(name)
            kids = kids_of[name]
            if i >= len(kids):
                state[name] = 2
                path.pop()
                continue
            stack.append((name, i + 1))
            j, kid = kids[i]
            if kid == name:
                yield Problem("cycle", name, "members", f"{g.noun} {name!r} lists itself as a child (a cycle)",
                              member=j)
            elif state.get(kid) == 1:
                loop = path[path.index(kid):]
                turn = loop.index(min(loop))          # one text for a cycle, whatever the input order
                loop = loop[turn:] + loop[:turn] + [min(loop)]
                message = (f"{g.nouns} form a cycle (parent -> child): {' -> '.join(loop)}; Volcano reports "
                           "\"cyclic dependency detected\", marks its HyperNode cache not ready and stops "
                           "scheduling every topology-aware job")
                for member in loop[:-1]:
                    yield Problem("cycle", member, "members", message)
            elif not state.get(kid):
                stack.append((kid, 0))


def mixed_members(g: Graph) -> Iterator[Problem]:
    for v in g.vertices.values():
        kinds = {m.kind for m in v.members}
        if "Node" in kinds and "HyperNode" in kinds:
            first = next(i for i, m in enumerate(v.members) if m.kind == "Node")
            yield Problem("mixed-members", v.name, "members", (
                f"{g.noun} {v.name!r} has both child {g.nouns} and nodes; Volcano finds nodes only in the lowest "
                "tier, so nodes must hang off leaves (give them a leaf of their own)"), member=first)


def selectors(g: Graph) -> Iterator[Problem]:
    """Volcano resolves HyperNode members by exactMatch only: others are silently ignored."""
    for v in g.vertices.values():
        for i, m in enumerate(v.members):
            if m.kind == "HyperNode" and m.selector != "exactMatch":
                yield Problem("selector", v.name, "members", (
                    f"a HyperNode member selected by {m.selector} is silently ignored (Volcano resolves HyperNode "
                    "members by exactMatch only), so the subtree is cut off; use exactMatch with the child's name"),
                    member=i)


def empty(g: Graph) -> Iterator[Problem]:
    for v in g.vertices.values():
        if not v.members:
            yield Problem("empty", v.name, "members", (
                f"{g.noun} {v.name!r} has no members; it holds no nodes (Volcano's webhook rejects it)"))


def tier_order(g: Graph) -> Iterator[Problem]:
    """A parent's tier must be above its child's (a gap is ``mixed_depth``'s business)."""
    for child, owners in g.parents().items():
        for owner, i in owners:
            pt, ct = g.vertices[owner].tier, g.vertices[child].tier
            if pt is not None and ct is not None and pt <= ct:
                yield Problem("tier-order", owner, "tier", (
                    f"{g.noun} {owner!r} is at tier {pt} but its child {child!r} is at tier {ct}; a parent's tier "
                    f"must be above its children's (set it to {ct + 1})"), member=i)


def mixed_depth(g: Graph) -> Iterator[Problem]:
    """Leaves above the lowest leaf tier, and parents more than one tier above a child."""
    leaves = [v for v in g.vertices.values() if v.is_leaf and v.tier is not None]
    lowest = min((v.tier for v in leaves), default=None)
    for leaf in leaves:
        if leaf.tier != lowest:
            yield Problem("mixed-depth", leaf.name, "tier", (
                f"leaf {g.noun} {leaf.name!r} sits at tier {leaf.tier}, above the lowest leaves (tier {lowest}); "
                f"Volcano "
                f"looks for a node's HyperNode only among tier-{lowest} ones, so its nodes are reachable by no "
                "job with a hard network topology (volcano#5877)"))
    for child, owners in g.parents().items():
        for owner, i in owners:
            pt, ct = g.vertices[owner].tier, g.vertices[child].tier
            if pt is not None and ct is not None and pt > ct + 1:
                yield Problem("mixed-depth", owner, "tier", (
                    f"{g.noun} {owner!r} (tier {pt}) sits more than one tier above its child {child!r} (tier {ct}): "
                    "tiers must increase by exactly one from child to parent, or highestTierAllowed means "
                    f"different things in different subtrees and a job limited to tier {ct + 1} can never span "
                    f"{child!r} and a sibling"), member=i)


def tier_names(g: Graph) -> Iterator[Problem]:
    """tierName <-> tier one-to-one; the minority side of a clash is the one reported."""
    by_name: dict[str, dict[int, list[str]]] = {}
    by_tier: dict[int, dict[str, list[str]]] = {}
    for v in g.vertices.values():
        if v.tier_name and v.tier is not None:
            by_name.setdefault(v.tier_name, {}).setdefault(v.tier, []).append(v.name)
            by_tier.setdefault(v.tier, {}).setdefault(v.tier_name, []).append(v.name)
    for tier_name, at in by_name.items():
        if len(at) > 1:
            keep = max(at, key=lambda t: (len(at[t]), -t))
            for tier in sorted(set(at) - {keep}):
                for name in at[tier]:
                    yield Problem("tier-name", name, "tierName", (
                        f"tier name {tier_name!r} is used for tiers {_and(sorted(at))}; Volcano "
                        "resolves highestTierName to one tier only (\"Conflicting tiers\")"))
    for tier, names_at in by_tier.items():
        if len(names_at) > 1:
            keep = max(names_at, key=lambda n: (len(names_at[n]), n))
            for tier_name in sorted(set(names_at) - {keep}):
                for name in names_at[tier_name]:
                    yield Problem("tier-name", name, "tierName", (
                        f"tier {tier} is named both {keep!r} and {tier_name!r}; highestTierName then means "
                        "different things for the same tier"))


def shared_nodes(g: Graph) -> Iterator[Problem]:
    """Each node in at most one leaf (Volcano picks one at random otherwise). Pinned on every
    member involved, later declarations first: the later one is the likely mistake."""
    lists = [m.nodes for v in g.vertices.values() for m in v.members if m.kind == "Node" and m.nodes]
    if sum(map(len, lists)) == len(set(itertools.chain.from_iterable(lists))):
        return          # the common case, in C: no node is named twice at all (65k-node fabrics build fast)
    owner: dict[str, tuple[str, int]] = {}
    later: dict[tuple[str, int], dict[str, list[str]]] = {}
    earlier: dict[tuple[str, int], dict[str, list[str]]] = {}
    for v in g.vertices.values():
        for i, m in v.node_members:
            for node in m.nodes or ():
                first = owner.setdefault(node, (v.name, i))
                if first[0] != v.name:
                    later.setdefault((v.name, i), {}).setdefault(node, []).append(first[0])
                    earlier.setdefault(first, {}).setdefault(node, []).append(v.name)
    for (name, i), nodes in [*later.items(), *((k, n) for k, n in earlier.items() if k not in later)]:
        (node, others), *rest = sorted(nodes.items())
        more = f" (and {len(rest)} more of its nodes: {listing([n for n, _ in rest])})" if rest else ""
        count = "two" if len(others) == 1 else str(len(others) + 1)
        message = (f"node {node!r} is under {count} leaves, {_and([repr(o) for o in sorted(others)] + [repr(name)])}"
                   f"{more}; each node must be in exactly one (Volcano picks one at random otherwise, so placement "
                   "and scores change from run to run)")
        yield Problem("shared-node", name, "members", message, member=i, nodes=tuple(sorted(nodes)))


def uncovered(g: Graph) -> Iterator[Problem]:
    """Inventory nodes in no leaf: a warning (see the module docstring). Nothing when some leaf's
    nodes are not known (label selectors without node labels): ``coverage_known`` says so."""
    if not g.inventory or not coverage_known(g):
        return
    placed = {n for v in g.vertices.values() for _, m in v.node_members for n in m.nodes or ()}
    loose = tuple(n for n in g.inventory if n not in placed)
    if loose:
        yield Problem("uncovered", "", "members", (
            f"{len(loose)} node(s) hang off no leaf {g.noun} ({listing(g.compress(list(loose)), 3)}); they are in "
            "no HyperNode, so only jobs without a hard network topology can use them"), level=WARNING, nodes=loose)


def coverage_known(g: Graph) -> bool:
    return all(m.nodes is not None for v in g.vertices.values() for _, m in v.node_members)


CHECKS = (duplicates, unknown_children, two_parents, cycles, mixed_members, selectors, empty, tier_order,
          mixed_depth, tier_names, shared_nodes, uncovered)


def problems(g: Graph, checks=CHECKS, accept_mixed_depth: bool = False) -> Iterator[Problem]:
    """Every problem, check by check. ``accept_mixed_depth``: the stack allows mixed depth, so
    those problems are warnings."""
    for check in checks:
        for p in check(g):
            if p.check == "mixed-depth" and accept_mixed_depth:
                p = Problem(**{**p.__dict__, "level": WARNING})
            yield p


# --- regexMatch members -----------------------------------------------------------------------

_META = set(".^$*+?{}[]\\|()")


def _top_level_alternation(pattern: str) -> bool:
    depth, in_class, escaped = 0, False, False
    for ch in pattern:
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif in_class:
            in_class = ch != "]"
        elif ch == "[":
            in_class = True
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "|" and depth == 0:
            return True
    return False


def literal_prefix(pattern: str) -> str:
    """The characters every match of ``^literal...`` starts with ('' when the pattern is not anchored
    or has a top-level alternation)."""
    if not pattern.startswith("^") or _top_level_alternation(pattern):
        return ""
    out = []
    for ch in pattern[1:]:
        if ch in _META:
            if ch in "*?{" and out:   # the last literal is optional or repeated: not part of the prefix
                out.pop()
            break
        out.append(ch)
    return "".join(out)


def regex_candidates(sorted_names: Sequence[str], pattern: str) -> Sequence[str]:
    """The names a regexMatch member could select (Volcano matches with Go's ``MatchString``, a match
    anywhere): for an anchored pattern only those sharing its literal prefix, found by bisection, so
    a fabric of numbered leaves resolves in time linear in its nodes; else every name."""
    prefix = literal_prefix(pattern)
    if not prefix:
        return sorted_names
    start = bisect.bisect_left(sorted_names, prefix)
    end = bisect.bisect_left(sorted_names, prefix + "\U0010ffff")
    return sorted_names[start:end]
