"""`trainstack simulate` on a cluster snapshot: what `kubectl get hypernodes,nodes,podgroups,pods -o yaml`
prints, with no stack."""
from __future__ import annotations

import json
from decimal import Decimal

import pytest
import yaml

from modules.core.errors import InputError
from modules.simulate import objects as objects_mod
from modules.simulate import snapshot as snap_mod
from modules.simulate.snapshot import load_snapshot, snapshot_from_objects
from tests.support.cli import run

NAMES = {"gpu": "nvidia.com/gpu", "hca": "rdma/hca"}


def node(name, labels=None, **alloc):
    alloc = {NAMES.get(k, k): str(v) for k, v in alloc.items()}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, **({"labels": labels} if labels else {})},
            "status": {"allocatable": alloc, "capacity": alloc}}


def hypernode(name, tier, members, tier_name=None):
    spec = {"tier": tier, "members": members}
    if tier_name:
        spec["tierName"] = tier_name
    return {"apiVersion": "topology.volcano.sh/v1alpha1", "kind": "HyperNode", "metadata": {"name": name}, "spec": spec}


def exact(kind, name):
    return {"type": kind, "selector": {"exactMatch": {"name": name}}}


def pod(name, group=None, node_name=None, labels=None, selector=None, ns="team", phase=None, **requests):
    requests = {NAMES.get(k, k): str(v) for k, v in requests.items()}
    out = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": name, "namespace": ns, **({"labels": labels} if labels else {}),
                        "annotations": {"scheduling.k8s.io/group-name": group} if group else {}},
           "spec": {"containers": [{"name": "c", "resources": {"requests": requests}}]},
           "status": {"phase": phase or ("Running" if node_name else "Pending")}}
    if node_name:
        out["spec"]["nodeName"] = node_name
    if selector:
        out["spec"]["nodeSelector"] = selector
    return out


def podgroup(name, min_member, topology=None, ns="team", policies=None, allocated=None):
    spec = {"minMember": min_member, "queue": "default"}
    if topology:
        spec["networkTopology"] = topology
    if policies:
        spec["subGroupPolicy"] = policies
    meta = {"name": name, "namespace": ns}
    if allocated:
        meta["annotations"] = {"volcano.sh/job-allocated-hypernode": allocated}
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup", "metadata": meta, "spec": spec,
            "status": {"phase": "Inqueue"}}


def as_list(items):
    return {"apiVersion": "v1", "kind": "List", "items": items, "metadata": {"resourceVersion": ""}}


# Two racks under a spine; rack-b's nodes are chosen by a regex, a GPU-less "cpu" node hangs under
# a label-selected leaf at tier 2 (mixed depth), one node is in no HyperNode.
NODES = [node(f"gpu-a{i}", cpu=64, memory="512Gi", gpu=8, hca=4) for i in range(2)] + \
        [node(f"gpu-b{i}", cpu=64, memory="512Gi", gpu=8) for i in range(2)] + \
        [node("cpu-0", labels={"pool": "cpu"}, cpu=32, memory="64Gi"), node("loose", cpu=8, memory="16Gi")]
HYPERNODES = [
    hypernode("rack-a", 1, [exact("Node", "gpu-a0"), exact("Node", "gpu-a1")], "rack"),
    hypernode("rack-b", 1, [{"type": "Node", "selector": {"regexMatch": {"pattern": "gpu-b.*"}}}], "rack"),
    hypernode("cpus", 2, [{"type": "Node", "selector": {"labelMatch": {"matchLabels": {"pool": "cpu"}}}}]),
    hypernode("spine", 2, [exact("HyperNode", "rack-a"), exact("HyperNode", "rack-b")], "spine"),
]


@pytest.fixture()
def snapshot_dir(tmp_path):
    (tmp_path / "fabric.yaml").write_text(yaml.safe_dump(as_list(HYPERNODES + NODES)))
    objects = [
        podgroup("busy", 1), pod("busy-0", "busy", "gpu-a0", gpu=8, cpu=8),
        podgroup("train", 2, {"mode": "hard", "highestTierAllowed": 1}),
        pod("train-0", "train", gpu=8), pod("train-1", "train", gpu=8),
        pod("done", "busy", "gpu-b0", phase="Succeeded", gpu=8),
    ]
    (tmp_path / "pods.yaml").write_text(yaml.safe_dump_all(objects))
    return tmp_path


