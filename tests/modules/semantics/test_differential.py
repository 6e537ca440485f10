"""The policies and the simulator read one corpus of workloads and must agree on the pods, their
requests, the gangs (and minResources) and the topology constraints; the scheduler conf in effect
must be the same one for both. Each of the four disagreements a review found is a case here, with
its expected answer written out (Trainer v2.3.0 / Volcano v1.15.1, see modules/semantics/).

A property test generates such objects and requires the same agreement.
"""
from __future__ import annotations

import copy
from decimal import Decimal
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from modules.core.quantity import parse_quantity
from modules.semantics.scheduler_conf import parse_conf, scheduler_confs
from modules.semantics.volcano import constraints
from modules.semantics.workloads import effective_node_pod, find_runtime, gang_of, workload_of
from modules.simulate.scheduler import settings_from_objects
from modules.simulate.workloads import load_workloads, runtimes_in
from policies.k8s import pod_requests
from tests.modules.simulate.fabrics import tree

FABRIC = tree({"spine": {"leaf-1": 4, "leaf-2": 4}})
TRAINER = "trainer.kubeflow.org/trainjob-ancestor-step"


def container(name, requests=None, limits=None):
    resources = {}
    if requests:
        resources["requests"] = requests
    if limits:
        resources["limits"] = limits
    return {"name": name, "image": "img@sha256:" + "0" * 64, "resources": resources}


def rjob(name, containers, *, trainer=False, replicas=None, parallelism=None):
    out = {"name": name, "template": {"spec": {"template": {"spec": {"schedulerName": "volcano",
                                                                     "containers": containers}}}}}
    if trainer:
        out["template"]["metadata"] = {"labels": {TRAINER: "trainer"}}
    if replicas is not None:
        out["replicas"] = replicas
    if parallelism is not None:
        out["template"]["spec"]["parallelism"] = parallelism
    return out


def runtime(name, jobs, *, nodes=1, topology=None):
    spec = {"mlPolicy": {"numNodes": nodes, "torch": {}}, "template": {"spec": {"replicatedJobs": jobs}}}
    if topology is not None:
        spec["podGroupPolicy"] = {"volcano": {"networkTopology": topology}}
    return {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "ClusterTrainingRuntime",
            "metadata": {"name": name}, "spec": spec}


def trainjob(name, runtime_name, *, nodes=None, per_node=None):
    trainer = {}
    if nodes is not None:
        trainer["numNodes"] = nodes
    if per_node is not None:
        trainer["resourcesPerNode"] = per_node
    return {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
            "metadata": {"name": name, "namespace": "training"},
            "spec": {"runtimeRef": {"name": runtime_name, "kind": "ClusterTrainingRuntime"}, "trainer": trainer}}


# A labelled launcher plus a job named ``node``: the labelled job is the trainer (numNodes pods);
# ``node`` runs at its own size (replicas x parallelism).
LAUNCHER_RUNTIME = runtime("launcher-node", [
    rjob("launcher", [container("node", {"cpu": "2", "memory": "4Gi"})], trainer=True),
    rjob("node", [container("worker", {"cpu": "16", "memory": "64Gi"}, {"nvidia.com/gpu": 8})], parallelism=3),
], nodes=1, topology={"mode": "hard"})
LAUNCHER_JOB = trainjob("launcher-job", "launcher-node", nodes=2)

# resourcesPerNode merges into the container named ``node`` only: here the trainer's container is
# named ``trainer``, so the GPUs asked for per node are merged nowhere.
OTHER_CONTAINER_RUNTIME = runtime("other-container", [
    rjob("node", [container("trainer", {"cpu": "8", "memory": "32Gi"})], trainer=True),
], nodes=2, topology={"mode": "soft", "highestTierName": "spine"})     # pruned: Trainer's CRD has no such field
OTHER_CONTAINER_JOB = trainjob("other-container-job", "other-container",
                               per_node={"requests": {"cpu": "48"}, "limits": {"nvidia.com/gpu": 8}})

MERGED_RUNTIME = runtime("merged", [
    rjob("node", [container("node", {"cpu": "8", "memory": "32Gi"}, {"memory": "32Gi"})], trainer=True),
], nodes=2, topology={"mode": "hard", "highestTierAllowed": 2})
MERGED_JOB = trainjob("merged-job", "merged", nodes=4,
                      per_node={"requests": {"cpu": "48"}, "limits": {"nvidia.com/gpu": 8}})

