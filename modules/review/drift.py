"""`trainstack drift STACK --snapshot FILE`: does the live cluster still have the fabric the stack
declares? Run it before `pulumi up` on an existing cluster.

The snapshot is what ``kubectl get hypernodes,nodes -o yaml`` prints, read by the one snapshot
loader ``simulate --snapshot`` uses (``modules/simulate/snapshot.py``: the same node pools, the
same HyperNode member resolution as Volcano's, regexMatch anywhere in the name, labelMatch by the
node's labels). The stack side is its fabric model and the HyperNodes ``render`` writes. One line
per finding, each naming the node or HyperNode and its category:

* ``missing``: a node the stack declares is not in the cluster; a HyperNode render writes is not;
* ``extra``: a GPU node of the cluster that no leaf of the stack declares; a HyperNode of the
  cluster that render does not write;
* ``moved``: a node under a different leaf HyperNode than the stack declares (both names; "no
  HyperNode" when it is under none);
* ``label``: a node of a label-selected leaf whose labels no longer match the leaf's selector; on a
  label-defined fabric (``source: labels``, the stack declares no nodes), a GPU node without one of
  the level labels the discoverer climbs (the only comparison there);
* ``hypernode``: a HyperNode in both whose tier, tierName or members (as written) differ from what
  render writes; a node (HyperNode) that the cluster's HyperNodes put under two leaves (parents),
  which Volcano cannot use (the first keeps it for the other comparisons);
* ``capacity``: a node whose allocatable GPUs, CPU or memory differ from its node pool's.

Exit 1 when there is drift, 0 when there is none, 2 on bad input. Every comparison is a dict look-up
per node, member or HyperNode: linear in the size of the cluster.
"""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any, Iterable

from modules.core.config import Project, load_stack
from modules.core.render import render
from modules.core.selectors import selector_matches
from modules.fabric.model import Fabric, Node
from modules.simulate.snapshot import load_cluster

CATEGORIES = ("missing", "extra", "moved", "label", "hypernode", "capacity")
GIB = Decimal(2**30)


@dataclass(frozen=True)
class Finding:
    """One difference between what the stack declares and what the live cluster has."""
    category: str            # one of CATEGORIES
    kind: str                # Node | HyperNode
    name: str
    detail: str
    declared: Any = None     # what the stack says (leaf, spec fields, capacity)
    live: Any = None         # what the cluster has

    def line(self) -> str:
        return f"{self.category}: {self.kind} {self.name}: {self.detail}"


def _leaf_name(fabric: Fabric, node: Node) -> str | None:
    if node.leaf is None:
        return None
    sw = fabric.switches[node.leaf]
    return sw.hypernode or sw.name


def _where(leaf: str | None) -> str:
    return f"leaf {leaf}" if leaf else "no HyperNode"


def _number(value: Decimal) -> str:
    return format(value.normalize(), "f") if value == value.to_integral_value() else str(value)


def _capacity(declared: Node, live: Node) -> Finding | None:
    pool, alloc = declared.pool, live.pool.allocatable()
    rows = []
    want = {"cpu": Decimal(pool.cpu_milli) / 1000, "memory": Decimal(pool.memory_bytes)}
    if pool.gpus or alloc.get(pool.gpu_resource):
        want[pool.gpu_resource] = Decimal(pool.gpus)
    for resource, amount in want.items():
        have = alloc.get(resource, Decimal(0))
        if have != amount:
            if resource == "memory":
                rows.append((resource, f"{_number(amount / GIB)}Gi", f"{_number(have / GIB)}Gi"))
            else:
                rows.append((resource, _number(amount), _number(have)))
    if not rows:
        return None
    text = "; ".join(f"{r} {a} in node pool {pool.name}, {h} allocatable" for r, a, h in rows)
    return Finding("capacity", "Node", declared.name, text, {r: a for r, a, _ in rows}, {r: h for r, _, h in rows})


def _member_key(member: Any) -> str:
    return json.dumps(member, sort_keys=True, separators=(",", ":"), default=str)