def test_fabric_from_hypernodes_and_nodes(snapshot_dir):
    snap = load_snapshot(snapshot_dir, "snap")
    f = snap.fabric
    assert f.switches["rack-b"].nodes == ["gpu-b0", "gpu-b1"]          # regexMatch
    assert f.switches["cpus"].nodes == ["cpu-0"]                        # labelMatch, a leaf at tier 2
    assert f.switches["rack-a"].parent == "spine" and f.switches["cpus"].parent is None
    assert f.nodes["loose"].leaf is None
    assert f.tier_names == {1: "rack", 2: "spine"}
    a0 = f.nodes["gpu-a0"].pool.allocatable()
    assert a0["nvidia.com/gpu"] == 8 and a0["rdma/hca"] == 4 and a0["memory"] == 512 * 2**30
    assert "nvidia.com/gpu" not in f.nodes["cpu-0"].pool.allocatable()
    # bound pods hold resources; a Succeeded pod holds nothing
    assert snap.usage == {"gpu-a0": {"nvidia.com/gpu": Decimal(8), "cpu": Decimal(8)}}
    assert [j.name for j in snap.jobs] == ["team/train"] and snap.jobs[0].min_available == 2


def test_cli_places_the_pending_gang_where_volcano_would(snapshot_dir):
    res = run("simulate", str(snapshot_dir), "--format", "json")
    assert res.code == 0, res.err
    job = json.loads(res.out)["strategies"]["topology-aware"]["jobs"][0]
    # rack-a has one free node, so the hard tier-1 gang of two goes to rack-b
    assert job["status"] == "placed" and job["hypernode"] == "rack-b"
    assert sorted(p["node"] for p in job["pods"]) == ["gpu-b0", "gpu-b1"]
    same = run("simulate", "--snapshot", str(snapshot_dir / "fabric.yaml"), "--workloads",
               str(snapshot_dir / "pods.yaml"))
    assert same.code == 2 and "Volcano Job" in same.err     # pods are not workloads: --workloads reads jobs only
    text = run("simulate", "--snapshot", str(snapshot_dir))
    assert text.code == 0 and "snapshot" in text.out and "team/train" in text.out


def test_running_tasks_count_towards_the_gang_and_pin_the_hypernode():
    objects = HYPERNODES + NODES + [
        podgroup("resume", 3, {"mode": "hard", "highestTierAllowed": 1}),
        pod("r-0", "resume", "gpu-a0", gpu=8), pod("r-1", "resume", "gpu-a1", gpu=4),
        pod("r-2", "resume", gpu=4),
    ]
    snap = snapshot_from_objects(list(enumerate(objects)), "snap")
    job = snap.jobs[0]
    assert job.running == 2 and job.gang == 1 and job.allocated_hypernode == "rack-a"
    res = _place(snap)
    assert res["team/resume"] == {"team/r-2": "gpu-a1"}     # only rack-a, where its tasks run


def test_node_selector():
    objects = HYPERNODES + NODES + [podgroup("solo", 1), pod("solo", "solo", selector={"pool": "cpu"}, cpu=4)]
    snap = snapshot_from_objects(list(enumerate(objects)), "snap")
    assert _place(snap) == {"team/solo": {"team/solo": "cpu-0"}}
    nowhere = snapshot_from_objects(list(enumerate(HYPERNODES + NODES + [
        podgroup("x", 1), pod("x", "x", selector={"pool": "gpu"}, cpu=1)])), "snap")
    assert _place(nowhere) == {}


