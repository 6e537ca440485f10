"""The snapshot reader on what kubectl really writes: a `List` with `items` (`kubectl get A,B -o
yaml|json`), a single object (`kubectl get node NAME -o yaml`), several documents in one file
(outputs joined with `---`), `-o json`, and a folder of them; one size bound for YAML and JSON alike;
text that is not Unicode refused as bad input."""
from __future__ import annotations

import json
from decimal import Decimal

import pytest
import yaml

from modules.core import yamlio
from modules.core.errors import InputError
from modules.simulate import objects as objects_mod
from modules.simulate import snapshot as snap_mod
from modules.simulate.objects import read_objects
from modules.simulate.snapshot import load_cluster
from tests.modules.simulate.kubectl import as_applied, kubectl_list, kubectl_node
from tests.support.cli import run

LEAF = {"apiVersion": "topology.volcano.sh/v1alpha1", "kind": "HyperNode", "metadata": {"name": "leaf-1"},
        "spec": {"tier": 1, "tierName": "leaf",
                 "members": [{"type": "Node", "selector": {"regexMatch": {"pattern": "^gpu-000[12]$"}}}]}}
NODES = [kubectl_node(f"gpu-000{i}") for i in (1, 2, 3)]


def kubectl_yaml(value) -> str:
    # kubectl's YAML: block style, keys sorted, sequences not indented under their key
    return yaml.dump(value, Dumper=yaml.CSafeDumper, default_flow_style=False, sort_keys=True)


def shapes(tmp_path) -> dict[str, object]:
    """The same cluster (one leaf, three nodes) in every shape kubectl writes."""
    items = [as_applied(LEAF, 2)] + NODES
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "hypernodes.yaml").write_text(kubectl_yaml(kubectl_list(items[:1])))
    (folder / "gpu-0001.yml").write_text(kubectl_yaml(items[1]))        # kubectl get node gpu-0001 -o yaml
    (folder / "nodes.json").write_text(json.dumps(kubectl_list(items[2:]), indent=4))
    files = {
        "list.yaml": kubectl_yaml(kubectl_list(items)),
        "list.json": json.dumps(kubectl_list(items), indent=4),
        "documents.yaml": "---\n".join(kubectl_yaml(item) for item in items),
        "lists.yaml": kubectl_yaml(kubectl_list(items[:1])) + "---\n" + kubectl_yaml(kubectl_list(items[1:])),
    }
    out: dict[str, object] = {name: tmp_path / name for name in files}
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    out["folder"] = folder
    return out


def test_every_kubectl_shape_reads_as_the_same_cluster(tmp_path):
    expected = None
    for name, path in shapes(tmp_path).items():
        objects = read_objects(path, name)
        kinds = sorted((o["kind"], o["metadata"]["name"]) for _, o in objects)
        assert kinds == [("HyperNode", "leaf-1"), ("Node", "gpu-0001"), ("Node", "gpu-0002"),
                         ("Node", "gpu-0003")], name
        fabric, _ = load_cluster(path, name)
        seen = ({n: node.leaf for n, node in fabric.nodes.items()},
                {n: node.pool.allocatable() for n, node in fabric.nodes.items()})
        assert expected is None or seen == expected, name
        expected = seen
    leaves, alloc = expected
    assert leaves == {"gpu-0001": "leaf-1", "gpu-0002": "leaf-1", "gpu-0003": None}
    assert alloc["gpu-0001"]["cpu"] == Decimal("191.91") and alloc["gpu-0001"]["memory"] == 1968 * 2**30


def test_a_single_object_file_is_one_object(tmp_path):
    path = tmp_path / "node.yaml"
    path.write_text(kubectl_yaml(NODES[0]))
    [(where, obj)] = read_objects(path, "node.yaml")
    assert where == "document 1" and obj["metadata"]["name"] == "gpu-0001"
    path = tmp_path / "node.json"
    path.write_text(json.dumps(NODES[0], indent=4))
    [(where, obj)] = read_objects(path, "node.json")
    assert where == "document 1" and obj["status"]["conditions"][-1]["type"] == "Ready"


def test_a_list_item_that_is_no_object_is_named_with_its_line(tmp_path):
    path = tmp_path / "snap.yaml"
    path.write_text(kubectl_yaml(kubectl_list([NODES[0], {"name": "stray"}])))
    with pytest.raises(InputError) as err:
        read_objects(path, "snap.yaml")
    assert "document 1: items[1] (line " in str(err.value)
    assert "expected a Kubernetes object with a kind, got a mapping without apiVersion or kind" in str(err.value)


def test_a_yaml_snapshot_past_the_fabric_file_cap_is_read_as_json_is(tmp_path):
    # one bound for a snapshot whatever its format (256 MiB): 17 MiB of YAML is read, not refused
    # with the 16 MiB cap of a fabric file
    big = kubectl_node("gpu-0001")
    big["metadata"]["annotations"]["pad"] = "x" * (17 * 2**20)
    for suffix, text in (("yaml", kubectl_yaml(kubectl_list([big]))), ("json", json.dumps(kubectl_list([big])))):
        path = tmp_path / f"snap.{suffix}"
        path.write_text(text)
        assert path.stat().st_size > yamlio.MAX_FABRIC_FILE_BYTES
        fabric, _ = load_cluster(path, path.name)
        assert list(fabric.nodes) == ["gpu-0001"]


