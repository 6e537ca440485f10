"""Random fabrics render valid HyperNode trees: every node in exactly one leaf, every member
resolvable, tiers increasing upward (contiguous unless the depth is mixed), no empty HyperNode,
one HyperNode per switch with nodes below it; the inline and topograph sources agree."""
from __future__ import annotations

import tempfile
from pathlib import Path

import yaml
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tests.modules.fabric.helpers import build, check_tree


@st.composite
def trees(draw, uneven: bool):
    """(switches {name: {"switches": [...]} | {"nodes": [...]}}, names of switches with nodes below)."""
    counter = {"switch": 0, "node": 0}
    switches: dict[str, dict] = {}
    depth = draw(st.integers(1, 4))

    def node_names() -> list[str]:
        count = draw(st.integers(0, 6))
        style = draw(st.sampled_from(["range", "hole", "shuffled", "mixed"]))
        start = counter["node"]
        numbers = list(range(start + 1, start + count + 1 + (style == "hole")))
        if style == "hole" and len(numbers) > 2:
            numbers.pop(len(numbers) // 2)
        counter["node"] = start + len(numbers) + 1
        names = [f"gpu-{n:04d}" for n in numbers][:count]
        if style == "shuffled":
            names = draw(st.permutations(names))
        if style == "mixed":
            names = [f"cpu{n}" if n % 2 else f"gpu-{n:04d}" for n in numbers][:count]
        return list(names)

    def make(level: int) -> tuple[str, int]:
        counter["switch"] += 1
        name = f"{draw(st.sampled_from(['sw', 'SW', 'Rack_']))}{counter['switch']}"
        is_leaf = level == depth or (uneven and level > 1 and draw(st.booleans()))
        if is_leaf:
            nodes = node_names()
            switches[name] = {"nodes": nodes}
            return name, len(nodes)
        children = [make(level + 1) for _ in range(draw(st.integers(1, 3)))]
        switches[name] = {"switches": [c for c, _ in children]}
        return name, sum(n for _, n in children)

    roots = [make(1) for _ in range(draw(st.integers(1, 2)))]
    assume(sum(n for _, n in roots) > 0)
    non_empty = set()
    for name, spec in switches.items():     # a switch is non-empty when a leaf below it has nodes
        stack = [name]
        while stack:
            s = switches[stack.pop()]
            if s.get("nodes"):
                non_empty.add(name)
                break
            stack.extend(s.get("switches", []))
    return switches, non_empty


def as_topograph(switches: dict) -> dict:
    """Topograph declares switches with children; a leaf needs a declaration only when it is a root."""
    children = {c for s in switches.values() for c in s.get("switches", [])}
    return {"switches": {n: {"switches": s["switches"]} if "switches" in s else {}
                         for n, s in switches.items() if "switches" in s or n not in children},
            "blocks": [{"switch": n, "nodes": s["nodes"]} for n, s in switches.items() if s.get("nodes")]}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tree=trees(uneven=False))
def test_random_uniform_trees(tree):
    switches, non_empty = tree
    fabric, objs, ctx = build({"source": "inline", "switches": switches})
    nodes = [n for s in switches.values() for n in s.get("nodes", [])]
    assert sorted(fabric.nodes) == sorted(nodes)
    check_tree(objs, nodes)
    assert len(objs) == len(non_empty) and set(fabric.switches) == non_empty
    assert not ctx.warnings

    with tempfile.TemporaryDirectory() as tmp:           # the same tree as a topograph model
        path = Path(tmp) / "model.yaml"
        path.write_text(yaml.safe_dump(as_topograph(switches)))
        _, topo_objs, _ = build({"source": "topograph", "path": str(path)})
    assert sorted(o["metadata"]["name"] for o in topo_objs) == sorted(o["metadata"]["name"] for o in objs)
    by_name = {o["metadata"]["name"]: o["spec"] for o in objs}
    assert all(by_name[o["metadata"]["name"]] == o["spec"] for o in topo_objs)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tree=trees(uneven=True))
def test_random_uneven_trees_with_allow_mixed_depth(tree):
    switches, non_empty = tree
    fabric, objs, _ = build({"source": "inline", "switches": switches, "allowMixedDepth": True})
    nodes = [n for s in switches.values() for n in s.get("nodes", [])]
    check_tree(objs, nodes, contiguous=False)          # every leaf at tier 1, parents above children
    assert len(objs) == len(non_empty)