# Limits only: node fit counts the limits (API-server defaulting), minResources does not.
LIMITS_ONLY_JOB = {
    "apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "limits-only", "namespace": "t"},
    "spec": {"minAvailable": 3, "queue": "research", "networkTopology": {"mode": "hard", "highestTierAllowed": 1},
             "tasks": [
                 {"name": "ps", "replicas": 1, "template": {"spec": {"containers": [
                     container("ps", limits={"cpu": "4", "memory": "8Gi"})]}}},
                 {"name": "worker", "replicas": 4,
                  "partitionPolicy": {"totalPartitions": 2, "partitionSize": 2,
                                      "networkTopology": {"mode": "soft"}},
                  "template": {"spec": {
                      "initContainers": [container("fetch", {"cpu": "32"})],
                      "containers": [container("w", {"memory": "64Gi"}, {"cpu": "8", "nvidia.com/gpu": 8})]}}},
             ]},
}

DEPLOYMENT = {
    "apiVersion": "apps/v1", "kind": "Deployment",
    "metadata": {"name": "serve", "namespace": "t", "annotations": {"scheduling.volcano.sh/group-min-member": "3"}},
    "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "serve"}}, "template": {
        "metadata": {"labels": {"app": "serve"}}, "spec": {"schedulerName": "volcano", "containers": [
        container("srv", {"cpu": "4", "memory": "16Gi"}, {"nvidia.com/gpu": 1})]}}},
}

PYTORCHJOB = {
    "apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": "v1", "namespace": "t"},
    "spec": {"pytorchReplicaSpecs": {
        "Worker": {"replicas": 3, "template": {"spec": {"containers": [
            container("pytorch", {"cpu": "8", "memory": "32Gi"}, {"nvidia.com/gpu": 4})]}}},
        "Master": {"replicas": 1, "template": {"spec": {"containers": [
            container("pytorch", {"cpu": "8", "memory": "32Gi"}, {"nvidia.com/gpu": 4})]}}}}},
}

# MPI with runLauncherAsNode, shaped like kubeflow/trainer v2.3.0's shipped
# manifests/base/runtimes/deepspeed_distributed.yaml: an unlabelled ``node`` job and a ``launcher``
# labelled as the trainer, both with a container named ``node``. Trainer's MPI plugin
# (pkg/runtime/framework/plugins/mpi/mpi.go EnforceMLPolicy; mpi_test.go TestMPI case
# "runLauncherAsNode is true": numNodes 10 -> node 9) gives ``node`` numNodes - 1 pods; the
# launcher keeps the runtime's numNodes (1); resourcesPerNode merges into both (trainingruntime.go:
# the trainer job, and the job named node under runLauncherAsNode).
def mpi_runtime(name, as_node):
    out = runtime(name, [
        rjob("node", [container("node", {"cpu": "16", "memory": "64Gi"})]),
        rjob("launcher", [container("node", {"cpu": "2", "memory": "4Gi"})], trainer=True),
    ], nodes=1, topology={"mode": "hard", "highestTierAllowed": 2})
    out["spec"]["mlPolicy"] = {"numNodes": 1, "mpi": {"numProcPerNode": 1, "mpiImplementation": "OpenMPI",
                                                      "runLauncherAsNode": as_node}}
    return out


MPI_AS_NODE_RUNTIME = mpi_runtime("mpi-as-node", True)
MPI_RUNTIME = mpi_runtime("mpi", False)
GPUS_PER_NODE = {"requests": {"nvidia.com/gpu": 8}, "limits": {"nvidia.com/gpu": 8}}
MPI_AS_NODE_JOB = trainjob("mpi-as-node-job", "mpi-as-node", nodes=4, per_node=GPUS_PER_NODE)
MPI_ONE_NODE_JOB = trainjob("mpi-one-node-job", "mpi-as-node", nodes=1)
MPI_JOB = trainjob("mpi-job", "mpi", nodes=4, per_node=GPUS_PER_NODE)

RUNTIMES = [LAUNCHER_RUNTIME, OTHER_CONTAINER_RUNTIME, MERGED_RUNTIME, MPI_AS_NODE_RUNTIME, MPI_RUNTIME]
WORKLOADS = [LAUNCHER_JOB, OTHER_CONTAINER_JOB, MERGED_JOB, LIMITS_ONLY_JOB, DEPLOYMENT, PYTORCHJOB,
             MPI_AS_NODE_JOB, MPI_ONE_NODE_JOB, MPI_JOB]


