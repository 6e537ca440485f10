"""`trainstack drift STACK --snapshot FILE`: does the live cluster still have the fabric the stack
declares? Run it before `pulumi up` on an existing cluster.

The snapshot is what ``kubectl get hypernodes,nodes -o yaml`` prints, read into the one cluster
model ``simulate --snapshot`` and the eviction what-if read (``modules/simulate/model.py``), whose
Nodes and HyperNodes become a fabric (``modules/simulate/snapshot.py`` ``load_cluster``: the same
node pools, the same HyperNode member resolution as Volcano's, regexMatch anywhere in the name,
labelMatch by the node's labels). The stack side is its fabric model and the HyperNodes ``render`` writes. One line
per finding, each naming the node or HyperNode and its category:

* ``missing``: a node the stack declares is not in the cluster; a HyperNode render writes is not
  (a snapshot without any HyperNode is one line saying so, and the nodes' leaves are then not
  compared: it cannot tell them);
* ``extra``: a GPU node of the cluster that no leaf of the stack declares; a HyperNode of the
  cluster that render does not write;
* ``moved``: a node under a different leaf HyperNode than the stack declares (both names; "no
  HyperNode" when it is under none);
* ``label``: a node of a label-selected leaf whose labels no longer match the leaf's selector (with
  the live values of the labels the selector reads); on a label-defined fabric (``source:
  labels``, the stack declares no nodes), a GPU node without one of the level labels the
  discoverer climbs (the only comparison there);
* ``hypernode``: a HyperNode in both whose tier, tierName or members (as written) differ from what
  render writes; a node (HyperNode) that the cluster's HyperNodes put under two leaves (parents),
  which Volcano cannot use (the first keeps it for the other comparisons), with where the stack
  puts it;
* ``capacity``: a node that allocates less than its node pool declares, for what the stack file
  itself sets (``gpus``, ``cpu``, ``memory``, ``resources``; a schema default it did not write is
  not a plan). GPUs and extended resources are exact; CPU and memory may be up to ``--tolerance``
  (5 %) below, what the kubelet reserves. A node that allocates more is a note, not drift.

Every finding shows the declared and the live value. Exit 1 when there is drift, 0 when there is
none, 2 on bad input. Every comparison is a dict look-up per node, member or HyperNode: linear in
the size of the cluster.
"""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any, Iterable, Mapping

from modules.core.config import Project, StackConfig, load_stack
from modules.core.errors import listing
from modules.core.quantity import parse_quantity
from modules.core.render import render
from modules.core.selectors import selector_matches
from modules.fabric.model import Fabric, Node
from modules.simulate.snapshot import load_cluster

CATEGORIES = ("missing", "extra", "moved", "label", "hypernode", "capacity")
GIB = Decimal(2**30)
# What the kubelet reserves (system-reserved, kube-reserved, the hard eviction threshold) comes out
# of CPU and memory only: GKE keeps about 2.5 % of a 2 TiB node's memory, EKS 255Mi + 11Mi per pod,
# and under 0.5 % of 192 CPUs. A node this far below its pool's declared CPU or memory is still the
# node the stack plans on; beyond it, plans made from the stack over-count it.
TOLERANCE = Decimal(5) / 100
KUBELET_RESERVED = ("cpu", "memory")
NAMED = 10               # nodes or HyperNodes named in one aggregated line


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


def declared_capacity(stack: StackConfig) -> dict[str, dict[str, Decimal]]:
    """Per node pool, the allocatable amounts the stack file itself sets. A schema default the file
    did not write (``cpu: "192"``, ``memory: 1800Gi``, ``gpus: 8``) is not a plan anyone made, so
    it is not compared."""
    fabric = stack.given.get("fabric")
    written = fabric.get("nodePools") if isinstance(fabric, dict) else None
    if not isinstance(written, list):
        return {}
    full = {p["name"]: p for p in stack.values["fabric"]["nodePools"]}
    out: dict[str, dict[str, Decimal]] = {}
    for raw in written:
        if not isinstance(raw, dict) or raw.get("name") not in full:
            continue
        want: dict[str, Decimal] = {}
        if "gpus" in raw:
            want[full[raw["name"]]["gpuResource"]] = Decimal(raw["gpus"])
        for resource in KUBELET_RESERVED:
            if resource in raw:
                want[resource] = parse_quantity(raw[resource])
        for resource, amount in (raw.get("resources") or {}).items():
            want[resource] = Decimal(amount)
        out[raw["name"]] = want
    return out


