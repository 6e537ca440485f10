"""HyperNode trees Volcano can use, from any source, and one writer per node set."""
from __future__ import annotations

import bisect
import functools
import re
from typing import Iterator

from ..framework import (MANDATORY, CheckContext, Finding, NotChecked, Rule, as_dict, as_int, as_list, is_kind,
                         labels, meta, resource_id, where)
from ..volcano import SOURCE_LABEL, TOPOLOGY, discovery_configs, enabled_sources

TREE_VALID = "hypernode-tree-valid"
SOURCE_EXCLUSIVE = "topology-source-exclusive"
SELECTORS = ("exactMatch", "regexMatch", "labelMatch")

# Constructs Python's re accepts and Go's RE2 (which Volcano uses) rejects.
_NOT_RE2 = [(re.compile(r"\(\?<?[=!]"), "lookaround assertions"), (re.compile(r"\\[1-9]"), "backreferences"),
            (re.compile(r"\(\?>"), "atomic groups"), (re.compile(r"\(\?\("), "conditionals"),
            (re.compile(r"(?<!\\)[*+?}]\+"), "possessive quantifiers"), (re.compile(r"\\Z"), "\\Z (RE2 has \\z)")]


@functools.lru_cache(maxsize=65536)   # re's own cache holds 512 patterns; fabrics have thousands of leaves
def _compiled(pattern: str) -> re.Pattern:
    return re.compile(pattern)


@functools.lru_cache(maxsize=65536)
def re2_problem(pattern: str) -> str | None:
    """Why ``pattern`` does not compile as an RE2 (Go regexp) pattern, as far as we can tell."""
    for construct, what in _NOT_RE2:
        if construct.search(pattern):
            return f"uses {what}, which Go's RE2 does not support"
    try:
        _compiled(pattern.replace("\\z", "\\Z"))
    except re.error as exc:
        return f"does not compile: {exc}"
    return None


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

    def candidates(self, pattern: str) -> list[str]:
        """Nodes a regex could match: for an anchored pattern, those sharing its literal prefix."""
        prefix = _literal_prefix(pattern)
        if not prefix:
            return self.sorted_names
        start = bisect.bisect_left(self.sorted_names, prefix)
        end = bisect.bisect_left(self.sorted_names, prefix + "\U0010ffff")
        return self.sorted_names[start:end]


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


def _literal_prefix(pattern: str) -> str:
    """The characters every match of ``^literal...`` starts with ('' when the pattern is not anchored)."""
    if not pattern.startswith("^") or _top_level_alternation(pattern):
        return ""
    out = []
    for i, ch in enumerate(pattern[1:], start=1):
        if ch in _META:
            if ch in "*?{" and out:   # the last literal is optional or repeated: not part of the prefix
                out.pop()
            break
        out.append(ch)
    return "".join(out)


def _node_labels(fabric) -> Inventory:
    nodes = getattr(fabric, "nodes", None) or {}
    return Inventory((name, dict(getattr(node, "labels", {}) or {})) for name, node in nodes.items())


def _label_selector_matches(selector: dict, node_labels: dict) -> bool:
    for key, value in as_dict(selector.get("matchLabels")).items():
        if node_labels.get(key) != value:
            return False
    for expr in as_list(selector.get("matchExpressions")):
        expr = as_dict(expr)
        key, op, values = expr.get("key"), expr.get("operator"), as_list(expr.get("values"))
        present = key in node_labels
        if op == "In" and not (present and node_labels[key] in values):
            return False
        if op == "NotIn" and present and node_labels[key] in values:
            return False
        if op == "Exists" and not present:
            return False
        if op == "DoesNotExist" and present:
            return False
    return True


