"""A PodGroup's minResources with the resource names each upstream producer writes, and the names
Volcano's scheduler reads back (modules/semantics/minresources.py).

Expected maps are written out from the upstream code paths, cited per test:
- volcano-sh/volcano v1.15.1 ``pkg/controllers/util/util.go`` ``GetPodQuotaUsage``/``CalTaskRequests``
  over k8s.io/kubernetes v1.35.3 ``pkg/quota/v1/evaluator/core/pods.go`` ``podComputeUsageHelper``;
- volcano-sh/volcano v1.15.1 ``pkg/scheduler/api/resource_info.go`` ``NewResource`` (+ ``IsCountQuota``);
- kubeflow/trainer v2.3.0 ``pkg/runtime/framework/plugins/volcano/volcano.go`` ``Build``;
- kubeflow/training-operator ``pkg/common/util/util.go`` ``CalcPGMinResources``/``AddResourceList``.
"""
from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest
import yaml

from modules.core.vocabulary.resource_names import is_extended, scheduler_view
from modules.semantics.minresources import (
    fill_counts,
    first_count_counts,
    pod_usage,
    volcano_gang_counts,
)
from modules.semantics.workloads import gang_of, workload_of
from modules.simulate.workloads import load_workloads
from tests.modules.simulate.fabrics import tree

GI = 2**30
GPU = "nvidia.com/gpu"


def d(mapping: dict) -> dict:
    return {k: Decimal(v) for k, v in mapping.items()}


def container(requests=None, limits=None, name="c"):
    resources = {}
    if requests is not None:
        resources["requests"] = requests
    if limits is not None:
        resources["limits"] = limits
    return {"name": name, "image": "img", "resources": resources}


def volcano_job(replicas: int, *containers, min_available=None, init=()):
    spec = {"containers": list(containers)}
    if init:
        spec["initContainers"] = list(init)
    job = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "j", "namespace": "t"},
           "spec": {"tasks": [{"name": "w", "replicas": replicas, "template": {"spec": spec}}]}}
    if min_available is not None:
        job["spec"]["minAvailable"] = min_available
    return job


GPU_POD = container({"cpu": "8", "memory": "64Gi", GPU: "8"}, {"memory": "64Gi", GPU: "8"})


def test_volcano_job_writes_quota_usage_names():
    """podComputeUsageHelper: pods, cpu + requests.cpu, memory + requests.memory, limits.memory,
    requests.nvidia.com/gpu (no limits.* for extended resources); GetPodQuotaUsage adds the bare
    nvidia.com/gpu; PodUsageFunc adds count/pods. CalTaskRequests multiplies by the replicas."""
    got = gang_of(volcano_job(2, GPU_POD), []).min_resources()
    assert got == d({"count/pods": 2, "pods": 2, "cpu": 16, "requests.cpu": 16, "memory": 128 * GI,
                     "requests.memory": 128 * GI, "limits.memory": 128 * GI,
                     "requests.nvidia.com/gpu": 16, GPU: 16})


def test_scheduler_reads_bare_names_only():
    """NewResource: cpu, memory, pods, ephemeral-storage and scalar names; count/* skipped; requests.*
    and limits.* are neither (IsScalarResourceName is false for them)."""
    written = gang_of(volcano_job(2, GPU_POD), []).min_resources()
    assert scheduler_view(written) == d({"pods": 2, "cpu": 16, "memory": 128 * GI, GPU: 16})
    assert scheduler_view(d({"ephemeral-storage": 1, "hugepages-2Mi": 1, "requests.hugepages-2Mi": 1,
                             "example.com/fpga": 1, "limits.cpu": 1, "count/jobs.batch": 1,
                             "attachable-volumes-csi-x": 1})) == \
        d({"ephemeral-storage": 1, "hugepages-2Mi": 1, "example.com/fpga": 1, "attachable-volumes-csi-x": 1})


def test_extended_resource_names():
    """helper.IsExtendedResourceName: a domain-qualified name outside kubernetes.io, never requests.*."""
    assert is_extended(GPU) and is_extended("rdma/hca_shared_devices_a")
    assert not is_extended("cpu") and not is_extended("requests.nvidia.com/gpu")
    assert not is_extended("kubernetes.io/batteries") and not is_extended("hugepages-2Mi")


def test_hugepages_and_limits_only():
    """hugepages-* gets both names; a limits-only container adds limits.* but no request names
    (the template is not defaulted); ephemeral-storage is a compute name like cpu."""
    usage = pod_usage(d({"hugepages-2Mi": 2 * GI, "ephemeral-storage": 10 * GI}), d({"cpu": 4}))
    assert usage == d({"count/pods": 1, "pods": 1, "hugepages-2Mi": 2 * GI, "requests.hugepages-2Mi": 2 * GI,
                       "ephemeral-storage": 10 * GI, "requests.ephemeral-storage": 10 * GI, "limits.cpu": 4})


