"""Reading what-if files: Volcano Jobs, TrainJobs resolved against runtimes, usage, and bad input."""
import re
from decimal import Decimal
from pathlib import Path

import pytest
import yaml

from modules.core.errors import InputError
from modules.simulate.jobs import Topology
from modules.simulate.workloads import load_usage, load_workloads, runtimes_in
from tests.modules.simulate.fabrics import tree
from tests.support.crds import validate_cr

FABRIC = tree({"spine": {"leaf-1": 4, "leaf-2": 4}})

VCJOB = {
    "apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
    "metadata": {"name": "llm", "namespace": "training"},
    "spec": {
        "schedulerName": "volcano", "minAvailable": 5, "queue": "default",
        "networkTopology": {"mode": "hard", "highestTierAllowed": 2},
        "tasks": [
            {"name": "master", "replicas": 1, "template": {"spec": {"containers": [
                {"name": "m", "image": "busybox", "resources": {"requests": {"cpu": "2", "memory": "4Gi"}}}]}}},
            {"name": "worker", "replicas": 4,
             "partitionPolicy": {"totalPartitions": 2, "partitionSize": 2,
                                 "networkTopology": {"mode": "hard", "highestTierAllowed": 1}},
             "template": {"spec": {
                 "initContainers": [{"name": "fetch", "image": "busybox",
                                     "resources": {"requests": {"cpu": "16", "memory": "1Gi"}}}],
                 "containers": [
                     {"name": "w", "image": "trainer", "resources": {"limits": {"nvidia.com/gpu": 8},
                                                                     "requests": {"cpu": "8", "memory": "64Gi"}}},
                     {"name": "sidecar", "image": "busybox", "resources": {"requests": {"cpu": "500m"}}}]}}},
        ],
    },
}

RUNTIME = {
    "apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "ClusterTrainingRuntime",
    "metadata": {"name": "torch-volcano-tier1", "labels": {"trainer.kubeflow.org/framework": "torch"}},
    "spec": {
        "mlPolicy": {"numNodes": 2, "torch": {}},
        "podGroupPolicy": {"volcano": {"networkTopology": {"mode": "hard"}}},
        "template": {
            "metadata": {"annotations": {"scheduling.volcano.sh/queue-name": "default"}},
            "spec": {"replicatedJobs": [
                {"name": "dataset-initializer",
                 "template": {"spec": {"template": {"spec": {"schedulerName": "volcano", "containers": [
                     {"name": "dataset-initializer", "image": "init",
                      "resources": {"requests": {"cpu": "2", "memory": "8Gi"}}}]}}}}},
                {"name": "node",
                 "template": {"metadata": {"labels": {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}},
                              "spec": {"template": {"spec": {"schedulerName": "volcano", "containers": [
                                  {"name": "node", "image": "pytorch/pytorch",
                                   "resources": {"limits": {"nvidia.com/gpu": 8},
                                                 "requests": {"cpu": "32", "memory": "256Gi"}}}]}}}}},
            ]},
        },
    },
}

TRAINJOB = {
    "apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
    "metadata": {"name": "ddp", "namespace": "training"},
    "spec": {"runtimeRef": {"name": "torch-volcano-tier1", "apiGroup": "trainer.kubeflow.org",
                            "kind": "ClusterTrainingRuntime"},
             "trainer": {"numNodes": 3, "resourcesPerNode": {"requests": {"cpu": "48"}}}},
}


def write(tmp_path: Path, *docs, text: str | None = None) -> Path:
    path = tmp_path / "jobs.yaml"
    path.write_text(text if text is not None else yaml.safe_dump_all(list(docs), sort_keys=False))
    return path


def load(path: Path, runtimes=None):
    return load_workloads(path, "jobs.yaml", FABRIC, runtimes_in(runtimes or [RUNTIME]), "stack test")


def test_fixtures_are_valid_upstream_objects():
    for obj in (VCJOB, RUNTIME, TRAINJOB):
        validate_cr(obj)


