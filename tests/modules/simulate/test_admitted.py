"""`simulate` meets the API server first: what `--submit` and `--workloads` hand it goes through the
one admission chain the rules use (modules/simulate/admitted.py, modules/upstream/chain.py), so a job
the cluster would refuse is never answered without saying so, and `check` and `simulate` say the
same words and fix."""
from __future__ import annotations

import copy
import json
import re

import yaml

from modules.simulate import admitted
from modules.simulate.submit import submitted
from tests.support.cli import run

from .test_whatif import SUBMIT, node, queue, running

CLASSES = [{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name}, "value": value}
           for name, value in (("training-critical", 1000), ("training-default", 100))]


def _snapshot(tmp_path, *queues):
    objects = [*CLASSES, *queues, *[node(f"n{i}") for i in range(4)], *running("sweep", "batch", ["n0", "n1"])]
    path = tmp_path / "snap.yaml"
    path.write_text(yaml.safe_dump_all(objects))
    return str(path)


def _job(tmp_path, job, name="job.yaml"):
    path = tmp_path / name
    path.write_text(yaml.safe_dump(job))
    return str(path)


def _gpus_without_limits():
    job = copy.deepcopy(SUBMIT)
    del job["spec"]["tasks"][0]["template"]["spec"]["containers"][0]["resources"]["limits"]
    return job


def test_a_job_the_job_webhook_refuses_is_said_first_in_upstream_words_then_answered_as_admitted(tmp_path):
    snap = _snapshot(tmp_path, queue("production", 16), queue("batch", 16))
    job = _job(tmp_path, _gpus_without_limits())
    out = run("simulate", snap, "--submit", job, "--format", "json")
    assert out.code == 0, out.err
    report = json.loads(out.out)
    first = report["notes"][0]
    assert first.startswith(f"{job}: document 1: spec.tasks[0].template.spec.containers[0].resources.limits: the API "
                            "server refuses this object at create: ")
    assert "Limit must be set for non overcommitable resources" in first and "validatejob.volcano.sh" in first
    assert first.endswith("simulated as if it were admitted")
    with_limits = _job(tmp_path, SUBMIT, "fixed.yaml")    # the answer is the fixed job's
    fixed = json.loads(run("simulate", snap, "--submit", with_limits, "--format", "json").out)
    assert (report["outcome"], report["placed"]) == (fixed["outcome"], fixed["placed"])
    assert not any("refuses this object" in n for n in fixed["notes"])
    text = run("simulate", snap, "--submit", job).out
    assert "Limit must be set for non overcommitable resources" in text


def test_a_closed_queue_in_the_snapshot_refuses_the_job_and_a_queue_without_a_state_is_open(tmp_path):
    closed = queue("production", 16)
    closed["status"] = {"state": "Closed"}
    job = _job(tmp_path, SUBMIT)
    out = run("simulate", _snapshot(tmp_path, closed, queue("batch", 16)), "--submit", job, "--format", "json")
    assert out.code == 0, out.err
    assert "spec.queue: the API server refuses this object at create: can only submit job to queue with state " \
           "`Open`, queue `production` status is `Closed`" in json.loads(out.out)["notes"][0]
    stateless = queue("production", 16)
    del stateless["status"]            # the queue controller opens a queue: read as Open, as the session does
    out = run("simulate", _snapshot(tmp_path, stateless, queue("batch", 16)), "--submit", job, "--format", "json")
    report = json.loads(out.out)
    assert report["outcome"] == "fits" and not any("refuses this object" in n for n in report["notes"])


def test_queue_is_judged_as_submitted_and_a_missing_one_is_refused_where_the_snapshot_lists_queues(tmp_path):
    snap = _snapshot(tmp_path, queue("production", 16), queue("batch", 16))
    job = _job(tmp_path, SUBMIT)
    report = json.loads(run("simulate", snap, "--submit", job, "--queue", "nope", "--format", "json").out)
    assert 'unable to find job queue: queue.scheduling.volcano.sh "nope" not found' in report["notes"][0]
    assert report["outcome"] == "pending" and "queue nope does not exist" in report["reason"]
    report = json.loads(run("simulate", snap, "--submit", job, "--queue", "batch", "--format", "json").out)
    assert not any("refuses this object" in n for n in report["notes"])


def test_a_snapshot_without_priority_classes_does_not_refuse_for_what_it_does_not_list(tmp_path):
    # Without PriorityClasses the snapshot is not the whole cluster: a lookup that would refuse is skipped.
    objects = [queue("production", 16), *[node(f"n{i}") for i in range(2)]]
    path = tmp_path / "snap.yaml"
    path.write_text(yaml.safe_dump_all(objects))
    out = run("simulate", str(path), "--submit", _job(tmp_path, SUBMIT), "--queue", "nope", "--format", "json")
    assert out.code == 0, out.err
    report = json.loads(out.out)          # the session still says what Volcano does with it
    assert report["outcome"] == "pending" and "queue nope does not exist" in report["reason"]
    assert not any("refuses this object" in n for n in report["notes"])


