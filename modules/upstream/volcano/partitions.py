"""Volcano v1.15.1's ``validatePartitionPolicy`` (``pkg/webhooks/admission/jobs/validate/admit_job.go``,
Go only: no ValidatingAdmissionPolicy of the chart and no CEL rule of the Job CRD states it): the
first failing check of a task's partitionPolicy as a coded refusal worded as upstream. Which check
fails is the semantic core's (``modules/semantics/partitions.py``, shared with the simulator)."""
from __future__ import annotations

from modules.semantics.partitions import PartitionPolicy, refused_field
from modules.semantics.shapes import meta
from modules.upstream.field import FieldError
from modules.upstream.webhook_error import refuse


def webhook_refusal(obj: dict, p: PartitionPolicy) -> FieldError | None:
    """The coded refusal of the first check ``validatePartitionPolicy`` fails, or None. An absent
    totalPartitions/partitionSize is the CRD schema's business (both are required)."""
    job = meta(obj).get("name")
    if obj.get("kind") == "CronJob":   # its Jobs are named <cronjob>-<scheduled minute> (cronjob getJobName)
        job = f"{job}-<minutes>"
    failed = refused_field(p)
    if not failed:
        return None
    code, text = CHECKS[failed]
    return refuse(f"{p.path}.{failed}", code, f"{text} in task: {p.task}, job: {job}")


# The task field each check of validatePartitionPolicy refuses -> (our code, upstream's words).
CHECKS = {
    "partitionPolicy.totalPartitions": ("job.partition-total", "'TotalPartitions' must be greater than 0"),
    "partitionPolicy.partitionSize": ("job.partition-size", "'PartitionSize' must be greater than 0"),
    "replicas": ("job.partition-replicas", "'Replicas' are not equal to TotalPartitions*PartitionSize"),
    "minAvailable": ("job.partition-min-available", "'MinAvailable' is not equal to MinPartitions*PartitionSize"),
}
CODES = frozenset(code for code, _ in CHECKS.values())