def test_volcano_job(tmp_path):
    (job,) = load(write(tmp_path, VCJOB))
    assert job.name == "llm" and job.kind == "Job" and job.min_available == 5
    assert job.topology == Topology("hard", 2)
    assert [p.name for p in job.pods] == ["llm-master-0", "llm-worker-0", "llm-worker-1", "llm-worker-2",
                                          "llm-worker-3"]
    master, worker = job.pods[0], job.pods[1]
    assert master.requests == {"cpu": Decimal(2), "memory": Decimal(4 * 2**30)} and master.gpus == 0
    # limits stand in for requests; containers add up; the init container's 16 CPUs win over 8.5.
    assert worker.requests == {"nvidia.com/gpu": Decimal(8), "cpu": Decimal(16), "memory": Decimal(64 * 2**30)}
    assert worker.gpus == 8
    assert [(p.name, p.pods, p.topology) for p in job.partitions] == [
        ("worker-0", (1, 2), Topology("hard", 1)), ("worker-1", (3, 4), Topology("hard", 1))]


def test_min_available_defaults_to_every_replica(tmp_path):
    doc = yaml.safe_load(yaml.safe_dump(VCJOB))
    del doc["spec"]["minAvailable"]
    del doc["spec"]["networkTopology"]
    (job,) = load(write(tmp_path, doc))
    assert job.min_available == 5 and job.topology is None


def test_trainjob_resolves_against_the_runtime(tmp_path):
    (job,) = load(write(tmp_path, TRAINJOB))
    assert job.kind == "TrainJob"
    assert [p.name for p in job.pods] == ["ddp-dataset-initializer-0-0", "ddp-node-0-0", "ddp-node-0-1",
                                          "ddp-node-0-2"]
    assert job.min_available == 4                    # PodGroup minMember counts every PodSet
    node = job.pods[1]
    # resourcesPerNode is merged into the runtime's node container (Trainer v2.3): cpu replaced, rest kept.
    assert node.requests == {"nvidia.com/gpu": Decimal(8), "cpu": Decimal(48), "memory": Decimal(256 * 2**30)}
    assert job.topology == Topology("hard", 1)       # the runtime CRD's default highestTierAllowed


def test_trainjob_num_nodes_from_the_runtime(tmp_path):
    doc = yaml.safe_load(yaml.safe_dump(TRAINJOB))
    del doc["spec"]["trainer"]
    (job,) = load(write(tmp_path, doc))
    assert sum(1 for p in job.pods if "-node-" in p.name) == 2


def test_trainjob_without_volcano_topology_is_unconstrained(tmp_path):
    runtime = yaml.safe_load(yaml.safe_dump(RUNTIME))
    runtime["spec"]["podGroupPolicy"] = {"volcano": {}}
    validate_cr(runtime)
    (job,) = load(write(tmp_path, TRAINJOB), [runtime])
    assert job.topology is None


def test_namespaced_training_runtime(tmp_path):
    runtime = yaml.safe_load(yaml.safe_dump(RUNTIME))
    runtime["kind"] = "TrainingRuntime"
    runtime["metadata"]["namespace"] = "training"
    trainjob = yaml.safe_load(yaml.safe_dump(TRAINJOB))
    trainjob["spec"]["runtimeRef"]["kind"] = "TrainingRuntime"
    validate_cr(runtime)
    validate_cr(trainjob)
    (job,) = load(write(tmp_path, trainjob), [runtime])
    assert len(job.pods) == 4


def _edit(doc: dict, path: str, value) -> dict:
    doc = yaml.safe_load(yaml.safe_dump(doc))
    parts = path.split(".")
    target = doc
    for part in parts[:-1]:
        target = target[int(part)] if isinstance(target, list) else target[part]
    if value is KeyError:
        del target[parts[-1]]
    else:
        target[parts[-1]] = value
    return doc


