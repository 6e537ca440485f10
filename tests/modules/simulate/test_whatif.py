"""`trainstack simulate ... --submit JOB`: which running pods Volcano evicts for a submitted job,
from which queues, and the tier walk that chose them (modules/simulate/whatif.py)."""
from __future__ import annotations

import json

import pytest
import yaml

from modules.simulate import eviction
from tests.support.cli import run

NEW_CONF = """actions: "enqueue, allocate, gangpreempt, gangreclaim, backfill"
tiers:
- plugins: [{name: priority}, {name: gang, enablePreemptable: false}, {name: conformance}, {name: overcommit},
            {name: capacity}]
- plugins: [{name: drf, enablePreemptable: false}, {name: predicates}, {name: nodeorder}, {name: binpack}]
"""
# prod's conf before the fix: capacity in tier 2, where the eviction walk never reaches it
OLD_CONF = """actions: "enqueue, allocate, gangpreempt, gangreclaim, backfill"
tiers:
- plugins: [{name: priority}, {name: gang, enablePreemptable: false}, {name: conformance}]
- plugins: [{name: overcommit}, {name: drf, enablePreemptable: false}, {name: predicates}, {name: capacity},
            {name: nodeorder}, {name: binpack}]
"""


def node(name):
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
            "status": {"allocatable": {"cpu": "96", "memory": "1000Gi", "nvidia.com/gpu": "8", "pods": "110"}}}


def queue(name, deserved, **spec):
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": name},
            "spec": {"weight": 1, "deserved": {"nvidia.com/gpu": deserved}, **spec}, "status": {"state": "Open"}}


def running(job, queue_name, nodes, priority="training-default", min_member=None):
    ns = queue_name
    out = [{"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
            "metadata": {"name": job, "namespace": ns},
            "spec": {"queue": queue_name, "minMember": min_member or len(nodes), "priorityClassName": priority},
            "status": {"phase": "Running"}}]
    for i, n in enumerate(nodes):
        out.append({"apiVersion": "v1", "kind": "Pod", "metadata": {
            "name": f"{job}-{i}", "namespace": ns, "annotations": {"scheduling.k8s.io/group-name": job}},
            "spec": {"nodeName": n, "priorityClassName": priority, "containers": [{"name": "main", "resources": {
                "requests": {"cpu": "90", "memory": "900Gi", "nvidia.com/gpu": "8"}}}]},
            "status": {"phase": "Running"}})
    return out


def snapshot(conf: str) -> list[dict]:
    """Ten 8-GPU nodes, full: research runs 56 GPUs at its deserved 56, batch 24 GPUs, 4 above its
    20. overcommit (factor 1.2) leaves 16 GPUs of slack for enqueue."""
    return [
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "training-default"},
         "value": 1000},
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "training-critical"},
         "value": 100000},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "volcano-scheduler-configmap",
                                                               "namespace": "volcano-system"},
         "data": {"volcano-scheduler.conf": conf}},
        queue("production", 16, reclaimable=False), queue("research", 56), queue("batch", 20),
        *[node(f"n{i}") for i in range(10)],
        *running("research-run", "research", [f"n{i}" for i in range(7)]),
        *running("batch-sweep", "batch", ["n7", "n8", "n9"]),
    ]


SUBMIT = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
          "metadata": {"name": "urgent", "namespace": "production"},
          "spec": {"minAvailable": 2, "queue": "production", "priorityClassName": "training-critical",
                   "tasks": [{"name": "worker", "replicas": 2, "template": {"spec": {"containers": [
                       {"name": "main", "image": "trainer", "resources": {
                           "requests": {"cpu": "90", "memory": "900Gi", "nvidia.com/gpu": "8"},
                           "limits": {"nvidia.com/gpu": "8"}}}]}}}]}}


@pytest.fixture()
def files(tmp_path):
    def write(conf: str, submit: dict = SUBMIT):
        snap = tmp_path / "snap.yaml"
        snap.write_text(yaml.safe_dump_all(snapshot(conf)))
        job = tmp_path / "job.yaml"
        job.write_text(yaml.safe_dump(submit))
        return str(snap), str(job)
    return write


def test_capacity_in_tier_1_keeps_research_at_its_deserved(files):
    snap, job = files(NEW_CONF)
    out = run("simulate", "--snapshot", snap, "--submit", job, "--format", "json")
    assert out.code == 0, out.err
    report = json.loads(out.out)
    # only batch is above its share, by one pod's worth: 8 GPUs do not make room for 16, nothing is evicted
    assert report["outcome"] == "pending" and report["evictions"] == []
    assert "find no victims the tier walk allows" in report["reason"]