def _conf(weight: int) -> str:
    return yaml.safe_dump({"actions": "enqueue, allocate, backfill", "tiers": [{"plugins": [
        {"name": "gang"}, {"name": "network-topology-aware",
                           "arguments": {"weight": weight, "hypernode.binpack.cpu": weight}}]}]})


RELEASE = {"apiVersion": "helm.sh/v3", "kind": "Release",
           "metadata": {"name": "volcano", "namespace": "volcano-system"},
           "spec": {"chart": "volcano", "values": {"custom": {"scheduler_config_override": _conf(3)}}}}
USER_CONFIGMAP = {"apiVersion": "v1", "kind": "ConfigMap",
                  "metadata": {"name": "volcano-scheduler-configmap", "namespace": "volcano-system"},
                  "data": {"volcano-scheduler.conf": _conf(7)}}


# --- the two views ----------------------------------------------------------------------------

def _decimals(requests) -> tuple:
    return tuple(sorted((k, Decimal(v)) for k, v in requests.items() if Decimal(v)))


def policy_view(obj: dict, objects: list[dict]) -> dict:
    """What the rules compute: the gang (topology rules), each pod template's requests (requests
    rule, over the TrainJob's effective node pod), and the constraints as written."""
    gang = gang_of(obj, objects)
    pods = [_decimals(s.requests) for s in gang.sets for _ in range(s.count)]
    # The names Volcano's scheduler reads of minResources; pod slots are not modelled by the simulator.
    scheduled = {k: v for k, v in gang.scheduled_min_resources().items() if k != "pods"}
    out = {"gang": gang.pods, "gang_pods": pods, "min_resources": _decimals(scheduled)}
    target = find_runtime(obj, objects) if obj["kind"] == "TrainJob" else obj
    cons = [c for c in constraints(target) if c.scope in ("job", "runtime")]
    out["topology"] = cons[0].as_stored() if cons else None
    out["partitions"] = sorted((c.mode, c.tier) for c in constraints(target) if c.scope == "partition")
    if obj["kind"] == "TrainJob":
        spec, _ = effective_node_pod(obj, target)
        out["trainer_pod"] = _decimals(pod_requests(spec))
    return out


def simulator_view(obj: dict, objects: list[dict], tmp_path: Path) -> dict:
    path = tmp_path / f"{obj['metadata']['name']}.yaml"
    # PriorityClasses travel in the same file (they order a Volcano Job's tasks in minResources).
    path.write_text(yaml.safe_dump_all([obj] + [o for o in objects if o.get("kind") == "PriorityClass"]))
    runtimes = runtimes_in(o for o in objects if o.get("kind") == "ClusterTrainingRuntime")
    [job] = load_workloads(path, path.name, FABRIC, runtimes, "test")
    gang_pods = [_decimals(p.requests) for p in job.pods[:job.min_available]]
    fit_total: dict = {}
    for p in job.pods[:job.min_available]:
        for k, v in p.requests.items():
            fit_total[k] = fit_total.get(k, Decimal(0)) + v
    out = {"gang": job.min_available, "gang_pods": gang_pods,
           "min_resources": _decimals(job.min_resources if job.min_resources is not None else fit_total)}
    t = job.topology
    out["topology"] = (t.mode, t.tier, t.tier_name) if t is not None else None
    seen = {}
    for part in job.partitions:
        seen.setdefault(part.name.rsplit("-", 1)[0], part.topology)
    out["partitions"] = sorted((t.mode, t.tier) for t in seen.values() if t is not None)
    if obj["kind"] == "TrainJob":
        first = f"{job.name}-{_trainer_name(obj, objects)}-0-0"
        out["trainer_pod"] = _decimals(next(p.requests for p in job.pods if p.name == first))
    return out


def _trainer_name(obj, objects):
    rt = find_runtime(obj, objects)
    return next(j["name"] for j in rt["spec"]["template"]["spec"]["replicatedJobs"]
                if j["template"].get("metadata", {}).get("labels", {}).get(TRAINER) == "trainer")


@pytest.mark.parametrize("obj", WORKLOADS, ids=lambda o: o["metadata"]["name"])
def test_policies_and_simulator_agree(obj, tmp_path):
    objects = RUNTIMES + [obj]
    assert policy_view(obj, objects) == simulator_view(obj, objects, tmp_path)


