"""The `volumes` option: the stack's claims mounted by name into every kind that runs pods, each
rendered where that kind carries pod volumes at the pinned versions."""
import pytest

from modules.core.config import module_schema
from modules.core.errors import InputError
from modules.core.render import render

from tests.modules.test_cli_errors import project_with
from tests.support.cli import run
from tests.support.crds import crd_documents, is_custom, require_crds, validate_core, validate_cr
from tests.support.stacks import V1_SECTIONS, merge, of_kind, shipped_bundle, variant

IMAGE = "pytorch/pytorch:2.13.0-cuda13.0-cudnn9-runtime"
DATA = {"claim": "training-data", "mountPath": "/data", "readOnly": True}
OUTPUT = {"claim": "checkpoints", "mountPath": "/output/", "subPath": "runs/a"}


def one(bundle, kind, name):
    (obj,) = [o for o in of_kind(bundle, kind) if o["metadata"]["name"] == name]
    return obj


def claims_of(pod_spec):
    return {v["name"]: v["persistentVolumeClaim"] for v in pod_spec["volumes"] if "persistentVolumeClaim" in v}


def test_the_option_is_defined_once_and_shared():
    wanted = module_schema("probe")["properties"]["volumes"]["items"]
    for module, path in (("runtimes", ("runtimes", "items")), ("workloads", ("volcanoJobs", "items")),
                         ("workloads", ("trainJobs", "items")), ("workloads", ("deployments", "items")),
                         ("workloads", ("pyTorchJobs", "items"))):
        node = module_schema(module)["properties"]
        node = node[path[0]][path[1]]["properties"]["volumes"]
        assert node["items"] == wanted, module