def test_the_old_prod_conf_evicts_batch_far_below_its_deserved(files):
    snap, job = files(OLD_CONF)
    out = run("simulate", "--snapshot", snap, "--submit", job, "--format", "json")
    assert out.code == 0, out.err
    report = json.loads(out.out)
    assert report["outcome"] == "evicts"
    # batch ran 4 GPUs above its deserved 20; the whole job goes (24 GPUs), leaving it at 0
    assert sorted(e["pod"] for e in report["evictions"]) == [f"batch/batch-sweep-{i}" for i in range(3)]
    assert "against deserved nvidia.com/gpu 20" in report["evictions"][0]["why"]
    for e in report["evictions"]:
        assert e["action"] == "gangreclaim" and e["tier"] == 1
        assert e["plugins"] == ["priority", "gang", "conformance"]   # capacity never asked
        assert e["preemptor"].startswith("production/urgent-")
    assert len(report["placed"]) == 2


def test_text_report_names_queue_tier_and_plugin(files):
    snap, job = files(OLD_CONF)
    out = run("simulate", "--snapshot", snap, "--submit", job)
    assert out.code == 0, out.err
    assert "what if production/urgent is submitted into queue production" in out.out
    assert "chosen by tier 1 (priority, gang, conformance) of UnifiedEvictable" in out.out
    assert "batch/batch-sweep (queue batch): 3 pod(s) on 3 node(s)" in out.out


def test_a_job_that_fits_evicts_nothing_and_queue_can_be_overridden(files, tmp_path):
    small = json.loads(json.dumps(SUBMIT))
    small["spec"]["tasks"][0]["template"]["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "2"}}
    snap, job = files(NEW_CONF, small)
    out = run("simulate", "--snapshot", snap, "--submit", job, "--queue", "batch", "--format", "json")
    report = json.loads(out.out)
    assert report["queue"] == "batch" and report["outcome"] == "fits" and report["evictions"] == []


def test_enqueue_gate_refuses_a_job_beyond_the_overcommit_slack(files):
    big = json.loads(json.dumps(SUBMIT))
    big["spec"]["tasks"][0]["replicas"] = big["spec"]["minAvailable"] = 4
    snap, job = files(NEW_CONF, big)
    report = json.loads(run("simulate", "--snapshot", snap, "--submit", job, "--format", "json").out)
    assert report["outcome"] == "enqueue-refused" and "overcommit" in report["reason"] and not report["evictions"]


def test_stack_what_if_runs_the_rendered_conf(tmp_path):
    running_file = tmp_path / "running.yaml"
    running_file.write_text(yaml.safe_dump({**SUBMIT, "metadata": {"name": "research-run", "namespace": "research"},
                                            "spec": {**SUBMIT["spec"], "queue": "research", "minAvailable": 4,
                                                     "priorityClassName": "training-default",
                                                     "tasks": [{**SUBMIT["spec"]["tasks"][0], "replicas": 4}]}}))
    job = tmp_path / "job.yaml"
    tolerating = json.loads(json.dumps(SUBMIT))       # prod's GPU pools are tainted nvidia.com/gpu=present
    tolerating["spec"]["tasks"][0]["template"]["spec"]["tolerations"] = [
        {"key": "nvidia.com/gpu", "operator": "Exists"}]
    job.write_text(yaml.safe_dump(tolerating))
    out = run("simulate", "prod", "--workloads", str(running_file), "--submit", str(job), "--format", "json")
    assert out.code == 0, out.err
    report = json.loads(out.out)
    assert report["cluster"] == "stack prod" and report["outcome"] == "fits"
    assert "gangreclaim" in report["actions"]
    job.write_text(yaml.safe_dump(SUBMIT))            # without the toleration no node takes it
    report = json.loads(run("simulate", "prod", "--submit", str(job), "--format", "json").out)
    assert report["outcome"] == "pending" and "the 0 of 1024 node(s) its pods may use" in report["lacks"]


@pytest.mark.parametrize("doc, message", [
    ({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "x"}},
     "expected a Volcano Job, a TrainJob, a PyTorchJob"),
    ({"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "x"}, "spec": {"tasks": "no"}},
     "tasks"),
])
def test_bad_submissions_are_one_line_errors(files, tmp_path, doc, message):
    snap, _ = files(NEW_CONF)
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(doc))
    out = run("simulate", "--snapshot", snap, "--submit", str(bad))
    assert out.code == 2 and message in out.err and "Traceback" not in out.err
    assert len(out.err.strip().splitlines()) == 1


# --- the session reads a snapshot's jobs as Volcano's cache does ---------------------------------

def _group(name, created=None, priority=None, queue_name="research"):
    obj = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
           "metadata": {"name": name, "namespace": "research"},
           "spec": {"queue": queue_name, "minMember": 1}, "status": {"phase": "Inqueue"}}
    if created:
        obj["metadata"]["creationTimestamp"] = created
    if priority:
        obj["spec"]["priorityClassName"] = priority
    return obj


