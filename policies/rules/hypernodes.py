"""HyperNode trees Volcano can use, from any source, and one writer per node set."""
from __future__ import annotations

import weakref
from typing import Iterable, Iterator

from modules.core.errors import listing
from modules.core.patterns import compile_go, go_problem, matches_by_pattern
from modules.core.selectors import selector_matches
from modules.fabric import hostlist
from modules.semantics import hypernodes as tree

from ..framework import (MANDATORY, CheckContext, Finding, NotChecked, Rule, as_dict, as_int, as_list, is_kind,
                         labels, meta, resource_id, where)
from modules.semantics.scheduler_conf import discovery_configs, enabled_sources
from modules.semantics.volcano import SOURCE_LABEL, TOPOLOGY

TREE_VALID = "hypernode-tree-valid"
SOURCE_EXCLUSIVE = "topology-source-exclusive"
SELECTORS = ("exactMatch", "regexMatch", "labelMatch")



def hypernodes(objects: list[dict]) -> list[dict]:
    return [o for o in objects if is_kind(o, "HyperNode", TOPOLOGY)]


def _name(obj: dict) -> str:
    return str(meta(obj).get("name", "?"))


def _members(obj: dict) -> list[tuple[int, dict]]:
    return [(i, as_dict(m)) for i, m in enumerate(as_list(as_dict(obj.get("spec")).get("members")))]


def _selector(member: dict) -> dict:
    return as_dict(member.get("selector"))


class Inventory(dict):
    """Node name -> labels, with the names sorted once so regex members need not scan every node."""

    def __init__(self, items):
        super().__init__(items)
        self.sorted_names = sorted(self)
        self.labels_known = any(self.values())
        self.regex_matches: dict[str, frozenset[str]] = {}   # pattern -> nodes (same for every evaluation)

    def matching(self, pattern: str) -> frozenset[str]:
        """The nodes a (valid RE2) pattern selects, with Go's MatchString: a match anywhere."""
        found = self.regex_matches.get(pattern)
        if found is None:
            compiled = compile_go(pattern)
            found = self.regex_matches[pattern] = frozenset(n for n in self.candidates(pattern)
                                                            if compiled.found_in(n))
        return found

    def prime(self, patterns: Iterable[object]) -> None:
        """Resolve many regexMatch members at once (one RE2 set over the node names) instead of one
        pattern at a time: a generated fabric has a pattern per leaf."""
        new = [p for p in dict.fromkeys(p for p in patterns if isinstance(p, str) and p)
               if p not in self.regex_matches and go_problem(p) is None]
        if len(new) < 2:
            for pattern in new:
                self.matching(pattern)
            return
        found = matches_by_pattern(new, self.sorted_names)
        for pattern, names in zip(new, found or ()):
            self.regex_matches[pattern] = frozenset(names)

    def candidates(self, pattern: str) -> list[str]:
        """Nodes a regex could match: for an anchored pattern, those sharing its literal prefix."""
        return list(tree.regex_candidates(self.sorted_names, pattern))


_INVENTORIES: "weakref.WeakKeyDictionary[object, Inventory]" = weakref.WeakKeyDictionary()


def _node_labels(fabric) -> Inventory:
    """The fabric's node inventory, built once per fabric: the pack and the robustness sweep evaluate
    the rule many times over one fabric, and regex members then resolve once."""
    if fabric is not None:
        try:
            return _INVENTORIES[fabric]
        except (KeyError, TypeError):
            pass
    nodes = getattr(fabric, "nodes", None) or {}
    inventory = Inventory((name, dict(getattr(node, "labels", {}) or {})) for name, node in nodes.items())
    try:
        _INVENTORIES[fabric] = inventory
    except TypeError:   # not weakly referable (None, a test double): build it each time
        pass
    return inventory


def member_nodes(member: dict, inventory: dict[str, dict]) -> set[str] | None:
    """The inventory nodes one Node member selects; None when that is not known (labels unknown)."""
    sel = _selector(member)
    if "exactMatch" in sel:
        name = as_dict(sel["exactMatch"]).get("name")
        return {name} if isinstance(name, str) and name in inventory else set()
    if "regexMatch" in sel:
        pattern = as_dict(sel["regexMatch"]).get("pattern")
        if not isinstance(pattern, str) or not pattern or go_problem(pattern) is not None:
            return set()
        if isinstance(inventory, Inventory):
            return set(inventory.matching(pattern))
        compiled = compile_go(pattern)
        return {n for n in inventory if compiled.found_in(n)}   # Go's MatchString: a match anywhere
    if "labelMatch" in sel:
        labels_known = inventory.labels_known if isinstance(inventory, Inventory) else any(inventory.values())
        if not labels_known:
            return None
        return {n for n, lab in inventory.items() if selector_matches(as_dict(sel["labelMatch"]), lab)}
    return set()


