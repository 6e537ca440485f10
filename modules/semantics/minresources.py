"""A PodGroup's ``minResources``: the resource names each producer writes, and the ones Volcano's
scheduler reads back.

Who writes it, and with which names (all sums over the gang's pods):

- **Volcano's job controller** (volcano-sh/volcano v1.15.1, ``pkg/controllers/job/job_controller_actions.go``
  ``calcPGMinResources`` -> ``pkg/controllers/util/util.go`` ``CalTaskRequests`` -> ``GetPodQuotaUsage``)
  runs Kubernetes' quota ``PodUsageFunc`` (k8s.io/kubernetes v1.35.3, the version Volcano's go.mod pins,
  ``pkg/quota/v1/evaluator/core/pods.go`` ``PodUsageFunc`` / ``podComputeUsageHelper``) on the task
  *template*, which no API server has defaulted. Per pod: ``count/pods: 1``, ``pods: 1``; ``cpu``,
  ``memory``, ``ephemeral-storage`` and the same with a ``requests.`` prefix where requested;
  ``limits.cpu``, ``limits.memory``, ``limits.ephemeral-storage`` where limited; ``hugepages-*`` and
  ``requests.hugepages-*``; ``requests.<extended>`` for an extended resource such as
  ``nvidia.com/gpu``, to which ``GetPodQuotaUsage`` adds the bare ``nvidia.com/gpu`` again (it copies
  every non-native ``requests.``-prefixed name without its prefix). ``pod_usage`` is that map.
- **Volcano's PodGroup controller** (``pkg/controllers/podgroup/pg_controller_handler.go``
  ``buildPodGroupFromPod``) does the same on a created Pod (Deployments, StatefulSets, bare Pods),
  which the API server *has* defaulted: limits stand in for missing requests.
- **Trainer v2.3's Volcano plugin** (kubeflow/trainer v2.3.0,
  ``pkg/runtime/framework/plugins/volcano/volcano.go`` ``Build``) sums each pod set's
  ``SinglePodRequests`` (``pkg/runtime/runtime.go``: component-helpers ``PodRequests`` on the
  undefaulted template) times its count: plain names, requests only.
- **Training Operator v1** (kubeflow/training-operator, ``pkg/common/util/util.go``
  ``CalcPGMinResources`` / ``AddResourceList``) sums the *containers* of the first minMember pods:
  their requests, or their limits when a container has no requests map at all. Plain names.

What Volcano's scheduler reads back (v1.15.1 ``pkg/scheduler/api/resource_info.go`` ``NewResource``,
used by ``JobInfo.GetMinResources`` for enqueue, proportion, capacity, overcommit and the
network-topology-aware HyperNode pre-filter ``isEligibleHyperNode``): ``cpu``, ``memory``, ``pods``,
``ephemeral-storage`` and the scalar names (``IsScalarResourceName``: extended, ``hugepages-*``,
``kubernetes.io/``-prefixed, ``attachable-volumes-*``); ``count/*`` is skipped (``IsCountQuota``) and
every other name (``requests.cpu``, ``limits.memory``, ``requests.nvidia.com/gpu``) is ignored. So an
extended resource is compared with a node's allocatable under its bare name, which the job controller
also writes; the prefixed names only matter to the ``resourcequota`` plugin, which masks minResources
with a namespace ResourceQuota's hard names. ``scheduler_view`` is that reading.
"""
from __future__ import annotations

from decimal import Decimal
from typing import Any, Mapping

from .podspec import Reader, amounts

from modules.core.vocabulary.resource_names import (COMPUTE, HUGEPAGES, LIMITS, REQUESTS,
                                                    is_extended, is_native, scheduler_view)