BAD = [
    ("replicas", _edit(VCJOB, "spec.tasks.1.replicas", "four"),
     'document 1 (Job llm): spec.tasks[1].replicas: expected an integer >= 0 (the task\'s pod count), got "four"'),
    ("missing-replicas", _edit(VCJOB, "spec.tasks.0.replicas", KeyError),
     "document 1 (Job llm): spec.tasks[0].replicas: missing; expected an integer >= 0"),
    ("quantity", _edit(VCJOB, "spec.tasks.0.template.spec.containers.0.resources.requests.memory", "4GB"),
     "spec.tasks[0].template.spec.containers[0].resources.requests.memory: expected a Kubernetes quantity"),
    ("mode", _edit(VCJOB, "spec.networkTopology.mode", "strict"),
     'spec.networkTopology.mode: expected hard or soft, got "strict"'),
    ("both-tiers", _edit(VCJOB, "spec.networkTopology.highestTierName", "leaf"),
     "spec.networkTopology: highestTierAllowed and highestTierName are mutually exclusive"),
    ("tier-bool", _edit(VCJOB, "spec.networkTopology.highestTierAllowed", True),
     "spec.networkTopology.highestTierAllowed: expected an integer >= 0, got true"),
    ("partitions", _edit(VCJOB, "spec.tasks.1.partitionPolicy.partitionSize", 3),
     "totalPartitions x partitionSize (2 x 3) must equal the task's replicas (4)"),
    ("no-pods", _edit(VCJOB, "spec.tasks", [{"name": "w", "replicas": 0, "template": {"spec": {"containers": [
        {"name": "w", "image": "x"}]}}}]),
     "spec.tasks: the job has no pods: every task has replicas 0"),
    ("min-available", _edit(VCJOB, "spec.minAvailable", 6),
     "spec.minAvailable: 6 is more than the 5 replicas"),
    ("no-containers", _edit(VCJOB, "spec.tasks.0.template.spec.containers", []),
     "spec.tasks[0].template.spec.containers: expected a non-empty list of containers"),
    ("runtime", _edit(TRAINJOB, "spec.runtimeRef.name", "nope"),
     "document 1 (TrainJob ddp): spec.runtimeRef.name: no ClusterTrainingRuntime 'nope' in stack test "
     "(it has: torch-volcano-tier1)"),
    ("num-nodes", _edit(TRAINJOB, "spec.trainer.numNodes", 0),
     "spec.trainer.numNodes: expected an integer >= 1, got 0"),
    ("per-node", _edit(TRAINJOB, "spec.trainer.resourcesPerNode.requests", {"cpu": "lots"}),
     "spec.trainer.resourcesPerNode.requests.cpu: expected a Kubernetes quantity"),
]


@pytest.mark.parametrize("doc, message", [(d, m) for _, d, m in BAD], ids=[i for i, _, _ in BAD])
def test_bad_documents_name_the_document_and_path(tmp_path, doc, message):
    with pytest.raises(InputError) as err:
        load(write(tmp_path, doc))
    assert str(err.value).startswith("jobs.yaml: ")
    assert message in str(err.value)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("text, message", [
    ("kind: [unclosed", "jobs.yaml: line 2, column 1: invalid YAML"),
    ("- just\n- a list\n", "document 1: expected a Volcano Job or a TrainJob"),
    ("", "no Volcano Job (batch.volcano.sh/v1alpha1) or TrainJob"),
    ("apiVersion: batch/v1\nkind: Job\nmetadata: {name: x}\n", "no Volcano Job (batch.volcano.sh/v1alpha1)"),
])
def test_bad_files(tmp_path, text, message):
    with pytest.raises(InputError, match=re.escape(message)):
        load(write(tmp_path, text=text))


def test_other_objects_are_skipped_with_a_warning(tmp_path):
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "training"}}
    warnings: list[str] = []
    jobs = load_workloads(write(tmp_path, namespace, VCJOB), "jobs.yaml", FABRIC, runtimes_in([RUNTIME]), "test",
                          warnings)
    assert [j.name for j in jobs] == ["llm"]
    assert warnings == ["jobs.yaml: document 1: skipped v1 Namespace: only Volcano Jobs (batch.volcano.sh), "
                        "TrainJobs (trainer.kubeflow.org), PyTorchJobs, JobSets, Deployments, StatefulSets and "
                        "ReplicaSets are simulated"]


