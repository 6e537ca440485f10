"""`drift` on a stack scaffolded by `trainstack init` (64 nodes, 4 leaves, one spine) against a
snapshot shaped as `kubectl get hypernodes,nodes -o yaml|json` prints it: Nodes with status
(allocatable in the units the kubelet reports, `191910m` CPU and `1968Gi` memory, capacity,
conditions, images, nodeInfo), HyperNodes as render writes them plus the fields the API server adds.
Drift must report what a person acts on, not the gap between a schema default and allocatable."""
from __future__ import annotations

import copy
import json

import pytest
import yaml

from modules.core.config import load_project, load_stack
from modules.core.render import render
from tests.modules.simulate.kubectl import as_applied, kubectl_list, kubectl_node
from tests.support.cli import ROOT, run


def scaffold(tmp_path, label_leaf: bool = False, pool: str | None = None):
    """`trainstack init east --nodes 64`; ``label_leaf`` gives leaf-04 a label selector and
    ``pool`` replaces the node pool line."""
    (tmp_path / "Pulumi.yaml").write_text((ROOT / "Pulumi.yaml").read_text())
    made = run("init", "east", "--project", str(tmp_path), "--nodes", "64")
    assert made.code == 0, made.err
    stack_file, fabric_file = tmp_path / "stacks" / "Pulumi.east.yaml", tmp_path / "stacks" / "fabrics" / "east.yaml"
    if pool is not None:
        text = stack_file.read_text()
        assert "    - {gpus: 8, name: gpu, resources: {nvidia.com/hostdev: 8}}\n" in text
        stack_file.write_text(text.replace("    - {gpus: 8, name: gpu, resources: {nvidia.com/hostdev: 8}}\n", pool))
    if label_leaf:
        text = fabric_file.read_text()
        fabric_file.write_text(text.replace(
            "leaf-04: {nodes: ['gpu-[0049-0064]']}",
            "leaf-04: {nodes: ['gpu-[0049-0064]'], selector: {matchLabels: {example.com/leaf: leaf-04}}}"))
    bundle = render(load_stack(load_project(tmp_path), "east"))
    hypernodes = {r.obj["metadata"]["name"]: r.obj for r in bundle.resources if r.obj["kind"] == "HyperNode"}
    nodes = {name: kubectl_node(name, labels={"example.com/leaf": node.leaf} if node.leaf else None)
             for name, node in bundle.fabric.nodes.items()}
    return hypernodes, nodes


def snapshot(tmp_path, hypernodes: dict, nodes: dict, fmt: str = "yaml") -> str:
    counts = {"spine-1": 64}
    items = [as_applied(h, counts.get(n, 16)) for n, h in hypernodes.items()] + list(nodes.values())
    listing = kubectl_list(items)
    path = tmp_path / f"snap.{fmt}"
    path.write_text(json.dumps(listing, indent=4) if fmt == "json" else yaml.safe_dump(listing))
    return str(path)


def exact(*names: str) -> list[dict]:
    return [{"type": "Node", "selector": {"exactMatch": {"name": n}}} for n in names]


def four_differences(hypernodes: dict, nodes: dict) -> tuple[dict, dict]:
    """gpu-0010 gone, gpu-0065 added (under no HyperNode), gpu-0020 recabled from leaf-02 to leaf-03
    (both leaves listed node by node), and leaf-04's tier name edited by hand."""
    hypernodes, nodes = copy.deepcopy(hypernodes), copy.deepcopy(nodes)
    del nodes["gpu-0010"]
    nodes["gpu-0065"] = kubectl_node("gpu-0065")
    hypernodes["leaf-02"]["spec"]["members"] = exact(*(f"gpu-{i:04}" for i in range(17, 33) if i != 20))
    hypernodes["leaf-03"]["spec"]["members"] = exact(*(f"gpu-{i:04}" for i in [20, *range(33, 49)]))
    hypernodes["leaf-04"]["spec"]["tierName"] = "rack"
    return hypernodes, nodes


@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_the_scaffolded_stack_reports_the_four_differences_and_no_capacity_noise(tmp_path, fmt):
    hypernodes, nodes = four_differences(*scaffold(tmp_path))
    res = run("drift", "east", "--project", str(tmp_path), "--snapshot", snapshot(tmp_path, hypernodes, nodes, fmt))
    assert res.code == 1, res.err
    lines = res.out.splitlines()
    assert lines[:3] == [
        "missing: Node gpu-0010: declared under leaf leaf-01, not in the cluster",
        "extra: Node gpu-0065: a GPU node (8 nvidia.com/gpu) no leaf of the stack declares; in the cluster under "
        "no HyperNode",
        "moved: Node gpu-0020: declared under leaf leaf-02, in the cluster under leaf leaf-03"]
    # the two leaves the recabling edited, and the hand edit: each with the rendered and live value
    assert [line.split(":")[1].strip() for line in lines[3:6]] == ["HyperNode leaf-02", "HyperNode leaf-03",
                                                                   "HyperNode leaf-04"]
    assert "tierName leaf rendered, rack in the cluster" in lines[5]
    assert not any(line.startswith(("capacity:", "note:")) for line in lines)
    assert len(lines) == 7 and "(1 missing, 1 extra, 1 moved, 3 hypernode)" in lines[6]


def test_without_differences_the_kubectl_snapshot_is_clean(tmp_path):
    hypernodes, nodes = scaffold(tmp_path)
    res = run("drift", "east", "--project", str(tmp_path), "--snapshot", snapshot(tmp_path, hypernodes, nodes))
    assert res.code == 0, res.out
    assert res.out.splitlines() == [f"no drift: snapshot {tmp_path / 'snap.yaml'} has the fabric stack east declares"]


