"""controller-podgroups-admitted: the PodGroup a job's controller creates meets Volcano's PodGroup
webhook in `check`, as it does in `simulate --submit` (one model, modules/semantics/controllers.py):
a job admitted into a queue the cluster lacks is said before it sits forever without a PodGroup."""
from __future__ import annotations

import copy
import json

import yaml

from modules.semantics.controllers import controller_podgroup, podgroup_creator
from modules.semantics.workloads import workload_of
from modules.simulate.submit import workload_objects
from policies.framework import CheckContext
from policies.rules import BY_ID
from policies.rules.controller_podgroups import RULE_ID
from tests.support.cli import run

RULE = BY_ID[RULE_ID]
MISSING = 'unable to find queue: queue.scheduling.volcano.sh "nope" not found'
FIX = "fix: create the queue it names first, or name an existing one."
CONTAINER = {"name": "pytorch", "image": "trainer:v1", "resources": {
    "requests": {"cpu": "1", "memory": "1Gi", "nvidia.com/gpu": 8},
    "limits": {"cpu": "1", "memory": "1Gi", "nvidia.com/gpu": 8}}}
PYTORCH = {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": "pt", "namespace": "research"},
           "spec": {"runPolicy": {"schedulingPolicy": {"minAvailable": 1, "queue": "nope"}},
                    "pytorchReplicaSpecs": {"Master": {"replicas": 1, "template": {"spec": {
                        "schedulerName": "volcano", "containers": [CONTAINER]}}}}}}
DEPLOYMENT = {"apiVersion": "apps/v1", "kind": "Deployment",
              "metadata": {"name": "servers", "namespace": "research",
                           "annotations": {"scheduling.volcano.sh/group-min-member": "2"}},
              "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "servers"}},
                       "template": {"metadata": {"labels": {"app": "servers"},
                                                 "annotations": {"scheduling.volcano.sh/queue-name": "nope"}},
                                    "spec": {"schedulerName": "volcano",
                                             "containers": [{**CONTAINER, "name": "main"}]}}}}
TRAINJOB = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
            "metadata": {"name": "canary", "namespace": "research"},
            "spec": {"runtimeRef": {"name": "torch-h100-sxm-tier1-hard", "apiGroup": "trainer.kubeflow.org",
                                    "kind": "ClusterTrainingRuntime"},
                     "trainer": {"numNodes": 1}}}


def _check(tmp_path, *objects: dict, stack: str | None = "prod") -> tuple[int, list[dict]]:
    path = tmp_path / "jobs.yaml"
    path.write_text(yaml.safe_dump_all(list(objects), sort_keys=False))
    result = run("check", *([stack] if stack else []), "--manifests", str(path), "--format", "json")
    assert result.code in (0, 1) and "Traceback" not in result.err, result.err
    report = json.loads(result.out)
    violations = [v for s in report["stacks"].values() for v in s["violations"]] if "stacks" in report \
        else report["violations"]
    return result.code, [v for v in violations if v["rule"] == RULE_ID]


def test_a_pytorchjob_into_a_queue_the_stack_lacks_is_said_with_the_webhook_s_words_and_fix(tmp_path):
    code, found = _check(tmp_path, PYTORCH)
    assert code == 1 and len(found) == 1
    finding = found[0]
    assert finding["level"] == "mandatory" and finding["severity"] == "high"
    assert finding["path"] == "spec.runPolicy.schedulingPolicy.queue" and finding["line"] is not None
    assert finding["message"].startswith(
        "kubeflow.org/v1/PyTorchJob/research/pt at spec.runPolicy.schedulingPolicy.queue: the PodGroup pt its "
        "controller creates (the Training Operator) is refused by Volcano's PodGroup webhook: "
        f'"{MISSING}" (volcano-sh/volcano v1.15.1 pkg/webhooks/admission/podgroups/validate/validate_podgroup.go)')
    assert "nothing of the job runs" in finding["message"] and finding["message"].endswith(FIX)


