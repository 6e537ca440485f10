"""`simulate --submit`: every documented input read or refused (the scheduler conf in each of its
forms, the ConfigMap the scheduler mounts, the conf's configurations block, the chart's default
conf, the submitted pods' node constraints, PriorityClasses missing from a snapshot) and every
training kind submitted."""
from __future__ import annotations

import json

import pytest
import yaml

from modules.simulate.eviction import read_cluster
from modules.semantics.scheduler_conf import chart_default
from tests.modules.simulate.test_whatif import NEW_CONF, OLD_CONF, SUBMIT, node, queue, snapshot
from tests.support.cli import run

DEFAULT_CONF = chart_default().conf   # the chart's default conf at the pinned tag


def _cm(conf: str, name="volcano-scheduler-configmap", namespace="volcano-system", **annotations) -> dict:
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": namespace},
           "data": {"volcano-scheduler.conf": conf}}
    if annotations:
        obj["metadata"]["annotations"] = annotations
    return obj


def _without_conf(objects):
    return [o for o in objects if o["kind"] != "ConfigMap"]


def _write(tmp_path, name, docs):
    path = tmp_path / name
    path.write_text(yaml.safe_dump_all(docs) if isinstance(docs, list) else docs)
    return str(path)


def _report(*args):
    out = run("simulate", *args, "--format", "json")
    assert out.code == 0, out.err
    return json.loads(out.out)


def _answer(report):
    return report["outcome"], sorted(e["pod"] for e in report["evictions"]), report["placed"]


# --- the scheduler conf, in every documented form ------------------------------------------------

def test_the_configmap_the_raw_conf_a_list_and_the_chart_values_give_the_same_answer(tmp_path):
    snap = _write(tmp_path, "snap.yaml", _without_conf(snapshot(OLD_CONF)))
    job = _write(tmp_path, "job.yaml", yaml.safe_dump(SUBMIT))
    forms = {
        "raw": OLD_CONF,
        "configmap": yaml.safe_dump(_cm(OLD_CONF)),
        "list": yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [
            _cm(NEW_CONF, "volcano-scheduler-configmap-backup", "default"), _cm(OLD_CONF)]}),
        "values": yaml.safe_dump({"custom": {"scheduler_config_override": OLD_CONF}}),
    }
    answers = {}
    for form, text in forms.items():
        conf = _write(tmp_path, f"{form}.yaml", text)
        answers[form] = _answer(_report("--snapshot", snap, "--submit", job, "--scheduler-conf", conf))
    assert answers["raw"][0] == "evicts" and len(answers["raw"][1]) == 3
    assert all(a == answers["raw"] for a in answers.values()), answers


@pytest.mark.parametrize("conf, message", [
    ("tiers: [{plugins: [{name: gang}]}]\n", "actions: expected a comma-separated string of actions"),
    ('actions: ""\ntiers: [{plugins: [{name: gang}]}]\n', "actions: expected"),
    ('actions: "enqueue, allocate"\n', "tiers: expected tiers with plugins"),
    ('actions: "enqueue, allocate"\ntiers: []\n', "tiers: expected tiers with plugins"),
    (yaml.safe_dump({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "data": {"other": "x"}}),
     "the ConfigMap has no volcano-scheduler.conf key"),
    (yaml.safe_dump(_cm("actions: [enqueue]\n")), "actions: expected"),
])
def test_a_conf_that_runs_nothing_is_an_input_error_not_an_answer(tmp_path, conf, message):
    snap = _write(tmp_path, "snap.yaml", _without_conf(snapshot(OLD_CONF)))
    job = _write(tmp_path, "job.yaml", yaml.safe_dump(SUBMIT))
    given = _write(tmp_path, "conf.yaml", conf)
    for extra in (["--submit", job], []):        # the what-if and placement read it alike
        out = run("simulate", "--snapshot", snap, *extra, "--scheduler-conf", given)
        assert out.code == 2 and message in out.err and "Traceback" not in out.err, out.err
        assert len(out.err.strip().splitlines()) == 1


def test_a_snapshot_configmap_that_runs_nothing_is_an_input_error(tmp_path):
    objects = _without_conf(snapshot(OLD_CONF)) + [_cm("tiers: []\n")]
    snap = _write(tmp_path, "snap.yaml", objects)
    job = _write(tmp_path, "job.yaml", yaml.safe_dump(SUBMIT))
    out = run("simulate", "--snapshot", snap, "--submit", job)
    assert out.code == 2 and "ConfigMap volcano-system/volcano-scheduler-configmap" in out.err
    assert "actions: expected" in out.err


