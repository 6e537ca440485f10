"""What `simulate --submit` and `--workloads` do with objects the admission chain cannot judge or that
the chain's entry changes (modules/simulate/admitted.py): an odd shape exits 2 in the simulator's words,
never an internal error; `--queue` reaches a PodGroup without a spec as it did before admission."""
from __future__ import annotations

import copy
import json

import yaml

from modules.simulate.submit import submitted
from tests.support.cli import run

from .test_admitted import _snapshot
from .test_whatif import SUBMIT, node, queue

ODD_QUEUES = [
    {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": ["x"]},
     "spec": {"weight": 1}},
    {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
     "metadata": {"name": "q", "annotations": {"volcano.sh/hierarchy": 5, "volcano.sh/hierarchy-weights": "1/1"}},
     "spec": {"weight": 1}},
]


def _write(tmp_path, name, docs):
    path = tmp_path / name
    path.write_text(yaml.safe_dump_all(docs))
    return str(path)


def test_an_odd_queue_in_the_submission_is_an_input_error_not_an_internal_one(tmp_path):
    snap = _snapshot(tmp_path, queue("production", 16), queue("batch", 16))
    for odd in ODD_QUEUES:
        out = run("simulate", snap, "--submit", _write(tmp_path, "odd.yaml", [odd]))
        assert out.code == 2, out.err
        assert "internal error" not in out.err and "got 'Queue'" in out.err


def test_an_odd_queue_beside_workloads_is_skipped_as_any_other_kind_and_the_job_simulated(tmp_path):
    for odd in ODD_QUEUES:
        out = run("simulate", "prod", "--workloads", _write(tmp_path, "jobs.yaml", [odd, SUBMIT]))
        assert out.code == 0, out.err
        assert "skipped scheduling.volcano.sh/v1beta1 Queue" in out.err


def test_queue_override_reaches_a_podgroup_without_a_spec(tmp_path):
    group = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
             "metadata": {"name": "g", "namespace": "production"}}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "g-0", "namespace": "production",
                                                          "annotations": {"scheduling.k8s.io/group-name": "g"}},
           "spec": {"schedulerName": "volcano", "containers": [{"name": "c", "image": "i", "resources": {
               "requests": {"cpu": "1"}}}]}}
    path = tmp_path / "pg.yaml"
    path.write_text(yaml.safe_dump_all([group, pod]))
    objects, groups = submitted(path, str(path), "batch")
    made = next(o for _, o in objects if o["kind"] == "PodGroup")
    assert made["spec"]["queue"] == "batch" and groups == ["production/g"]
    snap = _snapshot(tmp_path, queue("production", 16), queue("batch", 16))
    out = run("simulate", snap, "--submit", str(path), "--queue", "batch", "--format", "json")
    assert out.code == 0, out.err
    assert json.loads(out.out)["queue"] == "batch"


def test_a_runtime_priority_class_of_another_type_is_judged_not_a_crash(tmp_path):
    runtime = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "ClusterTrainingRuntime",
               "metadata": {"name": "rt"},
               "spec": {"mlPolicy": {"numNodes": 1, "torch": {}}, "podGroupPolicy": {"volcano": {}},
                        "template": {"spec": {"replicatedJobs": [{"name": "node", "replicas": 1, "template": {
                            "metadata": {"labels": {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}},
                            "spec": {"template": {"spec": {"priorityClassName": ["x"], "containers": [
                                {"name": "node", "image": "x", "resources": {
                                    "requests": {"nvidia.com/gpu": 8}, "limits": {"nvidia.com/gpu": 8}}}]}}}}}]}}}}
    trainjob = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
                "metadata": {"name": "ddp", "namespace": "production"},
                "spec": {"runtimeRef": {"name": "rt", "apiGroup": "trainer.kubeflow.org",
                                        "kind": "ClusterTrainingRuntime"}, "trainer": {"numNodes": 1}}}
    snap = _snapshot(tmp_path, queue("production", 16), queue("batch", 16))
    for known in (True, False):     # judged against the snapshot's PriorityClasses, or not judged at all
        path = snap if known else _write(tmp_path, "bare.yaml", [
            o for o in yaml.safe_load_all(open(snap)) if o["kind"] != "PriorityClass"])
        out = run("simulate", path, "--submit", _write(tmp_path, "tj.yaml", [copy.deepcopy(trainjob), runtime]),
                  "--queue", "production")
        assert out.code in (0, 2) and "internal error" not in out.err, out.err


