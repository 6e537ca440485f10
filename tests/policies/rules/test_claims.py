"""claims-serve-pods: the claims pods mount exist where they run, and a node-bound claim is not
shared by a gang that needs several nodes; and the stack's TrainJobs meet Trainer's webhook in `check`."""
import copy

from modules.core.errors import InputError
from modules.core.render import render
from policies.framework import CheckContext
from policies.rules import BY_ID
from policies.runner import bundle_objects, load_settings, run_rules

from tests.support.stacks import shipped, shipped_bundle, variant

RULE = BY_ID["claims-serve-pods"]
IMAGE = "registry.example.com/llm/train:2026.08.1"


def pvc(name, namespace="training", modes=("ReadWriteOnce",)):
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": namespace},
            "spec": {"accessModes": list(modes), "resources": {"requests": {"storage": "1Ti"}}}}


def volcano_job(replicas, claim, gpus=8, host_network=False):
    spec = {"containers": [{"name": "w", "image": IMAGE, "resources": {
        "requests": {"cpu": "8", "memory": "64Gi", "nvidia.com/gpu": gpus}, "limits": {"nvidia.com/gpu": gpus}}}],
        "volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": claim}}]}
    if host_network:
        spec["hostNetwork"] = True
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
            "metadata": {"name": "j", "namespace": "training"},
            "spec": {"minAvailable": replicas, "tasks": [{"name": "w", "replicas": replicas,
                                                          "template": {"spec": spec}}]}}


def findings(obj, *more, stack="prod", config=None):
    bundle = shipped_bundle(stack)
    ctx = CheckContext(stack=shipped(stack), fabric=bundle.fabric,
                       manifests=bundle_objects(bundle) + [obj, *more], config=config or {})
    return list(RULE.check(obj, ctx))


def test_rwo_claim_under_a_gang_that_needs_four_nodes():
    [finding] = findings(volcano_job(4, "scratch"), pvc("scratch"))
    assert finding.path == "spec.tasks[0].template.spec.volumes[0].persistentVolumeClaim.claimName"
    assert "4 pods of one gang mount claim 'scratch', which is ReadWriteOnce" in finding.message
    assert "at least 4 nodes" in finding.message


def test_rwo_claim_of_a_gang_that_fits_one_node_passes():
    # 4 pods of 2 GPUs fit one 8-GPU node: one attachment serves them all.
    assert findings(volcano_job(4, "scratch", gpus=2), pvc("scratch")) == []


def test_host_network_pods_need_a_node_each():
    [finding] = findings(volcano_job(2, "scratch", gpus=1, host_network=True), pvc("scratch"))
    assert "one per node" in finding.message


def test_read_write_once_pod_refuses_any_two_pods():
    [finding] = findings(volcano_job(2, "scratch", gpus=1), pvc("scratch", modes=("ReadWriteOncePod",)))
    assert "ReadWriteOncePod" in finding.message and "one pod in the whole cluster" in finding.message


def test_read_write_many_is_fine_for_any_gang():
    assert findings(volcano_job(32, "scratch"), pvc("scratch", modes=("ReadWriteMany",))) == []


def test_missing_claim_and_claim_of_another_namespace():
    [finding] = findings(volcano_job(1, "nowhere"))
    assert "does not exist in namespace 'training'" in finding.message
    job = volcano_job(1, "scratch")
    [finding] = findings(job, pvc("scratch", namespace="research"))
    assert "(only in research)" in finding.message


def test_without_a_stack_a_missing_claim_is_a_note_unless_the_objects_are_all():
    job = volcano_job(1, "nowhere")
    ctx = CheckContext(manifests=[job])
    [note] = list(RULE.check(job, ctx))
    assert "is not among the checked objects" in note.reason
    ctx = CheckContext(manifests=[job], config={"clusterObjectsKnown": True})
    [finding] = list(RULE.check(job, ctx))
    assert "does not exist" in finding.message


def test_a_trainjob_is_judged_with_its_runtimes_claims_in_its_namespace():
    trainjob = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
                "metadata": {"name": "t", "namespace": "inference"},
                "spec": {"runtimeRef": {"name": "torch-h100-sxm-tier1-hard"}, "trainer": {"numNodes": 2}}}
    [finding] = findings(trainjob)
    assert finding.path == "spec.runtimeRef"
    assert "(from ClusterTrainingRuntime 'torch-h100-sxm-tier1-hard') mount claim 'training-data'" in finding.message
    ok = copy.deepcopy(trainjob)
    ok["metadata"]["namespace"] = "research"
    assert findings(ok) == []


def test_the_shipped_stacks_pass():
    for name in ("dev", "staging", "prod", "legacy"):
        bundle = render(shipped(name))
        objects = bundle_objects(bundle)
        ctx = CheckContext(stack=shipped(name), fabric=bundle.fabric, manifests=objects)
        assert [f for o in objects if RULE.applies_to(o) for f in RULE.check(o, ctx)] == [], name


def test_check_refuses_a_stack_trainjob_with_a_reserved_torchrun_variable():
    """The stack's TrainJobs meet the same Trainer admission code as users' manifests."""
    stack = variant("staging", workloads={"trainJobs": [
        {"name": "tj", "runtime": "torch-h100-sxm-tier1-hard", "command": ["torchrun", "t.py"],
         "env": {"PET_NNODES": "4"}}]})
    try:
        bundle = render(stack)
    except InputError as err:   # with the port in modules/upstream, the render refuses it first
        assert "PET_NNODES" in err.message and err.path.endswith(".env")
        return
    objects = bundle_objects(bundle)
    violations = run_rules(objects, CheckContext(stack=stack, fabric=bundle.fabric, manifests=objects),
                           load_settings("staging"))
    hits = [v for v in violations if v.rule == "trainer-admission"]
    assert hits and "PET_NNODES" in hits[0].message and hits[0].path == "spec.trainer.env"


def test_a_volcano_jobs_own_volumes_mount_into_every_pod():
    job = volcano_job(4, "scratch")
    spec = job["spec"]["tasks"][0]["template"]["spec"]
    del spec["volumes"]
    job["spec"]["volumes"] = [{"mountPath": "/scratch", "volumeClaimName": "scratch"},
                              {"mountPath": "/tmp/made", "volumeClaimName": "made-by-volcano",
                               "volumeClaim": {"accessModes": ["ReadWriteOnce"]}}]   # created by the job
    [finding] = findings(job, pvc("scratch"))
    assert finding.path == "spec.volumes[0].volumeClaimName" and "at least 4 nodes" in finding.message


def test_a_trainjob_without_its_runtime_still_has_its_patched_claims_checked():
    trainjob = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
                "metadata": {"name": "t", "namespace": "research"},
                "spec": {"runtimeRef": {"name": "elsewhere"}, "runtimePatches": [{"manager": "example.com/x",
                         "trainingRuntimeSpec": {"template": {"spec": {"replicatedJobs": [{"name": "node", "template": {
                             "spec": {"template": {"spec": {"volumes": [
                                 {"name": "v", "persistentVolumeClaim": {"claimName": "gone"}}]}}}}}]}}}}]}}
    [finding] = findings(trainjob)
    assert finding.path.startswith("spec.runtimePatches[0]") and "'gone', which does not exist" in finding.message
