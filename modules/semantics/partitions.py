"""A Volcano Job task's ``partitionPolicy`` as written, and what Volcano v1.15.1's job webhooks make of
it: the mutating webhook's default task ``minAvailable`` and the validating webhook's refusals.

volcano-sh/volcano v1.15.1:
- ``pkg/webhooks/admission/jobs/mutate/mutate_job.go`` ``mutateSpec``: a task without ``minAvailable``
  gets ``minPartitions x partitionSize`` when ``minPartitions > 0``, else its ``replicas``.
- ``pkg/webhooks/admission/jobs/validate/admit_job.go`` ``validatePartitionPolicy`` (Go only: no
  ValidatingAdmissionPolicy of the chart and no CEL rule of the Job CRD states it), first failing
  check only: ``totalPartitions > 0``, ``partitionSize > 0``, ``replicas == totalPartitions x
  partitionSize``, and, when the task's ``minAvailable`` is set and ``minPartitions > 0``,
  ``minAvailable == minPartitions x partitionSize``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

from .shapes import as_dict, as_int, as_list

_TASK_INTS, _POLICY_INTS = ("replicas", "minAvailable"), ("totalPartitions", "partitionSize", "minPartitions")


@dataclass(frozen=True)
class PartitionPolicy:
    """A task's partitionPolicy as written, with the task's replicas and minAvailable."""
    task: str
    path: str                    # the task's path, e.g. spec.tasks[0]
    replicas: int
    min_available: int | None    # the task's own, as written
    total: int | None            # totalPartitions
    size: int | None             # partitionSize
    min_partitions: int

    @property
    def defaulted_min_available(self) -> int:
        """The task's minAvailable after Volcano's mutating webhook."""
        return _defaulted(self.min_available, self.min_partitions, self.size, self.replicas)


def _defaulted(own: int | None, min_partitions: int, size: int | None, replicas: int) -> int:
    """``mutateSpec``: a task's minAvailable as written, else ``minPartitions x partitionSize`` when
    minPartitions > 0, else its replicas."""
    if own is not None:
        return own
    if min_partitions > 0 and size is not None:
        return min_partitions * size
    return max(replicas, 0)


def task_min_available(task: dict) -> int:
    """A task's minAvailable after Volcano's mutating webhook (``mutateSpec``). The job's own
    minAvailable, when absent or 0, becomes the sum of these (``patchDefaultMinAvailable``)."""
    policy = as_dict(task.get("partitionPolicy"))
    return _defaulted(as_int(task.get("minAvailable")), as_int(policy.get("minPartitions")) or 0,
                      as_int(policy.get("partitionSize")), as_int(task.get("replicas")) or 0)


def partition_policies(obj: dict) -> Iterator[PartitionPolicy]:
    """Every task with a partitionPolicy of a Volcano Job (or a CronJob's jobTemplate) whose integer
    fields the CRD schema admits (a non-integer one is schema validation's finding, not the webhook's)."""
    if obj.get("kind") == "CronJob":
        spec, base = as_dict(as_dict(as_dict(obj.get("spec")).get("jobTemplate")).get("spec")), "spec.jobTemplate.spec"
    else:
        spec, base = as_dict(obj.get("spec")), "spec"
    for i, task in enumerate(as_list(spec.get("tasks"))):
        task = as_dict(task)
        policy = task.get("partitionPolicy")
        if not isinstance(policy, dict):
            continue
        # The CRD types these int32: a string or a fraction is refused by the API server's schema
        # before any webhook runs (absent or null is Go's zero value / nil).
        if any(v is not None and as_int(v) is None
               for v in [task.get(k) for k in _TASK_INTS] + [policy.get(k) for k in _POLICY_INTS]):
            continue
        name = task.get("name") if isinstance(task.get("name"), str) and task.get("name") else f"default{i}"
        yield PartitionPolicy(name, f"{base}.tasks[{i}]", as_int(task.get("replicas")) or 0,
                              as_int(task.get("minAvailable")), as_int(policy.get("totalPartitions")),
                              as_int(policy.get("partitionSize")), as_int(policy.get("minPartitions")) or 0)


def refused_field(p: PartitionPolicy) -> str | None:
    """The task field (relative to the task) of the first check ``validatePartitionPolicy`` fails,
    or None. The port (modules/upstream/volcano/partitions.py) words it as upstream; the simulator's
    strict reader says it its own way."""
    if p.total is None or p.size is None:
        return None
    if p.total <= 0:
        return "partitionPolicy.totalPartitions"
    if p.size <= 0:
        return "partitionPolicy.partitionSize"
    if p.replicas != p.total * p.size:
        return "replicas"
    if p.min_partitions > 0 and p.defaulted_min_available != p.min_partitions * p.size:
        return "minAvailable"
    return None
