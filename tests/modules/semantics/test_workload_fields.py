"""Workload fields that only ``modules.semantics`` reads, as the rules (lenient) and the simulator
(strict) both get them: a PodGroup's minMember/minResources/subGroupPolicy, a TrainJob's numNodes and
resourcesPerNode, a Volcano Job's partitions."""
from __future__ import annotations

from decimal import Decimal

import pytest

from modules.core.errors import InputError
from modules.semantics.podspec import Reader
from modules.semantics.workloads import (SubGroupSpec, Topology, Unknown, gang_of, partition_gangs, pod_group,
                                         trainer_settings, trainer_workload, volcano_job)
from modules.simulate.snapshot import snapshot_from_objects

POD_GROUP = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
             "metadata": {"name": "g", "namespace": "team"},
             "spec": {"minMember": 4, "networkTopology": {"mode": "hard", "highestTierAllowed": 1}}}


def test_a_pod_group_without_min_resources_has_no_gate():
    """Volcano's JobInfo.GetMinResources is empty without minResources (v1.15.1
    pkg/scheduler/api/job_info.go): only minMember is checked. Strict readers accept it."""
    workload = pod_group(Reader("snap", "document 1"), POD_GROUP)
    assert (workload.min_member, workload.min_resources()) == (4, {})
    assert workload.topology == Topology("hard", 1, None)
    assert "no minResources" in workload.sizes_unknown
    with pytest.raises(Unknown, match="sets no minResources .Volcano then checks only minMember."):
        gang_of(POD_GROUP, [])        # the rules: the pods' size is not in the PodGroup


def test_a_pod_group_with_min_resources_shares_them_among_its_members():
    group = {**POD_GROUP, "spec": {**POD_GROUP["spec"], "minResources": {"nvidia.com/gpu": "32"}}}
    gang = gang_of(group, [])
    assert (gang.pods, gang.sets[0].requests) == (4, {"nvidia.com/gpu": Decimal(8)})
    assert pod_group(Reader(), group).min_resources() == {"nvidia.com/gpu": Decimal(32)}


def test_the_snapshot_reads_the_pod_group_through_semantics():
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
            "status": {"allocatable": {"cpu": "8", "memory": "8Gi", "pods": "10"}}}
    group = {**POD_GROUP, "spec": {"minMember": 1, "subGroupPolicy": [
        {"name": "rack", "matchLabelKeys": ["rank"], "subGroupSize": 1, "minSubGroups": 1,
         "networkTopology": {"mode": "soft"}}]}}
    pending = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": "p", "namespace": "team", "labels": {"rank": "0"},
                            "annotations": {"scheduling.k8s.io/group-name": "g"}},
               "spec": {"schedulerName": "volcano", "containers": [{"name": "c",
                                                                    "resources": {"requests": {"cpu": "1"}}}]}}
    job = snapshot_from_objects(list(enumerate([node, group, pending])), "snap").jobs[0]
    assert (job.min_available, job.min_resources, job.min_partitions) == (1, {}, {"rack": 1})
    assert [(p.name, p.topology) for p in job.partitions] == [("rack-0", Topology("soft", None, None))]
    assert pod_group(Reader(), group).sub_groups == (
        SubGroupSpec("rack", ("rank",), 1, 1, Topology("soft", None, None)),)


@pytest.mark.parametrize("edit, message", [
    ({"minMember": -1}, "document 1: spec.minMember: expected an integer >= 0, got -1"),
    ({"minResources": {"cpu": "lots"}}, "spec.minResources.cpu: expected a Kubernetes quantity"),
    ({"subGroupPolicy": [{"name": "x", "subGroupSize": 0}]},
     "spec.subGroupPolicy[0].subGroupSize: expected an integer >= 1, got 0"),
    ({"subGroupPolicy": [{"subGroupSize": 2}]}, "spec.subGroupPolicy[0].name: missing; expected a policy name"),
])
def test_strict_pod_group_mistakes_name_the_path(edit, message):
    with pytest.raises(InputError, match=message.replace("[", r"\[")):
        pod_group(Reader("snap", "document 1"), {**POD_GROUP, "spec": {**POD_GROUP["spec"], **edit}})
    lenient = Reader(strict=False)
    pod_group(lenient, {**POD_GROUP, "spec": {**POD_GROUP["spec"], **edit}})
    assert lenient.problems


RUNTIME = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "ClusterTrainingRuntime",
           "metadata": {"name": "rt"},
           "spec": {"mlPolicy": {"numNodes": 2}, "template": {"spec": {"replicatedJobs": [
               {"name": "node", "template": {
                   "metadata": {"labels": {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}},
                   "spec": {"template": {"spec": {"containers": [
                       {"name": "node", "resources": {"requests": {"cpu": "4"}}}]}}}}}]}}}}
TRAINJOB = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob", "metadata": {"name": "tj"},
            "spec": {"runtimeRef": {"name": "rt"}, "trainer": {"numNodes": 3}}}


def test_train_job_fields_are_read_on_the_train_job():
    runtime_reader, job_reader = Reader("jobs.yaml", "document 1 (TrainJob tj): runtimeRef rt"), \
        Reader("jobs.yaml", "document 1 (TrainJob tj)")
    assert trainer_workload(runtime_reader, TRAINJOB, RUNTIME, job_reader).pods == 3
    assert trainer_workload(runtime_reader, None, RUNTIME).pods == 2          # mlPolicy.numNodes
    bad = {**TRAINJOB, "spec": {**TRAINJOB["spec"], "trainer": {"numNodes": 0}}}
    with pytest.raises(InputError) as err:
        trainer_workload(runtime_reader, bad, RUNTIME, job_reader)
    assert str(err.value) == ("jobs.yaml: document 1 (TrainJob tj): spec.trainer.numNodes: expected an integer "
                              ">= 1, got 0")
    assert trainer_settings(TRAINJOB) == (3, None)
    assert trainer_settings({"spec": {"trainer": {"resourcesPerNode": {}}}}) == (None, {})


def test_a_malformed_runtime_is_named_at_its_path():
    broken = {**RUNTIME, "spec": {**RUNTIME["spec"], "template": {"spec": {"replicatedJobs": [{"name": "node"}]}}}}
    with pytest.raises(InputError) as err:
        trainer_workload(Reader("jobs.yaml", "document 1 (TrainJob tj): runtimeRef rt"), TRAINJOB, broken)
    assert str(err.value) == ("jobs.yaml: document 1 (TrainJob tj): runtimeRef rt: spec.template.spec."
                              "replicatedJobs[0].template: missing; expected a Job template")
    with pytest.raises(Unknown, match="has no trainer replicatedJob"):
        gang_of(TRAINJOB, [broken])   # the rules: lenient, no crash


def test_partition_gangs_are_the_partition_policies():
    job = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "j"},
           "spec": {"tasks": [{"name": "w", "replicas": 4, "partitionPolicy": {
               "totalPartitions": 2, "partitionSize": 2, "networkTopology": {"mode": "hard", "highestTierAllowed": 1}},
               "template": {"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "2"}}}]}}}]}}
    gangs = partition_gangs(volcano_job(Reader(strict=False), job))
    assert list(gangs) == ["spec.tasks[0].partitionPolicy.networkTopology"]
    gang = gangs["spec.tasks[0].partitionPolicy.networkTopology"]
    assert (gang.pods, gang.total(), gang.how) == (2, {"cpu": Decimal(4)}, "partitionSize 2")