def test_subgroup_policy_and_scheduler_conf_from_configmap():
    conf = {"actions": "allocate", "tiers": [{"plugins": [{"name": "network-topology-aware",
                                                            "arguments": {"hypernode.binpack.cpu": 3}}]}]}
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "volcano-scheduler-configmap"},
          "data": {"volcano-scheduler.conf": yaml.safe_dump(conf)}}
    policy = {"name": "stage", "matchLabelKeys": ["stage"], "subGroupSize": 2, "minSubGroups": 2,
              "networkTopology": {"mode": "hard", "highestTierAllowed": 1}}
    pods = [pod(f"p{i}", "pp", labels={"stage": str(i // 2)}, gpu=8) for i in range(4)]
    objects = HYPERNODES + NODES + [cm, podgroup("pp", 4, {"mode": "hard", "highestTierAllowed": 2}, policies=[policy])]
    snap = snapshot_from_objects(list(enumerate(objects + pods)), "snap")
    assert snap.settings.weights["cpu"] == 3 and "ConfigMap" in snap.settings.source
    job = snap.jobs[0]
    assert [(p.name, p.pods, p.min_available) for p in job.partitions] == [
        ("stage-0", (0, 1), 2), ("stage-1", (2, 3), 2)]
    placed = _place(snap)["team/pp"]
    racks = {n[:5] for n in placed.values()}
    assert len(placed) == 4 and racks == {"gpu-a", "gpu-b"}     # each SubJob inside one rack


def test_upstream_style_case_without_hypernodes():
    objects = [node("n1", cpu=2, memory="4Gi"), node("n2", cpu=2, memory="4Gi"),
               podgroup("pg", 2), pod("a", "pg", cpu=2, memory="4G"), pod("b", "pg", cpu=2, memory="4G")]
    snap = snapshot_from_objects(list(enumerate(objects)), "snap")
    assert any("no HyperNode" in w for w in snap.warnings)
    assert sorted(_place(snap)["team/pg"].values()) == ["n1", "n2"]


@pytest.mark.parametrize("objects, message", [
    ([hypernode("h", 1, [])], "no Node"),
    (NODES + [hypernode("x", 1, [exact("Node", "gpu-a0")]), hypernode("y", 1, [exact("Node", "gpu-a0")])],
     "member of HyperNodes"),
    (NODES + [hypernode("up", 1, [exact("HyperNode", "down")]), hypernode("down", 2, [exact("Node", "gpu-a0")])],
     "not below"),
    (NODES + [podgroup("g", 1, {"mode": "sometimes"}), pod("p", "g", cpu=1)], "hard or soft"),
    (NODES + [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "bad"},
               "status": {"allocatable": {"cpu": "lots"}}}],
     "Kubernetes quantity"),
])
def test_mistakes_are_one_line_errors(objects, message):
    with pytest.raises(InputError) as err:
        snapshot_from_objects(list(enumerate(objects)), "snap")
    assert message in str(err.value) and "\n" not in str(err.value)


def test_input_is_bounded(tmp_path, monkeypatch):
    path = tmp_path / "big.yaml"
    path.write_text(yaml.safe_dump(as_list(NODES)))
    monkeypatch.setattr(objects_mod, "MAX_OBJECTS", 3)
    with pytest.raises(InputError, match="more than 3 objects"):
        load_snapshot(path, "big.yaml")
    monkeypatch.setattr(objects_mod, "MAX_BYTES", 100)
    with pytest.raises(InputError, match="larger than"):
        load_snapshot(path, "big.yaml")
    # a path that does not exist is taken as a stack name: outside a project that is one clear line
    res = run("simulate", str(tmp_path / "missing-dir"))
    assert res.code == 2 and ("no such stack" in res.err or "no Pulumi.yaml" in res.err) and "Traceback" not in res.err


def test_stack_mode_still_needs_workloads():
    res = run("simulate", "prod")
    assert res.code == 2 and "--workloads" in res.err


def _place(snap) -> dict[str, dict[str, str]]:
    from modules.simulate.engine import build_cluster, resource_names
    from modules.simulate.scheduler import TopologyAware, prepare

    cluster = build_cluster(snap.fabric, resource_names(snap.fabric, snap.jobs, snap.usage), snap.settings, snap.usage,
                            snap.releasing)
    aware = TopologyAware(cluster, snap.settings)
    out = {}
    for job in snap.jobs:
        outcome = aware.place(job, prepare(job, cluster))
        if outcome.placed:
            out[job.name] = {p: cluster.node_names[n] for p, n in outcome.pods}
    return out


def test_pod_slots_and_other_schedulers():
    full = node("small", cpu=64, memory="64Gi", pods=2)
    objects = [full, pod("a", node_name="small", cpu=1), pod("b", node_name="small", cpu=1),
               podgroup("c", 1), pod("c", "c", cpu=1),
               {**pod("d", cpu=1), "spec": {**pod("d", cpu=1)["spec"], "schedulerName": "default-scheduler"}}]
    snap = snapshot_from_objects(list(enumerate(objects)), "snap")
    assert snap.usage["small"]["pods"] == 2
    assert [j.name for j in snap.jobs] == ["team/c"]              # d belongs to another scheduler
    assert any("other than 'volcano'" in w for w in snap.warnings)
    assert _place(snap) == {}                                     # the node has no pod slot left


def test_min_resources_decide_which_hypernodes_are_eligible():
    # binpack alone prefers rack-a (a running pod holds 8 of its 16 GPUs), but the group's
    # minResources (16 GPUs) exceed rack-a's idle 8: Volcano's pre-filter leaves rack-b only
    group = podgroup("m", 1, {"mode": "hard", "highestTierAllowed": 1})
    group["spec"]["minResources"] = {"nvidia.com/gpu": "16"}
    objects = HYPERNODES + NODES + [group, pod("m-0", "m", gpu=1), pod("other", None, "gpu-a0", gpu=8)]
    snap = snapshot_from_objects(list(enumerate(objects)), "snap")
    assert snap.jobs[0].min_resources == {"nvidia.com/gpu": Decimal(16)}
    assert next(iter(_place(snap)["team/m"].values())).startswith("gpu-b")


def test_taints_and_cordoned_nodes_keep_pods_off():
    tainted = node("t", cpu=8, memory="8Gi")
    tainted["spec"] = {"taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]}
    cordoned = node("c", cpu=8, memory="8Gi")
    cordoned["spec"] = {"unschedulable": True}
    free = node("f", cpu=1, memory="8Gi")
    tolerant = pod("tol", "tol", cpu=2)
    tolerant["spec"]["tolerations"] = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    objects = [tainted, cordoned, free, podgroup("plain", 1), pod("plain", "plain", cpu=2), podgroup("tol", 1),
               tolerant, podgroup("small", 1), pod("small", "small", cpu=1)]
    placed = _place(snapshot_from_objects(list(enumerate(objects)), "snap"))
    assert placed == {"team/tol": {"team/tol": "t"}, "team/small": {"team/small": "f"}}


@pytest.mark.parametrize("toleration, ok", [
    ({"operator": "Exists"}, True), ({"key": "k", "operator": "Exists"}, True),
    ({"key": "k", "value": "v"}, True), ({"key": "k", "value": "w"}, False),
    ({"key": "k", "value": "v", "effect": "NoExecute"}, False), ({"key": "other", "operator": "Exists"}, False),
])
def test_toleration_rule(toleration, ok):
    assert snap_mod.tolerates(toleration, ("k", "v", "NoSchedule")) is ok


def test_json_snapshots_read_like_yaml(tmp_path_factory, snapshot_dir):
    tmp_path = tmp_path_factory.mktemp("json")
    for name in ("fabric", "pods"):
        docs = list(yaml.safe_load_all((snapshot_dir / f"{name}.yaml").read_text()))
        (tmp_path / f"{name}.json").write_text(json.dumps(docs[0] if len(docs) == 1 else as_list(docs)))
    a, b = load_snapshot(snapshot_dir, "yaml"), load_snapshot(tmp_path, "json")
    assert [j.name for j in a.jobs] == [j.name for j in b.jobs] and a.usage == b.usage
    (tmp_path / "broken.json").write_text("{")
    with pytest.raises(InputError, match="invalid JSON"):
        load_snapshot(tmp_path, "json")


def test_scheduler_conf_file_or_configmap_and_extra_workloads(snapshot_dir, tmp_path_factory):
    extra = tmp_path_factory.mktemp("extra")
    conf = {"actions": "allocate", "tiers": [{"plugins": [{"name": "gang"}]}]}      # no network-topology-aware
    (extra / "conf").write_text(yaml.safe_dump(conf))
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "volcano-scheduler-configmap"},
          "data": {"volcano-scheduler.conf": yaml.safe_dump(conf)}}
    (extra / "cm.yaml").write_text(yaml.safe_dump(cm))
    job = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "later"},
           "spec": {"tasks": [{"name": "w", "replicas": 1, "template": {"spec": {"containers": [
               {"name": "c", "image": "trainer", "resources": {"requests": {"nvidia.com/gpu": 8},
                                                               "limits": {"nvidia.com/gpu": 8}}}]}}}]}}
    (extra / "jobs.yaml").write_text(yaml.safe_dump(job))
    for conf_file in ("conf", "cm.yaml"):
        res = run("simulate", str(snapshot_dir), "--scheduler-conf", str(extra / conf_file),
                  "--workloads", str(extra / "jobs.yaml"), "--format", "json")
        assert res.code == 0, res.err
        jobs = json.loads(res.out)["strategies"]["topology-aware"]["jobs"]
        assert [j["name"] for j in jobs] == ["team/train", "later"] and all(j["status"] == "placed" for j in jobs)
    text = run("simulate", str(snapshot_dir), "--scheduler-conf", str(extra / "conf"))
    assert "lacks network-topology-aware" in text.out
    assert run("simulate", str(snapshot_dir), "--usage", str(extra / "conf")).code == 2