def test_job_priority_falls_back_to_the_global_default_class_and_order_to_creation_time():
    from modules.simulate.eviction import Session, read_cluster
    from modules.semantics.scheduler_conf import chart_default

    objects = [{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "normal"},
                "value": 500, "globalDefault": True},
               {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "low"},
                "value": 10},
               queue("research", 8), node("n0"),
               # UIDs in the opposite order of creation: the older job still goes first
               _group("a-newer", "2026-03-01T00:00:00Z"), _group("b-older", "2026-01-01T00:00:00Z"),
               _group("c-unknown-class", "2026-02-01T00:00:00Z", priority="gone"),
               _group("d-low", "2025-01-01T00:00:00Z", priority="low")]
    cluster = read_cluster([(f"document {i}", o) for i, o in enumerate(objects)], "snap.yaml", chart_default().conf)
    assert {k: j.priority for k, j in cluster.jobs.items()} == {
        "research/a-newer": 500, "research/b-older": 500, "research/c-unknown-class": 500, "research/d-low": 10}
    ssn = Session(cluster)
    order = [j.uid for j in sorted(ssn.jobs.values(), key=ssn.job_key())]
    assert order == ["research/b-older", "research/c-unknown-class", "research/a-newer", "research/d-low"]


def test_a_submission_without_a_creation_time_is_the_newest_job(files, tmp_path, monkeypatch):
    from modules.simulate import submit, whatif

    _, job = files(NEW_CONF)
    objects = [(f"document {i}", o) for i, o in enumerate(snapshot(NEW_CONF))]
    objects[-1][1]["metadata"]["creationTimestamp"] = "2026-05-01T00:00:00Z"
    new, groups = submit.submitted(tmp_path / "job.yaml", job, None)
    read = []
    monkeypatch.setattr(whatif, "cluster_of", lambda *a: read.append(eviction.cluster_of(*a)) or read[-1])
    whatif.what_if(objects, new, groups, yaml.safe_load(NEW_CONF), "snapshot", job)
    jobs = read[-1].jobs
    assert jobs["production/urgent"].created > max(j.created for k, j in jobs.items() if k != "production/urgent")


def test_bad_numbers_in_a_snapshot_folder_name_the_file(tmp_path, files):
    _, job = files(NEW_CONF)
    folder = tmp_path / "snap"
    folder.mkdir()
    objects = snapshot(NEW_CONF)
    objects[3]["spec"]["weight"] = "heavy"          # Queue production
    folder.joinpath("cluster.yaml").write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": objects}))
    out = run("simulate", "--snapshot", str(folder), "--submit", job)
    assert out.code == 2 and "Traceback" not in out.err and len(out.err.strip().splitlines()) == 1
    assert "cluster.yaml: document 1: items[3]" in out.err and "spec.weight: expected an integer >= 1" in out.err


def test_a_mistake_in_the_submission_names_the_submission(files, tmp_path):
    snap, _ = files(NEW_CONF)
    group = _group("urgent")
    group["spec"]["minTaskMember"] = {"worker": "two"}
    bad = tmp_path / "group.yaml"
    bad.write_text(yaml.safe_dump(group))
    out = run("simulate", "--snapshot", snap, "--submit", str(bad))
    assert out.code == 2 and "Traceback" not in out.err
    assert out.err.startswith(f"error: {bad}: ") and "spec.minTaskMember.worker" in out.err


def test_enqueue_refusal_names_the_gate_that_refused_with_its_figures(files, tmp_path):
    _, job = files(NEW_CONF)
    objects = snapshot(NEW_CONF)
    objects[3]["spec"]["capability"] = {"nvidia.com/gpu": 8}      # production may hold one node's GPUs
    snap = tmp_path / "capped.yaml"
    snap.write_text(yaml.safe_dump_all(objects))
    report = json.loads(run("simulate", "--snapshot", str(snap), "--submit", job, "--format", "json").out)
    assert report["outcome"] == "enqueue-refused"
    # overcommit's slack (16 GPUs) admits the 16 GPUs; the queue's capability does not
    assert "do not pass capacity: queue production may hold" in report["reason"]
    assert "nvidia.com/gpu 8;" in report["reason"] and "overcommit" not in report["reason"]
    big = json.loads(json.dumps(SUBMIT))
    big["spec"]["tasks"][0]["replicas"] = big["spec"]["minAvailable"] = 4
    snap, job = files(NEW_CONF, big)
    reason = json.loads(run("simulate", "--snapshot", snap, "--submit", job, "--format", "json").out)["reason"]
    assert "do not pass overcommit: the cluster's allocatable times 1.2, less what pods use, leaves" in reason
    assert "ephemeral" not in reason and "capacity" not in reason


def test_a_snapshot_without_queues_is_bad_input(files, tmp_path):
    _, job = files(NEW_CONF)
    snap = tmp_path / "no-queues.yaml"
    snap.write_text(yaml.safe_dump_all([o for o in snapshot(NEW_CONF) if o["kind"] != "Queue"]))
    out = run("simulate", "--snapshot", str(snap), "--submit", job)
    assert out.code == 2 and "Traceback" not in out.err and len(out.err.strip().splitlines()) == 1
    assert f"{snap}: no Queue in the snapshot" in out.err