def test_a_pytorchjob_into_a_queue_the_stack_renders_is_admitted(tmp_path):
    job = copy.deepcopy(PYTORCH)
    job["spec"]["runPolicy"]["schedulingPolicy"]["queue"] = "research"
    assert _check(tmp_path, job)[1] == []
    del job["spec"]["runPolicy"]["schedulingPolicy"]["queue"]      # Volcano's default queue, always there
    assert _check(tmp_path, job)[1] == []


def test_a_pod_grouped_deployment_names_its_queue_on_the_pod_template(tmp_path):
    code, found = _check(tmp_path, DEPLOYMENT)
    assert code == 1 and [f["path"] for f in found] == [
        "spec.template.metadata.annotations[scheduling.volcano.sh/queue-name]"]
    assert "(Volcano's PodGroup controller)" in found[0]["message"] and MISSING in found[0]["message"]
    assert "none of its pods runs" in found[0]["message"]


def test_replicas_volcano_does_not_group_get_no_podgroup_and_no_finding(tmp_path):
    own_group = copy.deepcopy(DEPLOYMENT)     # pods naming their own PodGroup: the controller creates none
    own_group["spec"]["template"]["metadata"]["annotations"]["scheduling.k8s.io/group-name"] = "servers"
    other = copy.deepcopy(DEPLOYMENT)         # the default scheduler's pods (scheduler-name-volcano says so)
    del other["spec"]["template"]["spec"]["schedulerName"]
    scaled_down = copy.deepcopy(DEPLOYMENT)
    scaled_down["spec"]["replicas"] = 0
    for obj in (own_group, other, scaled_down):
        assert podgroup_creator(obj, []) is None
        assert _check(tmp_path, obj)[1] == []


def test_without_a_stack_queues_are_unknown_and_nothing_is_said(tmp_path):
    assert _check(tmp_path, PYTORCH, DEPLOYMENT, stack=None)[1] == []


def test_a_trainjob_s_queue_comes_from_its_runtime_or_its_runtime_patches(tmp_path):
    assert _check(tmp_path, TRAINJOB)[1] == []          # the runtime's template names research: rendered
    patched = copy.deepcopy(TRAINJOB)
    patched["spec"]["runtimePatches"] = [{"manager": "example.com/queues", "trainingRuntimeSpec": {"template": {
        "metadata": {"annotations": {"scheduling.volcano.sh/queue-name": "nope"}}}}}]
    code, found = _check(tmp_path, patched)
    assert code == 1 and len(found) == 1
    assert found[0]["path"] == ("spec.runtimePatches[0].trainingRuntimeSpec.template.metadata.annotations"
                                "[scheduling.volcano.sh/queue-name]")
    assert "(Trainer's Volcano plugin)" in found[0]["message"] and MISSING in found[0]["message"]


def test_an_object_its_own_webhook_refuses_is_that_rule_s_finding_only(tmp_path):
    job = copy.deepcopy(PYTORCH)              # no container named pytorch: the operator's webhook refuses the job
    job["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["containers"][0]["name"] = "main"
    path = tmp_path / "jobs.yaml"
    path.write_text(yaml.safe_dump(job))
    report = json.loads(run("check", "prod", "--manifests", str(path), "--format", "json").out)
    rules = {v["rule"] for v in report["stacks"]["prod"]["violations"]}
    assert "training-operator-admission" in rules and RULE_ID not in rules


def test_volcano_jobs_are_left_to_the_job_webhook():
    job = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "j"},
           "spec": {"queue": "nope", "tasks": [{"replicas": 1, "template": {"spec": {"containers": [CONTAINER]}}}]}}
    assert podgroup_creator(job, []) == "Volcano's job controller"
    assert not RULE.applies_to(job)           # upstream-admission reports the job webhook's refusal


def test_odd_shapes_give_no_finding_and_never_raise():
    ctx = CheckContext(manifests=[])
    odd = [{**PYTORCH, "spec": "text"}, {**PYTORCH, "metadata": ["pt"]},
           {**DEPLOYMENT, "spec": {"replicas": "many", "template": []}},
           {**DEPLOYMENT, "spec": {**DEPLOYMENT["spec"], "template": {"metadata": {"annotations": ["x"]},
                                                                      "spec": {"schedulerName": "volcano"}}}},
           {**TRAINJOB, "spec": {"runtimeRef": 7}}, {"apiVersion": "apps/v1", "kind": "StatefulSet"}]
    for obj in odd:
        assert list(RULE.check(obj, ctx)) == []


