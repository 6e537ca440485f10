"""Platform workloads: Volcano Jobs with partitions, TrainJobs, gang Deployments, PyTorchJobs."""
import pytest

from modules.core.errors import InputError
from modules.core.render import render

from tests.support.stacks import DELETE, V1_SECTIONS, merge, of_kind, shipped_bundle, v1_bundle, v1_stack, variant

IMAGE = "pytorch/pytorch:2.13.0-cuda13.0-cudnn9-runtime"


def one(bundle, kind, name):
    (obj,) = [o for o in of_kind(bundle, kind) if o["metadata"]["name"] == name]
    return obj


def test_staging_burnin_partitions_fit_leaves_under_one_spine():
    job = one(shipped_bundle("staging"), "Job", "fabric-burnin")
    spec = job["spec"]
    assert spec["schedulerName"] == "volcano" and spec["queue"] == "team-a" and spec["minAvailable"] == 16
    assert spec["networkTopology"] == {"mode": "hard", "highestTierName": "spine"}
    (task,) = spec["tasks"]
    assert task["partitionPolicy"] == {"totalPartitions": 2, "partitionSize": 8,
                                       "networkTopology": {"mode": "hard", "highestTierAllowed": 1}}
    assert task["replicas"] == task["partitionPolicy"]["totalPartitions"] * task["partitionPolicy"]["partitionSize"]
    pod = task["template"]["spec"]
    assert pod["schedulerName"] == "volcano"
    assert pod["containers"][0]["envFrom"] == [{"configMapRef": {"name": "nccl-roce"}}]


def test_bundle_orders_workloads_after_what_they_need():
    bundle = shipped_bundle("prod")
    keys = [i.key for i in bundle.items]
    job = "Job/training/fabric-burnin"
    assert set(bundle.dependencies[job]) >= {"release/volcano-system/volcano", "Queue/batch",
                                              "ConfigMap/training/nccl-infiniband"}
    trainjob = "TrainJob/research/leaf-canary"
    assert set(bundle.dependencies[trainjob]) >= {"release/kubeflow-system/kubeflow-trainer",
                                                   "ClusterTrainingRuntime/torch-h100-sxm-tier1-hard",
                                                   "ConfigMap/research/nccl-infiniband"}
    for key in (job, trainjob):
        for dep in bundle.dependencies[key]:
            assert keys.index(dep) < keys.index(key)


def test_trainjob_in_another_queue_uses_a_runtime_patch():
    job = one(shipped_bundle("staging"), "TrainJob", "ddp-canary")
    assert job["spec"]["runtimeRef"] == {"name": "torch-h100-sxm-tier2-hard", "apiGroup": "trainer.kubeflow.org",
                                         "kind": "ClusterTrainingRuntime"}
    assert job["spec"]["trainer"]["numNodes"] == 8 and job["spec"]["trainer"]["command"][0] == "torchrun"
    (patch,) = job["spec"]["runtimePatches"]
    assert patch["trainingRuntimeSpec"]["template"]["metadata"]["annotations"] == {
        "scheduling.volcano.sh/queue-name": "team-b"}
    # Same queue as the runtime: no patch.
    assert "runtimePatches" not in one(shipped_bundle("prod"), "TrainJob", "leaf-canary")["spec"]


def test_gang_deployment_by_annotations():
    dep = one(shipped_bundle("staging"), "Deployment", "eval-servers")
    assert dep["metadata"]["annotations"] == {"scheduling.volcano.sh/group-min-member": "2",
                                              "argocd.argoproj.io/sync-wave": "2"}   # after its Queue
    template = dep["spec"]["template"]
    assert template["metadata"]["annotations"] == {"scheduling.volcano.sh/queue-name": "team-b",
                                                   "volcano.sh/network-topology-mode": "hard",
                                                   "volcano.sh/network-topology-highest-tier": "1"}
    assert template["spec"]["schedulerName"] == "volcano"
    assert dep["spec"]["strategy"] == {"type": "Recreate"}
    assert not of_kind(shipped_bundle("staging"), "PodGroup")