def _member_text(member: Any) -> str:
    if not isinstance(member, dict):
        return json.dumps(member, default=str)
    selector = member.get("selector") if isinstance(member.get("selector"), dict) else {}
    for how in ("exactMatch", "regexMatch", "labelMatch"):
        if how in selector:
            what = selector[how]
            value = what.get("name") if how == "exactMatch" and isinstance(what, dict) else (
                what.get("pattern") if how == "regexMatch" and isinstance(what, dict) else
                json.dumps(what, sort_keys=True, default=str))
            return f"{member.get('type')} {how} {value}"
    return _member_key(member)


def _hypernode_diff(name: str, rendered: dict, live: dict) -> Finding | None:
    parts, declared, have = [], {}, {}
    for field in ("tier", "tierName"):
        if rendered.get(field) != live.get(field):
            parts.append(f"{field} {rendered.get(field)} rendered, {live.get(field)} in the cluster")
            declared[field], have[field] = rendered.get(field), live.get(field)
    want = {_member_key(m): m for m in rendered.get("members") or []}
    got = {_member_key(m): m for m in (live.get("members") if isinstance(live.get("members"), list) else [])}
    lacking = [_member_text(want[k]) for k in want if k not in got]
    added = [_member_text(got[k]) for k in got if k not in want]
    if lacking:
        parts.append(f"members render writes but the cluster lacks: {', '.join(lacking)}")
    if added:
        parts.append(f"members the cluster has but render does not write: {', '.join(added)}")
    if lacking or added:
        declared["members"], have["members"] = list(want.values()), list(got.values())
    if not parts:
        return None
    return Finding("hypernode", "HyperNode", name, "; ".join(parts), declared, have)


def compare(stack: Fabric, rendered: Iterable[dict], cluster: Fabric, live: Iterable[dict],
            conflicts: Iterable[tuple[str, str, str]] = ()) -> list[Finding]:
    """Every difference between the stack's fabric and rendered HyperNodes and a cluster's
    (``conflicts``: a node or HyperNode the cluster puts under two parents, from ``load_cluster``)."""
    findings: list[Finding] = [Finding("hypernode", kind, name, f"in the cluster {why}", None, why)
                               for kind, name, why in conflicts]
    for name, node in stack.nodes.items():
        here = cluster.nodes.get(name)
        declared_leaf = _leaf_name(stack, node)
        if here is None:
            findings.append(Finding("missing", "Node", name, f"declared under {_where(declared_leaf)}, not in the "
                                    "cluster", declared_leaf, None))
            continue
        live_leaf = _leaf_name(cluster, here)
        if live_leaf != declared_leaf:
            sw = stack.switches.get(node.leaf) if node.leaf else None
            if sw is not None and sw.selector is not None and not selector_matches(sw.selector, here.labels):
                findings.append(Finding("label", "Node", name, f"its labels do not match the selector of leaf "
                                        f"{declared_leaf} ({json.dumps(sw.selector, sort_keys=True)}); in the "
                                        f"cluster under {_where(live_leaf)}", declared_leaf, live_leaf))
            else:
                findings.append(Finding("moved", "Node", name, f"declared under {_where(declared_leaf)}, in the "
                                        f"cluster under {_where(live_leaf)}", declared_leaf, live_leaf))
        if (finding := _capacity(node, here)) is not None:
            findings.append(finding)
    for name, node in cluster.nodes.items():
        if name not in stack.nodes and node.pool.gpus:
            findings.append(Finding("extra", "Node", name, f"a GPU node ({node.pool.gpus} {node.pool.gpu_resource}) "
                                    f"no leaf of the stack declares; in the cluster under "
                                    f"{_where(_leaf_name(cluster, node))}", None, _leaf_name(cluster, node)))
    want = {o["metadata"]["name"]: o.get("spec") or {} for o in rendered}
    have = {str((o.get("metadata") or {}).get("name")): o.get("spec") if isinstance(o.get("spec"), dict) else {}
            for o in live}
    for name, spec in want.items():
        if name not in have:
            findings.append(Finding("missing", "HyperNode", name, f"render writes it (tier {spec.get('tier')}), "
                                    "not in the cluster", spec, None))
        elif (finding := _hypernode_diff(name, spec, have[name])) is not None:
            findings.append(finding)
    for name, spec in have.items():
        if name not in want:
            findings.append(Finding("extra", "HyperNode", name, f"in the cluster (tier {spec.get('tier')}), the "
                                    "stack does not render it", None, spec))
    order = {c: i for i, c in enumerate(CATEGORIES)}
    findings.sort(key=lambda f: (order[f.category], f.kind, f.name))
    return findings


