"""`trainstack fabric STACK --format tree|mermaid|dot|json`."""
from __future__ import annotations

import json
import re

from tests.modules.fabric.helpers import project, topograph_dir
from tests.support.cli import run


def test_tree_summary_for_prod():
    result = run("fabric", "prod")
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    assert lines[0] == "stack prod: fabric from stacks/fabrics/prod.yaml (source file)"
    assert lines[1] == "1,024 nodes, 8,192 GPUs, 37 HyperNodes"
    assert "  pool h100: 1,024 nodes x 8 H100-SXM GPUs" in lines
    assert "   1  leaf         32  leaf-01: 32 nodes, 256 GPUs" in lines
    assert "   3  core          1  core: 1,024 nodes, 8,192 GPUs" in lines
    assert "│   ├── leaf-01  [tier 1 leaf]  32 nodes  256 GPUs  gpu-[0001-0032]" in lines
    assert "    └── leaf-32  [tier 1 leaf]  32 nodes  256 GPUs  gpu-[0993-1024]" in lines


def test_tree_depth_limit():
    result = run("fabric", "prod", "--depth", "1")
    assert "spine-4" in result.out and "leaf-01 " not in result.out


def test_json_is_machine_readable():
    data = json.loads(run("fabric", "staging", "--format", "json").out)
    assert data["nodes"] == 64 and data["gpus"] == 512 and data["hypernodes"] == 11
    assert [t["name"] for t in data["tiers"]] == ["leaf", "spine", "core"]
    assert data["tiers"][1]["largestDomain"] == {"switch": "spine-01", "nodes": 32, "gpus": 256}
    leaf = next(s for s in data["switches"] if s["name"] == "leaf-001")
    assert leaf["nodes"] == ["stg-gpu-[001-008]"] and leaf["parent"] == "spine-01"


def test_mermaid_and_dot_for_a_topograph_model(tmp_path):
    model = (topograph_dir() / "dual-xclr-irregular.yaml").read_text()   # paths stay under stacks/
    root = project(tmp_path, {"source": "topograph", "path": "model.yaml"}, {"model.yaml": model})
    mermaid = run("fabric", "test", "--project", str(root), "--format", "mermaid").out
    assert mermaid.startswith("```mermaid\ngraph TD\n") and mermaid.endswith("```\n")
    boxes = re.findall(r'^  (n\d+)\["([^"]*)"\]$', mermaid, re.M)
    edges = re.findall(r"^  (n\d+) --> (n\d+)$", mermaid, re.M)
    assert len(boxes) == 32 and len(edges) == 31
    assert "rack-1-04<br/>tier 1 leaf<br/>7 nodes, 56 GPUs<br/>node[0028-0030], node0032, ..." in dict(boxes).values()
    assert "%% no HyperNode for 2 switch(es) without nodes: rack-1-03, rack-1-13" in mermaid

    dot = run("fabric", "test", "--project", str(root), "--format", "dot", "--max-boxes", "10").out
    body = dot[dot.index("digraph fabric {"):]
    assert body.rstrip().endswith("}") and body.count("{") == body.count("}")
    assert '[label="29 leaves' not in dot and '[label="14 leaves: rack-1-01 ... rack-1-16' in dot
    assert len(re.findall(r"^  n\d+ -> n\d+;$", dot, re.M)) == 4    # core->2 switches, 2 leaf groups


def test_label_fabric_summary(tmp_path):
    root = project(tmp_path, {"source": "labels"})
    result = run("fabric", "test", "--project", str(root))
    assert result.code == 0
    assert "trainstack renders none and cannot count nodes or GPUs" in result.out
    assert "   1  fabric.topograph.run/tier-0" in result.out
    data = json.loads(run("fabric", "test", "--project", str(root), "--format", "json").out)
    assert data["capacityKnown"] is False and data["discovery"][0]["source"] == "label"
    assert "l0 --> l1" in run("fabric", "test", "--project", str(root), "--format", "mermaid").out


def test_warnings_go_to_stderr(tmp_path):
    root = project(tmp_path, {"source": "inline", "nodes": ["n[1-3]"], "switches": {"l": {"nodes": ["n1"]}}})
    result = run("fabric", "test", "--project", str(root))
    assert result.code == 0 and result.err.startswith("warning: stacks/Pulumi.test.yaml: trainstack:fabric.nodes[0]:")
    assert "under no switch (in no HyperNode): n[2-3]" in result.out
