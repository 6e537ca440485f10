"""Fabric sources -> one assembled, validated ``Fabric``.

Every source produces ``RawSwitch`` records and hands them to ``assemble``, which checks what
Volcano does not (one parent per switch, no cycles, each node under one leaf, tiers increasing
upward) and reports mistakes with the file and path where the switch was declared.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

from modules.core import yamlio
from modules.core.errors import ConfigError, show

from . import hostlist
from .model import Fabric, Node, Switch, build_links, build_pools, k8s_name, pool_for

if TYPE_CHECKING:
    from modules.core.context import RenderContext

ErrorAt = Callable[[str, str], ConfigError]
DEFAULT_TIER_NAMES = ("leaf", "spine", "core")


@dataclass
class RawSwitch:
    name: str
    where: str                          # path of its declaration, for messages
    tier: int | None = None
    children: list[str] = field(default_factory=list)
    nodes: list[str] = field(default_factory=list)
    labels: dict = field(default_factory=dict)
    domain: str | None = None           # accelerator domain of the nodes listed here


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


def assemble(ctx: "RenderContext", source: str, raws: list[RawSwitch], error_at: ErrorAt,
             section: dict) -> Fabric:
    switches: dict[str, RawSwitch] = {}
    for raw in raws:
        if raw.name in switches:
            raise error_at(raw.where, f"switch {raw.name!r} is declared twice "
                                      f"(also at {switches[raw.name].where})")
        switches[raw.name] = raw

    parent: dict[str, str] = {}
    for raw in raws:
        for child in raw.children:
            if child not in switches:
                raise error_at(f"{raw.where}.switches", f"child switch {child!r} is not declared")
            if child == raw.name:
                raise error_at(f"{raw.where}.switches", f"switch {raw.name!r} lists itself as a child (a cycle)")
            if child in parent:
                raise error_at(f"{raw.where}.switches", f"switch {child!r} has two parents, "
                               f"{parent[child]!r} and {raw.name!r}; a HyperNode may have only one "
                               "(Volcano stops all topology scheduling otherwise)")
            parent[child] = raw.name
        if raw.children and raw.nodes:
            raise error_at(raw.where, f"switch {raw.name!r} has both child switches and nodes; nodes "
                           "must hang off leaf switches only (put them under a leaf of their own)")

    _check_cycles(switches, parent, error_at)
    tiers = _assign_tiers(switches, parent, error_at)

    leaf_of: dict[str, str] = {}
    domains: dict[str, str | None] = {}
    for raw in raws:
        for node in raw.nodes:
            if node in leaf_of:
                raise error_at(f"{raw.where}.nodes", f"node {node!r} is under two leaves, "
                               f"{leaf_of[node]!r} and {raw.name!r}; each node must be in exactly one")
            leaf_of[node] = raw.name
            domains[node] = raw.domain

    tier_names = tier_names_for(section, sorted(set(tiers.values())) or [1])
    pools = build_pools(ctx, section)
    nodes = {name: Node(name=name, leaf=leaf, pool=pool_for(ctx, pools, name), domain=domains[name])
             for name, leaf in leaf_of.items()}

    out: dict[str, Switch] = {}
    hypernode_names: dict[str, str] = {}
    for raw in raws:
        hn = k8s_name(raw.name)
        if hn in hypernode_names:
            raise error_at(raw.where, f"switches {hypernode_names[hn]!r} and {raw.name!r} both become "
                           f"HyperNode {hn!r}; rename one")
        hypernode_names[hn] = raw.name
        out[raw.name] = Switch(name=raw.name, tier=tiers[raw.name], parent=parent.get(raw.name),
                               children=list(raw.children), nodes=list(raw.nodes),
                               labels=dict(raw.labels), hypernode=hn)
    return Fabric(source=source, tier_names=tier_names, switches=out, nodes=nodes,
                  pools={p.name: p for p in pools}, mixed_depth=section.get("allowMixedDepth", False),
                  links=build_links(section))


def _check_cycles(switches: dict[str, RawSwitch], parent: dict[str, str], error_at: ErrorAt) -> None:
    # With at most one parent each, a cycle is a parent chain that comes back to itself.
    state: dict[str, int] = {}
    for start in switches:
        chain = []
        current: str | None = start
        while current is not None and state.get(current) is None:
            state[current] = 1
            chain.append(current)
            current = parent.get(current)
        if current is not None and state.get(current) == 1 and current in chain:
            loop = chain[chain.index(current):] + [current]
            raise error_at(switches[current].where, "switches form a cycle: " + " -> ".join(reversed(loop)))
        for name in chain:
            state[name] = 2


def _assign_tiers(switches: dict[str, RawSwitch], parent: dict[str, str], error_at: ErrorAt) -> dict[str, int]:
    """Explicit tiers are kept; missing ones are inferred bottom-up (leaf 1, parent = child + 1)."""
    tiers: dict[str, int] = {}

    def tier_of(name: str) -> int:
        stack = [name]
        while stack:
            current = stack[-1]
            if current in tiers:
                stack.pop()
                continue
            raw = switches[current]
            pending = [c for c in raw.children if c not in tiers]
            if pending:
                stack.extend(pending)
                continue
            inferred = 1 + max((tiers[c] for c in raw.children), default=0)
            tiers[current] = raw.tier if raw.tier is not None else inferred
            stack.pop()
        return tiers[name]

    for name in switches:
        tier_of(name)
    for name, raw in switches.items():
        for child in raw.children:
            if tiers[name] <= tiers[child]:
                raise error_at(raw.where, f"switch {name!r} is at tier {tiers[name]} but its child "
                               f"{child!r} is at tier {tiers[child]}; a parent's tier must be above "
                               "its children's")
    return tiers


# --- sources --------------------------------------------------------------------------------

def _stack_error_at(ctx: "RenderContext") -> ErrorAt:
    return lambda where, message: ctx.error(where, message)


def load_generated(ctx: "RenderContext", section: dict) -> Fabric:
    """Spine-leaf (2 tiers) or three-tier fat-tree from a few numbers and name patterns."""
    gen = section["generated"]
    where = "fabric.generated"
    topology = gen["topology"]
    pods = gen["pods"] if topology == "fat-tree" else 1
    raws: list[RawSwitch] = []
    node_index = 0
    leaf_index = 0

    def fmt(pattern_key: str, **values: int) -> str:
        pattern = gen[pattern_key]
        try:
            return pattern.format(**values)
        except (KeyError, IndexError, ValueError) as exc:
            raise ctx.expected(f"{where}.{pattern_key}", "a name pattern using only "
                               + ", ".join("{" + k + "}" for k in values), pattern) from None

    spine_names = []
    for pod in range(1, pods + 1):
        leaf_names = []
        for _ in range(gen["leavesPerPod"] if topology == "fat-tree" else gen["leaves"]):
            leaf_index += 1
            nodes = []
            for i in range(1, gen["nodesPerLeaf"] + 1):
                node_index += 1
                nodes.append(fmt("nodeName", n=node_index, leaf=leaf_index, pod=pod, i=i))
            leaf = fmt("leafName", leaf=leaf_index, pod=pod)
            leaf_names.append(leaf)
            raws.append(RawSwitch(name=leaf, where=f"{where}.leafName", tier=1, nodes=nodes,
                                  domain=leaf if gen["nvlinkPerLeaf"] else None))
        spine = fmt("spineName", pod=pod)
        spine_names.append(spine)
        raws.append(RawSwitch(name=spine, where=f"{where}.spineName", tier=2, children=leaf_names))
    if topology == "fat-tree":
        raws.append(RawSwitch(name=gen["coreName"], where=f"{where}.coreName", tier=3, children=spine_names))
    return assemble(ctx, "generated", raws, _stack_error_at(ctx), section)


def load_file(ctx: "RenderContext", section: dict) -> Fabric:
    """trainstack's compact fabric file (see modules/fabric/README.md)."""
    path = ctx.stack.resolve("fabric.path", section.get("path"))
    shown = ctx.stack.project.show(path)
    data = yamlio.load_file(path, shown)

    def error_at(where: str, message: str) -> ConfigError:
        return ConfigError(shown, where, message)

    if not isinstance(data, dict):
        raise ConfigError(shown, "(document)", f"expected a mapping with 'switches', got {show(data)}")
    unknown = sorted(set(data) - {"tierNames", "switches"})
    if unknown:
        raise error_at(str(unknown[0]), f"unknown key {unknown[0]!r}; expected tierNames or switches")
    switches = data.get("switches")
    if not isinstance(switches, dict) or not switches:
        raise error_at("switches", f"expected a mapping of switch name -> switch, got {show(switches)}")
    if "tierNames" in data:
        names = data["tierNames"]
        if not isinstance(names, list) or not all(isinstance(n, str) and n for n in names):
            raise error_at("tierNames", f"expected a list of tier names (tier 1 first), got {show(names)}")
        section = {**section, "tierNames": names}
    raws = []
    for name, spec in switches.items():
        where = f"switches.{name}"
        if not isinstance(name, str) or not name:
            raise error_at("switches", f"expected switch names as strings, got {show(name)}")
        if spec is None:
            spec = {}
        if not isinstance(spec, dict):
            raise error_at(where, f"expected a mapping with switches/nodes/tier, got {show(spec)}")
        extra = sorted(set(spec) - {"tier", "switches", "nodes", "domain", "labels"})
        if extra:
            raise error_at(f"{where}.{extra[0]}", f"unknown key {extra[0]!r}; expected tier, switches, "
                           "nodes, domain or labels")
        tier = spec.get("tier")
        if tier is not None and (not isinstance(tier, int) or isinstance(tier, bool) or tier < 1):
            raise error_at(f"{where}.tier", f"expected an integer >= 1, got {show(tier)}")
        children = _names(spec.get("switches", []), f"{where}.switches", error_at)
        nodes = _names(spec.get("nodes", []), f"{where}.nodes", error_at)
        domain = spec.get("domain")
        if domain is not None and not isinstance(domain, str):
            raise error_at(f"{where}.domain", f"expected a domain name, got {show(domain)}")
        labels = spec.get("labels", {})
        if not isinstance(labels, dict):
            raise error_at(f"{where}.labels", f"expected a mapping, got {show(labels)}")
        raws.append(RawSwitch(name=name, where=where, tier=tier, children=children, nodes=nodes,
                              labels=labels, domain=domain))
    return assemble(ctx, "file", raws, error_at, section)


def _names(value: object, where: str, error_at: ErrorAt) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        raise error_at(where, f"expected a list of names or ranges such as gpu-[001-032], got {show(value)}")
    out = []
    for i, expr in enumerate(value):
        try:
            out.extend(hostlist.expand(expr))
        except hostlist.HostlistError as exc:
            raise error_at(f"{where}[{i}]", f"{exc}") from None
    return out


SOURCES = {"generated": load_generated, "file": load_file}


def load(ctx: "RenderContext") -> Fabric:
    section = ctx.section("fabric")
    return SOURCES[section["source"]](ctx, section)