def test_first_min_available_pods_and_init_containers():
    """CalcFirstCountResources over the first minAvailable pods; PodRequests/PodLimits take an init
    container's peak where it exceeds the running containers."""
    job = volcano_job(4, container({"cpu": "2"}, {"cpu": "4"}), min_available=3,
                      init=[container({"cpu": "6"}, {"cpu": "6"}, name="fetch")])
    assert gang_of(job, []).min_resources() == d({"count/pods": 3, "pods": 3, "cpu": 18, "requests.cpu": 18,
                                                  "limits.cpu": 18})


def test_trainer_writes_plain_requests():
    """Trainer's Volcano plugin: SinglePodRequests (PodRequests of the template) x count, no quota names."""
    runtime = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "ClusterTrainingRuntime",
               "metadata": {"name": "rt"},
               "spec": {"mlPolicy": {"numNodes": 2, "torch": {}}, "template": {"spec": {"replicatedJobs": [
                   {"name": "node", "template": {"metadata": {"labels": {
                       "trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}},
                       "spec": {"template": {"spec": {"containers": [dict(GPU_POD, name="node")]}}}}}]}}}}
    assert gang_of(runtime, []).min_resources() == d({"cpu": 16, "memory": 128 * GI, GPU: 16})


def test_training_operator_counts_containers_and_limits_without_requests():
    """AddResourceList: a container's requests, or its limits when it has no requests map; init
    containers are not counted."""
    template = {"spec": {"initContainers": [container({"cpu": "32"}, name="init")],
                         "containers": [container(None, {"cpu": "4", GPU: "1"}, name="a"),
                                        container({"memory": "1Gi"}, {"cpu": "9"}, name="b")]}}
    job = {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": "p", "namespace": "t"},
           "spec": {"pytorchReplicaSpecs": {"Worker": {"replicas": 2, "template": template}}}}
    assert gang_of(job, []).min_resources() == d({"cpu": 8, GPU: 2, "memory": 2 * GI})


def test_podgroup_controller_sees_the_defaulted_pod():
    """Volcano's PodGroup controller runs CalTaskRequests on the created Pod, whose requests the API
    server defaulted from its limits."""
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment",
                  "metadata": {"name": "s", "namespace": "t",
                               "annotations": {"scheduling.volcano.sh/group-min-member": "2"}},
                  "spec": {"replicas": 2, "template": {"spec": {"containers": [container(None, {"cpu": "4"})]}}}}
    assert gang_of(deployment, []).min_resources() == d({"count/pods": 2, "pods": 2, "cpu": 8, "requests.cpu": 8,
                                                        "limits.cpu": 8})


def test_podgroup_members_are_sized_by_the_requests_its_names_stand_for():
    """A PodGroup copied from a cluster carries the controller's names: its members ask for the bare
    amounts (requests.nvidia.com/gpu stands for nvidia.com/gpu, never a resource of its own), and
    what the scheduler compares is scheduler_view of the names as written."""
    pg = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
          "metadata": {"name": "pg", "namespace": "t"},
          "spec": {"minMember": 2, "minResources": {"count/pods": 2, "pods": 2, "requests.cpu": "16",
                                                    "limits.cpu": "32", "requests.nvidia.com/gpu": 16}}}
    workload = workload_of(pg, [])
    assert workload.sets[0].requests == d({"cpu": 8, GPU: 8})
    # upstream's scheduler ignores requests.* names: only the pod slots are compared
    assert scheduler_view(workload.min_resources()) == d({"pods": 2})


def test_simulator_compares_bare_names(tmp_path: Path):
    """The simulator's HyperNode pre-filter uses what NewResource reads: no quota name leaks in, and a
    fully requested job needs no separate minResources (it equals the gang's node-fit total)."""
    fabric = tree({"spine": {"leaf-1": 2}})
    path = tmp_path / "j.yaml"
    path.write_text(yaml.safe_dump(volcano_job(2, GPU_POD)))
    [job] = load_workloads(path, path.name, fabric, {}, "test")
    assert job.min_resources is None
    limits_only = volcano_job(2, container({"memory": "1Gi"}, {"cpu": "4", GPU: "1"}))
    path.write_text(yaml.safe_dump(limits_only))
    [job] = load_workloads(path, path.name, fabric, {}, "test")
    assert job.min_resources == d({"memory": 2 * GI})


