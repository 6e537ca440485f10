"""What ``trainstack fabric`` prints: a summary, an indented tree, Mermaid (for PRs), DOT, JSON."""
from __future__ import annotations

import json

from modules.core import yamlio

from . import hostlist
from .model import Fabric, Switch

MAX_NODE_EXPRESSIONS = 2     # node ranges shown per leaf before "..."


def _n(value: int) -> str:
    return f"{value:,}"


def _nodes_text(switch: Switch) -> str:
    if switch.selector is not None:
        return "nodes by label " + json.dumps(switch.selector, sort_keys=True)
    parts = hostlist.compress(switch.nodes)
    return ", ".join(parts[:MAX_NODE_EXPRESSIONS]) + (", ..." if len(parts) > MAX_NODE_EXPRESSIONS else "")


def summary(fabric: Fabric, stack: str) -> dict:
    """Everything a reviewer asks first, as plain data (the JSON format is this plus the switches)."""
    out: dict = {"stack": stack, "source": fabric.source, "file": fabric.file}
    if fabric.label_defined:
        out.update({
            "tiers": [{"tier": t, "name": n} for t, n in sorted(fabric.tier_names.items())],
            "discovery": fabric.discovery,
            "hypernodes": 0,
            "capacityKnown": False,
        })
        return out
    domains = fabric.accelerator_domains()
    largest_accel = None
    if domains:
        name, members = max(domains.items(), key=lambda kv: (len(kv[1]), kv[0]))
        largest_accel = {"domain": name, "nodes": len(members),
                         "gpus": sum(fabric.nodes[n].gpus for n in members)}
    pools: dict[str, int] = {}
    for node in fabric.nodes.values():
        pools[node.pool.name] = pools.get(node.pool.name, 0) + 1
    tiers = []
    for tier in fabric.tiers:
        largest = fabric.largest_domain(tier)
        tiers.append({"tier": tier, "name": fabric.tier_names[tier], "switches": len(fabric.at_tier(tier)),
                      "largestDomain": None if largest is None else
                      {"switch": largest.switch, "nodes": largest.nodes, "gpus": largest.gpus}})
    out.update({
        "nodes": len(fabric.nodes),
        "gpus": fabric.total_gpus,
        "hypernodes": len(fabric.switches),
        "tiers": tiers,
        "pools": {name: {"nodes": count, "gpusPerNode": fabric.pools[name].gpus,
                         "gpuType": fabric.pools[name].gpu_type} for name, count in sorted(pools.items())},
        "acceleratorDomains": {"count": len(domains), "largest": largest_accel},
        "emptySwitches": list(fabric.empty_switches),
        "unattachedNodes": hostlist.compress(fabric.unattached()),
        "capacityKnown": True,
    })
    return out