def test_a_scheduler_conf_alias_bomb_is_one_line(snapshot_dir, tmp_path_factory):
    """--scheduler-conf is read with the bounded loader: aliases that expand without end are refused."""
    conf = tmp_path_factory.mktemp("bomb") / "conf"
    conf.write_text("a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(8)))
    res = run("simulate", str(snapshot_dir), "--scheduler-conf", str(conf))
    assert res.code == 2 and "alias" in res.err and len(res.err.strip().splitlines()) == 1, res.err


# --- read as Volcano's scheduler cache reads it (modules/semantics/session.py) ---------------------

def test_pending_pods_without_podgroups_are_not_scheduled_and_each_job_says_why(tmp_path):
    # 12 pending pods, room for all of them: six name PodGroups that are not in the snapshot, six
    # name none. Volcano schedules none of them.
    pods = [pod(f"w-{i}", f"pg-{i % 3}", gpu=1) for i in range(6)] + [pod(f"lone-{i}", gpu=1) for i in range(6)]
    (tmp_path / "snap.yaml").write_text(yaml.safe_dump(as_list(HYPERNODES + NODES + pods)))
    res = run("simulate", str(tmp_path / "snap.yaml"), "--format", "json")
    assert res.code == 0, res.err
    jobs = json.loads(res.out)["strategies"]["topology-aware"]["jobs"]
    assert len(jobs) == 3 + 6 and all(j["status"] == "pending" and not j["pods"] for j in jobs)
    reasons = {j["name"]: j["reason"] for j in jobs}
    assert "PodGroup team/pg-0 is not in the snapshot" in reasons["team/pg-0"]
    assert "no scheduling.k8s.io/group-name annotation" in reasons["team/pod:lone-0"]
    text = run("simulate", str(tmp_path / "snap.yaml"))
    assert text.code == 0 and "team/pg-1: PodGroup team/pg-1 is not in the snapshot" in text.out


def test_jobs_are_taken_in_volcanos_job_order():
    # one free GPU node in rack-b after usage; three single-pod hard jobs want a whole node each
    def group(name, priority=None, created=None):
        g = podgroup(name, 1, {"mode": "hard", "highestTierAllowed": 1})
        if priority:
            g["spec"]["priorityClassName"] = priority
        if created:
            g["metadata"]["creationTimestamp"] = created
        return g
    classes = [{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"},
                "value": 1000},
               {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "base"},
                "value": 10, "globalDefault": True}]
    objects = HYPERNODES + NODES + classes + [
        group("c-old", created="2026-01-01T00:00:00Z"), pod("c-0", "c-old", gpu=8),
        group("b-new", created="2026-02-01T00:00:00Z"), pod("b-0", "b-new", gpu=8),
        group("z-high", "high", created="2026-03-01T00:00:00Z"), pod("z-0", "z-high", gpu=8),
        group("a-low", "base", created="2026-01-01T00:00:00Z"), pod("a-0", "a-low", gpu=8),
    ]
    snap = snapshot_from_objects(list(enumerate(objects)), "snap")
    # priority first (z-high 1000; the others the globalDefault 10), then creation time, then UID
    assert [j.name for j in snap.jobs] == ["team/z-high", "team/a-low", "team/c-old", "team/b-new"]
    # without the priority plugin in the conf, priority plays no part
    conf = "actions: allocate\ntiers:\n- plugins:\n  - name: gang\n  - name: network-topology-aware\n"
    plain = snapshot_from_objects(list(enumerate(objects)), "snap", conf)
    assert [j.name for j in plain.jobs] == ["team/a-low", "team/c-old", "team/b-new", "team/z-high"]
    # nor with the plugin listed but its job order switched off (JobOrderFn skips enableJobOrder: false)
    off = conf.replace("  - name: gang\n", "  - name: priority\n    enableJobOrder: false\n  - name: gang\n")
    assert [j.name for j in snapshot_from_objects(list(enumerate(objects)), "snap", off).jobs] == \
        ["team/a-low", "team/c-old", "team/b-new", "team/z-high"]