def node_members(obj: dict, inventory: dict[str, dict]) -> tuple[set[str], bool]:
    """The inventory nodes a HyperNode's Node members select, and whether that is fully known."""
    out: set[str] = set()
    known = True
    labels_known = inventory.labels_known if isinstance(inventory, Inventory) else any(inventory.values())
    for _, member in _members(obj):
        if member.get("type") != "Node":
            continue
        sel = _selector(member)
        if "exactMatch" in sel:
            name = as_dict(sel["exactMatch"]).get("name")
            if name in inventory:
                out.add(name)
        elif "regexMatch" in sel:
            pattern = as_dict(sel["regexMatch"]).get("pattern")
            if isinstance(pattern, str) and pattern and re2_problem(pattern) is None:
                compiled = _compiled(pattern)
                names = inventory.candidates(pattern) if isinstance(inventory, Inventory) else inventory
                out.update(n for n in names if compiled.search(n))   # Go's MatchString: a match anywhere
        elif "labelMatch" in sel:
            if labels_known:
                out.update(n for n, lab in inventory.items() if _label_selector_matches(as_dict(sel["labelMatch"]), lab))
            else:
                known = False
    return out, known


# --- hypernode-tree-valid ---------------------------------------------------------------------

def _member_findings(obj: dict, by_name: dict[str, dict], inventory: dict[str, dict]) -> Iterator[Finding]:
    spec = as_dict(obj.get("spec"))
    members = spec.get("members")
    if not isinstance(members, list) or not members:
        yield Finding("spec.members", obj=obj, message=(
            f"{where(obj, 'spec.members')}: the HyperNode has no members; it holds no nodes (Volcano's webhook "
            "rejects it). List its Node or HyperNode members, or delete it."))
        return
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
            if how != "exactMatch":
                yield Finding(path, obj=obj, message=(
                    f"{where(obj, path)}: a HyperNode member selected by {how} is silently ignored (Volcano resolves "
                    "HyperNode members by exactMatch only), so the subtree is cut off. Use exactMatch with the "
                    "child's name."))
            elif str(body.get("name")) not in by_name:
                yield Finding(f"{path}.name", obj=obj, message=(
                    f"{where(obj, f'{path}.name')}: child HyperNode {body.get('name')!r} does not exist in the stack or "
                    "the given manifests; Volcano keeps an empty placeholder that never has capacity. Fix the "
                    "name or add the child HyperNode."))
            continue
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
            problem = "is empty" if not isinstance(pattern, str) or not pattern else re2_problem(pattern)
            if problem:
                yield Finding(f"{path}.pattern", obj=obj, message=(
                    f"{where(obj, f'{path}.pattern')}: the pattern {problem}; Volcano's webhook rejects it or the "
                    "member matches nothing. Write an RE2 pattern such as ^gpu-00[0-7][0-9]$."))
        elif how == "labelMatch":
            if not as_dict(body.get("matchLabels")) and not as_list(body.get("matchExpressions")):
                yield Finding(path, obj=obj, message=(
                    f"{where(obj, path)}: an empty labelMatch matches no node at all (not every node). Give "
                    "matchLabels or matchExpressions."))


