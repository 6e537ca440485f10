"""Two named rules beside `upstream-admission` for Volcano v1.15.1's job webhook (the registry's
checks, modules/upstream/volcano/):

- `volcano-job-admission`: the partition checks (``validatePartitionPolicy``), which no
  ValidatingAdmissionPolicy of the chart nor CEL rule of the Job CRD carries: a task's
  partitionPolicy must cut its replicas into whole partitions. `upstream-admission` runs the job
  webhook's other checks and leaves these (selected by code) to this rule, with their own fix.
- `volcano-cronjob-runs`: what the job webhook refuses of the Job a Volcano CronJob creates at each
  run. The CronJob's own webhook checks only schedule, time zone and name, so the CronJob is
  admitted; each run fails to create its Job. Advisory: the API server makes no finding at create.
"""
from __future__ import annotations

from typing import Iterator

from modules.upstream.volcano.partitions import CODES as PARTITION_CODES
from modules.semantics.partitions import PartitionPolicy, partition_policies

from ..framework import ADVISORY, MANDATORY, CheckContext, Finding, Rule, api_group, where
from .admission import stack_admission, stack_cluster, stack_install

RULE_ID = "volcano-job-admission"
CRONJOB_RULE_ID = "volcano-cronjob-runs"
GROUP = "batch.volcano.sh"


def _fix(p: PartitionPolicy | None, field: str) -> str:
    if p is not None and field.endswith(".replicas"):
        return (f"replicas is {p.replicas} but totalPartitions x partitionSize is {p.total} x {p.size} = "
                f"{p.total * p.size}: make replicas a multiple of partitionSize and set totalPartitions to "
                "replicas / partitionSize")
    if p is not None and field.endswith(".minAvailable"):
        return (f"the task's minAvailable is {p.min_available} but minPartitions x partitionSize is "
                f"{p.min_partitions} x {p.size} = {p.min_partitions * p.size}: drop the task's minAvailable "
                "(the webhook then sets it to minPartitions x partitionSize) or make them agree")
    return "set totalPartitions and partitionSize to at least 1"


def _policy_at(policies: dict[str, PartitionPolicy], field: str) -> PartitionPolicy | None:
    """The partition policy of the task ``field`` lies in."""
    return next((p for path, p in policies.items() if field.startswith(path + ".")), None)


def _volcano_job_admission(obj: dict, ctx: CheckContext) -> Iterator[Finding]:
    if api_group(obj) != GROUP:
        return
    policies = {p.path: p for p in partition_policies(obj)}
    for _, error in stack_admission(ctx).judge(obj, ("volcano",)):
        if error.origin not in PARTITION_CODES:
            continue
        yield Finding(error.field, f"{where(obj, error.field)}: Volcano's job webhook rejects it: "
                                   f"\"{error.message()}\" (validatePartitionPolicy); "
                                   f"{_fix(_policy_at(policies, error.field), error.field)}.")


def _volcano_cronjob_runs(obj: dict, ctx: CheckContext) -> Iterator[Finding]:
    from modules.upstream.fixes import fix_for
    from ..admission.webhook_check import runs_of_cronjob

    if api_group(obj) != GROUP:
        return
    policies = {p.path: p for p in partition_policies(obj)}
    for check, error in runs_of_cronjob(obj, stack_cluster(ctx), stack_install(ctx)):
        if error.origin in PARTITION_CODES:
            fix = _fix(_policy_at(policies, error.field), error.field)
        else:
            fix = fix_for(error) or f"change {error.field} so that the job webhook's check holds"
        yield Finding(error.field, f"{where(obj, error.field)}: the CronJob is admitted (its webhook checks only "
                                   f"schedule, time zone and name), but each run would fail: Volcano's job webhook "
                                   f"refuses the Job it creates: \"{error.message()}\" ({check.upstream}, "
                                   f"{check.name}); fix: {fix}.")


RULES = (
    Rule(
        id=RULE_ID,
        description="Volcano Jobs pass what Volcano v1.15.1's job admission webhook checks in Go: each task's "
                    "partitionPolicy has replicas = totalPartitions x partitionSize and, with minPartitions, "
                    "the task's minAvailable = minPartitions x partitionSize.",
        why="These checks live in Volcano's webhook code (pkg/webhooks/admission/jobs/validate/admit_job.go "
            "validatePartitionPolicy), not in any ValidatingAdmissionPolicy or CRD rule, so schema validation "
            "does not see them (upstream-admission runs the webhook's other checks and leaves these to this "
            "rule); the API server refuses the job at creation. "
            "`trainstack render` refuses the same mistake in a stack (workloads.volcanoJobs[].partitions).",
        fix="Make replicas a multiple of partitionSize with totalPartitions = replicas / partitionSize; leave "
            "the task's minAvailable unset when minPartitions is set (the mutating webhook derives it).",
        severity="high", enforcement=MANDATORY, check=_volcano_job_admission, kinds=frozenset({"Job"})),
    Rule(
        id=CRONJOB_RULE_ID,
        description="The Job a Volcano CronJob creates at each run passes Volcano v1.15.1's job admission webhook "
                    "(its template's tasks, policies, queue and partitions, as for a Job).",
        why="Volcano's CronJob webhook (admit_cronjob.go) checks only the schedule, the time zone and the name, "
            "so the API server admits a CronJob whose jobTemplate the job webhook refuses; the cronjob controller "
            "then fails to create the Job at every run, and nothing runs.",
        fix="Fix the jobTemplate as the quoted message says, as you would the Job.",
        severity="medium", enforcement=ADVISORY, check=_volcano_cronjob_runs, kinds=frozenset({"CronJob"})),
)