@pytest.mark.parametrize("suffix", ["yaml", "json"])
def test_past_the_snapshot_bound_both_formats_get_the_same_refusal(tmp_path, monkeypatch, suffix):
    path = tmp_path / f"snap.{suffix}"
    text = kubectl_yaml(kubectl_list(NODES)) if suffix == "yaml" else json.dumps(kubectl_list(NODES))
    path.write_text(text)
    monkeypatch.setattr(objects_mod, "MAX_BYTES", len(text) - 1)
    with pytest.raises(InputError, match=r"the snapshot is larger than 0 MiB"):
        read_objects(path, path.name)
    monkeypatch.setattr(objects_mod, "MAX_BYTES", len(text))
    assert len(read_objects(path, path.name)) == 3


def test_the_bound_is_checked_before_reading(tmp_path):
    path = tmp_path / "huge.yaml"
    with path.open("wb") as handle:          # sparse: no 257 MiB written
        handle.truncate(objects_mod.MAX_BYTES + 1)
    res = run("drift", "dev", "--snapshot", str(path))
    assert res.code == 2 and "larger than 256 MiB" in res.err


@pytest.mark.parametrize("where, text", [
    ("items[0].metadata.name", '{"kind": "List", "items": [{"kind": "Node", "metadata": {"name": "gpu-\\ud800"}}]}'),
    ("items[0].metadata.labels.a\\ud800", '{"kind": "List", "items": [{"kind": "Node", "metadata": '
                                          '{"name": "n", "labels": {"a\\ud800": "b"}}}]}'),
    ("items[0].spec.members[0].selector.regexMatch.pattern",
     '{"kind": "List", "items": [{"kind": "HyperNode", "metadata": {"name": "h"}, "spec": {"tier": 1, "members": '
     '[{"type": "Node", "selector": {"regexMatch": {"pattern": "^gpu-\\udc00"}}}]}}]}'),
])
def test_a_lone_surrogate_in_a_json_snapshot_is_bad_input(tmp_path, where, text):
    path = tmp_path / "snap.json"
    path.write_text(text)
    for command in (("drift", "dev"), ("simulate",)):
        res = run(*command, "--snapshot", str(path))
        assert res.code == 2, res.err
        assert res.err.strip() == f"error: {path}: {where}: a lone UTF-16 surrogate escape (such as \\ud800 without " \
                                  "its pair): not Unicode text" or (where.endswith("\\ud800") and where in res.err)


def test_a_surrogate_pair_is_one_character_and_reads(tmp_path):
    node = kubectl_node("gpu-0001")
    node["metadata"]["annotations"]["note"] = "\U0001F600"
    path = tmp_path / "snap.json"
    path.write_text(json.dumps(kubectl_list([node])))      # ensure_ascii: written as \ud83d\ude00
    assert "\\ud83d\\ude00" in path.read_text()
    [(_, obj)] = read_objects(path, "snap.json")
    assert obj["metadata"]["annotations"]["note"] == "\U0001F600"


def test_label_members_test_each_node_once_not_once_per_leaf(tmp_path, monkeypatch):
    """Leaves that select their nodes by labels (labelMatch): each leaf tests only the nodes
    carrying its rarest label pair, with the same members, in snapshot order, as testing every
    node; a selector with matchExpressions only is still tested on every node."""
    leaves = 32
    nodes = [kubectl_node(f"n{i:04}", labels={"example.com/leaf": f"l{i % leaves}", "zone": "a"}, images=0)
             for i in range(leaves * 16)]
    hypernodes = [{"apiVersion": "topology.volcano.sh/v1alpha1", "kind": "HyperNode", "metadata": {"name": f"l{k}"},
                   "spec": {"tier": 1, "members": [{"type": "Node", "selector": {"labelMatch": {
                       "matchLabels": {"example.com/leaf": f"l{k}", "zone": "a"}}}}]}} for k in range(leaves - 1)]
    hypernodes.append({"apiVersion": "topology.volcano.sh/v1alpha1", "kind": "HyperNode", "metadata": {"name": "last"},
                       "spec": {"tier": 1, "members": [{"type": "Node", "selector": {"labelMatch": {
                           "matchExpressions": [{"key": "example.com/leaf", "operator": "In",
                                                 "values": [f"l{leaves - 1}"]}]}}}]}})
    path = tmp_path / "snap.json"
    path.write_text(json.dumps(kubectl_list(hypernodes + nodes)))
    calls = []
    real = snap_mod.selector_matches
    monkeypatch.setattr(snap_mod, "selector_matches", lambda s, labels: calls.append(1) or real(s, labels))
    fabric, _ = load_cluster(path, "snap.json")
    assert fabric.switches["l3"].nodes == [f"n{i:04}" for i in range(3, leaves * 16, leaves)]
    assert fabric.switches["last"].nodes == [f"n{i:04}" for i in range(leaves - 1, leaves * 16, leaves)]
    assert len(calls) == (leaves - 1) * 16 + len(nodes)   # each matchLabels leaf its own 16, "last" all