def pod_usage(requests: Mapping[str, Decimal], limits: Mapping[str, Decimal]) -> dict[str, Decimal]:
    """One pod's quota usage as Volcano's ``GetPodQuotaUsage`` computes it (``PodUsageFunc`` on a
    pending pod, then the bare names of extended resources). ``requests``/``limits``: the pod's
    ``PodRequests``/``PodLimits`` (``podspec.PodRequests`` ``quota``/``fit`` and ``limits``)."""
    out: dict[str, Decimal] = {"count/pods": Decimal(1), "pods": Decimal(1)}
    for name in COMPUTE:
        if name in requests:
            out[name] = out[REQUESTS + name] = requests[name]
        if name in limits:
            out[LIMITS + name] = limits[name]
    for name, amount in requests.items():
        if name.startswith(HUGEPAGES):
            out[name] = out[REQUESTS + name] = amount
        if is_extended(name):
            out[REQUESTS + name] = amount
    for name in list(out):
        if name.startswith(REQUESTS) and not is_native(name):
            out[name[len(REQUESTS):]] = out[name]
    return out


def pod_requests_of(min_resources: Mapping[str, Decimal]) -> dict[str, Decimal]:
    """The pod requests a hand-written minResources stands for (to size a PodGroup's members): the
    names the scheduler reads, with ``requests.X`` standing for X where X itself is missing; no pod
    slots, no limits, no object counts."""
    out = dict(min_resources)
    for name, amount in min_resources.items():
        if name.startswith(REQUESTS):
            out.setdefault(name[len(REQUESTS):], amount)
    view = scheduler_view(out)
    view.pop("pods", None)
    return view


def training_operator_pod(reader: Reader, spec: Any, path: str) -> dict[str, Decimal]:
    """One pod's share of a Training Operator v1 PodGroup's minResources: each container's requests,
    or its limits when it has no requests map (``AddResourceList``); init containers and overhead
    are not counted."""
    out: dict[str, Decimal] = {}
    containers = spec.get("containers") if isinstance(spec, dict) else None
    for i, container in enumerate(containers if isinstance(containers, list) else []):
        resources = container.get("resources") if isinstance(container, dict) else None
        if not isinstance(resources, dict):
            continue
        where = f"{path}.containers[{i}].resources"
        chosen = "requests" if isinstance(resources.get("requests"), dict) else "limits"
        for name, amount in amounts(reader, resources.get(chosen), f"{where}.{chosen}").items():
            out[name] = out.get(name, Decimal(0)) + amount
    return out


def volcano_gang_counts(tasks: list[tuple[int, int, int]], job_min: int) -> list[int]:
    """How many pods of each task Volcano's job controller sums into a Job's PodGroup minResources
    (volcano-sh/volcano v1.15.1 ``pkg/controllers/job/job_controller_actions.go`` ``calcPGMinResources``,
    with ``TasksPriority.CalcFirstCountResources`` / ``CalcPGMinResources`` in
    ``job_controller_util.go``). ``tasks``: (replicas, minAvailable after the mutating webhook,
    PriorityClass value) in spec order; the answer is in spec order too.

    Tasks are sorted by priority, highest first (``sort.Sort``: an insertion sort up to 12 tasks, so
    ties keep spec order; modelled as stable for any count). When the job's minAvailable is below the
    sum of the tasks' minAvailable: the first job-minAvailable pods of the tasks' *replicas* in that
    order (``first_count_counts``); otherwise ``fill_counts``."""
    if job_min < sum(t[1] for t in tasks):
        return first_count_counts(tasks, job_min)
    return fill_counts(tasks, job_min)


def _by_priority(tasks: list[tuple[int, int, int]]) -> list[int]:
    return sorted(range(len(tasks)), key=lambda i: -tasks[i][2])


def first_count_counts(tasks: list[tuple[int, int, int]], count: int) -> list[int]:
    """``CalcFirstCountResources``: the first ``count`` pods of the tasks' replicas, by priority."""
    counts = [0] * len(tasks)
    for i in _by_priority(tasks):
        counts[i] = min(tasks[i][0], max(count, 0))
        count -= counts[i]
    return counts


def fill_counts(tasks: list[tuple[int, int, int]], job_min: int) -> list[int]:
    """``TasksPriority.CalcPGMinResources``: each task's own minAvailable by priority (capped at what
    the job's minAvailable leaves), then the tasks' remaining replicas by priority up to it."""
    counts, left, order = [0] * len(tasks), job_min, _by_priority(tasks)
    for i in order:
        counts[i] = min(tasks[i][1], left)
        left -= counts[i]
    for i in order:
        extra = min(max(tasks[i][0] - tasks[i][1], 0), left)
        counts[i] += extra
        left -= extra
    return counts