def test_a_snapshot_without_hypernodes_is_named_in_one_line(tmp_path):
    hypernodes, nodes = four_differences(*scaffold(tmp_path))
    res = run("drift", "east", "--project", str(tmp_path), "--snapshot", snapshot(tmp_path, {}, nodes))
    assert res.code == 1, res.err
    lines = res.out.splitlines()
    assert lines == [
        "missing: HyperNode (all 5): the snapshot holds no HyperNode; render writes leaf-01, leaf-02, leaf-03, "
        "leaf-04, spine-1. If the cluster has them, take the snapshot with kubectl get hypernodes,nodes -o yaml; "
        "the nodes' leaves are not compared",
        "missing: Node gpu-0010: declared under leaf leaf-01, not in the cluster",
        "extra: Node gpu-0065: a GPU node (8 nvidia.com/gpu) no leaf of the stack declares",
        lines[3]]
    assert lines[3].startswith("drift: ") and "(2 missing, 1 extra)" in lines[3]


POOL = ('    - {name: gpu, gpus: 8, cpu: "192", memory: 2000Gi, resources: {nvidia.com/hostdev: 8}}\n')


def test_capacity_is_judged_against_what_the_pool_declares_with_the_kubelet_reservations(tmp_path):
    hypernodes, nodes = scaffold(tmp_path, pool=POOL)
    nodes["gpu-0002"] = kubectl_node("gpu-0002", gpus="7", labels=nodes["gpu-0002"]["metadata"]["labels"])
    nodes["gpu-0003"] = kubectl_node("gpu-0003", memory="1800Gi", labels=nodes["gpu-0003"]["metadata"]["labels"])
    nodes["gpu-0004"] = kubectl_node("gpu-0004", cpu="250", labels=nodes["gpu-0004"]["metadata"]["labels"])
    res = run("drift", "east", "--project", str(tmp_path), "--snapshot", snapshot(tmp_path, hypernodes, nodes))
    assert res.code == 1, res.err
    lines = res.out.splitlines()
    # 191910m of a declared 192 CPUs and 1968Gi of 2000Gi (1.6 %) are the kubelet's share: not drift
    assert [line for line in lines if line.startswith("capacity:")] == [
        "capacity: Node gpu-0002: nvidia.com/gpu 8 declared in node pool gpu, 7 allocatable",
        "capacity: Node gpu-0003: memory 2000Gi declared in node pool gpu, 1800Gi allocatable (10% below; the "
        "tolerance for the kubelet's reservations is 5%)"]
    assert [line for line in lines if line.startswith("note:")] == [
        "note: 1 node(s) of node pool gpu allocate cpu 250, more than the 192 the stack declares (gpu-0004): not "
        "drift; plans made from the stack leave the difference unused"]
    data = json.loads(run("drift", "east", "--project", str(tmp_path), "--snapshot", str(tmp_path / "snap.yaml"),
                          "--format", "json").out)
    short = next(f for f in data["findings"] if f["name"] == "gpu-0003")
    assert (short["declared"], short["live"]) == ({"memory": "2000Gi"}, {"memory": "1800Gi"})
    assert len(data["notes"]) == 1
    strict = run("drift", "east", "--project", str(tmp_path), "--snapshot", str(tmp_path / "snap.yaml"),
                 "--tolerance", "1")
    assert sum(line.startswith("capacity:") for line in strict.out.splitlines()) == 64   # 1968Gi is 1.6 % short


def test_more_than_declared_is_one_note_per_pool_and_resource(tmp_path):
    hypernodes, nodes = scaffold(tmp_path, pool=POOL.replace("2000Gi", "1800Gi"))
    res = run("drift", "east", "--project", str(tmp_path), "--snapshot", snapshot(tmp_path, hypernodes, nodes))
    assert res.code == 0, res.out
    lines = res.out.splitlines()
    assert len(lines) == 2 and lines[0].startswith(
        "note: 64 node(s) of node pool gpu allocate memory 1968Gi, more than the 1800Gi the stack declares "
        "(gpu-0001, gpu-0002,") and "and 54 more" in lines[0]
    assert lines[1].startswith("no drift: ")


def test_a_label_finding_shows_the_live_labels(tmp_path):
    hypernodes, nodes = scaffold(tmp_path, label_leaf=True)
    nodes["gpu-0050"]["metadata"]["labels"]["example.com/leaf"] = "leaf-05"
    del nodes["gpu-0051"]["metadata"]["labels"]["example.com/leaf"]
    res = run("drift", "east", "--project", str(tmp_path), "--snapshot", snapshot(tmp_path, hypernodes, nodes))
    assert res.code == 1, res.err
    lines = res.out.splitlines()
    assert lines[:2] == [
        'label: Node gpu-0050: its labels (example.com/leaf=leaf-05 in the cluster) do not match the selector of '
        'leaf leaf-04 ({"matchLabels": {"example.com/leaf": "leaf-04"}}); in the cluster under no HyperNode',
        'label: Node gpu-0051: its labels (example.com/leaf absent in the cluster) do not match the selector of '
        'leaf leaf-04 ({"matchLabels": {"example.com/leaf": "leaf-04"}}); in the cluster under no HyperNode']
    data = json.loads(run("drift", "east", "--project", str(tmp_path), "--snapshot", str(tmp_path / "snap.yaml"),
                          "--format", "json").out)
    assert data["findings"][0]["live"] == {"leaf": None, "labels": "example.com/leaf=leaf-05"}


def test_the_exit_codes_are_in_drift_help():
    res = run("drift", "--help")
    assert res.code == 0
    assert "exit codes:\n  0    no drift" in res.out and "\n  1    drift" in res.out and "\n  2    bad input" in res.out