def summary_text(fabric: Fabric, stack: str) -> list[str]:
    info = summary(fabric, stack)
    head = f"stack {stack}: fabric from {fabric.file} (source {fabric.source})"
    if fabric.label_defined:
        lines = [head, "label-defined: Volcano's label discoverer builds the HyperNodes from node labels at "
                 "run time; trainstack renders none and cannot count nodes or GPUs",
                 "tier  tierName (= node label key)"]
        lines += [f"{t['tier']:>4}  {t['name']}" for t in info["tiers"]]
        entry = fabric.discovery[0]["config"]["networkTopologyTypes"]
        for type_name, levels in entry.items():
            lines.append(f"discovery type {type_name}: " + " > ".join(level["nodeLabel"] for level in levels))
        return lines
    lines = [head, f"{_n(info['nodes'])} nodes, {_n(info['gpus'])} GPUs, {_n(info['hypernodes'])} HyperNodes"]
    for name, pool in info["pools"].items():
        kind = f" {pool['gpuType']}" if pool["gpuType"] else ""
        lines.append(f"  pool {name}: {_n(pool['nodes'])} nodes x {pool['gpusPerNode']}{kind} GPUs")
    width = max(len(t["name"]) for t in info["tiers"])
    lines.append(f"tier  {'name':<{width}}  switches  largest domain")
    for t in info["tiers"]:
        big = t["largestDomain"]
        lines.append(f"{t['tier']:>4}  {t['name']:<{width}}  {t['switches']:>8}  "
                     f"{big['switch']}: {_n(big['nodes'])} nodes, {_n(big['gpus'])} GPUs")
    accel = info["acceleratorDomains"]
    if accel["count"]:
        big = accel["largest"]
        lines.append(f"accelerator (NVLink) domains: {accel['count']}, largest {big['domain']}: "
                     f"{_n(big['nodes'])} nodes, {_n(big['gpus'])} GPUs")
    if info["emptySwitches"]:
        shown = ", ".join(info["emptySwitches"][:5]) + (", ..." if len(info["emptySwitches"]) > 5 else "")
        lines.append(f"no HyperNode for {len(info['emptySwitches'])} switch(es) without nodes: {shown}")
    if info["unattachedNodes"]:
        lines.append(f"under no switch (in no HyperNode): {', '.join(info['unattachedNodes'])}")
    return lines


def _line(fabric: Fabric, switch: Switch) -> str:
    text = (f"{switch.name}  [tier {switch.tier} {fabric.tier_names[switch.tier]}]  "
            f"{_n(fabric.node_count(switch.name))} nodes  {_n(fabric.gpu_count(switch.name))} GPUs")
    if switch.hypernode != switch.name:
        text += f"  (HyperNode {switch.hypernode})"
    if switch.is_leaf:
        text += f"  {_nodes_text(switch)}"
    return text


def tree_text(fabric: Fabric, stack: str, depth: int | None = None) -> str:
    lines = summary_text(fabric, stack)
    if fabric.label_defined:
        return "\n".join(lines) + "\n"
    lines.append("")
    for root in fabric.roots():
        lines.append(_line(fabric, root))
        # (switch, indent of its line, is it its parent's last child, level below the root)
        todo = [(c, "", c == root.children[-1], 1) for c in reversed(root.children)]
        while todo:
            name, indent, last, level = todo.pop()
            switch = fabric.switches[name]
            lines.append(f"{indent}{'└── ' if last else '├── '}{_line(fabric, switch)}")
            if switch.children and (depth is None or level < depth):
                inner = indent + ("    " if last else "│   ")
                todo.extend((c, inner, c == switch.children[-1], level + 1) for c in reversed(switch.children))
    return "\n".join(lines) + "\n"


# --- pictures -------------------------------------------------------------------------------

def _boxes(fabric: Fabric, max_boxes: int) -> tuple[list[tuple[str, str, list[str]]], list[tuple[str, str]]]:
    """(id, label lines, ...) boxes and (parent id, child id) edges. Above ``max_boxes`` HyperNodes,
    the leaves under one parent share a box so the picture stays readable."""
    collapse = len(fabric.switches) > max_boxes
    ids: dict[str, str] = {}
    boxes: list[tuple[str, str, list[str]]] = []
    edges: list[tuple[str, str]] = []

    def box(key: str, lines: list[str], tier: int) -> str:
        ids[key] = f"n{len(ids)}"
        boxes.append((ids[key], str(tier), lines))
        return ids[key]

    for switch in fabric.switches.values():
        if collapse and switch.is_leaf and switch.parent is not None:
            continue
        box(switch.name, [switch.name, f"tier {switch.tier} {fabric.tier_names[switch.tier]}",
                          f"{_n(fabric.node_count(switch.name))} nodes, {_n(fabric.gpu_count(switch.name))} GPUs"]
            + ([_nodes_text(switch)] if switch.is_leaf else []), switch.tier)
    for switch in fabric.switches.values():
        if switch.name not in ids:
            continue
        leaves = [c for c in switch.children if fabric.switches[c].is_leaf] if collapse else []
        for child in switch.children:
            if child not in leaves:
                edges.append((ids[switch.name], ids[child]))
        if leaves:
            nodes = sum(fabric.node_count(c) for c in leaves)
            gpus = sum(fabric.gpu_count(c) for c in leaves)
            tier = fabric.switches[leaves[0]].tier
            group = box(f"leaves of {switch.name}", [
                f"{len(leaves)} leaves: {leaves[0]} ... {leaves[-1]}" if len(leaves) > 1 else leaves[0],
                f"tier {tier} {fabric.tier_names[tier]}", f"{_n(nodes)} nodes, {_n(gpus)} GPUs"], tier)
            edges.append((ids[switch.name], group))
    return boxes, edges