def test_check_judges_the_podgroup_simulate_places():
    for obj in (PYTORCH, DEPLOYMENT):
        workload = workload_of(obj, [])
        assert workload_objects(workload, obj, [], None)[0] == controller_podgroup(workload, obj, [])
    podgroup = controller_podgroup(workload_of(PYTORCH, []), PYTORCH, [])
    assert podgroup["metadata"] == {"name": "pt", "namespace": "research"}
    assert podgroup["spec"]["queue"] == "nope" and podgroup["spec"]["minMember"] == 1
    assert controller_podgroup(workload_of(PYTORCH, []), PYTORCH, [], queue="batch")["spec"]["queue"] == "batch"


def _runtime(queue: str, topology: dict) -> dict:
    pod = {"spec": {"schedulerName": "volcano", "containers": [{**CONTAINER, "name": "node"}]}}
    node = {"name": "node", "template": {
        "metadata": {"labels": {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}},
        "spec": {"template": pod}}}
    return {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "ClusterTrainingRuntime",
            "metadata": {"name": "mine"},
            "spec": {"mlPolicy": {"numNodes": 1, "torch": {}},
                     "podGroupPolicy": {"volcano": {"networkTopology": topology}},
                     "template": {"metadata": {"annotations": {"scheduling.volcano.sh/queue-name": queue}},
                                  "spec": {"replicatedJobs": [node]}}}}


def test_a_runtime_s_queue_is_said_at_the_trainjob_s_runtime_ref(tmp_path):
    job = copy.deepcopy(TRAINJOB)
    job["spec"]["runtimeRef"]["name"] = "mine"
    code, found = _check(tmp_path, job, _runtime("nope", {"mode": "hard", "highestTierAllowed": 1}))
    assert [f["path"] for f in found] == ["spec.runtimeRef"] and MISSING in found[0]["message"]


def test_a_runtime_s_highest_tier_name_is_pruned_so_its_podgroup_never_sets_both():
    # Trainer v2.3's runtime CRD has no highestTierName (modules/semantics/README.md): the PodGroup
    # carries highestTierAllowed alone, and the PodGroup webhook's both-tiers check cannot refuse it
    # (topology-tier-exists reports the pruned field).
    job = copy.deepcopy(TRAINJOB)
    job["spec"]["runtimeRef"]["name"] = "mine"
    runtime = _runtime("default", {"mode": "hard", "highestTierAllowed": 2, "highestTierName": "spine"})
    podgroup = controller_podgroup(workload_of(job, [runtime]), job, [runtime])
    assert podgroup["spec"]["networkTopology"] == {"mode": "hard", "highestTierAllowed": 2}
    assert list(RULE.check(job, CheckContext(manifests=[runtime]))) == []


def test_a_trainjob_trainer_admission_admits_by_its_settings_keeps_its_podgroup_finding():
    # trainer-admission judges PriorityClasses by its own settings (here: pc-x exists in the cluster);
    # this rule cannot see them, so it never takes Trainer's webhook as refusing the TrainJob: the
    # PodGroup's missing queue is said (before, a class the manifests lack hid it).
    from policies.rules import trainer_admission

    runtime = _runtime("nope", {"mode": "hard", "highestTierAllowed": 1})
    runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"][
        "priorityClassName"] = "pc-x"
    job = copy.deepcopy(TRAINJOB)
    job["spec"]["runtimeRef"]["name"] = "mine"
    release = {"apiVersion": "helm.sh/v3", "kind": "Release", "metadata": {"name": "volcano",
                                                                           "namespace": "volcano-system"},
               "spec": {"chart": "volcano", "values": {}}}
    manifests = [release, runtime, job]
    trainer = BY_ID[trainer_admission.RULE_ID]
    assert list(trainer.check(job, CheckContext(manifests=manifests, config={"priorityClasses": ["pc-x"]}))) == []
    found = list(RULE.check(job, CheckContext(manifests=manifests)))
    assert len(found) == 1 and MISSING in found[0].message and found[0].path == "spec.runtimeRef"
