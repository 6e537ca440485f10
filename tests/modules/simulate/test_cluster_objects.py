"""The one reader of a cluster's objects (``modules/simulate/objects.py``): placement
(``snapshot.snapshot_from_objects``), the eviction what-if (``eviction.read_cluster``) and ``drift``
(``snapshot.load_cluster``) read the same Nodes and Pods the same way."""
from __future__ import annotations

import json
from decimal import Decimal

import pytest

from modules.core.errors import InputError
from modules.simulate.eviction import RELEASING, read_cluster
from modules.simulate.objects import by_kind, read_nodes, read_pod
from modules.simulate.snapshot import load_cluster, snapshot_from_objects
from modules.semantics.scheduler_conf import chart_default

DEFAULT_CONF = chart_default().conf   # the chart's default conf at the pinned tag


def _node(name, alloc=None, capacity=None, taints=(), cordoned=False, **labels):
    status = {}
    if alloc is not None:
        status["allocatable"] = alloc
    if capacity is not None:
        status["capacity"] = capacity
    spec = {"taints": list(taints)} if taints else {}
    if cordoned:
        spec["unschedulable"] = True
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}, "spec": spec,
            "status": status}


def _pod(name, node=None, deleting=False, phase="Running", gpus="1"):
    meta = {"name": name, "namespace": "ml", "annotations": {"scheduling.k8s.io/group-name": "g"}}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    spec = {"containers": [{"name": "c", "resources": {"requests": {"cpu": "2", "nvidia.com/gpu": gpus}}}]}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": {"phase": phase}}


GROUP = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
         "metadata": {"name": "g", "namespace": "ml", "creationTimestamp": "2026-01-01T00:00:00Z"},
         "spec": {"minMember": 1, "queue": "default"}, "status": {"phase": "Running"}}
TAINT = {"key": "gpu", "value": "a100", "effect": "NoSchedule"}
NODES = [_node("a", alloc={"cpu": "8", "memory": "64Gi", "nvidia.com/gpu": "8", "pods": "110"}, taints=[TAINT],
               zone="z1"),
         _node("b", capacity={"cpu": "4", "memory": "32Gi", "pods": "110"}, cordoned=True)]


def _pairs(objects):
    return [(f"objects[{i}]", o) for i, o in enumerate(objects)]


def test_placement_and_the_what_if_read_the_same_nodes():
    objects = _pairs(NODES)
    [a, b] = read_nodes(by_kind(objects, "snap")["Node"])
    assert (a.name, a.labels, a.taints, a.unschedulable) == ("a", {"zone": "z1"}, (("gpu", "a100", "NoSchedule"),),
                                                            False)
    assert b.allocatable == {"cpu": Decimal(4), "memory": Decimal(32 * 2**30), "pods": Decimal(110)}  # capacity
    assert b.unschedulable
    evict = read_cluster(objects, "snap", DEFAULT_CONF).nodes
    place = snapshot_from_objects(objects, "snap").fabric.nodes
    assert list(evict) == list(place) == ["a", "b"]
    for name in evict:
        node = evict[name]
        alloc = place[name].pool.allocatable()
        assert node.allocatable["cpu"] == float(alloc["cpu"]) * 1000          # Volcano's millicores
        assert node.allocatable["memory"] == float(alloc["memory"])
        assert node.labels == place[name].labels
    assert evict["a"].taints == (("gpu", "a100", "NoSchedule"),) and evict["b"].unschedulable


def test_a_node_named_twice_is_refused_by_every_reader():
    objects = _pairs(NODES + [NODES[0]])
    for read in (lambda: read_cluster(objects, "snap", DEFAULT_CONF), lambda: snapshot_from_objects(objects, "snap")):
        with pytest.raises(InputError, match="node 'a' appears twice"):
            read()


def test_a_pod_being_deleted_is_releasing_in_both_models():
    objects = _pairs(NODES + [GROUP, _pod("p0", "a", deleting=True), _pod("p1", "a")])
    cluster = read_cluster(objects, "snap", DEFAULT_CONF)
    assert [t.status for t in cluster.nodes["a"].tasks] == [RELEASING, "Running"]
    snap = snapshot_from_objects(objects, "snap")
    assert snap.releasing["a"]["nvidia.com/gpu"] == 1 and snap.usage["a"]["nvidia.com/gpu"] == 2


def test_read_pod_names_its_group_node_and_requests():
    [(doc, obj)] = by_kind(_pairs([_pod("p0", "a", phase="Succeeded", gpus="2")]), "snap")["Pod"]
    pod = read_pod(doc, obj)
    assert (pod.uid, pod.group, pod.node, pod.finished, pod.deleting) == ("ml/p0", "g", "a", True, False)
    assert pod.requests() == {"cpu": Decimal(2), "nvidia.com/gpu": Decimal(2)}


def test_drift_and_placement_build_the_same_fabric(tmp_path):
    hypernode = {"apiVersion": "topology.volcano.sh/v1alpha1", "kind": "HyperNode", "metadata": {"name": "leaf"},
                 "spec": {"tier": 1, "members": [{"type": "Node", "selector": {"regexMatch": {"pattern": "^[ab]$"}}}]}}
    objects = NODES + [hypernode]
    path = tmp_path / "snap.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}))
    drift_fabric, hypernodes = load_cluster(path, "snap.json")
    placed = snapshot_from_objects(_pairs(objects), "snap.json").fabric
    assert [h[1]["metadata"]["name"] for h in hypernodes] == ["leaf"]
    assert {n: node.leaf for n, node in drift_fabric.nodes.items()} == \
        {n: node.leaf for n, node in placed.nodes.items()} == {"a": "leaf", "b": "leaf"}


def test_an_unreadable_creation_time_is_the_same_error_for_both_models():
    group = dict(GROUP, metadata=dict(GROUP["metadata"], creationTimestamp="yesterday"))
    objects = _pairs(NODES + [group, _pod("p0")])          # p0 pending: placement orders its job
    messages = set()
    for read in (lambda: read_cluster(objects, "snap", DEFAULT_CONF), lambda: snapshot_from_objects(objects, "snap")):
        with pytest.raises(InputError) as caught:
            read()
        messages.add(str(caught.value))
    [message] = messages
    assert "metadata.creationTimestamp: expected an RFC 3339 time" in message