def mermaid(fabric: Fabric, stack: str, max_boxes: int = 120) -> str:
    """A Markdown block to paste into a pull request (GitHub renders ``mermaid`` fences)."""
    out = ["```mermaid", "graph TD"]
    out += [f"  %% {line}" for line in summary_text(fabric, stack)]
    if fabric.label_defined:
        levels = next(iter(fabric.discovery[0]["config"]["networkTopologyTypes"].values()))
        for i, level in enumerate(levels):
            out.append(f'  l{i}["{_mermaid_escape(level["nodeLabel"])}"]')
            if i:
                out.append(f"  l{i - 1} --> l{i}")
    else:
        boxes, edges = _boxes(fabric, max_boxes)
        for box_id, _, lines in boxes:
            out.append(f'  {box_id}["{"<br/>".join(_mermaid_escape(line) for line in lines)}"]')
        out += [f"  {a} --> {b}" for a, b in edges]
    out.append("```")
    return "\n".join(out) + "\n"


def _mermaid_escape(text: str) -> str:
    return text.replace("&", "#amp;").replace('"', "#quot;").replace("<", "#lt;").replace(">", "#gt;")


def dot(fabric: Fabric, stack: str, max_boxes: int = 120) -> str:
    """Graphviz: ``trainstack fabric prod --format dot | dot -Tsvg > fabric.svg``."""
    out = [f"// {line}" for line in summary_text(fabric, stack)]
    out += ["digraph fabric {", "  rankdir=TB;", '  node [shape=box, fontname="Helvetica"];']
    if fabric.label_defined:
        levels = next(iter(fabric.discovery[0]["config"]["networkTopologyTypes"].values()))
        for i, level in enumerate(levels):
            out.append(f'  l{i} [label="{_dot_escape(level["nodeLabel"])}"];')
            if i:
                out.append(f"  l{i - 1} -> l{i};")
    else:
        boxes, edges = _boxes(fabric, max_boxes)
        by_tier: dict[str, list[str]] = {}
        for box_id, tier, lines in boxes:
            label = "\\n".join(_dot_escape(line) for line in lines)
            out.append(f'  {box_id} [label="{label}"];')
            by_tier.setdefault(tier, []).append(box_id)
        out += [f"  {a} -> {b};" for a, b in edges]
        out += [f"  {{ rank=same; {' '.join(ids)}; }}" for _, ids in sorted(by_tier.items()) if len(ids) > 1]
    out.append("}")
    return "\n".join(out) + "\n"


def _dot_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def as_json(fabric: Fabric, stack: str) -> str:
    data = summary(fabric, stack)
    if not fabric.label_defined:
        data["switches"] = [{
            "name": s.name, "hypernode": s.hypernode, "tier": s.tier, "tierName": fabric.tier_names[s.tier],
            "parent": s.parent, "children": list(s.children), "nodes": hostlist.compress(s.nodes),
            "selector": s.selector, "nodeCount": fabric.node_count(s.name), "gpuCount": fabric.gpu_count(s.name),
        } for s in fabric.switches.values()]
    return yamlio.dumps_json(data, indent=2, sort_keys=False) + "\n"