def test_workloads_on_a_stack_are_judged_against_the_stack_and_check_says_the_same(tmp_path):
    job = copy.deepcopy(SUBMIT)
    job["metadata"]["namespace"] = "research"
    job["spec"]["queue"] = "nope"                   # prod renders its queues: a queue it lacks is missing
    path = _job(tmp_path, job, "jobs.yaml")
    simulated = run("simulate", "prod", "--workloads", path)
    checked = run("check", "prod", "--manifests", path)
    assert simulated.code == 0 and "Traceback" not in simulated.err
    words = re.search(r"warning: .*spec.queue: the API server refuses this object at create: (.*) "
                      r"\(validatejob", simulated.err).group(1)
    assert words == 'unable to find job queue: queue.scheduling.volcano.sh "nope" not found'
    assert f'"{words}"' in checked.out and "upstream-admission" in checked.out
    fix = "create the queue it names first, or name an existing one"     # one fix per code, for both
    assert f"fix: {fix}; simulated as if it were admitted" in simulated.err and f"fix: {fix}." in checked.out
    job["spec"]["queue"] = "research"
    fine = run("simulate", "prod", "--workloads", _job(tmp_path, job, "jobs.yaml"))
    assert fine.code == 0 and "refuses this object" not in fine.err


def test_a_shape_mistake_is_an_input_error_in_the_simulator_s_words(tmp_path):
    job = _gpus_without_limits()
    job["spec"]["tasks"][0]["replicas"] = "two"
    out = run("simulate", "prod", "--workloads", _job(tmp_path, job, "jobs.yaml"))
    assert out.code == 2
    assert "spec.tasks[0].replicas: expected" in out.err and "the API server refuses" not in out.err


def test_the_submission_is_read_as_the_mutating_webhooks_leave_it(tmp_path):
    job = copy.deepcopy(SUBMIT)
    del job["spec"]["tasks"][0]["name"]             # the job mutation names it default0
    del job["spec"]["queue"]                        # and puts the job in the default queue
    objects, groups = submitted(tmp_path / _job(tmp_path, job), "job.yaml", None)
    pods = [o for _, o in objects if o["kind"] == "Pod"]
    group = next(o for _, o in objects if o["kind"] == "PodGroup")
    assert [p["metadata"]["name"] for p in pods] == ["urgent-default0-0", "urgent-default0-1"]
    assert group["spec"]["queue"] == "default" and groups == ["production/urgent"]


def test_one_admission_per_object_mutated_once(tmp_path, monkeypatch):
    calls = []
    real = admitted.admit

    def counting(obj, *args, **kwargs):
        calls.append((obj["kind"], obj["metadata"]["name"]))
        return real(obj, *args, **kwargs)

    monkeypatch.setattr(admitted, "admit", counting)
    second = copy.deepcopy(SUBMIT)
    second["metadata"]["name"] = "second"
    path = tmp_path / "jobs.yaml"
    path.write_text(yaml.safe_dump_all([SUBMIT, second]))
    submitted(path, "jobs.yaml", None)
    # each job once, then the PodGroup its controller creates once
    assert calls == [("Job", "urgent"), ("PodGroup", "urgent"), ("Job", "second"), ("PodGroup", "second")]


def test_the_podgroup_a_controller_creates_meets_the_podgroup_webhook(tmp_path):
    # A PyTorchJob's own webhook never reads the queue; the operator's PodGroup does, and Volcano's
    # PodGroup webhook refuses it in a queue the snapshot lacks: said, as for a Volcano Job.
    pytorch = {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": "pt", "namespace": "ml"},
               "spec": {"runPolicy": {"schedulingPolicy": {"minAvailable": 1, "queue": "nope"}},
                        "pytorchReplicaSpecs": {"Master": {"replicas": 1, "template": {"spec": {"containers": [
                            {"name": "pytorch", "image": "trainer", "resources": {
                                "requests": {"nvidia.com/gpu": 8}, "limits": {"nvidia.com/gpu": 8}}}]}}}}}}
    snap = _snapshot(tmp_path, queue("production", 16), queue("batch", 16))
    report = json.loads(run("simulate", snap, "--submit", _job(tmp_path, pytorch), "--format", "json").out)
    assert report["notes"][0].endswith(
        'document 1: the PodGroup pt its controller creates: spec.queue: the API server refuses this object at '
        'create: unable to find queue: queue.scheduling.volcano.sh "nope" not found (validatepodgroup.volcano.sh, '
        'volcano-sh/volcano v1.15.1 pkg/webhooks/admission/podgroups/validate/validate_podgroup.go); '
        'fix: create the queue it names first, or name an existing one; simulated as if it were admitted')
    assert report["outcome"] == "pending" and "queue nope does not exist" in report["reason"]