def node_members(obj: dict, inventory: dict[str, dict]) -> tuple[set[str], bool]:
    """The inventory nodes a HyperNode's Node members select, and whether that is fully known."""
    out: set[str] = set()
    known = True
    for _, member in _members(obj):
        if member.get("type") == "Node":
            nodes = member_nodes(member, inventory)
            known = known and nodes is not None
            out.update(nodes or ())
    return out, known


# --- hypernode-tree-valid ---------------------------------------------------------------------

def _member_findings(obj: dict, inventory: dict[str, dict]) -> Iterator[Finding]:
    """What the graph cannot see: member syntax, names against the inventory, RE2 patterns."""
    for i, member in _members(obj):
        at = f"spec.members[{i}]"
        kind = member.get("type")
        sel = _selector(member)
        given = [s for s in SELECTORS if s in sel]
        if kind not in ("Node", "HyperNode"):
            yield Finding(f"{at}.type", obj=obj, message=(
                f"{where(obj, f'{at}.type')}: member type is {kind!r}; Volcano knows Node and HyperNode. Set one."))
            continue
        if len(given) != 1:
            yield Finding(f"{at}.selector", obj=obj, message=(
                f"{where(obj, f'{at}.selector')}: a member needs exactly one of exactMatch, regexMatch and "
                f"labelMatch, got {', '.join(given) or 'none'}; the API server rejects it. Keep one selector."))
            continue
        how = given[0]
        body = as_dict(sel[how])
        path = f"{at}.selector.{how}"
        if kind == "HyperNode":
            continue   # selectors, unknown children: the graph's checks
        if how == "exactMatch":
            name = body.get("name")
            if not isinstance(name, str) or not name:
                yield Finding(f"{path}.name", obj=obj, message=(
                    f"{where(obj, f'{path}.name')}: exactMatch needs a node name. Set it."))
            elif inventory and name not in inventory:
                yield Finding(f"{path}.name", obj=obj, message=(
                    f"{where(obj, f'{path}.name')}: node {name!r} is not in the stack's node inventory "
                    f"({len(inventory)} nodes); Volcano keeps the member but it never has capacity. Fix the name "
                    "or the fabric."))
        elif how == "regexMatch":
            pattern = body.get("pattern")
            problem = "is empty" if not isinstance(pattern, str) or not pattern else go_problem(pattern)
            if problem:
                yield Finding(f"{path}.pattern", obj=obj, message=(
                    f"{where(obj, f'{path}.pattern')}: the pattern {problem}; Volcano's webhook rejects it or the "
                    "member matches nothing. Write an RE2 pattern such as ^gpu-00[0-7][0-9]$."))
        elif how == "labelMatch":
            if not as_dict(body.get("matchLabels")) and not as_list(body.get("matchExpressions")):
                yield Finding(path, obj=obj, message=(
                    f"{where(obj, path)}: an empty labelMatch matches no node at all (not every node). Give "
                    "matchLabels or matchExpressions."))


# The policy's voice for each graph check: how to fix it in a manifest.
_FIX = {"duplicate": "Rename one or drop the duplicate.", "unknown-child": "Fix the name or add the child HyperNode.",
        "two-parents": "Keep one parent.", "cycle": "Break the cycle.",
        "mixed-members": "Put the nodes under a leaf HyperNode.", "selector": "",
        "empty": "List its Node or HyperNode members, or delete it.",
        "tier-order": "Give the parent a higher tier.", "mixed-depth": "Give every leaf the lowest tier and each "
        "parent its child's tier + 1 (the fabric accepts this only with trainstack:fabric.allowMixedDepth).",
        "tier-name": "Use one tierName per tier.", "shared-node": "Put every node in exactly one leaf."}
_FIELD = {"name": "metadata.name", "tier": "spec.tier", "tierName": "spec.tierName", "members": "spec.members"}


def resolve_members(objects: list[dict], fabric) -> None:
    """Resolve the Node members of ``objects``' HyperNodes against ``fabric``'s inventory ahead of
    the first evaluation (the inventory keeps regex members per fabric): the policy pack does it
    when it builds the stack, while the engine runs the program, not during the stack's analysis."""
    inventory = _node_labels(fabric)
    if isinstance(inventory, Inventory) and inventory:
        inventory.prime(_regex_patterns(hypernodes(objects)))


def _regex_patterns(every: list[dict]) -> Iterator[object]:
    """The regexMatch patterns of the HyperNodes' Node members, as written."""
    return (as_dict(_selector(m).get("regexMatch")).get("pattern")
            for obj in every for _, m in _members(obj) if str(m.get("type")) == "Node")