def _amount(resource: str, value: Decimal) -> str:
    return f"{_number(value / GIB)}Gi" if resource == "memory" else _number(value)


@dataclass
class _More:
    """Nodes of one pool that allocate more of one resource than the stack declares (a note)."""
    declared: Decimal
    nodes: list[str] = field(default_factory=list)
    live: list[Decimal] = field(default_factory=list)


def _capacity(name: str, pool: str, want: Mapping[str, Decimal], alloc: Mapping[str, Decimal], tolerance: Decimal,
              more: dict[tuple[str, str], _More]) -> Finding | None:
    """A finding when the node allocates less than its pool declares (CPU and memory: by more than
    ``tolerance``, the share kubelet reservations may take); ``more`` collects what it has beyond."""
    rows = []
    for resource, amount in want.items():
        have = alloc.get(resource, Decimal(0))
        floor = amount * (1 - tolerance) if resource in KUBELET_RESERVED else amount
        if have < floor:
            short = f" ({_number(round((amount - have) * 100 / amount, 1))}% below; the tolerance for the kubelet's " \
                    f"reservations is {_number(tolerance * 100)}%)" if resource in KUBELET_RESERVED else ""
            rows.append((resource, _amount(resource, amount), _amount(resource, have), short))
        elif have > amount:
            entry = more.setdefault((pool, resource), _More(amount))
            entry.nodes.append(name)
            entry.live.append(have)
    if not rows:
        return None
    text = "; ".join(f"{r} {a} declared in node pool {pool}, {h} allocatable{why}" for r, a, h, why in rows)
    return Finding("capacity", "Node", name, text, {r: a for r, a, _, _ in rows}, {r: h for r, _, h, _ in rows})


def _more_notes(more: Mapping[tuple[str, str], _More]) -> list[str]:
    notes = []
    for (pool, resource), entry in sorted(more.items()):
        low, high = min(entry.live), max(entry.live)
        live = _amount(resource, low) + ("" if low == high else f" to {_amount(resource, high)}")
        shown = listing(entry.nodes, NAMED)
        notes.append(f"{len(entry.nodes)} node(s) of node pool {pool} allocate {resource} {live}, more than the "
                     f"{_amount(resource, entry.declared)} the stack declares ({shown}): not drift; plans made "
                     "from the stack leave the difference unused")
    return notes


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
    for key in ("tier", "tierName"):
        if rendered.get(key) != live.get(key):
            parts.append(f"{key} {rendered.get(key)} rendered, {live.get(key)} in the cluster")
            declared[key], have[key] = rendered.get(key), live.get(key)
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


def _selector_text(selector: Mapping, labels: Mapping) -> str:
    """The live values of the labels a selector reads (``key=value``, or ``key absent``)."""
    keys = list((selector.get("matchLabels") or {}) if isinstance(selector.get("matchLabels"), dict) else {})
    for expr in selector.get("matchExpressions") or [] if isinstance(selector.get("matchExpressions"), list) else []:
        if isinstance(expr, dict) and isinstance(expr.get("key"), str) and expr["key"] not in keys:
            keys.append(expr["key"])
    return ", ".join(f"{k}={labels[k]}" if k in labels else f"{k} absent" for k in keys)