def label_findings(stack: Fabric, cluster: Fabric) -> list[Finding]:
    """A label-defined fabric: GPU nodes of the cluster that lack a level label. Volcano's label
    discoverer climbs a node's level labels from tier 1 up and stops at the first one missing, so
    such a node sits under no HyperNode (tier 1 missing) or its chain ends below the top."""
    levels = sorted(stack.tier_names.items())      # tier -> label key, tier 1 first
    findings = []
    for name, node in sorted(cluster.nodes.items()):
        if not node.pool.gpus:
            continue
        missing = [key for _, key in levels if key not in node.labels]
        if not missing:
            continue
        first = next(t for t, key in levels if key not in node.labels)
        effect = ("Volcano's label discoverer puts it under no HyperNode" if first == 1 else
                  f"Volcano's label discoverer stops at tier {first - 1}, so its HyperNodes reach no higher")
        findings.append(Finding("label", "Node", name, f"a GPU node without the level label(s) "
                                f"{', '.join(missing)}: {effect}", [k for _, k in levels], missing))
    return findings


def report_json(stack: str, snapshot: str, findings: list[Finding]) -> str:
    counts = {c: sum(f.category == c for f in findings) for c in CATEGORIES}
    data = {"stack": stack, "snapshot": snapshot, "drift": bool(findings), "counts": counts,
            "findings": [asdict(f) for f in findings]}
    return json.dumps(data, indent=2, sort_keys=True, default=str) + "\n"


def report_text(stack: str, snapshot: str, findings: list[Finding]) -> str:
    lines = [f.line() for f in findings]
    if findings:
        counts = ", ".join(f"{n} {c}" for c in CATEGORIES if (n := sum(f.category == c for f in findings)))
        lines.append(f"drift: stack {stack} and snapshot {snapshot} differ in {len(findings)} finding(s) ({counts})")
    else:
        lines.append(f"no drift: snapshot {snapshot} has the fabric stack {stack} declares")
    return "\n".join(lines) + "\n"


def cmd_drift(args: argparse.Namespace, project: Project) -> int:
    stack = load_stack(project, args.stack)
    bundle = render(stack)
    fabric = bundle.fabric
    conflicts: list[tuple[str, str, str]] = []
    cluster, live = load_cluster(Path(args.snapshot), args.snapshot, conflicts)
    if fabric is None:
        print(f"warning: stack {stack.name}: no fabric to compare", file=sys.stderr)
        findings: list[Finding] = []
    elif fabric.label_defined:
        print(f"warning: stack {stack.name}: the fabric is label-defined: Volcano's discoverer writes its "
              "HyperNodes from node labels and the stack declares no nodes, so drift checks only that every "
              "GPU node carries the level labels", file=sys.stderr)
        findings = label_findings(fabric, cluster)
    else:
        rendered = [r.obj for r in bundle.resources if r.obj.get("kind") == "HyperNode"]
        findings = compare(fabric, rendered, cluster, (obj for _, obj in live), conflicts)
    write = report_json if args.format == "json" else report_text
    sys.stdout.write(write(stack.name, args.snapshot, findings))
    return 1 if findings else 0


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("drift", parents=[common],
                       help="compare the fabric a stack declares with a live cluster's snapshot (run before "
                            "pulumi up on an existing cluster)",
                       description="Compare the stack's fabric and the HyperNodes render writes with a snapshot "
                                   "(kubectl get hypernodes,nodes -o yaml): nodes missing, extra, moved to another "
                                   "leaf, label and HyperNode differences, capacity differences. Exit 1 on drift, "
                                   "0 when there is none, 2 on bad input.")
    p.add_argument("stack", help="stack name (stacks/Pulumi.<stack>.yaml) or the path of its file")
    p.add_argument("--snapshot", metavar="FILE", required=True,
                   help="kubectl get hypernodes,nodes -o yaml (or -o json) output: a file or a directory of them")
    p.add_argument("--format", default="text", choices=("text", "json"), help="output format")
    p.set_defaults(run=cmd_drift)