# --- the four settled cases, with their answers -------------------------------------------------

def test_labelled_launcher_is_the_trainer_and_node_keeps_its_size(tmp_path):
    view = policy_view(LAUNCHER_JOB, RUNTIMES + [LAUNCHER_JOB])
    assert view["gang"] == 2 + 3          # numNodes launchers + node's parallelism 3
    assert view["trainer_pod"] == _decimals({"cpu": 2, "memory": 4 * 2**30})


def test_resources_per_node_merges_into_node_only(tmp_path):
    view = simulator_view(OTHER_CONTAINER_JOB, RUNTIMES + [OTHER_CONTAINER_JOB], tmp_path)
    assert view["topology"] == ("soft", 1, None)          # highestTierName pruned, tier defaulted
    assert view["trainer_pod"] == _decimals({"cpu": 8, "memory": 32 * 2**30})    # nothing merged
    merged = simulator_view(MERGED_JOB, RUNTIMES + [MERGED_JOB], tmp_path)
    assert merged["trainer_pod"] == _decimals({"cpu": 48, "memory": 32 * 2**30, "nvidia.com/gpu": 8})
    assert merged["gang"] == 4


def test_limits_only_fit_counts_limits_min_resources_does_not(tmp_path):
    view = simulator_view(LIMITS_ONLY_JOB, [LIMITS_ONLY_JOB], tmp_path)
    # ps: limits 4 cpu / 8Gi; worker: init 32 cpu beats 8 cpu from limits, 64Gi requested, 8 GPUs
    assert view["gang_pods"] == [_decimals({"cpu": 4, "memory": 8 * 2**30}),
                                 _decimals({"cpu": 32, "memory": 64 * 2**30, "nvidia.com/gpu": 8}),
                                 _decimals({"cpu": 32, "memory": 64 * 2**30, "nvidia.com/gpu": 8})]
    # minResources: ps adds nothing; a worker's cpu is its init container's request only, no GPU request
    assert view["min_resources"] == _decimals({"cpu": 64, "memory": 128 * 2**30})
    assert view["partitions"] == [("soft", None)]


def test_mpi_launcher_as_node_counts_as_one_of_num_nodes(tmp_path):
    gpu = {"nvidia.com/gpu": 8}
    view = simulator_view(MPI_AS_NODE_JOB, RUNTIMES + [MPI_AS_NODE_JOB], tmp_path)
    assert view == policy_view(MPI_AS_NODE_JOB, RUNTIMES + [MPI_AS_NODE_JOB])
    node = _decimals({"cpu": 16, "memory": 64 * 2**30, **gpu})
    launcher = _decimals({"cpu": 2, "memory": 4 * 2**30, **gpu})
    assert view["gang"] == 4 and view["gang_pods"] == [node] * 3 + [launcher]
    assert view["trainer_pod"] == launcher
    # minResources: every pod set, requests x count (Trainer's Volcano plugin)
    assert view["min_resources"] == _decimals({"cpu": 3 * 16 + 2, "memory": (3 * 64 + 4) * 2**30,
                                               "nvidia.com/gpu": 32})
    # numNodes 1: node keeps max(0, 1) = 1 pod beside the launcher
    assert policy_view(MPI_ONE_NODE_JOB, RUNTIMES + [MPI_ONE_NODE_JOB])["gang"] == 2


def test_mpi_without_launcher_as_node_runs_num_nodes_beside_the_launcher():
    view = policy_view(MPI_JOB, RUNTIMES + [MPI_JOB])
    assert view["gang"] == 4 + 1
    # resourcesPerNode reaches the trainer (launcher) job only: node is not the trainer here
    assert view["gang_pods"][0] == _decimals({"cpu": 16, "memory": 64 * 2**30})
    assert view["trainer_pod"] == _decimals({"cpu": 2, "memory": 4 * 2**30, "nvidia.com/gpu": 8})


def test_user_configmap_replaces_the_chart_conf_for_both():
    objects = [RELEASE, USER_CONFIGMAP]
    confs = scheduler_confs(objects)
    assert [c.obj["kind"] for c in confs] == ["ConfigMap"]            # the rules check the ConfigMap only
    conf, _ = parse_conf(confs[0].text)
    weight = conf["tiers"][0]["plugins"][1]["arguments"]["weight"]
    sim = settings_from_objects(objects)
    assert weight == sim.plugin_weight == 7 and sim.weights["cpu"] == 7
    assert "ConfigMap volcano-system/volcano-scheduler-configmap" in sim.source
    assert settings_from_objects([RELEASE]).plugin_weight == 3             # without it, the release's