def test_a_pending_jobs_priority_class_missing_from_the_snapshot_is_a_warning():
    group = podgroup("urgent", 1)
    group["spec"]["priorityClassName"] = "high"
    objects = HYPERNODES + NODES + [group, pod("u-0", "urgent", gpu=8)]
    warned = [w for w in snapshot_from_objects(list(enumerate(objects)), "snap").warnings if "PriorityClass" in w]
    assert warned == ["snap: pending PodGroups name PriorityClass(es) not in the snapshot (high): their jobs take "
                      "the default priority; add priorityclasses to the kubectl get for Volcano's job order"]
    high = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 9}
    assert not [w for w in snapshot_from_objects(list(enumerate(objects + [high])), "snap").warnings
                if "PriorityClass" in w]


def test_gang_orders_jobs_that_are_not_ready_first():
    running = podgroup("ready", 1)
    objects = HYPERNODES + NODES + [running, pod("r-0", "ready", "gpu-a0", gpu=1), pod("r-1", "ready", gpu=1),
                                    podgroup("starving", 1), pod("s-0", "starving", gpu=1)]
    snap = snapshot_from_objects(list(enumerate(objects)), "snap")
    assert [j.name for j in snap.jobs] == ["team/starving", "team/ready"]


def test_every_bound_pod_counts_as_usage_whatever_its_scheduler_or_owner():
    daemon = pod("agent", node_name="gpu-b0", cpu=2)
    daemon["metadata"]["ownerReferences"] = [{"kind": "DaemonSet", "name": "agent", "apiVersion": "apps/v1"}]
    other = pod("web", node_name="gpu-b1", cpu=3)
    other["spec"]["schedulerName"] = "default-scheduler"
    snap = snapshot_from_objects(list(enumerate(HYPERNODES + NODES + [daemon, other])), "snap")
    assert snap.usage["gpu-b0"]["cpu"] == 2 and snap.usage["gpu-b1"]["cpu"] == 3