def test_the_scheduler_reads_its_release_configmap_not_a_stale_backup_elsewhere(tmp_path):
    # the backup (another namespace) comes first in the snapshot and would let nothing be evicted
    objects = [_cm(NEW_CONF, "volcano-scheduler-configmap-backup", "default")] + _without_conf(snapshot(OLD_CONF)) + [
        _cm(OLD_CONF, **{"meta.helm.sh/release-name": "volcano", "meta.helm.sh/release-namespace": "volcano-system"})]
    snap = _write(tmp_path, "snap.yaml", objects)
    job = _write(tmp_path, "job.yaml", yaml.safe_dump(SUBMIT))
    report = _report("--snapshot", snap, "--submit", job)
    assert report["outcome"] == "evicts" and report["conf"] == "ConfigMap volcano-system/volcano-scheduler-configmap"
    assert any("volcano-scheduler-configmap-backup" in n and "does not mount" in n for n in report["notes"])


def test_a_release_with_another_name_is_found_through_its_deployment(tmp_path):
    args = ["--scheduler-conf=/volcano.scheduler/volcano-scheduler.conf"]
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment",
                  "metadata": {"name": "vk-scheduler", "namespace": "vk"},
                  "spec": {"template": {"spec": {
                      "containers": [{"name": "s", "args": args}],
                      "volumes": [{"name": "scheduler-config", "configMap": {"name": "vk-scheduler-configmap"}}]}}}}
    objects = _without_conf(snapshot(OLD_CONF)) + [
        _cm(NEW_CONF, "volcano-scheduler-configmap", "volcano-system"), _cm(OLD_CONF, "vk-scheduler-configmap", "vk"),
        deployment]
    snap = _write(tmp_path, "snap.yaml", objects)
    job = _write(tmp_path, "job.yaml", yaml.safe_dump(SUBMIT))
    report = _report("--snapshot", snap, "--submit", job)
    assert report["conf"] == "ConfigMap vk/vk-scheduler-configmap" and report["outcome"] == "evicts"


def test_without_a_conf_the_chart_default_runs_and_its_overcommit_gate_refuses(tmp_path):
    big = json.loads(json.dumps(SUBMIT))
    big["spec"]["tasks"][0]["replicas"] = big["spec"]["minAvailable"] = 3    # 24 GPUs, beyond 1.2 x 80 - 80
    snap = _write(tmp_path, "snap.yaml", _without_conf(snapshot(OLD_CONF)))
    job = _write(tmp_path, "job.yaml", yaml.safe_dump(big))
    report = _report("--snapshot", snap, "--submit", job)
    assert report["conf"].startswith("the Volcano chart's default volcano-scheduler.conf (v1.15.1)")
    assert report["outcome"] == "enqueue-refused" and "overcommit" in report["reason"]
    gang = next(p for t in DEFAULT_CONF["tiers"] for p in t["plugins"] if p["name"] == "gang")
    assert gang["enablePreemptable"] is False


# --- the conf's configurations block -------------------------------------------------------------

@pytest.mark.parametrize("value, evicts", [(False, False), ("false", False), ("F", False), (True, True),
                                           ("maybe", True), (0, True)])
def test_allow_whole_bundle_is_read_as_volcano_reads_it(tmp_path, value, evicts):
    conf = OLD_CONF + yaml.safe_dump({"configurations": [
        {"name": "gangreclaim", "arguments": {"allowWholeBundle": value, "maxDomains": 4}}]})
    snap = _write(tmp_path, "snap.yaml", snapshot(conf))
    job = _write(tmp_path, "job.yaml", yaml.safe_dump(SUBMIT))
    report = _report("--snapshot", snap, "--submit", job)
    # batch-sweep runs exactly its minMember: its pods go only as a whole bundle
    assert (report["outcome"] == "evicts") is evicts, report


# --- what Volcano's predicates read of the submitted pods -----------------------------------------

def _with_template(**spec):
    job = json.loads(json.dumps(SUBMIT))
    job["spec"]["tasks"][0]["template"]["spec"].update(spec)
    return job


