"""`trainstack drift STACK --snapshot FILE`: the fabric a stack declares against a live cluster's
snapshot (the dev stack: 16 nodes gpu-0001..gpu-0016 under leaf-001..leaf-004, spine-01)."""
from __future__ import annotations

import copy
import json
import time

import pytest
import yaml

from modules.core.config import load_project, load_stack
from modules.core.render import render
from modules.fabric.model import Fabric, Node, Switch
from modules.review.drift import compare
from tests.support.cli import ROOT, run


def node_object(node) -> dict:
    pool = node.pool
    alloc = {"cpu": str(pool.cpu_milli // 1000), "memory": f"{pool.memory_bytes // 2**30}Gi", "pods": "110"}
    if pool.gpus:
        alloc[pool.gpu_resource] = str(pool.gpus)
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": node.name, "labels": dict(node.labels)},
            "status": {"allocatable": alloc, "capacity": dict(alloc)}}


@pytest.fixture(scope="module")
def dev():
    bundle = render(load_stack(load_project(ROOT), "dev"))
    hypernodes = [copy.deepcopy(r.obj) for r in bundle.resources if r.obj["kind"] == "HyperNode"]
    nodes = [node_object(n) for n in bundle.fabric.nodes.values()]
    return hypernodes, nodes


def write(tmp_path, hypernodes, nodes, name="snap.yaml"):
    path = tmp_path / name
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": hypernodes + nodes}))
    return str(path)


def test_a_clean_snapshot_has_no_drift(dev, tmp_path):
    res = run("drift", "dev", "--snapshot", write(tmp_path, *dev))
    assert res.code == 0, res.err
    assert res.out.strip().splitlines() == [f"no drift: snapshot {tmp_path / 'snap.yaml'} has the fabric stack dev "
                                            "declares"]
    data = json.loads(run("drift", "dev", "--snapshot", str(tmp_path / "snap.yaml"), "--format", "json").out)
    assert data["drift"] is False and data["findings"] == []


def test_missing_extra_and_moved_nodes_are_each_named_with_their_category(dev, tmp_path):
    hypernodes, nodes = copy.deepcopy(dev)
    nodes = [n for n in nodes if n["metadata"]["name"] != "gpu-0003"]          # missing
    extra = copy.deepcopy(nodes[0])
    extra["metadata"]["name"] = "gpu-0100"                                     # extra GPU node
    cpu_only = copy.deepcopy(nodes[0])
    cpu_only["metadata"]["name"] = "control-0"                                 # not a GPU node: not drift
    del cpu_only["status"]["allocatable"]["nvidia.com/gpu"], cpu_only["status"]["capacity"]["nvidia.com/gpu"]
    by_name = {h["metadata"]["name"]: h for h in hypernodes}
    # gpu-0005 is recabled from leaf-002 to leaf-001: the live leaves list their nodes one by one
    by_name["leaf-001"]["spec"]["members"] = [{"type": "Node", "selector": {"exactMatch": {"name": n}}}
                                              for n in ("gpu-0001", "gpu-0002", "gpu-0004", "gpu-0005")]
    by_name["leaf-002"]["spec"]["members"] = [{"type": "Node", "selector": {"exactMatch": {"name": n}}}
                                              for n in ("gpu-0006", "gpu-0007", "gpu-0008")]
    res = run("drift", "dev", "--snapshot", write(tmp_path, hypernodes, nodes + [extra, cpu_only]))
    assert res.code == 1, res.err
    lines = res.out.splitlines()
    assert "missing: Node gpu-0003: declared under leaf leaf-001, not in the cluster" in lines
    assert "extra: Node gpu-0100: a GPU node (8 nvidia.com/gpu) no leaf of the stack declares; in the cluster " \
           "under no HyperNode" in lines
    assert "moved: Node gpu-0005: declared under leaf leaf-002, in the cluster under leaf leaf-001" in lines
    assert not any("control-0" in line for line in lines)
    hyper = [line for line in lines if line.startswith("hypernode: HyperNode ")]
    assert [line.split(":")[1].strip() for line in hyper] == ["HyperNode leaf-001", "HyperNode leaf-002"]
    assert "members render writes but the cluster lacks: Node regexMatch ^gpu-000[1-4]$" in hyper[0]
    assert lines[-1].startswith("drift: stack dev and snapshot") and "(1 missing, 1 extra, 1 moved, 2 hypernode)" \
        in lines[-1]
    data = json.loads(run("drift", "dev", "--snapshot", str(tmp_path / "snap.yaml"), "--format", "json").out)
    assert data["drift"] is True and data["counts"]["moved"] == 1
    moved = next(f for f in data["findings"] if f["category"] == "moved")
    assert moved == {"category": "moved", "kind": "Node", "name": "gpu-0005", "declared": "leaf-002",
                     "live": "leaf-001", "detail": "declared under leaf leaf-002, in the cluster under leaf leaf-001"}


def test_hypernode_differences_and_no_capacity_for_a_pool_the_stack_file_does_not_write(dev, tmp_path):
    hypernodes, nodes = copy.deepcopy(dev)
    # the dev stack writes no nodePools: 8 GPUs, 192 CPUs and 1800Gi are the schema's defaults, no
    # plan anyone made, so a node's allocatable is not compared with them
    nodes[1]["status"]["allocatable"]["nvidia.com/gpu"] = "4"
    nodes[1]["status"]["allocatable"]["memory"] = "1Gi"
    hypernodes = [h for h in hypernodes if h["metadata"]["name"] != "leaf-004"]
    stray = copy.deepcopy(hypernodes[0])
    stray["metadata"]["name"] = "leaf-099"
    stray["spec"]["members"] = []
    spine = next(h for h in hypernodes if h["metadata"]["name"] == "spine-01")
    spine["spec"]["tier"] = 3
    res = run("drift", "dev", "--snapshot", write(tmp_path, hypernodes + [stray], nodes))
    assert res.code == 1, res.err
    lines = res.out.splitlines()
    assert not any(line.startswith(("capacity:", "note:")) for line in lines)
    assert "missing: HyperNode leaf-004: render writes it (tier 1), not in the cluster" in lines
    assert "extra: HyperNode leaf-099: in the cluster (tier 1), the stack does not render it" in lines
    spine_line = next(line for line in lines if line.startswith("hypernode: HyperNode spine-01: "))
    assert "tier 2 rendered, 3 in the cluster" in spine_line
    # gpu-0013..16 hang under no live HyperNode now that leaf-004 is gone
    assert "moved: Node gpu-0013: declared under leaf leaf-004, in the cluster under no HyperNode" in lines


def test_a_node_or_hypernode_under_two_parents_is_drift_not_bad_input(dev, tmp_path):
    # a hand edit adds gpu-0005 to leaf-001 without removing it from leaf-002 (whose regexMatch
    # still selects it), and lists leaf-001 under a second spine
    hypernodes, nodes = copy.deepcopy(dev)
    by_name = {h["metadata"]["name"]: h for h in hypernodes}
    by_name["leaf-001"]["spec"]["members"].append({"type": "Node", "selector": {"exactMatch": {"name": "gpu-0005"}}})
    second = copy.deepcopy(by_name["spine-01"])
    second["metadata"]["name"] = "spine-99"
    second["spec"]["members"] = [{"type": "HyperNode", "selector": {"exactMatch": {"name": "leaf-001"}}}]
    res = run("drift", "dev", "--snapshot", write(tmp_path, hypernodes + [second], nodes))
    assert res.code == 1, res.err
    lines = res.out.splitlines()
    assert ("hypernode: Node gpu-0005: in the cluster a member of HyperNodes leaf-001 and leaf-002; Volcano needs "
            "one leaf per node; the stack declares it under leaf leaf-002") in lines
    assert ("hypernode: HyperNode leaf-001: in the cluster a member of HyperNodes spine-01 and spine-99; a "
            "HyperNode has one parent; render writes it under spine-01") in lines
    assert "extra: HyperNode spine-99: in the cluster (tier 2), the stack does not render it" in lines
    # the simulator, which must place on the tree, still refuses it
    bad = run("simulate", "--snapshot", str(tmp_path / "snap.yaml"))
    assert bad.code == 2 and "Volcano needs one leaf per node" in bad.err


@pytest.mark.parametrize("content, message", [
    (None, "file not found"),
    ("items: [1", "invalid YAML"),
    ({"apiVersion": "v1", "kind": "List", "items": []}, "no Node in the snapshot"),
    ({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}, "status": {"allocatable": {"cpu": "lots"}}},
     "status.allocatable"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, content, message):
    path = tmp_path / "bad.yaml"
    if content is not None:
        path.write_text(content if isinstance(content, str) else yaml.safe_dump(content))
    res = run("drift", "dev", "--snapshot", str(path))
    assert res.code == 2 and res.out == ""
    assert len(res.err.strip().splitlines()) == 1 and res.err.startswith("error: ") and str(path) in res.err
    assert message in res.err or message.lower() in res.err.lower()


def test_an_unknown_stack_is_bad_input(dev, tmp_path):
    res = run("drift", "nosuchstack", "--snapshot", write(tmp_path, *dev))
    assert res.code == 2 and "nosuchstack" in res.err


def test_the_comparison_is_linear_in_the_cluster():
    """16,384 nodes under 512 leaves: the comparison's work grows with the nodes (counted in
    findings and look-ups, never timed as an assertion)."""
    def fabric(n_nodes: int, moved: int) -> Fabric:
        from modules.simulate.snapshot import _pool
        from decimal import Decimal
        pool = _pool("p", {"cpu": Decimal(64), "memory": Decimal(2**36), "nvidia.com/gpu": Decimal(8)})
        switches = {f"leaf-{i}": Switch(f"leaf-{i}", 1, hypernode=f"leaf-{i}") for i in range(n_nodes // 32)}
        nodes = {}
        for k in range(n_nodes):
            leaf = f"leaf-{(k // 32 + (1 if k < moved else 0)) % len(switches)}"
            nodes[f"n{k}"] = Node(f"n{k}", leaf, pool)
            switches[leaf].nodes.append(f"n{k}")
        return Fabric("t", {1: "leaf"}, switches, nodes, {"p": pool})
    stack, cluster = fabric(16384, 0), fabric(16384, 7)
    started = time.perf_counter()
    findings = compare(stack, [], cluster, [])
    elapsed = time.perf_counter() - started
    assert [f.category for f in findings] == ["moved"] * 7
    print(f"drift compare, 16384 nodes: {elapsed * 1000:.1f} ms")


def test_a_node_whose_labels_left_its_label_selected_leaf_is_a_label_finding():
    from decimal import Decimal

    from modules.simulate.snapshot import _pool
    pool = _pool("p", {"cpu": Decimal(64), "memory": Decimal(2**36), "nvidia.com/gpu": Decimal(8)})
    leaf = Switch("rack-a", 1, hypernode="rack-a", nodes=["n1", "n2"], selector={"matchLabels": {"rack": "a"}})
    stack = Fabric("s", {1: "rack"}, {"rack-a": leaf}, {n: Node(n, "rack-a", pool) for n in ("n1", "n2")},
                   {"p": pool})
    live_leaf = Switch("rack-a", 1, hypernode="rack-a", nodes=["n1"])
    cluster = Fabric("c", {1: "rack"}, {"rack-a": live_leaf},
                     {"n1": Node("n1", "rack-a", pool, labels={"rack": "a"}),
                      "n2": Node("n2", None, pool, labels={"rack": "b"})}, {"p": pool})
    [finding] = compare(stack, [], cluster, [])
    assert finding.line() == ('label: Node n2: its labels (rack=b in the cluster) do not match the selector of leaf '
                              'rack-a ({"matchLabels": {"rack": "a"}}); in the cluster under no HyperNode')
    assert (finding.declared, finding.live) == ({"leaf": "rack-a", "selector": {"matchLabels": {"rack": "a"}}},
                                                {"leaf": None, "labels": "rack=b"})


def test_a_label_defined_fabric_is_checked_for_the_level_labels(tmp_path):
    (tmp_path / "Pulumi.yaml").write_text((ROOT / "Pulumi.yaml").read_text())
    (tmp_path / "stacks").mkdir()
    (tmp_path / "stacks" / "Pulumi.lbl.yaml").write_text(yaml.safe_dump({"config": {
        "kubernetes:context": "lbl", "trainstack:environment": "dev",
        "trainstack:fabric": {"source": "labels", "labels": {"levels": ["example.com/spine", "example.com/leaf"]}}}}))

    def gpu_node(name, **labels):
        return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
                "status": {"allocatable": {"cpu": "96", "memory": "1000Gi", "nvidia.com/gpu": "8"}}}
    both = {"example.com/leaf": "l1", "example.com/spine": "s1"}
    nodes = [gpu_node("ok", **both), gpu_node("no-leaf", **{"example.com/spine": "s1"}),
             gpu_node("no-spine", **{"example.com/leaf": "l1"}),
             {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "cpu"}, "status": {"allocatable": {"cpu": "8"}}}]
    res = run("drift", "lbl", "--project", str(tmp_path), "--snapshot", write(tmp_path, [], nodes))
    assert res.code == 1, res.err
    assert "drift checks only that every GPU node carries the level labels" in res.err
    lines = res.out.splitlines()
    assert lines[:2] == [
        "label: Node no-leaf: a GPU node without the level label(s) example.com/leaf: Volcano's label discoverer "
        "puts it under no HyperNode",
        "label: Node no-spine: a GPU node without the level label(s) example.com/spine: Volcano's label discoverer "
        "stops at tier 1, so its HyperNodes reach no higher"]
    assert len(lines) == 3 and "(2 label)" in lines[2]
    clean = run("drift", "lbl", "--project", str(tmp_path), "--snapshot", write(tmp_path, [], nodes[:1], "ok.yaml"))
    assert clean.code == 0 and clean.out.startswith("no drift")