def test_a_node_outside_every_hypernode_is_named():
    snap = snapshot_from_objects(list(enumerate(HYPERNODES + NODES)), "snap")
    assert any("1 node(s) in no HyperNode: loose;" in w for w in snap.warnings)


@pytest.mark.parametrize("phase, actions, placed", [
    ("Pending", "enqueue, allocate", False), (None, "enqueue, allocate", False),
    ("Pending", "allocate", True), ("Inqueue", "enqueue, allocate", True), ("Running", "enqueue, allocate", True),
])
def test_podgroup_phases(phase, actions, placed):
    group = podgroup("g", 1)
    if phase:
        group["status"]["phase"] = phase
    else:
        del group["status"]
    conf = f"actions: {actions}\ntiers:\n- plugins:\n  - name: network-topology-aware\n"
    snap = snapshot_from_objects(list(enumerate(HYPERNODES + NODES + [group, pod("g-0", "g", gpu=1)])), "snap", conf)
    assert bool(_place(snap)) is placed
    assert (snap.jobs[0].unscheduled is None) is placed
    if not placed:
        assert "enqueue action admits it" in snap.jobs[0].unscheduled


def test_a_bad_creation_timestamp_is_an_input_error():
    group = podgroup("g", 1)
    group["metadata"]["creationTimestamp"] = "yesterday"
    with pytest.raises(InputError, match="metadata.creationTimestamp: expected an RFC 3339 time"):
        snapshot_from_objects(list(enumerate(HYPERNODES + NODES + [group, pod("g-0", "g", gpu=1)])), "snap")