def _node_findings(stack: Fabric, cluster: Fabric, topology: bool) -> list[Finding]:
    """Declared nodes missing from the cluster, and (``topology``: the snapshot has HyperNodes)
    under another leaf: ``label`` when the leaf selects by labels the node no longer carries."""
    findings = []
    for name, node in stack.nodes.items():
        here = cluster.nodes.get(name)
        declared_leaf = _leaf_name(stack, node)
        if here is None:
            findings.append(Finding("missing", "Node", name, f"declared under {_where(declared_leaf)}, not in the "
                                    "cluster", declared_leaf, None))
            continue
        live_leaf = _leaf_name(cluster, here)
        if not topology or live_leaf == declared_leaf:
            continue
        sw = stack.switches.get(node.leaf) if node.leaf else None
        if sw is not None and sw.selector is not None and not selector_matches(sw.selector, here.labels):
            live_labels = _selector_text(sw.selector, here.labels)
            findings.append(Finding(
                "label", "Node", name, f"its labels ({live_labels} in the cluster) do not match the selector of "
                f"leaf {declared_leaf} ({json.dumps(sw.selector, sort_keys=True)}); in the cluster under "
                f"{_where(live_leaf)}", {"leaf": declared_leaf, "selector": sw.selector},
                {"leaf": live_leaf, "labels": live_labels}))
        else:
            findings.append(Finding("moved", "Node", name, f"declared under {_where(declared_leaf)}, in the "
                                    f"cluster under {_where(live_leaf)}", declared_leaf, live_leaf))
    return findings


def _extra_nodes(stack: Fabric, cluster: Fabric, topology: bool) -> list[Finding]:
    findings = []
    for name, node in cluster.nodes.items():
        if name not in stack.nodes and node.pool.gpus:
            leaf = _leaf_name(cluster, node) if topology else None
            where = f"; in the cluster under {_where(leaf)}" if topology else ""
            findings.append(Finding("extra", "Node", name, f"a GPU node ({node.pool.gpus} {node.pool.gpu_resource}) "
                                    f"no leaf of the stack declares{where}", None, leaf))
    return findings


def _conflict_findings(stack: Fabric, rendered: Mapping[str, dict],
                       conflicts: Iterable[tuple[str, str, str]]) -> list[Finding]:
    """A node (HyperNode) the cluster puts under two leaves (parents), with where the stack puts it."""
    parents = {str(m["selector"]["exactMatch"]["name"]): name for name, spec in rendered.items()
               for m in spec.get("members") or []
               if m.get("type") == "HyperNode" and "exactMatch" in (m.get("selector") or {})}
    findings = []
    for kind, name, why in conflicts:
        if kind == "Node":
            node = stack.nodes.get(name)
            declared = _leaf_name(stack, node) if node is not None else None
            stated = f"; the stack declares it under {_where(declared)}" if node is not None else \
                "; the stack does not declare it"
        else:
            declared = parents.get(name)
            stated = f"; render writes it under {declared}" if declared else "; render writes it under no parent"
        findings.append(Finding("hypernode", kind, name, f"in the cluster {why}{stated}", declared, why))
    return findings


def _hypernode_findings(rendered: Mapping[str, dict], live: Mapping[str, dict]) -> list[Finding]:
    if rendered and not live:   # one line, not one per HyperNode and node
        names = sorted(rendered)
        shown = listing(names, NAMED)
        return [Finding("missing", "HyperNode", f"(all {len(names)})", f"the snapshot holds no HyperNode; render "
                        f"writes {shown}. If the cluster has them, take the snapshot with kubectl get "
                        "hypernodes,nodes -o yaml; the nodes' leaves are not compared", names, [])]
    findings = []
    for name, spec in rendered.items():
        if name not in live:
            findings.append(Finding("missing", "HyperNode", name, f"render writes it (tier {spec.get('tier')}), "
                                    "not in the cluster", spec, None))
        elif (finding := _hypernode_diff(name, spec, live[name])) is not None:
            findings.append(finding)
    for name, spec in live.items():
        if name not in rendered:
            findings.append(Finding("extra", "HyperNode", name, f"in the cluster (tier {spec.get('tier')}), the "
                                    "stack does not render it", None, spec))
    return findings