# --- generated objects ------------------------------------------------------------------------

QUANTITY = st.sampled_from(["1", "2", "500m", "4", "16"])
MEMORY = st.sampled_from(["1Gi", "4Gi", "512Mi"])


@st.composite
def resources(draw):
    requests = {k: v for k, v in (("cpu", draw(st.none() | QUANTITY)), ("memory", draw(st.none() | MEMORY))) if v}
    limits = {k: v for k, v in (("cpu", draw(st.none() | QUANTITY)), ("memory", draw(st.none() | MEMORY)),
                                ("nvidia.com/gpu", draw(st.none() | st.sampled_from([1, 8])))) if v}
    for name in set(requests) & set(limits):    # the API server admits no request above its limit
        if parse_quantity(requests[name]) > parse_quantity(limits[name]):
            requests[name], limits[name] = limits[name], requests[name]
    return requests, limits


@st.composite
def containers(draw, names=("node", "c", "trainer")):
    out = []
    for i in range(draw(st.integers(1, 2))):
        requests, limits = draw(resources())
        out.append(container(draw(st.sampled_from(names)) if i == 0 else f"side{i}", requests, limits))
    return out


@st.composite
def corpus_object(draw):
    kind = draw(st.sampled_from(["TrainJob", "Job", "Deployment", "PyTorchJob"]))
    if kind == "TrainJob":
        jobs = [rjob(draw(st.sampled_from(["node", "launcher"])), draw(containers()), trainer=True)]
        if draw(st.booleans()):
            jobs.append(rjob("node-extra", draw(containers()), parallelism=draw(st.integers(0, 3))))
        topology = draw(st.none() | st.sampled_from([{"mode": "hard"}, {"mode": "soft"},
                                                     {"mode": "hard", "highestTierAllowed": 2},
                                                     {"mode": "hard", "highestTierName": "spine"}]))
        rt = runtime("gen", jobs, nodes=draw(st.integers(1, 4)), topology=topology)
        requests, limits = draw(resources())
        per_node = {k: v for k, v in (("requests", requests), ("limits", limits)) if v} or None
        return [rt], trainjob("gen-job", "gen", nodes=draw(st.none() | st.integers(1, 4)), per_node=per_node)
    if kind == "Job":
        tasks = [{"name": f"t{i}", "replicas": draw(st.integers(1, 3)),
                  "template": {"spec": {"containers": draw(containers())}}} for i in range(draw(st.integers(1, 3)))]
        pods = sum(t["replicas"] for t in tasks)
        spec = {"tasks": tasks, "minAvailable": draw(st.integers(1, pods))}
        if draw(st.booleans()):
            spec["networkTopology"] = {"mode": draw(st.sampled_from(["hard", "soft"])), "highestTierAllowed": 1}
        return [], {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
                    "metadata": {"name": "gen", "namespace": "t"}, "spec": spec}
    if kind == "Deployment":
        obj = copy.deepcopy(DEPLOYMENT)
        obj["spec"]["replicas"] = draw(st.integers(1, 4))
        obj["spec"]["template"]["spec"]["containers"] = draw(containers())
        return [], obj
    obj = copy.deepcopy(PYTORCHJOB)
    for name, role in obj["spec"]["pytorchReplicaSpecs"].items():
        role["replicas"] = 1 if name == "Master" else draw(st.integers(1, 3))   # the webhook admits one Master
        role["template"]["spec"]["containers"] = draw(containers(("pytorch",)))   # the operator's container
    return [], obj


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(corpus_object())
def test_generated_objects_agree(tmp_path, generated):
    runtimes, obj = generated
    objects = runtimes + [obj]
    assert policy_view(obj, objects) == simulator_view(obj, objects, tmp_path)


# Upstream order differs from spec order: Volcano v1.15.1's job controller
# (pkg/controllers/job/job_controller_actions.go calcPGMinResources; job_controller_util.go
# TasksPriority.CalcPGMinResources) sorts tasks by their template's PriorityClass value, takes each
# task's own minAvailable, then fills up to the job's minAvailable from the remaining replicas.
def _class(name, value):
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name}, "value": value}