def test_regex_members_match_as_gos_matchstring_and_an_anchored_prefix_narrows_the_search():
    from modules.semantics.hypernodes import literal_prefix
    assert literal_prefix("^gpu-00(0[1-9]|[12][0-9]|3[0-2])$") == "gpu-00"
    assert literal_prefix("^ab*c") == "a" and literal_prefix("^a|b") == ""
    assert literal_prefix("gpu") == "" and literal_prefix("^[ab]c") == ""
    nodes = [node(n, cpu=1, memory="1Gi") for n in ("x-gpu-1", "gpu-1", "gpu-10", "gpu-2")]
    members = [{"type": "Node", "selector": {"regexMatch": {"pattern": p}}} for p in ("gpu-1",)]
    anchored = [{"type": "Node", "selector": {"regexMatch": {"pattern": "^gpu-[2-9]$"}}}]
    fabric = snapshot_from_objects(list(enumerate(nodes + [hypernode("l1", 1, members), hypernode("l2", 1, anchored)])),
                                   "snap").fabric
    assert fabric.switches["l1"].nodes == ["x-gpu-1", "gpu-1", "gpu-10"]      # a match anywhere, snapshot order
    assert fabric.switches["l2"].nodes == ["gpu-2"]


def test_a_snapshot_larger_than_a_stack_file_is_read(tmp_path):
    # the snapshot's own bound (256 MiB), not the 4 MiB one of stack files
    big = node("big", cpu=1, memory="1Gi")
    big["metadata"]["annotations"] = {"pad": "x" * (5 * 2**20)}
    (tmp_path / "snap.json").write_text(json.dumps(as_list([big])))
    fabric, _ = snap_mod.load_cluster(tmp_path / "snap.json", "snap.json")
    assert list(fabric.nodes) == ["big"]


def test_a_partly_running_job_fills_its_allocated_hypernode_first_as_the_plugin_scores_nodes():
    # resume runs one whole-node task on rack-a (a0); its 3 other tasks fit in no rack alone, so
    # they go to the spine. The plugin's node score (the LCA with the allocated rack-a) puts rack-a's
    # free nodes first; binpack alone would take the fuller rack-b and rack-c and leave rack-a.
    racks = {"a": 3, "b": 2, "c": 4}
    nodes = [node(f"{r}{i}", cpu=64, memory="512Gi", gpu=8) for r, k in racks.items() for i in range(k)]
    hypernodes = [hypernode(f"rack-{r}", 1, [exact("Node", f"{r}{i}") for i in range(k)]) for r, k in racks.items()]
    hypernodes.append(hypernode("spine", 2, [exact("HyperNode", f"rack-{r}") for r in racks]))
    objects = hypernodes + nodes + [
        podgroup("resume", 4, {"mode": "hard", "highestTierAllowed": 2}),
        pod("r-0", "resume", "a0", gpu=8), *[pod(f"r-{i}", "resume", gpu=8) for i in range(1, 4)],
        podgroup("other", 3), *[pod(f"o-{n}", "other", n, gpu=8) for n in ("b0", "c0", "c1")],
    ]
    snap = snapshot_from_objects(list(enumerate(objects)), "snap")
    job = next(j for j in snap.jobs if j.name == "team/resume")
    assert job.allocated_hypernode == "rack-a" and job.running_nodes == ("a0",)
    assert sorted(_place(snap)["team/resume"].values()) == ["a1", "a2", "b1"]
    job.allocated_hypernode, job.running_nodes = None, ()       # binpack alone: the fuller racks first
    assert sorted(_place(snap)["team/resume"].values()) == ["b1", "c2", "c3"]