def manifest_graph(every: list[dict], inventory: dict[str, dict]) -> tree.Graph:
    """The HyperNode graph of manifests (``modules/semantics/hypernodes.py``); Node members resolve
    against the stack's node inventory, when there is one."""
    graph = tree.Graph(noun="HyperNode", inventory=list(inventory) if inventory else None, compress=hostlist.compress)
    if isinstance(inventory, Inventory):
        inventory.prime(_regex_patterns(every))
    for obj in every:
        members = []
        for _, m in _members(obj):
            sel = _selector(m)
            given = [s for s in SELECTORS if s in sel]
            how = given[0] if len(given) == 1 else ""
            kind = str(m.get("type"))
            if kind == "HyperNode":
                child = as_dict(sel.get("exactMatch")).get("name") if how == "exactMatch" else None
                members.append(tree.Member(kind, how, child=str(child) if child is not None else None))
            elif kind == "Node":
                members.append(tree.Member(kind, how, nodes=member_nodes(m, inventory) if inventory else ()))
            else:
                members.append(tree.Member(kind, how))
        spec = as_dict(obj.get("spec"))
        tier = as_int(spec.get("tier"))
        tier_name = spec.get("tierName") if isinstance(spec.get("tierName"), str) else None
        tier = tier if tier is not None and tier >= 1 else None
        graph.add(tree.Vertex(_name(obj), tier, members, tier_name, ref=obj))
    return graph


def finding(graph: tree.Graph, problem: tree.Problem, obj: dict) -> Finding | NotChecked:
    """A graph problem as a finding on the manifest path; a warning as a note."""
    path = _FIELD[problem.field]
    if problem.field == "members" and problem.member is not None:
        path = f"spec.members[{problem.member}]"
    if problem.level == tree.WARNING:
        return NotChecked(f"{where(obj, path)}: {problem.message} (accepted: trainstack:fabric.allowMixedDepth is "
                          "on)", obj=obj, path=path)
    fix = _FIX.get(problem.check, "")
    return Finding(path, obj=obj, message=f"{where(obj, path)}: {problem.message}." + (f" {fix}" if fix else ""))


def _uncovered_note(problem: tree.Problem) -> NotChecked:
    """Nodes in no leaf: documented as accepted (a render warning), so a note here, on the stack."""
    return NotChecked(
        f"{problem.message}. Accepted (a warning in render and validate): add them to a leaf switch of the stack's "
        "fabric, or to a leaf HyperNode, if hard-topology jobs should use them; trainstack:fabric.fullCoverage: "
        "true makes this an error", obj=None, path="trainstack:fabric")


def _tree_valid(objects: list[dict], ctx: CheckContext) -> Iterator[Finding | NotChecked]:
    judged = {id(o) for o in objects}
    every = hypernodes(ctx.manifests or objects)
    if not every:
        return
    inventory = _node_labels(ctx.fabric)
    graph = manifest_graph(every, inventory)
    for obj in every:
        tier = as_int(as_dict(obj.get("spec")).get("tier"))
        if tier is None or tier < 1:
            yield Finding("spec.tier", obj=obj, message=(
                f"{where(obj, 'spec.tier')}: tier is {as_dict(obj.get('spec')).get('tier')!r}; HyperNode tiers are "
                "integers from 1 (closest to the nodes) upwards. Set the tier."))
        yield from _member_findings(obj, inventory)
    accept = bool(getattr(ctx.fabric, "mixed_depth", False))
    for problem in tree.problems(graph, accept_mixed_depth=accept):
        if problem.check == "uncovered":
            if any(id(o) in judged for o in every):
                yield _uncovered_note(problem)
        elif problem.check == "duplicate":
            yield from (finding(graph, problem, v.ref) for v in graph.copies[problem.vertex])
        else:
            yield finding(graph, problem, graph.vertices[problem.vertex].ref)
    if inventory and not tree.coverage_known(graph):
        unknown = sorted(v.name for v in graph.vertices.values() if any(m.nodes is None for _, m in v.node_members))
        yield NotChecked(f"HyperNodes {', '.join(unknown[:5])} select nodes by label and the node labels are "
                         "unknown, so whether every node is in exactly one leaf was not checked")


# --- topology-source-exclusive ----------------------------------------------------------------