def _tree_valid(objects: list[dict], ctx: CheckContext) -> Iterator[Finding | NotChecked]:
    judged = {id(o) for o in objects}
    every = hypernodes(ctx.manifests or objects)
    if not every:
        return
    inventory = _node_labels(ctx.fabric)
    by_name: dict[str, dict] = {}
    copies: dict[str, list[dict]] = {}
    for obj in every:
        copies.setdefault(_name(obj), []).append(obj)
        by_name.setdefault(_name(obj), obj)
    for name, objs in sorted(copies.items()):
        for obj in objs if len(objs) > 1 else ():
            yield Finding("metadata.name", obj=obj, message=(
                f"{where(obj, 'metadata.name')}: HyperNode {name!r} is defined {len(objs)} times (the stack and your "
                "manifests, or two files); whichever is applied last replaces the others' members. Rename one or "
                "drop the duplicate."))
    tiers = {n: as_int(as_dict(o.get("spec")).get("tier")) for n, o in by_name.items()}
    for name, obj in by_name.items():
        if tiers[name] is None or tiers[name] < 1:
            yield Finding("spec.tier", obj=obj, message=(
                f"{where(obj, 'spec.tier')}: tier is {as_dict(obj.get('spec')).get('tier')!r}; HyperNode tiers are "
                "integers from 1 (closest to the nodes) upwards. Set the tier."))
        yield from _member_findings(obj, by_name, inventory)

    # Parents, cycles and tier order, over HyperNode members that resolve.
    parents: dict[str, list[tuple[str, int]]] = {}
    children: dict[str, list[str]] = {n: [] for n in by_name}
    for name, obj in by_name.items():
        for i, member in _members(obj):
            child = as_dict(_selector(member).get("exactMatch")).get("name")
            if member.get("type") == "HyperNode" and isinstance(child, str) and child in by_name:
                parents.setdefault(child, []).append((name, i))
                children[name].append(child)
    for child, owners in sorted(parents.items()):
        if len({o for o, _ in owners}) < 2:
            continue
        for owner, i in owners:   # every parent involved: any of them may be the one a user adds
            others = sorted({o for o, _ in owners} - {owner})
            path = f"spec.members[{i}]"
            yield Finding(path, obj=by_name[owner], message=(
                f"{where(by_name[owner], path)}: HyperNode {child!r} also has parent {', '.join(map(repr, others))}; "
                "Volcano refuses a second parent, marks its HyperNode cache not ready and stops scheduling every "
                "topology-aware job in the cluster. Keep one parent."))
    yield from _cycles(by_name, children)
    for child, owners in parents.items():
        for owner, i in owners:
            pt, ct = tiers[owner], tiers[child]
            if pt is not None and ct is not None and pt != ct + 1:
                path = f"spec.members[{i}]"
                yield Finding(path, obj=by_name[owner], message=(
                    f"{where(by_name[owner], path)}: parent tier {pt} and child {child!r} tier {ct}; tiers must "
                    "increase by exactly one from child to parent (Volcano's scoring and gradient search assume "
                    f"it, and a gap makes highestTierAllowed mean different things in different subtrees). Set "
                    f"the parent to tier {ct + 1}."))

    # Leaves at the lowest tier, and tierName <-> tier one-to-one.
    known_tiers = [t for t in tiers.values() if t is not None]
    lowest = min(known_tiers) if known_tiers else None
    for name, obj in by_name.items():
        kinds = {str(m.get("type")) for _, m in _members(obj)}
        if "Node" in kinds and "HyperNode" in kinds:
            yield Finding("spec.members", obj=obj, message=(
                f"{where(obj, 'spec.members')}: mixes Node and HyperNode members; its own nodes are then in no "
                "lowest-tier HyperNode and hard-mode jobs never use them. Put the nodes under a leaf HyperNode."))
        elif "Node" in kinds and lowest is not None and tiers[name] is not None and tiers[name] != lowest:
            yield Finding("spec.tier", obj=obj, message=(
                f"{where(obj, 'spec.tier')}: a leaf (it has Node members) at tier {tiers[name]}, above the lowest "
                f"tier {lowest}; Volcano looks for a node's HyperNode only among lowest-tier ones, so these nodes "
                "are unreachable for hard-mode jobs (volcano#5877). Give every leaf the lowest tier."))
    by_tier_name: dict[str, dict[int, list[str]]] = {}
    by_tier: dict[int, dict[str, list[str]]] = {}
    for name, obj in by_name.items():
        tier_name = as_dict(obj.get("spec")).get("tierName")
        if isinstance(tier_name, str) and tier_name and tiers[name] is not None:
            by_tier_name.setdefault(tier_name, {}).setdefault(tiers[name], []).append(name)
            by_tier.setdefault(tiers[name], {}).setdefault(tier_name, []).append(name)
    for tier_name, at in sorted(by_tier_name.items()):
        if len(at) > 1:
            majority = max(at, key=lambda t: (len(at[t]), -t))
            for tier, names in sorted(at.items()):
                if tier != majority:
                    for n in names:
                        yield Finding("spec.tierName", obj=by_name[n], message=(
                            f"{where(by_name[n], 'spec.tierName')}: tierName {tier_name!r} is used at tiers "
                            f"{sorted(at)}; Volcano resolves highestTierName to one of them at random "
                            f"(\"Conflicting tiers\"). Use one tierName per tier."))
    for tier, names_at in sorted(by_tier.items()):
        if len(names_at) > 1:
            majority = max(names_at, key=lambda n: (len(names_at[n]), n))
            for tier_name, names in sorted(names_at.items()):
                if tier_name != majority:
                    for n in names:
                        yield Finding("spec.tierName", obj=by_name[n], message=(
                            f"{where(by_name[n], 'spec.tierName')}: tier {tier} is named both {majority!r} and "
                            f"{tier_name!r}; highestTierName then means different things for the same tier. Use "
                            "one name per tier."))

    # Against the node inventory: every node in exactly one leaf.
    if not inventory:
        return
    placed: dict[str, list[str]] = {}
    unknown = []
    for name, obj in by_name.items():
        nodes, known = node_members(obj, inventory)
        if not known:
            unknown.append(name)
        for node in nodes:
            placed.setdefault(node, []).append(name)
    shared: dict[str, list[str]] = {}
    for node, leaves in placed.items():
        if len(leaves) > 1:
            for leaf in leaves:   # every leaf involved: any of them may be the one a user adds
                others = sorted(set(leaves) - {leaf})
                shared.setdefault(leaf, []).append(f"{node} (also in {', '.join(others)})")
    for leaf, nodes in sorted(shared.items()):
        nodes = sorted(nodes)
        shown = ", ".join(nodes[:5]) + (f" and {len(nodes) - 5} more" if len(nodes) > 5 else "")
        yield Finding("spec.members", obj=by_name[leaf], message=(
            f"{where(by_name[leaf], 'spec.members')}: {len(nodes)} of its node(s) are also in other leaf HyperNodes: "
            f"{shown}; Volcano picks one leaf per node at random, so placement and scores change from run to "
            "run. Put every node in exactly one leaf."))
    if unknown:
        yield NotChecked(f"HyperNodes {', '.join(sorted(unknown)[:5])} select nodes by label and the node labels are "
                         "unknown, so whether every node is in exactly one leaf was not checked")
        return
    missing = sorted(n for n in inventory if n not in placed)
    judged_leaf = next((o for o in every if id(o) in judged), None)
    if missing and judged_leaf is not None:
        shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
        yield Finding("spec.members", obj=judged_leaf, message=(
            f"{where(judged_leaf, 'spec.members')}: {len(missing)} node(s) of the stack's inventory are in no leaf "
            f"HyperNode: {shown}; hard-mode jobs never use them. Add them to a leaf (trainstack's fabric module "
            "does this for every node)."))


