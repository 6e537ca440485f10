"""A TrainJob's runtimePatches are read once (modules/semantics/workloads.py ``runtime_patches``) and
every reader (Trainer's webhook port, the NCCL, storage and pod-security rules) sees the same pods."""
from __future__ import annotations

from policies.framework import CheckContext
from policies.rules.nccl import RULES as NCCL_RULES
from policies.rules.nccl import nccl_environments
from modules.semantics.workloads import job_patches, jobset_annotations, runtime_patches
from modules.upstream.trainer.webhooks import trainjob_problems

RUNTIME = {
    "apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "ClusterTrainingRuntime",
    "metadata": {"name": "torch", "annotations": {}},
    "spec": {"template": {
        "metadata": {"annotations": {"scheduling.volcano.sh/queue-name": "base"}},
        "spec": {"replicatedJobs": [{
            "name": "node",
            "template": {"metadata": {"labels": {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}},
                         "spec": {"template": {"spec": {"initContainers": [{"name": "warmup", "image": "w"}],
                                                        "containers": [{"name": "node", "image": "t"}]}}}}}]}}},
}


def _trainjob(pod: dict, annotations: dict | None = None) -> dict:
    template: dict = {"spec": {"replicatedJobs": [{"name": "node", "template": {"spec": {"template": {"spec": pod}}}}]}}
    if annotations:
        template["metadata"] = {"annotations": annotations}
    patch = {"manager": "example.com/tools", "trainingRuntimeSpec": {"template": template}}
    return {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
            "metadata": {"name": "llm", "namespace": "training"},
            "spec": {"runtimeRef": {"name": "torch"}, "runtimePatches": [patch]}}


PATCH_BASE = "spec.runtimePatches[0].trainingRuntimeSpec.template.spec.replicatedJobs[0]"


def test_the_walk_names_each_patched_job_its_containers_env_and_annotations():
    job = _trainjob({"initContainers": [{"name": "warmup", "env": [{"name": "NCCL_DEBUG", "value": "WARN"}]}],
                     "containers": [{"name": "node"}], "volumes": [{"name": "data"}]},
                    {"scheduling.volcano.sh/queue-name": "team-a"})
    [patch] = runtime_patches(job)
    assert patch.manager == "example.com/tools" and patch.path == "spec.runtimePatches[0]"
    [jp] = patch.jobs
    assert job_patches(job) == [jp]
    assert (jp.name, jp.path) == ("node", PATCH_BASE)
    assert jp.template_path == f"{PATCH_BASE}.template.spec.template"
    assert jp.containers("initContainers") == [(f"{jp.template_path}.spec.initContainers[0]",
                                                 job["spec"]["runtimePatches"][0]["trainingRuntimeSpec"]["template"]
                                                 ["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
                                                 ["initContainers"][0])]
    assert [path for path, _ in jp.envs()] == [f"{jp.template_path}.spec.initContainers[0].env",
                                                f"{jp.template_path}.spec.containers[0].env"]
    assert jp.pod["volumes"] == [{"name": "data"}]
    assert jobset_annotations(job, RUNTIME) == {"scheduling.volcano.sh/queue-name": "team-a"}
    assert jobset_annotations(None, RUNTIME) == {"scheduling.volcano.sh/queue-name": "base"}


def test_odd_shapes_give_no_patch_rather_than_an_error():
    assert runtime_patches({"spec": {"runtimePatches": "x"}}) == []
    assert runtime_patches(None) == []
    [patch] = runtime_patches({"spec": {"runtimePatches": [{"trainingRuntimeSpec": {"template": {"spec": {
        "replicatedJobs": [7]}}}}]}})
    assert patch.manager is None and patch.jobs[0].name is None and patch.jobs[0].template == {}


def test_nccl_env_in_a_patched_init_container_is_judged():
    """The NCCL rule read only a patch's containers: an invalid NCCL value in an init container that
    a runtime patch adds (a warm-up that runs a collective) went unjudged."""
    job = _trainjob({"initContainers": [{"name": "warmup", "env": [{"name": "NCCL_NTHREADS", "value": "4"}]}]})
    paths = [path for path, env, _ in nccl_environments(job) if env]
    assert paths == [f"{PATCH_BASE}.template.spec.template.spec.initContainers[0].env"]
    rule = next(r for r in NCCL_RULES if r.id == "nccl-env-valid")
    findings = list(rule.check(job, CheckContext(manifests=[RUNTIME, job])))
    assert [f.path for f in findings] == [f"{PATCH_BASE}.template.spec.template.spec.initContainers[0].env"
                                          "[NCCL_NTHREADS]"]


def test_the_webhook_port_reads_the_same_patched_init_containers():
    """Trainer's JobSet plugin refuses a patch's init container the runtime job does not run."""
    ok = _trainjob({"initContainers": [{"name": "warmup"}], "containers": [{"name": "node"}]})
    assert trainjob_problems(ok, RUNTIME) == []
    bad = _trainjob({"initContainers": [{"name": "other"}]})
    assert [e.origin for e in trainjob_problems(bad, RUNTIME)] == ["trainer.jobset.patch-init-container"]