def _labelled(objects, labels=None, taints=None, nodes=("n7", "n8", "n9")):
    """Label or taint batch's nodes; research's queue is made not reclaimable, so batch's pods are
    the only candidates (gangreclaim would otherwise take research's whole job too)."""
    for obj in objects:
        if obj["kind"] == "Queue" and obj["metadata"]["name"] == "research":
            obj["spec"]["reclaimable"] = False
        if obj["kind"] == "Node" and obj["metadata"]["name"] in nodes:
            if labels:
                obj["metadata"]["labels"] = labels
            if taints:
                obj["spec"] = {"taints": taints}
    return objects


@pytest.mark.parametrize("spec, evicts", [
    ({}, True),
    ({"nodeSelector": {"pool": "a"}}, False),                  # batch's nodes are pool b
    ({"nodeSelector": {"pool": "b"}}, True),
    ({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "pool", "operator": "NotIn", "values": ["b"]}]}]}}}}, False),
    ({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["b"]}]}]}}}}, True),
])
def test_no_victims_on_nodes_the_submitted_job_may_not_use(tmp_path, spec, evicts):
    objects = _labelled(snapshot(OLD_CONF), labels={"pool": "b"})
    snap = _write(tmp_path, "snap.yaml", objects)
    job = _write(tmp_path, "job.yaml", yaml.safe_dump(_with_template(**spec)))
    report = _report("--snapshot", snap, "--submit", job)
    assert (report["outcome"] == "evicts") is evicts, report
    assert all(e["node"] in ("n7", "n8", "n9") for e in report["evictions"])


@pytest.mark.parametrize("tolerations, evicts", [
    (None, False),
    ([{"key": "dedicated", "operator": "Equal", "value": "batch", "effect": "NoSchedule"}], True),
    ([{"key": "dedicated", "operator": "Exists"}], True),
    ([{"key": "dedicated", "operator": "Equal", "value": "other"}], False),
])
def test_tainted_nodes_take_only_pods_that_tolerate_their_taints(tmp_path, tolerations, evicts):
    objects = _labelled(snapshot(OLD_CONF), taints=[{"key": "dedicated", "value": "batch", "effect": "NoSchedule"}])
    snap = _write(tmp_path, "snap.yaml", objects)
    job = _write(tmp_path, "job.yaml", yaml.safe_dump(_with_template(**({"tolerations": tolerations}
                                                                         if tolerations else {}))))
    assert (_report("--snapshot", snap, "--submit", job)["outcome"] == "evicts") is evicts


def test_a_small_job_is_not_placed_on_nodes_whose_taints_it_does_not_tolerate(tmp_path):
    small = _with_template()
    small["spec"]["tasks"][0]["template"]["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "2"}}
    objects = _labelled(snapshot(OLD_CONF), taints=[{"key": "gpu", "value": "only", "effect": "NoExecute"}],
                        nodes=[f"n{i}" for i in range(10)])
    objects += [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "m0"}, "spec": {"unschedulable": True},
                 "status": {"allocatable": {"cpu": "96", "memory": "1000Gi", "pods": "110"}}}]
    snap = _write(tmp_path, "snap.yaml", objects)
    job = _write(tmp_path, "job.yaml", yaml.safe_dump(small))
    assert _report("--snapshot", snap, "--submit", job)["outcome"] != "fits"
    small["spec"]["tasks"][0]["template"]["spec"]["tolerations"] = [{"key": "gpu", "operator": "Exists"}]
    job = _write(tmp_path, "job.yaml", yaml.safe_dump(small))
    report = _report("--snapshot", snap, "--submit", job)
    assert report["outcome"] == "fits" and "m0" not in report["placed"].values()


# --- PriorityClasses missing from a snapshot -------------------------------------------------------

def test_a_missing_priority_class_falls_back_to_the_pods_resolved_priority_with_a_note():
    objects = [queue("research", 8), node("n0"),
               {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
                "metadata": {"name": "j", "namespace": "research"},
                "spec": {"queue": "research", "minMember": 1, "priorityClassName": "training-critical"},
                "status": {"phase": "Running"}},
               {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "j-0", "namespace": "research",
                                                               "annotations": {"scheduling.k8s.io/group-name": "j"}},
                "spec": {"nodeName": "n0", "priority": 100000, "priorityClassName": "training-critical",
                         "containers": [{"name": "c"}]}, "status": {"phase": "Running"}}]
    cluster = read_cluster([(f"document {i}", o) for i, o in enumerate(objects)], "snap.yaml", DEFAULT_CONF)
    assert cluster.jobs["research/j"].priority == 100000
    assert any("PriorityClass training-critical" in n and "spec.priority, 100000" in n for n in cluster.ignored)