def _source_exclusive(objects: list[dict], ctx: CheckContext) -> Iterator[Finding]:
    judged = {id(o) for o in objects}
    every = ctx.manifests or objects
    enabled = [(obj, path, entry) for obj, path, entries in discovery_configs(every, ctx.fabric)
               for entry in enabled_sources(entries)]
    if not enabled:
        return
    sources = {str(e.get("source")) for _, _, e in enabled}
    all_hns = hypernodes(every)
    for hn in all_hns:
        source = labels(hn).get(SOURCE_LABEL)
        if source in sources and id(hn) in judged:
            yield Finding(f"metadata.labels[{SOURCE_LABEL}]", obj=hn, message=(
                f"{where(hn, f'metadata.labels[{SOURCE_LABEL}]')}: a HyperNode you manage is labelled as discovered by "
                f"{source!r}, which is enabled; the discoverer deletes every HyperNode with that label that it did "
                "not find itself. Remove the label, or stop managing this HyperNode."))
    static = [hn for hn in all_hns if SOURCE_LABEL not in labels(hn)
              and any(m.get("type") == "Node" for _, m in _members(hn))]
    if not static:
        return
    inventory = _node_labels(ctx.fabric)
    for conf_obj, path, entry in enabled:
        source = entry.get("source")
        if source == "label":
            keys = set()
            for levels in as_dict(as_dict(entry.get("config")).get("networkTopologyTypes")).values():
                found = [as_dict(level).get("nodeLabel") for level in as_list(levels)]
                found = [k for k in found if isinstance(k, str)]
                if len(found) >= 2:
                    keys.add(found[-2])      # the tier-1 label: nodes without it are skipped
            overlapping, unsure = [], []
            for hn in static:
                nodes, known = node_members(hn, inventory)
                selects_key = any(k in as_dict(as_dict(_selector(m).get("labelMatch")).get("matchLabels"))
                                  for _, m in _members(hn) for k in keys)
                labelled = any(k in inventory.get(n, {}) for n in nodes for k in keys)
                if selects_key or labelled:
                    overlapping.append(hn)
                elif not any(inventory.values()) or not known:
                    unsure.append(hn)
            clash = overlapping + unsure
            reason = (f"the label discoverer builds HyperNodes for every node labelled {', '.join(sorted(keys)) or '?'}"
                      + (", and the node labels are unknown, so the nodes cannot be shown to be disjoint"
                         if unsure and not overlapping else ""))
        else:
            clash = static
            reason = f"the {source} discoverer builds HyperNodes for every node it finds on the fabric"
        if not clash:
            continue
        anchor = conf_obj if conf_obj is not None and id(conf_obj) in judged else \
            next((hn for hn in clash if id(hn) in judged), None)
        if anchor is None:
            continue
        at = path if anchor is conf_obj else "spec.members"
        names = sorted(_name(hn) for hn in clash)
        shown = listing(names)
        origin = resource_id(conf_obj) + f" at {path}" if conf_obj is not None else "the stack's fabric (source labels)"
        yield Finding(at, obj=anchor, message=(
            f"{where(anchor, at)}: {source} discovery is enabled ({origin}) while {len(names)} static HyperNode(s) "
            f"manage nodes too ({shown}); {reason}. Two writers then fight over the same nodes (a node lands in two "
            "leaves, or the discoverer deletes and recreates HyperNodes). Use one source per node set: drop the "
            "static HyperNodes, disable discovery, or scope discovery labels to other nodes."))


RULES = (
    Rule(
        id=TREE_VALID,
        description="HyperNodes from any source (the fabric, discovery, user manifests) form a tree Volcano can use: "
                    "members resolvable with exactly one selector, one parent, no cycles, tiers increasing by one, "
                    "leaves at the lowest tier, regex/label selectors only on Node members, labelMatch non-empty, "
                    "RE2 regexes, tierName and tier one-to-one, and each known node in at most one leaf (a node "
                    "in no leaf is a note, as render warns; modules/semantics/hypernodes.py holds the checks).",
        why="Volcano's webhook only rejects empty members and uncompilable regexes. A second parent or a cycle "
            "makes the scheduler's HyperNode cache not ready and stops every topology-aware job in the cluster; "
            "HyperNode members selected by regex or label are silently ignored; an empty labelMatch matches no "
            "node; leaves above the lowest tier and nodes in two leaves make placement unreachable or random.",
        fix="Fix the HyperNode named in the message (trainstack's fabric module renders valid trees from the "
            "fabric model; hand-written HyperNodes must follow the same rules).",
        severity="critical", enforcement=MANDATORY, check_stack=_tree_valid),
    Rule(
        id=SOURCE_EXCLUSIVE,
        description="Static HyperNodes and Volcano's label/UFM discovery never manage the same nodes, and no "
                    "managed HyperNode carries the volcano.sh/network-topology-source label of an enabled source.",
        why="Discovered and hand-made HyperNodes conflict (volcano#3850): the discoverer deletes every HyperNode "
            "labelled with its source that it did not find, and a node claimed by both writers ends up in two "
            "leaves, which makes scores and placement non-deterministic.",
        fix="Pick one writer per node set: either the fabric renders HyperNodes (source file/generated/topograph) "
            "or Volcano discovers them (source labels), never both for the same nodes.",
        severity="high", enforcement=MANDATORY, check_stack=_source_exclusive),
)
