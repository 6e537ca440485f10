"""What Volcano v1.15.1's job admission webhook checks in Go about partitions, which no
ValidatingAdmissionPolicy of the chart nor CEL rule of the Job CRD carries: a task's partitionPolicy
must cut its replicas into whole partitions (modules/upstream/volcano/partitions.py). A named sub-rule of
`upstream-admission`, which runs the job webhook's other checks and leaves these to it.
"""
from __future__ import annotations

from typing import Iterator

from ..framework import MANDATORY, CheckContext, Finding, Rule, api_group, where
from modules.upstream.volcano.partitions import partition_policies, webhook_refusal

RULE_ID = "volcano-job-admission"
GROUP = "batch.volcano.sh"


def _fix(p, path: str) -> str:
    if path.endswith(".replicas"):
        return (f"replicas is {p.replicas} but totalPartitions x partitionSize is {p.total} x {p.size} = "
                f"{p.total * p.size}: make replicas a multiple of partitionSize and set totalPartitions to "
                "replicas / partitionSize")
    if path.endswith(".minAvailable"):
        return (f"the task's minAvailable is {p.min_available} but minPartitions x partitionSize is "
                f"{p.min_partitions} x {p.size} = {p.min_partitions * p.size}: drop the task's minAvailable "
                "(the webhook then sets it to minPartitions x partitionSize) or make them agree")
    return "set totalPartitions and partitionSize to at least 1"


def _volcano_job_admission(obj: dict, ctx: CheckContext) -> Iterator[Finding]:
    if api_group(obj) != GROUP:
        return
    for p in partition_policies(obj):
        refused = webhook_refusal(obj, p)
        if refused is None:
            continue
        path, message = refused
        # The CronJob webhook checks only schedule and timeZone (admit_cronjob.go validateCronjobSpec):
        # the CronJob is admitted and every Job the cronjob controller creates from it is refused.
        who = ("Volcano's job webhook rejects every Job this CronJob creates (the CronJob itself is admitted: "
               "its webhook checks only schedule and timeZone)") if obj.get("kind") == "CronJob" else \
            "Volcano's job webhook rejects it"
        yield Finding(path, f"{where(obj, path)}: {who}: \"{message}\" (validatePartitionPolicy); {_fix(p, path)}.")


RULES = (
    Rule(
        id=RULE_ID,
        description="Volcano Jobs pass what Volcano v1.15.1's job admission webhook checks in Go: each task's "
                    "partitionPolicy has replicas = totalPartitions x partitionSize and, with minPartitions, "
                    "the task's minAvailable = minPartitions x partitionSize.",
        why="These checks live in Volcano's webhook code (pkg/webhooks/admission/jobs/validate/admit_job.go "
            "validatePartitionPolicy), not in any ValidatingAdmissionPolicy or CRD rule, so schema validation "
            "does not see them (upstream-admission runs the webhook's other checks and leaves these to this "
            "rule); the API server refuses the job at creation "
            "(a CronJob is admitted, and every Job it creates is refused). "
            "`trainstack render` refuses the same mistake in a stack (workloads.volcanoJobs[].partitions).",
        fix="Make replicas a multiple of partitionSize with totalPartitions = replicas / partitionSize; leave "
            "the task's minAvailable unset when minPartitions is set (the mutating webhook derives it).",
        severity="high", enforcement=MANDATORY, check=_volcano_job_admission,
        kinds=frozenset({"Job", "CronJob"})),
)