def compare(stack: Fabric, rendered: Iterable[dict], cluster: Fabric, live: Iterable[dict],
            conflicts: Iterable[tuple[str, str, str]] = (), declared: Mapping[str, Mapping[str, Decimal]] = {},
            tolerance: Decimal = TOLERANCE, notes: list[str] | None = None) -> list[Finding]:
    """Every difference between the stack's fabric and rendered HyperNodes and a cluster's
    (``conflicts``: a node or HyperNode the cluster puts under two parents, from ``load_cluster``;
    ``declared``: what each node pool's nodes allocate, as the stack file sets it, from
    ``declared_capacity``; ``notes``: collects what is worth knowing but is not drift)."""
    want = {o["metadata"]["name"]: o.get("spec") or {} for o in rendered}
    have = {str((o.get("metadata") or {}).get("name")): o.get("spec") if isinstance(o.get("spec"), dict) else {}
            for o in live}
    topology = bool(have) or not want     # a snapshot without HyperNodes says nothing of the nodes' leaves
    findings = _conflict_findings(stack, want, conflicts) + _node_findings(stack, cluster, topology)
    findings += _extra_nodes(stack, cluster, topology) + _hypernode_findings(want, have)
    more: dict[tuple[str, str], _More] = {}
    for name, node in stack.nodes.items():
        here, pool = cluster.nodes.get(name), node.pool.name
        if here is not None and declared.get(pool):
            if (finding := _capacity(name, pool, declared[pool], here.pool.allocatable(), tolerance, more)):
                findings.append(finding)
    if notes is not None:
        notes.extend(_more_notes(more))
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


def report_json(stack: str, snapshot: str, findings: list[Finding], notes: list[str] = ()) -> str:
    counts = {c: sum(f.category == c for f in findings) for c in CATEGORIES}
    data = {"stack": stack, "snapshot": snapshot, "drift": bool(findings), "counts": counts,
            "findings": [asdict(f) for f in findings], "notes": list(notes)}
    return json.dumps(data, indent=2, sort_keys=True, default=str) + "\n"


def report_text(stack: str, snapshot: str, findings: list[Finding], notes: list[str] = ()) -> str:
    lines = [f.line() for f in findings] + [f"note: {note}" for note in notes]
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
    notes: list[str] = []
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
        findings = compare(fabric, rendered, cluster, (obj for _, obj in live), conflicts,
                           declared_capacity(stack), Decimal(args.tolerance) / 100, notes)
    write = report_json if args.format == "json" else report_text
    sys.stdout.write(write(stack.name, args.snapshot, findings, notes))
    return 1 if findings else 0


def _percent(text: str) -> Decimal:
    try:
        value = Decimal(text)
    except ArithmeticError:
        raise argparse.ArgumentTypeError(f"expected a percentage from 0 to 50, got {text!r}") from None
    if not value.is_finite() or not 0 <= value <= 50:
        raise argparse.ArgumentTypeError(f"expected a percentage from 0 to 50, got {text!r}")
    return value


EPILOG = """\
exit codes:
  0    no drift (notes, such as nodes that allocate more than the stack declares, are not drift)
  1    drift: one line per finding, then a summary line
  2    bad input (the stack, the snapshot or the command line; one line naming the file and the path)
  4    a trainstack bug (one line asking for a report; --debug shows the traceback)

snapshot:
  kubectl get hypernodes,nodes -o json > snap.json     (or -o yaml; a file or a folder of them)"""


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("drift", parents=[common],
                       help="compare the fabric a stack declares with a live cluster's snapshot (run before "
                            "pulumi up on an existing cluster)",
                       description="Compare the stack's fabric and the HyperNodes render writes with a snapshot "
                                   "(kubectl get hypernodes,nodes -o yaml): nodes missing, extra, moved to another "
                                   "leaf, label and HyperNode differences, and nodes that allocate less than the "
                                   "node pool the stack file declares (only what the file sets: GPUs, CPU, memory, "
                                   "extended resources).",
                       epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("stack", help="stack name (stacks/Pulumi.<stack>.yaml) or the path of its file")
    p.add_argument("--snapshot", metavar="FILE", required=True,
                   help="kubectl get hypernodes,nodes -o yaml (or -o json) output: a file or a directory of them")
    p.add_argument("--tolerance", metavar="PERCENT", type=_percent, default=TOLERANCE * 100,
                   help="how far below the declared CPU and memory a node's allocatable may be before it is a "
                        "finding: what the kubelet reserves (system-reserved, kube-reserved, the eviction "
                        f"threshold) (default {_number(TOLERANCE * 100)}); GPUs and extended resources are exact")
    p.add_argument("--format", default="text", choices=("text", "json"), help="output format")
    p.set_defaults(run=cmd_drift)