def test_a_job_the_checks_cannot_judge_is_never_simulated_unjudged(tmp_path, monkeypatch):
    from modules.simulate import admitted

    def cannot(obj, *args, **kwargs):
        raise TypeError("unhashable type: 'list'")

    monkeypatch.setattr(admitted, "admit", cannot)
    snap = _snapshot(tmp_path, queue("production", 16), queue("batch", 16))
    job = _write(tmp_path, "job.yaml", [SUBMIT])
    for args in ((snap, "--submit", job), ("prod", "--workloads", job)):
        out = run("simulate", *args)
        assert out.code == 2 and out.out == "", out.err
        assert "document 1" in out.err and "cannot judge this object (TypeError: unhashable type: 'list'); " \
               "nothing was simulated" in out.err


def test_a_snapshot_that_lists_its_queues_has_no_default_queue_it_does_not_list(tmp_path):
    # The session finds no queue `default` in such a snapshot ("Volcano ignores the job"); admission
    # sees the same cluster, so `--queue default` is refused as `--queue nope` is.
    snap = _snapshot(tmp_path, queue("production", 16), queue("batch", 16))
    job = _write(tmp_path, "job.yaml", [SUBMIT])
    codes = set()
    for name in ("nope", "default"):
        out = run("simulate", snap, "--submit", job, "--queue", name)
        codes.add(out.code)
        assert f'unable to find job queue: queue.scheduling.volcano.sh "{name}" not found' in out.err + out.out
    assert len(codes) == 1 and "Traceback" not in out.err
    listed = _snapshot(tmp_path, queue("production", 16), queue("batch", 16), queue("default", 16))
    out = run("simulate", listed, "--submit", job, "--queue", "default", "--format", "json")
    assert out.code == 0, out.err
    assert "unable to find job queue" not in out.err + out.out


def test_a_priority_class_beside_the_workloads_does_not_make_the_snapshot_s_lists_complete(tmp_path):
    # The snapshot lists no PriorityClasses, so which exist is unknown: the runtime's class is not
    # judged missing, whether or not the workloads file brings a PriorityClass of its own.
    runtime = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "ClusterTrainingRuntime",
               "metadata": {"name": "rt"},
               "spec": {"mlPolicy": {"numNodes": 1, "torch": {}}, "podGroupPolicy": {"volcano": {}},
                        "template": {"spec": {"replicatedJobs": [{"name": "node", "replicas": 1, "template": {
                            "metadata": {"labels": {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}},
                            "spec": {"template": {"spec": {"priorityClassName": "training-default", "containers": [
                                {"name": "node", "image": "x", "resources": {
                                    "requests": {"nvidia.com/gpu": 8}, "limits": {"nvidia.com/gpu": 8}}}]}}}}}]}}}}
    snap = _write(tmp_path, "snap.yaml", [queue("production", 16), runtime, node("n0"), node("n1")])
    trainjob = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
                "metadata": {"name": "ddp", "namespace": "production"},
                "spec": {"runtimeRef": {"name": "rt", "apiGroup": "trainer.kubeflow.org",
                                        "kind": "ClusterTrainingRuntime"}, "trainer": {"numNodes": 1}}}
    extra = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "urgent"},
             "value": 5000}
    for docs in ([trainjob], [extra, trainjob]):
        out = run("simulate", snap, "--workloads", _write(tmp_path, "jobs.yaml", docs), "--format", "json")
        assert out.code == 0, out.err
        assert "doesn't exist" not in out.err
