"""The one cluster model (``modules/simulate/model.py``): placement, the what-if's session and
``drift`` are indexes of one ``read_model`` call, and ``simulate --submit`` reads every object of the
snapshot and of the submission once."""
from __future__ import annotations

from decimal import Decimal

import pytest
import yaml

from modules.core.errors import InputError
from modules.semantics.scheduler_conf import chart_default
from modules.simulate import model as model_mod
from modules.simulate import objects as objects_mod
from modules.simulate import submit, whatif
from modules.simulate.eviction import BOUND, RELEASING, RUNNING, cluster_of
from modules.simulate.model import read_model
from modules.simulate.snapshot import fabric_of, snapshot_from_model
from tests.modules.simulate.test_whatif_topology import CONF, gang, snapshot as topology_snapshot

DEFAULT_CONF = chart_default().conf


def _pairs(objects):
    return [(f"objects[{i}]", o) for i, o in enumerate(objects)]


def _node(name, cordoned=False):
    obj = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"rack": "r1"}},
           "status": {"allocatable": {"cpu": "8", "memory": "64Gi", "nvidia.com/gpu": "8", "pods": "110"}}}
    if cordoned:
        obj["spec"] = {"unschedulable": True}
    return obj


def _pod(name, group, node=None, deleting=False, phase="Running"):
    meta = {"name": name, "namespace": "ml", "annotations": {"scheduling.k8s.io/group-name": group}}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    spec = {"containers": [{"name": "c", "resources": {"requests": {"cpu": "2", "nvidia.com/gpu": "2"}}}]}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": {"phase": phase}}


def _group(name, phase="Running", queue="research"):
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": "ml", "creationTimestamp": "2026-01-01T00:00:00Z"},
            "spec": {"minMember": 1, "queue": queue}, "status": {"phase": phase}}


CLUSTER = [
    {"apiVersion": "topology.volcano.sh/v1alpha1", "kind": "HyperNode", "metadata": {"name": "rack-1"},
     "spec": {"tier": 1, "members": [{"type": "Node", "selector": {"labelMatch": {"matchLabels": {"rack": "r1"}}}}]}},
    _node("open"), _node("cordoned", cordoned=True),
    {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "research"},
     "spec": {"weight": 3, "capability": {"nvidia.com/gpu": "12"}}, "status": {"state": "Open"}},
    _group("train"),
    _pod("train-0", "train", node="cordoned"),                       # bound to a cordoned node: it holds it
    _pod("train-1", "train", node="open", deleting=True),            # Releasing: idle again soon
    _pod("lost-0", "lost", phase="Pending"),                         # its PodGroup is not in the snapshot
]


def test_placement_the_session_and_drift_are_indexes_of_one_model():
    model = read_model(_pairs(CLUSTER), "snap")
    snap = snapshot_from_model(model, "snap")
    session = cluster_of(model, DEFAULT_CONF)
    fabric, hypernodes = fabric_of(model)
    # the same nodes, with the same cordon, in all three
    assert list(snap.fabric.nodes) == list(session.nodes) == list(fabric.nodes) == ["open", "cordoned"]
    assert session.nodes["cordoned"].unschedulable and [n.unschedulable for n in model.nodes] == [False, True]
    assert [doc.where for doc, _ in hypernodes] == ["objects[0] (HyperNode rack-1)"]
    assert snap.fabric.nodes["open"].leaf == fabric.nodes["open"].leaf == "rack-1"
    # the pod bound to the cordoned node holds it in placement and is a running task there in the session
    assert snap.usage["cordoned"] == {"cpu": Decimal(2), "nvidia.com/gpu": Decimal(2), "pods": Decimal(1)}
    assert [(t.uid, t.status) for t in session.nodes["cordoned"].tasks] == [("ml/train-0", RUNNING)]
    # the Releasing pod: placement's futureIdle and the session's task status
    assert snap.releasing == {"open": {"cpu": Decimal(2), "nvidia.com/gpu": Decimal(2), "pods": Decimal(1)}}
    assert [(t.uid, t.status) for t in session.nodes["open"].tasks] == [("ml/train-1", RELEASING)]
    # the pending pod of a missing PodGroup: never scheduled, in both
    [lost] = [j for j in snap.jobs if j.name == "ml/lost"]
    assert lost.unscheduled and "ml/lost is not in the snapshot" in lost.unscheduled
    assert session.ignored == ["ml/lost-0: no PodGroup, so Volcano does not schedule it"]
    # the queue, read once by the model, converted by the session
    [queue] = model.queue_list
    assert (queue.name, queue.weight, queue.capability) == ("research", 3, {"nvidia.com/gpu": Decimal(12)})
    assert session.queues["research"].weight == 3 and session.jobs["ml/train"].queue == "research"
    # one PodObject per pod, shared: the session's tasks and placement's usage come from the same reading
    assert [p.uid for p in model.pods] == ["ml/train-0", "ml/train-1", "ml/lost-0"]
    assert model.group_of(model.pods[0]) is model.groups["ml/train"] and model.group_of(model.pods[2]) is None