def test_without_priority_classes_the_snapshot_still_orders_victims_by_priority(tmp_path):
    conf = ('actions: "enqueue, allocate, gangpreempt"\ntiers:\n- plugins: [{name: priority}, {name: gang, '
            'enablePreemptable: false}, {name: conformance}]\n- plugins: [{name: predicates}, {name: capacity}]\n')
    objects = snapshot(conf)
    for obj in objects:
        if obj["kind"] == "Pod":
            obj["spec"]["priority"] = 1000
    objects = [o for o in objects if o["kind"] != "PriorityClass"]
    urgent = json.loads(json.dumps(SUBMIT))
    urgent["metadata"]["namespace"] = urgent["spec"]["queue"] = "research"
    snap = _write(tmp_path, "snap.yaml", objects)
    job = _write(tmp_path, "job.yaml", yaml.safe_dump(urgent))
    report = _report("--snapshot", snap, "--submit", job)
    # research-run's class is missing, its pods say 1000; the submission's class is missing too and
    # it has no pods yet: priority 0 cannot preempt 1000
    assert report["outcome"] != "evicts"
    assert any("spec.priority, 1000" in n for n in report["notes"])


# --- every training kind submitted -----------------------------------------------------------------

TRAINJOB = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
            "metadata": {"name": "llm-ft", "namespace": "research"},
            "spec": {"runtimeRef": {"name": "torch-h100-sxm-tier2-hard", "kind": "ClusterTrainingRuntime",
                                    "apiGroup": "trainer.kubeflow.org"}, "trainer": {"numNodes": 16}}}


def test_a_trainjob_on_a_prod_runtime_is_submitted_through_its_runtime(tmp_path):
    job = _write(tmp_path, "tj.yaml", yaml.safe_dump(TRAINJOB))
    out = run("simulate", "prod", "--submit", job, "--queue", "research")
    assert out.code == 0, out.err
    assert "what if research/llm-ft is submitted into queue research on stack prod" in out.out
    report = _report("prod", "--submit", job, "--queue", "research")
    assert report["outcome"] == "fits" and len(report["placed"]) == 16


def _runtime():
    from tests.support.stacks import shipped_bundle
    return next(r.obj for r in shipped_bundle("prod").resources if r.obj.get("kind") == "ClusterTrainingRuntime"
                and r.obj["metadata"]["name"] == "torch-h100-sxm-tier2-hard")


def test_a_trainjob_on_a_snapshot_needs_its_runtime_there_or_beside_it(tmp_path):
    trainjob = json.loads(json.dumps(TRAINJOB))
    trainjob["spec"]["trainer"]["numNodes"] = 2
    snap = _write(tmp_path, "snap.yaml", snapshot(NEW_CONF))
    job = _write(tmp_path, "tj.yaml", yaml.safe_dump(trainjob))
    out = run("simulate", "--snapshot", snap, "--submit", job, "--queue", "production")
    assert out.code == 2 and "Traceback" not in out.err and len(out.err.strip().splitlines()) == 1
    assert "ClusterTrainingRuntime 'torch-h100-sxm-tier2-hard' is not in the snapshot" in out.err
    runtime = _runtime()
    with_runtime = _write(tmp_path, "snap2.yaml", snapshot(NEW_CONF) + [runtime])
    report = _report("--snapshot", with_runtime, "--submit", job, "--queue", "production")
    assert report["job"] == "research/llm-ft" and report["outcome"] in ("evicts", "pending", "enqueue-refused")
    beside = _write(tmp_path, "tj-and-runtime.yaml", [trainjob, runtime])
    assert _report("--snapshot", snap, "--submit", beside, "--queue", "production")["job"] == "research/llm-ft"


