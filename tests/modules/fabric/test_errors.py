"""Broken fabrics: each gives exit 2 and one line naming the file, the path and what is wrong, and
nothing is written. One row per mistake; sources topograph, file, inline, generated, labels."""
from __future__ import annotations

import pytest

from tests.modules.fabric.helpers import project
from tests.support.cli import run, run_process

TOPO = "stacks/fabrics/model.yaml"
FILE = "stacks/fabrics/own.yaml"
STACK = "stacks/Pulumi.test.yaml"


def topo(text: str, **extra) -> tuple[dict, dict]:
    return {"source": "topograph", "path": "fabrics/model.yaml", **extra}, {"fabrics/model.yaml": text}


def own(text: str, **extra) -> tuple[dict, dict]:
    return {"source": "file", "path": "fabrics/own.yaml", **extra}, {"fabrics/own.yaml": text}


def inline(switches: dict, **extra) -> tuple[dict, dict]:
    return {"source": "inline", "switches": switches, **extra}, {}


def generated(**gen) -> tuple[dict, dict]:
    return {"source": "generated", "generated": gen}, {}


CASES = [
    # --- topograph models ------------------------------------------------------------------
    ("cycle", topo("switches:\n  a: {switches: [b]}\n  b: {switches: [c]}\n  c: {switches: [a]}\n"
                   "blocks:\n- {switch: c, nodes: ['n[1-2]']}\n"),
     TOPO, "switches.a", "switches form a cycle (parent -> child): a -> b -> c -> a"),
    ("self-loop", topo("switches:\n  a: {switches: [a]}\nblocks:\n- {switch: a, nodes: [n1]}\n"),
     TOPO, "switches.a.switches[0]", "lists itself as a child"),
    ("two parents", topo("switches:\n  a: {switches: [c]}\n  b: {switches: [c]}\n"
                         "blocks:\n- {switch: c, nodes: ['n[1-2]']}\n"),
     TOPO, "switches.b.switches[0]", "switch 'c' has two parents, 'a' and 'b'"),
    ("node under two leaves", topo("switches:\n  a: {switches: [l1, l2]}\nblocks:\n"
                                   "- {switch: l1, nodes: ['n[1-2]']}\n- {switch: l2, nodes: ['n[2-3]']}\n"),
     TOPO, "blocks[1].nodes", "node 'n2' is under two leaves, 'l1' and 'l2'"),
    ("node twice in a leaf", topo("switches:\n  a: {switches: [l1]}\nblocks:\n- {switch: l1, nodes: ['n[1-2]', n2]}\n"),
     TOPO, "blocks[0].nodes", "node 'n2' is listed twice under switch 'l1'"),
    ("node in a leaf and under no switch", topo("switches:\n  a: {switches: [l1]}\nblocks:\n"
                                                "- {switch: l1, nodes: [n1]}\n- {nodes: [n1]}\n"),
     TOPO, "blocks[1].nodes", "node 'n1' is declared twice (also at blocks[0].nodes)"),
    ("unknown block switch", topo("switches:\n  a: {switches: [l1]}\nblocks:\n- {switch: l9, nodes: [n1]}\n"),
     TOPO, "blocks[0].switch", "switch 'l9', which the model does not declare"),
    ("leaves at different depths", topo("switches:\n  core: {switches: [spine, rackx]}\n  spine: {switches: [l1]}\n"
                                        "blocks:\n- {switch: l1, nodes: ['n[1-2]']}\n"
                                        "- {switch: rackx, nodes: ['n[3-4]']}\n"),
     TOPO, "switches.core", "sits more than one tier above its child 'rackx' (tier 1)"),
    ("nodes and child switches", topo("switches:\n  core: {switches: [l1]}\nblocks:\n"
                                      "- {switch: l1, nodes: [n1]}\n- {switch: core, nodes: [n2]}\n"),
     TOPO, "blocks[1].nodes", "switch 'core' has both child switches and nodes"),
    ("empty switch definition", topo("switches:\n  core:\n  l1: {}\nblocks:\n- {switch: l1, nodes: [n1]}\n"),
     TOPO, "switches.core", "expected a switch with labels, annotations or switches"),
    ("backwards range", topo("switches:\n  a: {switches: [l]}\nblocks:\n- {switch: l, nodes: ['n[5-2]']}\n"),
     TOPO, "blocks[0].nodes[0]", "range 5-2 runs backwards"),
    ("unbalanced range", topo("switches:\n  a: {switches: [l]}\nblocks:\n- {switch: l, nodes: ['n[1-2']}\n"),
     TOPO, "blocks[0].nodes[0]", "unbalanced brackets"),
    ("invalid YAML", topo("switches: [a\nblocks:\n"), TOPO, "line 2, column 7", "invalid YAML"),
    ("empty file", topo(""), TOPO, "(document)", "expected a topograph model"),
    ("block without nodes", topo("blocks:\n- {switch: a}\n"), TOPO, "blocks[0].nodes", "missing required value"),
    ("block with empty node list", topo("switches:\n  a: {switches: [l]}\nblocks:\n- {switch: l, nodes: []}\n"),
     TOPO, "blocks[0].nodes", "expected a non-empty list of node names"),
    ("duplicate switch key", topo("switches:\n  a: {switches: [l]}\n  a: {switches: [m]}\n"),
     TOPO, "switches.a", "duplicate key 'a' (line 3)"),
    ("switch name mismatch", topo("switches:\n  a: {name: b, switches: [l]}\nblocks:\n- {switch: l, nodes: [n1]}\n"),
     TOPO, "switches.a.name", "does not match its name 'b'"),
    ("unknown key", topo("switchs:\n  a: {switches: [l]}\n"), TOPO, "switchs", "did you mean 'switches'?"),
    ("host names collide", topo("switches:\n  a: {switches: [l]}\nblocks:\n- {switch: l, nodes: [I21, i21]}\n"),
     TOPO, "blocks[0].nodes", "host names 'I21' and 'i21' both become Kubernetes node 'i21'"),
    ("switch names collide", topo("switches:\n  a: {switches: [L1, l1]}\nblocks:\n"
                                  "- {switch: L1, nodes: [n1]}\n- {switch: l1, nodes: [n2]}\n"),
     TOPO, "switches.a.switches[1]", "switches 'L1' and 'l1' both become HyperNode 'l1'"),
    ("host name with nothing usable", topo("switches:\n  a: {switches: [l]}\nblocks:\n- {switch: l, nodes: [_]}\n"),
     TOPO, "blocks[0].nodes", "host name '_' has no letters or digits"),
    ("no node under any switch", topo("blocks:\n- {nodes: ['n[1-2]']}\n"),
     TOPO, "switches", "no switch has nodes below it (2 node(s) are declared, none under a switch)"),
    ("full coverage", topo("switches:\n  a: {switches: [l]}\nblocks:\n- {switch: l, nodes: ['n[1-4]']}\n"
                           "- {nodes: ['x[1-2]']}\n", fullCoverage=True),
     TOPO, "blocks[1].nodes", "2 node(s) hang off no leaf switch (x[1-2])"),
    ("missing model file", ({"source": "topograph", "path": "fabrics/nope.yaml"}, {}),
     STACK, "trainstack:fabric.path", "expected an existing file under stacks/"),
    ("no path", ({"source": "topograph"}, {}), STACK, "trainstack:fabric.path", "missing: source topograph"),
    # --- trainstack's compact file ---------------------------------------------------------
    ("parent tier not above child", own("switches:\n  top: {tier: 1, switches: [l]}\n  l: {tier: 2, nodes: [n1]}\n"),
     FILE, "switches.top", "switch 'top' is at tier 1 but its child 'l' is at tier 2"),
    ("leaves at different tiers", own("switches:\n  core: {switches: [s, l2]}\n  s: {switches: [l1]}\n"
                                      "  l1: {nodes: ['n[1-2]']}\n  l2: {tier: 2, nodes: ['n[3-4]']}\n"),
     FILE, "switches.l2", "leaf switch 'l2' sits at tier 2, above the lowest leaves (tier 1)"),
    ("tier name used twice", own("tierNames: [rack, rack]\nswitches:\n  s: {switches: [l]}\n  l: {nodes: [n1]}\n"),
     FILE, "tierNames", "tier name 'rack' is used for tiers 1 and 2"),
    ("undeclared child", own("switches:\n  s: {switches: [l]}\n"), FILE, "switches.s.switches[0]",
     "child switch 'l' is not declared"),
    ("node not in the node list", own("nodes: ['n[1-2]']\nswitches:\n  s: {switches: [l]}\n  l: {nodes: ['n[1-3]']}\n"),
     FILE, "switches.l.nodes", "node 'n3' is under switch 'l' but not in the node list"),
    ("selector without nodes", own("switches:\n  s: {switches: [l]}\n  l: {selector: {matchLabels: {rack: a}}}\n"),
     FILE, "switches.l.selector", "must still list its nodes"),
    ("selector on a spine", own("switches:\n  s: {switches: [l], selector: {matchLabels: {rack: a}}}\n"
                                "  l: {nodes: [n1]}\n"),
     FILE, "switches.s.selector", "a label selector chooses nodes and belongs on a leaf switch only"),
    ("same selector twice", own("switches:\n  s: {switches: [a, b]}\n"
                                "  a: {nodes: [n1], selector: {matchLabels: {r: x}}}\n"
                                "  b: {nodes: [n2], selector: {matchLabels: {r: x}}}\n"),
     FILE, "switches.b.selector", "select nodes with the same labels"),
    ("selector expression without values", own("switches:\n  l:\n    nodes: [n1]\n    selector:\n"
                                               "      matchExpressions: [{key: rack, operator: In}]\n"),
     FILE, "switches.l.selector.matchExpressions[0].values", "operator In needs a non-empty list of values"),
    ("domain without nodes", own("switches:\n  s: {switches: [l]}\n  l: {domain: nvl1, domains: {nvl2: [n1]}}\n"),
     FILE, "switches.l.domain", "this switch lists none"),
    ("wrong type", own("switches:\n  l: {nodes: 5}\n"), FILE, "switches.l.nodes", "expected a list of node names"),
    ("unknown switch key", own("switches:\n  l: {node: [n1]}\n"), FILE, "switches.l.node", "did you mean 'nodes'?"),
    ("switch name not a string", own("switches:\n  1: {nodes: [n1]}\n"), FILE, "switches",
     "expected switch names as strings, got 1"),
    ("node name not a string", own("switches:\n  l: {nodes: [0101]}\n"), FILE, "switches.l.nodes[0]",
     "expected a non-empty name or range"),
    ("invalid node name", own("switches:\n  l: {nodes: [GPU-1]}\n"), FILE, "switches.l.nodes",
     "node name 'GPU-1' is not a valid Kubernetes node name"),
    ("invalid names in a range", own("switches:\n  l: {nodes: [\"GPU-[01-04]\"]}\n"), FILE, "switches.l.nodes",
     "node name 'GPU-01' is not a valid Kubernetes node name"),
    ("inventory range too large", own("nodes: [\"n[0000000-1999999]\"]\nswitches:\n  l: {nodes: [n0000001]}\n"),
     FILE, "nodes[0]", "range 0000000-1999999 is too large"),
    ("invalid names in an inventory range", own("nodes: [\"n[1-2]\", \"x_[01-02]\"]\nswitches:\n  l: {nodes: [n1]}\n"),
     FILE, "nodes[1]", "node name 'x_01' is not a valid Kubernetes node name"),
    ("tier names in two places", own("tierNames: [a, b]\nswitches:\n  l: {nodes: [n1]}\n", tierNames=["x"]),
     STACK, "trainstack:fabric.tierNames", "names the tiers already"),
    # --- inline, generated, labels, pools --------------------------------------------------
    ("inline two parents", inline({"a": {"switches": ["c"]}, "b": {"switches": ["c"]}, "c": {"nodes": ["n1"]}}),
     STACK, "trainstack:fabric.switches.b.switches[0]", "switch 'c' has two parents"),
    ("inline without switches", ({"source": "inline"}, {}), STACK, "trainstack:fabric.switches", "missing"),
    ("option of another source", ({"source": "generated", "switches": {"a": {"nodes": ["n1"]}}}, {}),
     STACK, "trainstack:fabric.switches", "is read only with source inline, not generated"),
    ("generated duplicate leaf names", generated(leafName="leaf"),
     STACK, "trainstack:fabric.generated.leafName", "switch 'leaf' is declared 4 times"),
    ("generated bad placeholder", generated(nodeName="gpu-{x}"),
     STACK, "trainstack:fabric.generated.nodeName", "expected a name pattern using only {n}, {leaf}, {pod}, {i}"),
    ("generated invalid node names", generated(nodeName="GPU_{n}"),
     STACK, "trainstack:fabric.generated.nodeName", "node name 'GPU_1' is not a valid Kubernetes node name"),
    ("generated duplicate nodes", generated(nodeName="gpu-{i}"),
     STACK, "trainstack:fabric.generated.nodeName", "node 'gpu-1' is under two leaves"),
    ("labels duplicate level", ({"source": "labels", "labels": {"levels": ["a/b", "a/b"]}}, {}),
     STACK, "trainstack:fabric.labels.levels[1]", "label 'a/b' is listed twice"),
    ("labels bad key", ({"source": "labels", "labels": {"levels": ["not a label"]}}, {}),
     STACK, "trainstack:fabric.labels.levels[0]", "expected a node-label key"),
    ("labels tier names", ({"source": "labels", "tierNames": ["leaf", "spine"]}, {}),
     STACK, "trainstack:fabric.tierNames", "names each tier after its label key"),
    ("labels type name too long", ({"source": "labels", "labels": {"typeName": "x" * 21}}, {}),
     STACK, "trainstack:fabric.labels.typeName", "a name of at most 20 letters"),
    ("unknown source", ({"source": "ufm"}, {}), STACK, "trainstack:fabric.source", "expected one of"),
    ("no pool for a node", ({"source": "generated", "nodePools": [{"name": "a", "match": "cpu-.*"}]}, {}),
     STACK, "trainstack:fabric.nodePools", "node 'gpu-0001' matches no node pool"),
]


@pytest.mark.parametrize("fabric, files, file, path, text", [(*c[1], *c[2:]) for c in CASES],
                         ids=[c[0] for c in CASES])
def test_broken_fabric(tmp_path, fabric, files, file, path, text):
    root = project(tmp_path, fabric, files)
    out = tmp_path / "deploy"
    result = run("render", "test", "--project", str(root), "--out", str(out))
    assert result.code == 2, result.out + result.err
    line = result.err.strip()
    assert "\n" not in line and "Traceback" not in line
    assert line.startswith(f"error: {file}: {path}: "), line
    assert text in line, line
    assert not out.exists(), "nothing may be written for a broken stack"


def test_fabric_command_reports_the_same_error(tmp_path):
    fabric, files = topo("switches:\n  a: {switches: [c]}\n  b: {switches: [c]}\nblocks:\n- {switch: c, nodes: [n1]}\n")
    root = project(tmp_path, fabric, files)
    result = run_process("fabric", "test", "--project", str(root))
    assert result.code == 2 and "Traceback" not in result.err
    assert result.err.startswith(f"error: {TOPO}: switches.b.switches[0]: switch 'c' has two parents")