def test_a_bound_pending_pod_is_bound_in_the_session_and_usage_in_placement():
    objects = CLUSTER[:5] + [_pod("train-0", "train", node="open", phase="Pending")]
    model = read_model(_pairs(objects), "snap")
    assert [t.status for t in cluster_of(model, DEFAULT_CONF).nodes["open"].tasks] == [BOUND]
    assert snapshot_from_model(model, "snap").usage["open"]["nvidia.com/gpu"] == 2


def test_the_topology_view_keeps_the_submission_inqueue_and_leaves_other_pending_groups_out():
    objects = CLUSTER + [_group("waiting", phase="Pending"), _pod("waiting-0", "waiting", phase="Pending")]
    model = read_model(_pairs(objects), "snap")
    submission = read_model(_pairs([_group("new", phase="Pending"), _pod("new-0", "new", phase="Pending")]), "job")
    view = model.plus(submission).topology_view(["ml/new"])
    assert {g.uid: g.phase for g in view.group_list} == {"ml/train": "Running", "ml/new": "Inqueue"}
    # the copy shares what was read: the PodGroup's spec is not read again
    assert view.groups["ml/new"].spec() is submission.groups["ml/new"].spec()
    assert [g.phase for g in submission.group_list] == ["Pending"]       # the submission itself is unchanged
    jobs = {j.name: j for j in snapshot_from_model(view, "snap").jobs}
    assert jobs["ml/new"].unscheduled is None and "not in the snapshot" in jobs["ml/waiting"].unscheduled


def _bad_requests(pod):
    pod["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "lots"
    return pod


@pytest.mark.parametrize("where", ["cluster", "submission"])
def test_a_mistake_in_either_model_names_its_own_file(where):
    pending = _pod("new-0", "new", phase="Pending")
    cluster = CLUSTER[:-1] + [_bad_requests(_pod("lost-0", "lost", phase="Pending")) if where == "cluster"
                              else CLUSTER[-1]]
    new = [_group("new", phase="Pending"), _bad_requests(pending) if where == "submission" else pending]
    with pytest.raises(InputError) as caught:
        whatif.what_if(_pairs(cluster), _pairs(new), ["ml/new"], DEFAULT_CONF, "snapshot snap", "job.yaml",
                       "snap.yaml")
    assert caught.value.file == ("snap.yaml" if where == "cluster" else "job.yaml")
    assert "(Pod " in caught.value.path and "cpu" in caught.value.path


class Counter:
    """Counts the calls to a reader, by the object it read."""

    def __init__(self, monkeypatch, module, name, key):
        self.calls: list = []
        real = getattr(module, name)

        def counted(*args, **kwargs):
            self.calls.append(key(*args))
            return real(*args, **kwargs)
        monkeypatch.setattr(module, name, counted)


def test_simulate_submit_reads_every_object_once(tmp_path, monkeypatch):
    cluster = topology_snapshot()
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(gang(24, 2)))
    new, groups = submit.submitted(path, "job.yaml", None, cluster)
    where = lambda doc, obj: doc.where                                      # noqa: E731
    counters = {
        "node": Counter(monkeypatch, objects_mod, "read_node", where),
        "pod": Counter(monkeypatch, model_mod, "read_pod", where),
        "group": Counter(monkeypatch, model_mod, "pod_group", where),
        "created": Counter(monkeypatch, model_mod, "created_at", where),
        "queue": Counter(monkeypatch, model_mod, "read_queue", where),
        "requests": Counter(monkeypatch, objects_mod, "pod_requests", lambda doc, *a, **k: doc.where),
    }
    result = whatif.what_if(_pairs(cluster), new, groups, yaml.safe_load(CONF), "snapshot snap", "job.yaml", "snap")
    assert result.outcome == "evicts"          # the session, the topology-aware allocate and the eviction all ran
    kinds = [o["kind"] for o in cluster] + [o["kind"] for _, o in new]
    expected = {"node": kinds.count("Node"), "pod": kinds.count("Pod"), "group": kinds.count("PodGroup"),
                "created": kinds.count("PodGroup"), "queue": kinds.count("Queue"), "requests": kinds.count("Pod")}
    assert {name: len(c.calls) for name, c in counters.items()} == expected
    for c in counters.values():
        assert len(set(c.calls)) == len(c.calls)      # no object read twice