def test_the_submitted_podgroup_carries_the_kind_s_gang_queue_and_topology(tmp_path):
    from modules.simulate.submit import submitted
    pytorch = {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": "pt", "namespace": "ml"},
               "spec": {"runPolicy": {"schedulingPolicy": {"minAvailable": 3, "queue": "batch",
                                                           "priorityClass": "training-default"}},
                        "pytorchReplicaSpecs": {
                            "Master": {"replicas": 1, "template": {"spec": {"containers": [
                                {"name": "pytorch", "image": "trainer", "resources": {
                                    "requests": {"nvidia.com/gpu": 8}, "limits": {"nvidia.com/gpu": 8}}}]}}},
                            "Worker": {"replicas": 3, "template": {"spec": {
                                "nodeSelector": {"pool": "b"}, "containers": [
                                    {"name": "pytorch", "image": "trainer", "resources": {
                                        "requests": {"nvidia.com/gpu": 8}, "limits": {"nvidia.com/gpu": 8}}}]}}}}}}
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment",
                  "metadata": {"name": "serve", "namespace": "ml",
                               "annotations": {"scheduling.volcano.sh/group-min-member": "2"}},
                  "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "serve"}},
                           "template": {"metadata": {"labels": {"app": "serve"}, "annotations": {
                      "volcano.sh/network-topology-mode": "hard", "volcano.sh/network-topology-highest-tier": "1"}},
                      "spec": {"tolerations": [{"key": "gpu", "operator": "Exists"}], "containers": [
                          {"name": "c", "image": "server", "resources": {"requests": {"nvidia.com/gpu": 8},
                                                                         "limits": {"nvidia.com/gpu": 8}}}]}}}}
    path = tmp_path / "jobs.yaml"
    path.write_text(yaml.safe_dump_all([pytorch, deployment]))
    objects, groups = submitted(path, str(path), None)
    assert groups == ["ml/pt", "ml/serve"]
    pg = {o["metadata"]["name"]: o for _, o in objects if o["kind"] == "PodGroup"}
    assert pg["pt"]["spec"]["minMember"] == 3 and pg["pt"]["spec"]["queue"] == "batch"
    assert pg["pt"]["spec"]["priorityClassName"] == "training-default"
    assert pg["serve"]["spec"]["networkTopology"] == {"mode": "hard", "highestTierAllowed": 1}
    pods = {o["metadata"]["name"]: o["spec"] for _, o in objects if o["kind"] == "Pod"}
    assert pods["pt-worker-0"]["nodeSelector"] == {"pool": "b"} and "nodeSelector" not in pods["pt-master-0"]
    assert pods["serve-1"]["tolerations"] == [{"key": "gpu", "operator": "Exists"}]


def test_a_volcano_job_s_podgroup_carries_min_task_member_as_its_controller_writes_it(tmp_path):
    from modules.simulate.submit import submitted
    job = json.loads(json.dumps(SUBMIT))
    job["spec"]["tasks"].append({"name": "ps", "replicas": 2, "minAvailable": 1, "template": job["spec"]["tasks"][0][
        "template"]})
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(job))
    objects, _ = submitted(path, str(path), None)
    group = next(o for _, o in objects if o["kind"] == "PodGroup")
    assert group["spec"]["minTaskMember"] == {"worker": 2, "ps": 1}
    pods = [o for _, o in objects if o["kind"] == "Pod"]
    assert {p["metadata"]["annotations"]["volcano.sh/task-spec"] for p in pods} == {"worker", "ps"}


def test_running_stack_workloads_take_their_queue_from_the_semantic_reading():
    from modules.simulate.whatif import _queue_and_priority
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "serve", "namespace": "ml"},
                  "spec": {"replicas": 1, "template": {"metadata": {"annotations": {
                      "scheduling.volcano.sh/queue-name": "team-b"}}, "spec": {"containers": [{"name": "c"}]}}}}
    pytorch = {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": "pt"},
               "spec": {"runPolicy": {"schedulingPolicy": {"queue": "batch", "priorityClass": "low"}},
                        "pytorchReplicaSpecs": {"Master": {"replicas": 1, "template": {"spec": {
                            "containers": [{"name": "c"}]}}}}}}
    # Volcano's PodGroup controller reads the pod's annotation, so the template's, not the Deployment's
    assert _queue_and_priority(deployment, []) == ("team-b", None)
    deployment["metadata"]["annotations"] = {"scheduling.volcano.sh/queue-name": "owner"}
    del deployment["spec"]["template"]["metadata"]
    assert _queue_and_priority(deployment, []) == ("default", None)
    assert _queue_and_priority(pytorch, []) == ("batch", "low")