# --- which pods a Volcano Job's minResources sums (volcano_gang_counts) ------------------------
# Ported from volcano-sh/volcano v1.15.1 pkg/controllers/job/job_controller_util_test.go: its tasks
# ``master`` (replicas 2, cpu 50m) and ``worker`` (replicas 2, cpu 100m), in that order. Case data:
# (name verbatim, master priority, worker priority, master minAvailable, worker minAvailable (None:
# the webhook's default, the replicas), job minMember (0: the sum of the tasks'), expected cpu milli,
# expected pods).
MASTER_M, WORKER_M, REPLICAS = 50, 100, 2
CALC_PG_MIN_CASES = [   # TestTaskPriority_CalcPGMin (calls TasksPriority.CalcPGMinResources directly)
    ("job's min available is 0, master's and workers is set to 1: min=1*master+1*worker", 0, 0, 1, 1, 0, 150, 2),
    ("job's min available is 0, master's is null and worker's is set to 1: min=2*master+worker",
     2, 0, None, 1, 0, 200, 3),
    ("job's min available is 3, master's is null and worker's is set to 1: min=2*master+1*worker ",
     0, 0, None, 1, 3, 200, 3),
    ("job's min available is 3, master's is 1 and worker's is null: min=1*master+2*worker", 0, 0, 1, None, 3, 250, 3),
    ("job's min available is 2, master's and worker's is set to 1: min=1*master+1*worker", 0, 0, 1, 1, 2, 150, 2),
    ("job's min available is 3, master's and worker's is set to 1: min=1*master+1*worker+1*master(high-priority)",
     2, 0, 1, 1, 3, 200, 3),
    ("job's min available is 3, master's and worker's is set to 1: min=1*worker+1*master+1*worker(high-priority)",
     0, 2, 1, 1, 3, 250, 3),
    ("job's min available is 3, master's is 0 and worker's is set to 1: min=1*worker+1*worker(high-priority)+1*master",
     0, 2, 0, 1, 3, 250, 3),
    ("job's min available is 4, master's is null and worker's is set to 1: min=1*worker+2*master+1*worker",
     0, 2, None, 1, 4, 300, 4),
    ("job's min available is 4, master's and worker's is set to 1: min=1*worker+1*master+1*worker(hi-prio)+1*master",
     0, 2, 1, 1, 4, 300, 4),
    ("job's min available is 2, master's is null and worker's is set to 1: min=2*master", 2, 0, None, 1, 2, 100, 2),
    ("job's min available is 2, master's is null and worker's is set to 1: min=1*worker+1*master",
     0, 2, None, 1, 2, 150, 2),
    ("job's min available is 2, master's is 1 and worker's is set to bull: min=1*master+1*worker",
     0, 0, 1, None, 2, 150, 2),
]
# TestCalcPGMinResources (the controller's calcPGMinResources, no PriorityClasses): unnamed cases, by
# index: (master minAvailable, worker minAvailable, job minAvailable, expected cpu milli, pods).
CALC_PG_MIN_RESOURCES_CASES = [
    (1, None, 2, 100, 2), (None, 1, 2, 100, 2), (None, None, 3, 200, 3),   # job < sum(task minAvailable)
    (1, 1, 3, 200, 3),                                                     # job > sum
    (1, None, 3, 250, 3), (1, 1, 2, 150, 2),                               # job = sum
]


@pytest.mark.parametrize("case", CALC_PG_MIN_CASES, ids=[c[0] for c in CALC_PG_MIN_CASES])
def test_upstream_calc_pg_min_table(case):
    _, m_prio, w_prio, m_min, w_min, job_min, cpu_m, pods = case
    tasks = [(REPLICAS, REPLICAS if m_min is None else m_min, m_prio),
             (REPLICAS, REPLICAS if w_min is None else w_min, w_prio)]
    master, worker = fill_counts(tasks, job_min or tasks[0][1] + tasks[1][1])
    assert (master * MASTER_M + worker * WORKER_M, master + worker) == (cpu_m, pods)


def _master_worker_job(m_min, w_min, job_min, m_class=None, w_class=None):
    tasks = []
    for name, cpu, own, cls in (("master", "50m", m_min, m_class), ("worker", "100m", w_min, w_class)):
        spec = {"containers": [container({"cpu": cpu})]}
        if cls:
            spec["priorityClassName"] = cls
        task = {"name": name, "replicas": REPLICAS, "template": {"spec": spec}}
        if own is not None:
            task["minAvailable"] = own
        tasks.append(task)
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "j", "namespace": "t"},
            "spec": {"minAvailable": job_min, "tasks": tasks}}


@pytest.mark.parametrize("case", CALC_PG_MIN_RESOURCES_CASES, ids=lambda c: f"m{c[0]}-w{c[1]}-job{c[2]}")
def test_upstream_calc_pg_min_resources_table(case):
    """The whole path on a Job manifest: webhook defaults, then calcPGMinResources."""
    m_min, w_min, job_min, cpu_m, pods = case
    got = gang_of(_master_worker_job(m_min, w_min, job_min), []).min_resources()
    assert got == d({"cpu": Decimal(cpu_m) / 1000, "requests.cpu": Decimal(cpu_m) / 1000,
                     "pods": pods, "count/pods": pods})


def test_priority_class_values_come_from_the_objects_and_unknown_counts_zero():
    """calcPGMinResources reads each task template's PriorityClass through its lister; a failed lookup
    keeps priority 0. job 2 < sum(task minAvailable) 4: the first 2 replicas by priority."""
    job = _master_worker_job(None, None, 2, "low", "high")
    classes = [{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": n}, "value": v}
               for n, v in (("low", 10), ("high", 1000))]
    assert gang_of(job, classes).min_resources()["cpu"] == Decimal("0.2")     # 2 x worker
    assert gang_of(job, []).min_resources()["cpu"] == Decimal("0.1")          # unknown: 0, spec order
    assert first_count_counts([(2, 2, 0), (2, 2, 5)], 3) == [1, 2]
    assert volcano_gang_counts([(4, 1, 0), (4, 1, 0)], 4) == [3, 1]            # own minAvailable first
