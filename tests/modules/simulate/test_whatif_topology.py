"""`simulate --submit` places through `simulate`'s topology-aware allocate: a hard-mode gang never
"fits" across its tier limit, and gang eviction searches the HyperNodes within that tier
(GetCandidateDomains), so its victims are inside one of them."""
from __future__ import annotations

import json

import yaml

from tests.support.cli import run

CONF = """actions: "enqueue, allocate, gangpreempt, gangreclaim, backfill"
tiers:
- plugins: [{name: priority}, {name: gang, enablePreemptable: false}, {name: conformance}, {name: capacity}]
- plugins: [{name: predicates}, {name: network-topology-aware}, {name: nodeorder}, {name: binpack}]
"""
GPU = {"cpu": "90", "memory": "900Gi", "nvidia.com/gpu": "8"}


def fabric(spines=2, leaves=4, per_leaf=8):
    out = []
    for s in range(spines):
        out.append({"apiVersion": "topology.volcano.sh/v1alpha1", "kind": "HyperNode",
                    "metadata": {"name": f"spine-{s}"},
                    "spec": {"tier": 2, "members": [{"type": "HyperNode", "selector": {"exactMatch": {
                        "name": f"leaf-{s}-{leaf}"}}} for leaf in range(leaves)]}})
        for leaf in range(leaves):
            out.append({"apiVersion": "topology.volcano.sh/v1alpha1", "kind": "HyperNode",
                        "metadata": {"name": f"leaf-{s}-{leaf}"},
                        "spec": {"tier": 1, "members": [{"type": "Node", "selector": {"regexMatch": {
                            "pattern": f"^n-{s}-{leaf}-[0-9]+$"}}}]}})
            for n in range(per_leaf):
                out.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n-{s}-{leaf}-{n}"},
                            "status": {"allocatable": {"cpu": "96", "memory": "1000Gi", "nvidia.com/gpu": "8",
                                                       "pods": "110"}}})
    return out


def running(name, nodes, priority="low"):
    out = [{"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": "ml"},
            "spec": {"queue": "ml", "minMember": len(nodes), "priorityClassName": priority},
            "status": {"phase": "Running"}}]
    for i, node in enumerate(nodes):
        out.append({"apiVersion": "v1", "kind": "Pod", "metadata": {
            "name": f"{name}-{i}", "namespace": "ml", "annotations": {"scheduling.k8s.io/group-name": name}},
            "spec": {"nodeName": node, "priorityClassName": priority, "containers": [
                {"name": "c", "resources": {"requests": GPU}}]}, "status": {"phase": "Running"}})
    return out


def snapshot():
    """Two spines of 32 nodes; each runs a 12-node low-priority job: 20 nodes free per spine, 40 in all."""
    objects = fabric() + [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "volcano-scheduler-configmap",
                                                               "namespace": "volcano-system"},
         "data": {"volcano-scheduler.conf": CONF}},
        {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "ml"},
         "spec": {"weight": 1, "deserved": {"nvidia.com/gpu": 512}}, "status": {"state": "Open"}},
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "low"}, "value": 10},
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000}]
    for s in range(2):
        objects += running(f"sweep-{s}", [f"n-{s}-{leaf}-{n}" for leaf in range(4) for n in range(8)][:12])
    return objects


def gang(pods, tier, mode="hard"):
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "big", "namespace": "ml"},
            "spec": {"minAvailable": pods, "queue": "ml", "priorityClassName": "high",
                     "networkTopology": {"mode": mode, "highestTierAllowed": tier},
                     "tasks": [{"name": "w", "replicas": pods, "template": {"spec": {"containers": [
                         {"name": "c", "image": "x", "resources": {"requests": GPU, "limits": GPU}}]}}}]}}


def _report(tmp_path, job):
    snap = tmp_path / "snap.yaml"
    snap.write_text(yaml.safe_dump_all(snapshot()))
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(job))
    out = run("simulate", "--snapshot", str(snap), "--submit", str(path), "--format", "json")
    assert out.code == 0, out.err
    return json.loads(out.out)


def _spine(node):
    return node.split("-")[1]


def test_a_hard_gang_never_fits_across_its_tier_and_evicts_inside_one_spine(tmp_path):
    # 32 pods: 40 nodes are free in all, but no spine has more than 20
    report = _report(tmp_path, gang(32, 2))
    assert report["outcome"] == "evicts", report
    assert len({_spine(n) for n in report["placed"].values()}) == 1
    assert {_spine(e["node"]) for e in report["evictions"]} == {_spine(next(iter(report["placed"].values())))}
    assert {e["job"] for e in report["evictions"]} in ({"ml/sweep-0"}, {"ml/sweep-1"})


def test_the_same_gang_in_soft_mode_or_at_the_cluster_top_fits_without_evictions(tmp_path):
    for job in (gang(32, 2, "soft"), gang(32, 3)):
        report = _report(tmp_path, job)
        assert report["outcome"] == "fits" and len(report["placed"]) == 32, report


def test_a_hard_gang_that_fits_one_spine_is_placed_in_it(tmp_path):
    report = _report(tmp_path, gang(16, 2))
    assert report["outcome"] == "fits" and len({_spine(n) for n in report["placed"].values()}) == 1
    report = _report(tmp_path, gang(16, 1))      # a leaf holds 8 nodes: tier 1 cannot hold 16 pods
    assert report["outcome"] != "fits"
    assert any("allocate (topology-aware" in n for n in report["notes"])


def test_eviction_domains_take_the_widest_tier_first_capped_as_volcano_caps_them():
    from modules.simulate.whatif_topology import eviction_domains
    hypernodes = {"spine-0": (2, ("a", "b")), "spine-1": (2, ("c", "d")), "core": (3, ("a", "b", "c", "d")),
                  "leaf-a": (1, ("a",)), "leaf-b": (1, ("b",)), "leaf-c": (1, ("c",))}
    alloc = {n: {"cpu": 1000.0} for n in "abcd"}
    conf = {"tiers": [{"plugins": [{"name": "network-topology-aware",
                                    "arguments": {"hypernode.gradient.evict.max-hypernodes": 3}}]}]}
    names = [n for n, _ in eviction_domains(conf, "gangpreempt", 2, None, hypernodes, alloc)]
    assert names == ["spine-0", "spine-1", "leaf-c"]      # tier 3 is beyond the job; the cap keeps the last leaf
    conf["configurations"] = [{"name": "gangpreempt", "arguments": {"maxDomains": 1}}]
    assert [n for n, _ in eviction_domains(conf, "gangpreempt", 2, None, hypernodes, alloc)] == ["spine-0"]
    # a HyperNode whose allocatable cannot hold the job's minResources is no domain
    assert [n for n, _ in eviction_domains({}, "gangreclaim", 2, {"cpu": 1500.0}, hypernodes, alloc)] == [
        "spine-0", "spine-1"]
    assert eviction_domains({}, "gangreclaim", None, None, hypernodes, alloc) is None    # not hard: the cluster