def _cycles(by_name: dict[str, dict], children: dict[str, list[str]]) -> Iterator[Finding]:
    state: dict[str, int] = {}
    reported: set[frozenset] = set()
    for start in sorted(by_name):
        stack: list[tuple[str, int]] = [(start, 0)]
        path: list[str] = []
        while stack:
            node, i = stack.pop()
            if i == 0:
                if state.get(node) == 2:
                    continue
                state[node] = 1
                path.append(node)
            kids = children.get(node, [])
            if i < len(kids):
                stack.append((node, i + 1))
                kid = kids[i]
                if state.get(kid) == 1 and kid in path:
                    loop = path[path.index(kid):]
                    key = frozenset(loop)
                    if key not in reported:
                        reported.add(key)
                        for name in sorted(loop):   # every member: any of them may be the user's
                            anchor = by_name[name]
                            yield Finding("spec.members", obj=anchor, message=(
                                f"{where(anchor, 'spec.members')}: HyperNodes form a cycle "
                                f"({' -> '.join(loop + [kid])}); Volcano reports \"cyclic dependency detected\", "
                                "marks its HyperNode cache not ready and stops scheduling every topology-aware job. "
                                "Break the cycle."))
                elif state.get(kid) != 2 and state.get(kid) != 1:
                    stack.append((kid, 0))
            else:
                state[node] = 2
                path.pop()


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
        shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
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
                    "RE2 regexes, tierName and tier one-to-one, and each known node in exactly one leaf.",
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