def test_tier_name_on_a_deployment_renders_its_podgroup():
    bundle = shipped_bundle("prod")
    dep = one(bundle, "Deployment", "eval-servers")
    group = one(bundle, "PodGroup", "eval-servers")
    annotations = dep["spec"]["template"]["metadata"]["annotations"]
    assert annotations["scheduling.k8s.io/group-name"] == "eval-servers"
    assert "volcano.sh/network-topology-mode" not in annotations          # the PodGroup carries it
    assert dep["metadata"]["annotations"] == {"argocd.argoproj.io/sync-wave": "3"}   # after its PodGroup (2)
    assert group["metadata"]["namespace"] == dep["metadata"]["namespace"] == "research"
    assert group["spec"]["minMember"] == dep["spec"]["replicas"] == 4
    assert group["spec"]["networkTopology"] == {"mode": "hard", "highestTierName": "leaf"}
    assert group["spec"]["minResources"]["nvidia.com/gpu"] == 32
    assert group["spec"]["queue"] == "research" and group["spec"]["priorityClassName"] == "training-default"
    assert "PodGroup/research/eval-servers" in shipped_bundle("prod").dependencies["Deployment/research/eval-servers"]


def test_v1_pytorchjobs():
    bundle = v1_bundle()
    plain = one(bundle, "PyTorchJob", "resnet-ddp")["spec"]
    assert set(plain["pytorchReplicaSpecs"]) == {"Master", "Worker"}
    assert plain["pytorchReplicaSpecs"]["Master"]["replicas"] == 1
    assert plain["runPolicy"]["schedulingPolicy"] == {"queue": "team-a", "minAvailable": 4}
    assert plain["nprocPerNode"] == "8"
    container = plain["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]
    assert container["name"] == "pytorch"
    elastic = one(bundle, "PyTorchJob", "elastic-lm")["spec"]
    assert set(elastic["pytorchReplicaSpecs"]) == {"Worker"}
    assert elastic["elasticPolicy"] == {"minReplicas": 2, "maxReplicas": 8, "rdzvBackend": "c10d", "maxRestarts": 3}
    assert elastic["runPolicy"]["schedulingPolicy"]["minAvailable"] == 2      # gang = elastic minimum
    assert "overlay/training-operator" in bundle.dependencies["PyTorchJob/training/elastic-lm"]
    assert v1_stack().section("trainer")["api"] == "v1"


def burnin(**changes):
    job = {"name": "burn", "image": IMAGE, "replicas": 16,
           "topology": {"mode": "hard", "highestTierAllowed": 2},
           "partitions": {"size": 8, "topology": {"mode": "hard", "highestTierAllowed": 1}}}
    job.update(changes)
    return {"volcanoJobs": [job], "trainJobs": [], "deployments": []}


PYTORCH = {"name": "lm", "image": IMAGE, "workers": 2}


@pytest.mark.parametrize("base, sections, path, words", [
    ("staging", {"workloads": burnin(replicas=15)},
     "workloads.volcanoJobs[0].partitions.size", "multiple of the partition size"),
    ("staging", {"workloads": burnin(partitions={"size": 8, "topology": {"mode": "hard", "highestTierAllowed": 3}})},
     "workloads.volcanoJobs[0].partitions.topology", "cannot span more than its job"),
    ("staging", {"workloads": burnin(replicas=40)}, "workloads.volcanoJobs[0]",
     "needs 5 partitions of 8 pods, each within tier 1, inside one tier-2 domain, but at most 4 fit"),
    ("staging", {"workloads": burnin(partitions={"size": 16, "topology": {"mode": "hard", "highestTierAllowed": 1}})},
     "workloads.volcanoJobs[0]", "at most 0 fit"),
    ("staging", {"workloads": burnin(minAvailable=12, partitions={"size": 8, "minPartitions": 1})},
     "workloads.volcanoJobs[0].minAvailable", "minPartitions x size = 8"),
    ("staging", {"workloads": burnin(topology={"mode": "hard"})}, "workloads.volcanoJobs[0].topology",
     "hard mode needs highestTierAllowed or highestTierName"),
    ("staging", {"workloads": burnin(topology={"mode": "hard", "highestTierAllowed": 1, "highestTierName": "leaf"})},
     "workloads.volcanoJobs[0].topology", "not both"),
    ("staging", {"workloads": burnin(namespace="default")}, "workloads.volcanoJobs[0].namespace",
     "one of trainstack:trainingNamespaces"),
    ("staging", {"workloads": {"trainJobs": [{"name": "j", "runtime": "nope", "command": ["torchrun"]}]}},
     "workloads.trainJobs[0].runtime", "one of the stack's runtimes (torch-h100-sxm-tier1-hard"),
    ("staging", {"workloads": {"trainJobs": [{"name": "j", "runtime": "torch-h100-sxm-tier1-hard",
                                              "command": ["python", "train.py"]}]}},
     "workloads.trainJobs[0].command", "starting with torchrun"),
    ("staging", {"workloads": {"trainJobs": [{"name": "j", "runtime": "torch-h100-sxm-tier1-hard", "numNodes": 9,
                                              "command": ["torchrun", "t.py"]}]}},
     "workloads.trainJobs[0].numNodes", "largest holds 8"),
    ("staging", {"workloads": {"trainJobs": [{"name": "9lives", "runtime": "x", "command": ["torchrun"]}]}},
     "workloads.trainJobs[0].name", "starts with a letter"),
    ("staging", {"workloads": {"deployments": [{"name": "d", "image": IMAGE, "replicas": 9,
                                                "topology": {"mode": "hard", "highestTierAllowed": 1}}]}},
     "workloads.deployments[0].topology", "largest holds 8"),
    ("staging", {"workloads": {"pyTorchJobs": [PYTORCH]}}, "workloads.pyTorchJobs", "need the v1 Training Operator"),
    ("v1", {"workloads": {"pyTorchJobs": [{**PYTORCH, "topology": {"mode": "hard", "highestTierAllowed": 1}}]}},
     "workloads.pyTorchJobs[0].topology", "cannot carry a network topology"),
    ("v1", {"trainer": {"elastic": False},
            "workloads": {"pyTorchJobs": [{**PYTORCH, "elastic": {"minReplicas": 1, "maxReplicas": 4}}]}},
     "workloads.pyTorchJobs[0].elastic", "need trainer.elastic: true"),
    ("v1", {"workloads": {"pyTorchJobs": [{**PYTORCH, "elastic": {"minReplicas": 3, "maxReplicas": 4}}]}},
     "workloads.pyTorchJobs[0].workers", "minReplicas <= workers <= maxReplicas"),
])
def test_bad_workloads(base, sections, path, words):
    if base == "v1":
        base, sections = "staging", merge(V1_SECTIONS, sections)
    with pytest.raises(InputError) as err:
        render(variant(base, **sections))
    assert err.value.path == f"trainstack:{path}" and words in err.value.message, str(err.value)


def test_duplicate_workload_names_are_refused():
    workloads = burnin()
    workloads["volcanoJobs"].append(dict(workloads["volcanoJobs"][0]))
    with pytest.raises(InputError) as err:
        render(variant("staging", workloads=workloads))
    assert err.value.path == "trainstack:workloads.volcanoJobs[1].name"
    assert "already defined by workloads.volcanoJobs[0]" in err.value.message


def test_workloads_are_optional():
    bundle = render(variant("staging", workloads=DELETE))
    assert not [r for r in bundle.resources if r.module == "workloads"]


def test_gang_deployment_podgroup_has_the_names_volcano_writes():
    """The PodGroup rendered for a gang Deployment carries what Volcano's PodGroup controller would
    write for its pods (quota usage: bare names for the scheduler, requests.*/limits.* for a namespace
    ResourceQuota at enqueue), and the scheduler's reading of it is the pods' requests times minMember."""
    from decimal import Decimal

    from modules.core.quantity import parse_quantity
    from modules.core.vocabulary.resource_names import scheduler_view
    from modules.semantics.podspec import Reader, pod_requests

    bundle = shipped_bundle("prod")
    (group,) = of_kind(bundle, "PodGroup")
    deployment = next(d for d in of_kind(bundle, "Deployment") if d["metadata"]["name"] == group["metadata"]["name"])
    members = group["spec"]["minMember"]
    minimum = {k: parse_quantity(v) for k, v in group["spec"]["minResources"].items()}
    pod = pod_requests(Reader(), deployment["spec"]["template"]["spec"], "spec")
    assert scheduler_view(minimum) == {"pods": Decimal(members), **{k: v * members for k, v in pod.fit.items()}}
    assert minimum["count/pods"] == members and minimum["requests.nvidia.com/gpu"] == minimum["nvidia.com/gpu"]
    assert minimum["limits.memory"] == pod.limits["memory"] * members and "limits.cpu" not in minimum