def _task(name, replicas, own, cls, requests, limits=None):
    spec = {"priorityClassName": cls, "containers": [container("c", requests, limits)]}
    return {"name": name, "replicas": replicas, "minAvailable": own, "template": {"spec": spec}}


ORDERED_JOB = {
    "apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "ordered", "namespace": "t"},
    "spec": {"minAvailable": 4, "networkTopology": {"mode": "hard", "highestTierAllowed": 1}, "tasks": [
        _task("small", 4, 1, "low", {"cpu": "1", "memory": "1Gi"}),
        _task("big", 4, 1, "high", {"cpu": "8", "memory": "64Gi", "nvidia.com/gpu": 2}, {"nvidia.com/gpu": 2})]},
}
CLASSES = [_class("low", 100), _class("high", 1000)]


@pytest.mark.parametrize("classes, want", [
    # high first: 1 big + 1 small (own minAvailable), then 2 more big (remaining replicas, high first)
    (CLASSES, {"cpu": 3 * 8 + 1, "memory": (3 * 64 + 1) * 2**30, "nvidia.com/gpu": 6}),
    # classes unknown (lookup fails: priority 0, spec order): 1 small + 1 big, then 2 more small
    ([], {"cpu": 3 + 8, "memory": (3 + 64) * 2**30, "nvidia.com/gpu": 2}),
], ids=["priority-classes", "classes-unknown"])
def test_volcano_task_order_for_min_resources_agrees(tmp_path, classes, want):
    objects = classes + [ORDERED_JOB]
    policy, sim = policy_view(ORDERED_JOB, objects), simulator_view(ORDERED_JOB, objects, tmp_path)
    assert policy["min_resources"] == sim["min_resources"] == _decimals(want)
    assert policy["gang"] == sim["gang"] == 4
    # not the first four pods in spec order (4 x small), which both views used to take
    assert _decimals(want) != _decimals({"cpu": 4, "memory": 4 * 2**30})


def test_queue_and_priority():
    assert workload_of(LIMITS_ONLY_JOB, []).queue == "research"
    rt = copy.deepcopy(MERGED_RUNTIME)
    rt["spec"]["template"]["metadata"] = {"annotations": {"scheduling.volcano.sh/queue-name": "default"}}
    rt["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"][
        "priorityClassName"] = "high"
    assert (workload_of(MERGED_JOB, [rt]).queue, workload_of(MERGED_JOB, [rt]).priority_class) == ("default", "high")
    patched = copy.deepcopy(MERGED_JOB)
    patched["spec"]["runtimePatches"] = [{"manager": "x.io/y", "trainingRuntimeSpec": {"template": {
        "metadata": {"annotations": {"scheduling.volcano.sh/queue-name": "research"}}}}}]
    assert workload_of(patched, [rt]).queue == "research"


# Trainer v2.3 counts a replicatedJob's parallelism, never its replicas (kubeflow/trainer v2.3.0
# pkg/runtime/core/trainingruntime.go newRuntimeInfo: `count := ptr.Deref(rJob.Template.Spec.Parallelism, 1)`,
# TODO kubeflow/trainer#2318), and plugins/volcano Build sums those counts into minMember and
# minResources, though the JobSet creates replicas x parallelism pods.
REPLICATED_RUNTIME = runtime("replicated-init", [
    rjob("dataset-initializer", [container("dataset-initializer", {"cpu": "4", "memory": "8Gi"})], replicas=2),
    rjob("node", [container("node", {"cpu": "16", "memory": "64Gi"}, {"nvidia.com/gpu": 8})], trainer=True),
], nodes=2)
REPLICATED_JOB = trainjob("replicated-job", "replicated-init", nodes=3)


def test_trainer_counts_parallelism_not_replicas(tmp_path):
    objects = [REPLICATED_RUNTIME, REPLICATED_JOB]
    policy, sim = policy_view(REPLICATED_JOB, objects), simulator_view(REPLICATED_JOB, objects, tmp_path)
    # 1 initializer (its parallelism; not its 2 replicas) + numNodes 3 trainer pods
    assert policy["gang"] == sim["gang"] == 4
    want = {"cpu": 4 + 3 * 16, "memory": (8 + 3 * 64) * 2**30}   # GPUs as limits only: Trainer sums requests
    assert policy["min_resources"] == sim["min_resources"] == _decimals(want)
    assert workload_of(REPLICATED_JOB, objects).pods == 2 + 3   # the pods the JobSet creates