def test_legacy_pytorchjob_mounts_data_read_only_and_checkpoints():
    job = one(shipped_bundle_legacy(), "PyTorchJob", "llama-elastic")
    pod = job["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]
    assert claims_of(pod) == {"training-data": {"claimName": "training-data", "readOnly": True},
                              "checkpoints": {"claimName": "checkpoints"}}
    (container,) = pod["containers"]
    assert {"name": "training-data", "mountPath": "/data", "readOnly": True} in container["volumeMounts"]
    assert {"name": "checkpoints", "mountPath": "/output"} in container["volumeMounts"]


def shipped_bundle_legacy():
    from tests.support.stacks import shipped
    return render(shipped("legacy"))


def test_prod_research_runtime_mounts_the_dataset_claim_of_both_namespaces():
    bundle = shipped_bundle("prod")
    runtime = one(bundle, "ClusterTrainingRuntime", "torch-h100-sxm-tier1-hard")
    (job,) = runtime["spec"]["template"]["spec"]["replicatedJobs"]
    pod = job["template"]["spec"]["template"]["spec"]
    assert claims_of(pod) == {"training-data": {"claimName": "training-data", "readOnly": True}}
    homes = {c["metadata"]["namespace"] for c in of_kind(bundle, "PersistentVolumeClaim")
             if c["metadata"]["name"] == "training-data"}
    assert homes == {"training", "research"}


def test_every_kind_carries_the_claims_where_its_pods_are():
    workloads = {
        "volcanoJobs": [{"name": "vj", "image": IMAGE, "replicas": 1, "volumes": [DATA, OUTPUT]}],
        "deployments": [{"name": "dep", "image": IMAGE, "replicas": 1, "volumes": [DATA]}],
        "trainJobs": [{"name": "tj", "runtime": "torch-h100-sxm-tier1-hard", "command": ["torchrun", "t.py"],
                       "volumes": [OUTPUT]}],
    }
    bundle = render(variant("staging", workloads=workloads, probe={"volumes": [OUTPUT]},
                            runtimes={"runtimes": [{"topology": {"mode": "hard", "highestTierAllowed": 1},
                                                    "volumes": [DATA]}]}))
    task = one(bundle, "Job", "vj")["spec"]["tasks"][0]["template"]["spec"]
    assert claims_of(task) == {"training-data": {"claimName": "training-data", "readOnly": True},
                               "checkpoints": {"claimName": "checkpoints"}}
    assert {"name": "checkpoints", "mountPath": "/output", "subPath": "runs/a"} in task["containers"][0]["volumeMounts"]
    deployment = one(bundle, "Deployment", "dep")["spec"]["template"]["spec"]
    assert set(claims_of(deployment)) == {"training-data"}
    # The TrainJob adds its claim through Trainer 2.3's runtimePatches, to the node job's pods.
    (patch,) = one(bundle, "TrainJob", "tj")["spec"]["runtimePatches"]
    (rj,) = patch["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"]
    assert rj["name"] == "node"
    pod = rj["template"]["spec"]["template"]["spec"]
    assert claims_of(pod) == {"checkpoints": {"claimName": "checkpoints"}}
    assert pod["containers"] == [{"name": "node", "volumeMounts": [
        {"name": "checkpoints", "mountPath": "/output", "subPath": "runs/a"}]}]
    assert "metadata" not in patch["trainingRuntimeSpec"]["template"]   # same queue: no annotation patch
    # The probe's Jobs mount it beside their script.
    for job in of_kind(bundle, "Job"):
        if job["metadata"]["name"].startswith("fabric-probe-"):
            for task in job["spec"]["tasks"]:
                assert "checkpoints" in claims_of(task["template"]["spec"])
    # Workloads wait for their claims.
    deps = bundle.dependencies["Job/training/vj"]
    assert {"PersistentVolumeClaim/training/training-data", "PersistentVolumeClaim/training/checkpoints"} <= set(deps)


def test_v1_pytorchjob_replicas_mount_the_claims():
    sections = merge(V1_SECTIONS, {"workloads": {"pyTorchJobs": [
        {"name": "ddp", "image": IMAGE, "workers": 2, "volumes": [DATA]}]}})
    job = one(render(variant("staging", **sections)), "PyTorchJob", "ddp")
    for role in ("Master", "Worker"):
        assert set(claims_of(job["spec"]["pytorchReplicaSpecs"][role]["template"]["spec"])) == {"training-data"}


def trainjob(**more):
    return {"workloads": {"trainJobs": [{"name": "tj", "runtime": "torch-h100-sxm-tier1-hard",
                                         "command": ["torchrun", "t.py"], **more}]}}


def test_trainjob_options_reach_the_trainer():
    bundle = render(variant("staging", **trainjob(
        env={"B": "2", "A": "1"}, numProcPerNode=4,
        resourcesPerNode={"requests": {"nvidia.com/gpu": 4, "cpu": "40"}, "limits": {"nvidia.com/gpu": 4}})))
    trainer = one(bundle, "TrainJob", "tj")["spec"]["trainer"]
    assert trainer["env"] == [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]
    assert trainer["numProcPerNode"] == 4
    assert trainer["resourcesPerNode"] == {"limits": {"nvidia.com/gpu": "4"},
                                           "requests": {"cpu": "40", "nvidia.com/gpu": "4"}}


def test_trainjob_resources_per_node_size_the_fit_check():
    # 8 whole-node pods fill a leaf; the same 8 asking for more memory than a node has fit nowhere.
    render(variant("staging", **trainjob(numNodes=8)))
    with pytest.raises(InputError) as err:
        render(variant("staging", **trainjob(numNodes=8, resourcesPerNode={
            "requests": {"memory": "1900Gi"}, "limits": {"memory": "1900Gi"}})))
    assert err.value.path == "trainstack:workloads.trainJobs[0].numNodes" and "largest holds 0" in err.value.message


def test_render_refuses_a_reserved_torchrun_variable():
    with pytest.raises(InputError) as err:
        render(variant("staging", **trainjob(env={"PET_NNODES": "4"})))
    assert err.value.path == "trainstack:workloads.trainJobs[0].env"
    assert "PET_NNODES" in err.value.message


@pytest.mark.parametrize("sections, path, words", [
    (trainjob(volumes=[{"claim": "nope", "mountPath": "/x"}]), "workloads.trainJobs[0].volumes[0].claim",
     "a claim of trainstack:storage.claims (checkpoints, training-data)"),
    ({"workloads": {"deployments": [{"name": "d", "image": IMAGE, "replicas": 1, "namespace": "inference",
                                     "volumes": [DATA]}]}, "trainingNamespaces": ["training", "inference"]},
     "workloads.deployments[0].volumes[0].claim", "exists only in namespace(s) training, not in 'inference'"),
    (trainjob(volumes=[DATA, {**OUTPUT, "mountPath": "/data"}]), "workloads.trainJobs[0].volumes[1].mountPath",
     "already mounted by workloads.trainJobs[0].volumes[0]"),
    (trainjob(volumes=[{"claim": "checkpoints", "mountPath": "/dev/shm"}]),
     "workloads.trainJobs[0].volumes[0].mountPath", "shared memory"),
    (trainjob(volumes=[{"claim": "checkpoints", "mountPath": "/x", "subPath": "../etc"}]),
     "workloads.trainJobs[0].volumes[0].subPath", "without '..'"),
    (trainjob(volumes=[{"claim": "checkpoints", "mountPath": "x"}]),
     "workloads.trainJobs[0].volumes[0].mountPath", "an absolute path"),
    (trainjob(volumes=[{"claim": "checkpoints"}]), "workloads.trainJobs[0].volumes[0].mountPath", "missing"),
    ({**trainjob(volumes=[DATA]), "runtimes": {"runtimes": [{"topology": {"mode": "hard", "highestTierAllowed": 1},
                                                              "volumes": [DATA]}]}},
     "workloads.trainJobs[0].volumes[0].claim", "runtime torch-h100-sxm-tier1-hard already mounts"),
    ({"probe": {"volumes": [{"claim": "checkpoints", "mountPath": "/opt/trainstack/out"}]}},
     "probe.volumes[0].mountPath", "holds the probe script"),
    (trainjob(resourcesPerNode={"requests": {"nvidia.com/gpu": 4}}),
     "workloads.trainJobs[0].resourcesPerNode.requests.nvidia.com/gpu", "request 4 nvidia.com/gpu with a limit of 8"),
    (trainjob(resourcesPerNode={"requests": {"nvidia.com/gpu": "4Gi"}, "limits": {"nvidia.com/gpu": "4Gi"}}),
     "workloads.trainJobs[0].resourcesPerNode.requests.nvidia.com/gpu", "a whole number of devices"),
    (trainjob(resourcesPerNode={"requests": {"cpu": "lots"}}),
     "workloads.trainJobs[0].resourcesPerNode.requests.cpu", "a Kubernetes quantity"),
    (trainjob(env={"A=B": "1"}), "workloads.trainJobs[0].env", "matching"),
])
def test_bad_volumes(sections, path, words):
    with pytest.raises(InputError) as err:
        render(variant("staging", **sections))
    assert err.value.path == f"trainstack:{path}" and words in err.value.message, str(err.value)


@pytest.mark.parametrize("part, amount, ok", [
    ("capability", "100Gi", False), ("capability", "1.5", False), ("deserved", "8k", False),
    ("guarantee", "500m", False), ("capability", 2048, True), ("capability", "2048", True),
])
def test_queue_amounts_of_extended_resources_are_whole_device_counts(part, amount, ok):
    queue = {"name": "q", "capability": {"nvidia.com/gpu": 1024, "cpu": "1500m", "memory": "100Gi"},
             "deserved": {"nvidia.com/gpu": 512}, "guarantee": {"nvidia.com/gpu": 8}}
    queue[part] = {**queue[part], "nvidia.com/gpu": amount}
    stack = variant("staging", volcano={"queues": [queue]}, runtimes={"runtimes": [{"queue": "q",
                    "topology": {"mode": "hard", "highestTierAllowed": 1}}]},
                    workloads={"volcanoJobs": [], "trainJobs": [], "deployments": []}, probe={"enabled": False})
    if ok:
        render(stack)
        return
    with pytest.raises(InputError) as err:
        render(stack)
    assert err.value.path == f"trainstack:volcano.queues[0].{part}.nvidia.com/gpu"
    assert "a whole number of devices" in err.value.message and str(amount) in err.value.message


def test_node_pool_device_counts_are_whole_numbers_too():
    pools = [{"name": "h100", "gpus": 8, "gpuType": "H100-SXM", "cpu": "192", "memory": "1800Gi",
              "resources": {"rdma/rdma_shared_device_a": "1Gi"}}]
    with pytest.raises(InputError) as err:
        render(variant("staging", fabric={"nodePools": pools}))
    assert err.value.path == "trainstack:fabric.nodePools[0].resources.rdma/rdma_shared_device_a"
    assert "expected an integer" in err.value.message


def test_mounting_kinds_still_match_the_upstream_crds():
    """Legacy's PyTorchJob (not among the conformance test's stacks) and every kind with volumes and
    the TrainJob options validate against the pinned CRDs; core kinds against Kubernetes."""
    require_crds()
    workloads = {
        "volcanoJobs": [{"name": "vj", "image": IMAGE, "replicas": 1, "volumes": [DATA, OUTPUT]}],
        "deployments": [{"name": "dep", "image": IMAGE, "replicas": 1, "volumes": [DATA]}],
        "trainJobs": [{"name": "tj", "runtime": "torch-h100-sxm-tier1-hard", "command": ["torchrun", "t.py"],
                       "queue": "team-b", "env": {"A": "1"}, "numProcPerNode": 8, "volumes": [OUTPUT],
                       "resourcesPerNode": {"requests": {"cpu": "40"}}}],
    }
    bundles = [shipped_bundle_legacy(), render(variant("staging", workloads=workloads, probe={"volumes": [OUTPUT]},
                                                       runtimes={"runtimes": [{"volumes": [DATA]}]}))]
    kinds = set()
    for bundle in bundles:
        for resource in bundle.resources:
            if resource.module not in ("runtimes", "workloads", "probe", "storage"):
                continue
            (validate_cr if is_custom(resource.obj) else validate_core)(resource.obj)
            if is_custom(resource.obj):
                assert pruned(resource.obj) == [], resource.key   # the API server would drop these silently
            kinds.add(resource.kind)
    assert {"PyTorchJob", "Job", "TrainJob", "ClusterTrainingRuntime", "Deployment"} <= kinds


def pruned(obj: dict) -> list[str]:
    """Paths of fields the object's CRD does not declare (structural pruning would remove them)."""
    group, _, version = obj["apiVersion"].rpartition("/")
    (schema,) = [v["schema"]["openAPIV3Schema"] for doc in crd_documents() for v in doc["spec"]["versions"]
                 if (doc["spec"]["group"], v["name"], doc["spec"]["names"]["kind"]) == (group, version, obj["kind"])]
    out: list[str] = []

    def walk(value, node, path):
        if node.get("x-kubernetes-preserve-unknown-fields"):
            return
        if isinstance(value, dict):
            props, extra = node.get("properties"), node.get("additionalProperties")
            for key, item in value.items():
                if props is not None and key in props:
                    walk(item, props[key], f"{path}.{key}")
                elif isinstance(extra, dict):
                    walk(item, extra, f"{path}.{key}")
                elif props is not None and extra is not True:
                    out.append(f"{path}.{key}")
        elif isinstance(value, list) and isinstance(node.get("items"), dict):
            for i, item in enumerate(value):
                walk(item, node["items"], f"{path}[{i}]")

    walk(obj, schema, "")
    return out


@pytest.mark.parametrize("sections, message", [
    ({"volcano": {"version": "1.15.1", "queues": [{"name": "elastic", "capability": {"nvidia.com/gpu": "100Gi"}}]}},
     "stacks/Pulumi.legacy.yaml: trainstack:volcano.queues[0].capability.nvidia.com/gpu: expected a whole number "
     "of devices"),
    ({"nccl": {"transport": "infiniband", "env": {"nccl_debug": "INFO"}}},
     "stacks/Pulumi.legacy.yaml: trainstack:nccl.env.nccl_debug: expected an upper-case NCCL_ variable name"),
    ({"workloads": {"pyTorchJobs": [{"name": "j", "image": IMAGE, "workers": 2, "volumes": [
        {"claim": "scratch", "mountPath": "/scratch"}]}]}},
     "stacks/Pulumi.legacy.yaml: trainstack:workloads.pyTorchJobs[0].volumes[0].claim: expected the name of a claim"),
])
def test_validate_exits_2_naming_file_and_path(tmp_path, sections, message):
    project = project_with(tmp_path, "legacy", **sections)
    result = run("validate", "legacy", "--project", str(project))
    assert result.code == 2 and result.err.startswith(f"error: {message}"), result.err


@pytest.mark.parametrize("schedule", ["", "30 4 * * 1"])
def test_the_probe_checks_its_claims_once_per_render(monkeypatch, schedule):
    """`probe.volumes` is resolved once per render; every probe pod template and the dependencies of
    the Jobs (or of the CronJob that launches them) read that one result, each template with its
    own dicts (no YAML aliases between tasks)."""
    from modules.core import yamlio
    from modules.storage import volumes

    calls = []
    resolve = volumes.resolve
    monkeypatch.setattr(volumes, "resolve", lambda ctx, path, *rest, **kw: calls.append(path) or resolve(
        ctx, path, *rest, **kw))
    bundle = render(variant("staging", probe={"volumes": [OUTPUT], "schedule": schedule}))
    assert calls.count("probe.volumes") == 1
    kind = "CronJob" if schedule else "Job"
    probes = [o for o in of_kind(bundle, kind) if o["metadata"]["name"].startswith("fabric-probe")]
    assert len(probes) >= (1 if schedule else 2)
    for obj in probes:
        assert "&id" not in yamlio.dump(obj)
        key = f"{kind}/{obj['metadata']['namespace']}/{obj['metadata']['name']}"
        assert f"PersistentVolumeClaim/{obj['metadata']['namespace']}/checkpoints" in bundle.dependencies[key]


def test_the_claims_a_pod_mounts_are_its_dependencies():
    from modules.storage.volumes import Mounts

    mounts = Mounts(({"name": "data", "persistentVolumeClaim": {"claimName": "training-data", "readOnly": True}},
                     {"name": "claim-0", "persistentVolumeClaim": {"claimName": "Odd.Name"}}), ())
    assert mounts.claim_refs("research") == ("PersistentVolumeClaim/research/training-data",
                                             "PersistentVolumeClaim/research/Odd.Name")
    assert Mounts().claim_refs("research") == ()
