"""A Volcano Job's partitions and task minAvailable as Volcano v1.15.1's job webhooks treat them
(modules/upstream/volcano/partitions.py).

Provenance: volcano-sh/volcano v1.15.1, pkg/webhooks/admission/jobs/mutate/mutate_job.go
(``mutateSpec``, ``patchDefaultMinAvailable``) and pkg/webhooks/admission/jobs/validate/admit_job.go
(``validatePartitionPolicy``); the messages are upstream's format strings filled in.
"""
from __future__ import annotations

import pytest

from modules.semantics.partitions import partition_policies
from modules.upstream.volcano.partitions import webhook_refusal
from modules.semantics.workloads import workload_of


def job(*tasks, min_available=None):
    spec = {"tasks": [dict(t, template={"spec": {"containers": [{"name": "c", "image": "i",
                                                                 "resources": {"requests": {"cpu": "1"}}}]}})
                      for t in tasks]}
    if min_available is not None:
        spec["minAvailable"] = min_available
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "j", "namespace": "t"},
            "spec": spec}


def refusal(obj):
    found = [webhook_refusal(obj, p) for p in partition_policies(obj)]
    return [(f.field, f.message()) for f in found if f is not None]


@pytest.mark.parametrize("policy, replicas, task_min, expected", [
    ({"totalPartitions": 2, "partitionSize": 4}, 8, None, None),
    ({"totalPartitions": 2, "partitionSize": 4}, 6, None,
     ("spec.tasks[0].replicas", "'Replicas' are not equal to TotalPartitions*PartitionSize in task: w, job: j")),
    ({"totalPartitions": 0, "partitionSize": 4}, 0, None,
     ("spec.tasks[0].partitionPolicy.totalPartitions", "'TotalPartitions' must be greater than 0 in task: w, job: j")),
    ({"totalPartitions": 2, "partitionSize": 0}, 0, None,
     ("spec.tasks[0].partitionPolicy.partitionSize", "'PartitionSize' must be greater than 0 in task: w, job: j")),
    # minPartitions with the task's minAvailable left out: the mutating webhook derives it, so it agrees
    ({"totalPartitions": 2, "partitionSize": 4, "minPartitions": 1}, 8, None, None),
    ({"totalPartitions": 2, "partitionSize": 4, "minPartitions": 1}, 8, 4, None),
    ({"totalPartitions": 2, "partitionSize": 4, "minPartitions": 1}, 8, 8,
     ("spec.tasks[0].minAvailable", "'MinAvailable' is not equal to MinPartitions*PartitionSize in task: w, job: j")),
    # minPartitions 0 (omitted): no relation to minAvailable is enforced
    ({"totalPartitions": 2, "partitionSize": 4}, 8, 3, None),
])
def test_validate_partition_policy(policy, replicas, task_min, expected):
    task = {"name": "w", "replicas": replicas, "partitionPolicy": policy}
    if task_min is not None:
        task["minAvailable"] = task_min
    assert refusal(job(task)) == ([expected] if expected else [])


def test_job_min_available_defaults_to_the_tasks_defaulted_min_available():
    """patchDefaultMinAvailable (job minAvailable absent or 0) sums each task's minAvailable after
    mutateSpec: minPartitions x partitionSize for a partitioned task, else its replicas."""
    parts = {"name": "w", "replicas": 8, "partitionPolicy": {"totalPartitions": 2, "partitionSize": 4,
                                                             "minPartitions": 1}}
    assert workload_of(job(parts), []).min_member == 4
    assert workload_of(job(parts, min_available=0), []).min_member == 4
    assert workload_of(job(parts, min_available=8), []).min_member == 8
    two = job({"name": "a", "replicas": 4, "minAvailable": 2}, {"name": "b", "replicas": 2})
    assert workload_of(two, []).min_member == 2 + 2
    assert workload_of(job({"name": "a", "replicas": 3}), []).min_member == 3


@pytest.mark.parametrize("field, value", [
    ("replicas", "8"), ("replicas", 8.5), ("replicas", True), ("minAvailable", "4"),
    ("totalPartitions", "2"), ("partitionSize", 4.5), ("minPartitions", "1"),
])
def test_a_field_that_is_no_integer_is_the_schemas_business(field, value):
    """The Job CRD types these fields int32: the API server refuses a string or a fraction before any
    webhook runs, so validatePartitionPolicy never sees it (it was read as 0: "replicas is 0")."""
    task = {"name": "w", "replicas": 8, "minAvailable": 4,
            "partitionPolicy": {"totalPartitions": 2, "partitionSize": 4, "minPartitions": 1}}
    if field in task:
        task[field] = value
    else:
        task["partitionPolicy"][field] = value
    assert refusal(job(task)) == []


def test_an_absent_replicas_is_zero_as_in_go():
    """An omitted replicas is Go's zero value (the CRD has no default), which the webhook refuses."""
    task = {"name": "w", "partitionPolicy": {"totalPartitions": 2, "partitionSize": 4}}
    assert refusal(job(task)) == [("spec.tasks[0].replicas",
                                   "'Replicas' are not equal to TotalPartitions*PartitionSize in task: w, job: j")]


def test_strict_reader_refuses_what_the_webhook_refuses():
    """The simulator's strict reading uses the same checks as `volcano-job-admission` (refused_field):
    a task minAvailable that is not minPartitions x partitionSize is refused there too."""
    from modules.core.errors import InputError
    from modules.semantics.podspec import Reader
    from modules.semantics.workloads import volcano_job

    policy = {"totalPartitions": 2, "partitionSize": 4, "minPartitions": 1}
    good = job({"name": "w", "replicas": 8, "minAvailable": 4, "partitionPolicy": policy})
    assert len(volcano_job(Reader(file="jobs.yaml"), good).partitions) == 1
    bad = job({"name": "w", "replicas": 8, "minAvailable": 3, "partitionPolicy": policy})
    assert refusal(bad)
    with pytest.raises(InputError, match=r"spec\.tasks\[0\]\.minAvailable: the task's minAvailable \(3\) must equal "
                                         r"minPartitions x partitionSize \(1 x 4\)"):
        volcano_job(Reader(file="jobs.yaml"), bad)