def test_terminating_pods_count_in_future_idle_for_the_hypernode_prefilter():
    # the PodGroup's minResources (16 GPUs) exceed rack-a's idle 8 GPUs; the pod on gpu-a0 is
    # terminating, so rack-a's futureIdle holds 16 and Volcano's pre-filter (idle || futureIdle)
    # keeps rack-a; rack-b is full. The one pending pod fits gpu-a1.
    group = podgroup("m", 1, {"mode": "hard", "highestTierAllowed": 1})
    group["spec"]["minResources"] = {"nvidia.com/gpu": "16"}
    going = pod("old", None, "gpu-a0", gpu=8)
    going["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    busy = [pod(f"b{i}", None, f"gpu-b{i}", gpu=8) for i in range(2)]
    objects = HYPERNODES + NODES + [group, pod("m-0", "m", gpu=8), going, *busy]
    snap = snapshot_from_objects(list(enumerate(objects)), "snap")
    assert snap.releasing == {"gpu-a0": {"nvidia.com/gpu": Decimal(8), "pods": Decimal(1)}}
    assert _place(snap) == {"team/m": {"team/m-0": "gpu-a1"}}
    del going["metadata"]["deletionTimestamp"]
    assert _place(snapshot_from_objects(list(enumerate(objects)), "snap")) == {}


def test_a_conf_the_scheduler_does_not_mount_is_a_warning_in_placement_as_in_the_what_if():
    conf = yaml.safe_dump({"actions": "allocate", "tiers": [{"plugins": [{"name": "network-topology-aware",
                                                                          "arguments": {"weight": 4}}]}]})

    def cm(name):
        return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "volcano-system"},
                "data": {"volcano-scheduler.conf": conf}}

    gang = [podgroup("pp", 1), pod("p0", "pp", gpu=8)]
    snap = snapshot_from_objects(list(enumerate(HYPERNODES + NODES + gang + [
        cm("volcano-scheduler-configmap-backup"), cm("volcano-scheduler-configmap")])), "snap")
    assert "ConfigMap volcano-system/volcano-scheduler-configmap" in snap.settings.source
    assert ["snap: ConfigMap volcano-system/volcano-scheduler-configmap-backup holds a volcano-scheduler.conf that "
            "the scheduler does not mount; not read (the scheduler's is volcano-system/volcano-scheduler-configmap)"] \
        == [w for w in snap.warnings if "ConfigMap" in w]
    alone = snapshot_from_objects(list(enumerate(HYPERNODES + NODES + gang + [
        cm("volcano-scheduler-configmap-backup")])), "snap")
    assert alone.settings.source.startswith("baseline weights")     # the copy is never read, and that is said
    assert any("volcano-scheduler-configmap-backup holds a volcano-scheduler.conf that the scheduler does not "
               "mount; not read" in w for w in alone.warnings)


def test_the_what_if_notes_an_unmounted_conf_when_it_runs_the_chart_default():
    from modules.simulate.whatif import scheduler_conf

    backup = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "volcano-scheduler-configmap-backup"},
              "data": {"volcano-scheduler.conf": "actions: allocate\ntiers: [{plugins: [{name: gang}]}]\n"}}
    _, source, notes = scheduler_conf([backup], None, "snap")
    assert "chart" in notes[0] and any("volcano-scheduler-configmap-backup" in n and "does not mount" in n
                                       for n in notes[1:])