def test_second_document_is_named(tmp_path):
    with pytest.raises(InputError, match=r"document 2 \(Job llm\): metadata.name: job 'llm' is already defined"):
        load(write(tmp_path, VCJOB, VCJOB))


def test_runtime_mistakes_name_the_runtime(tmp_path):
    runtime = _edit(RUNTIME, "spec.template.spec.replicatedJobs.1.name", "trainer")
    runtime["spec"]["template"]["spec"]["replicatedJobs"][1]["template"]["metadata"]["labels"] = {}
    with pytest.raises(InputError, match="runtimeRef ClusterTrainingRuntime torch-volcano-tier1: "
                                          "spec.template.spec.replicatedJobs: .*has no trainer replicatedJob \\(label "
                                          "trainer.kubeflow.org/trainjob-ancestor-step: trainer\\)"):
        load(write(tmp_path, TRAINJOB), [runtime])


def test_usage_file(tmp_path):
    path = tmp_path / "usage.yaml"
    path.write_text('nodes:\n  "n00[1-2]": {nvidia.com/gpu: 8}\n  n005: {cpu: "100", memory: 1Ti}\n')
    usage = load_usage(path, "usage.yaml", FABRIC)
    assert usage == {"n001": {"nvidia.com/gpu": Decimal(8)}, "n002": {"nvidia.com/gpu": Decimal(8)},
                     "n005": {"cpu": Decimal(100), "memory": Decimal(2**40)}}


@pytest.mark.parametrize("text, message", [
    ("nodes: {n999: {cpu: 1}}", "usage.yaml: nodes.n999: node 'n999' is not in the stack's fabric"),
    ("nodes: {n001: {nvidia.com/gpu: 9}}", "nodes.n001.nvidia.com/gpu: expected a quantity between 0 and what"),
    ("nodes: {n001: {cpu: lots}}", "nodes.n001.cpu: expected a Kubernetes quantity"),
    ("nodes: {'n00[1-2]': {cpu: 1}, n002: {cpu: 1}}", "node 'n002' is listed twice"),
    ("used: {}", "expected a mapping with one key, nodes"),
])
def test_bad_usage(tmp_path, text, message):
    path = tmp_path / "usage.yaml"
    path.write_text(text)
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace("[", r"\[")):
        load_usage(path, "usage.yaml", FABRIC)


def test_pods_are_counted_against_the_bound_before_they_are_built(tmp_path):
    huge = _edit(VCJOB, "spec.tasks.1.replicas", 10**7)
    huge["spec"]["tasks"][1].pop("partitionPolicy")
    huge["spec"].pop("minAvailable")
    with pytest.raises(InputError, match=r"spec.tasks\[1\].replicas: the workloads would hold more than 1,000,000"):
        load(write(tmp_path, huge))
    job = _edit(TRAINJOB, "spec.trainer.numNodes", 10**7)
    with pytest.raises(InputError, match=r"spec.trainer.numNodes: the workloads would hold more than 1,000,000"):
        load(write(tmp_path, job))


def test_the_pod_budget_is_the_file_s_not_the_process_s():
    from modules.semantics.podspec import Reader
    from modules.simulate.workloads import PodBudget, volcano_job

    job = VCJOB
    doc = Reader("jobs.yaml", "document 1")
    budget = PodBudget(left=len(volcano_job(doc, job, {"nvidia.com/gpu"}).pods) + 1)
    volcano_job(doc, job, {"nvidia.com/gpu"}, budget=budget)          # one file: the budget shrinks
    with pytest.raises(InputError, match="the workloads would hold more than"):
        volcano_job(doc, job, {"nvidia.com/gpu"}, budget=budget)
    assert volcano_job(doc, job, {"nvidia.com/gpu"}).pods              # another reading starts afresh
