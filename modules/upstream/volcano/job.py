"""Volcano v1.15.1's job validating webhook (volcano-sh/volcano ``pkg/webhooks/admission/jobs/validate``
``admit_job.go``, ``util.go``), our own code: ``validate_job(obj, operation, old, cluster)`` returns
coded refusals (:mod:`modules.upstream.webhook_error`) worded as upstream's messages.

Not evaluated: the PodLevelResources feature gate's pod-level resource checks (off at v1.15.1).
"""
from __future__ import annotations

from modules.upstream.kubernetes.values import quantity
from modules.upstream.kubernetes.core_pod import validate_pod_template
from modules.upstream.kubernetes.pod_options import volcano_job_webhook
from modules.core.vocabulary.names import dns1123_subdomain, qualified_name
from modules.semantics.partitions import partition_policies
from modules.semantics.shapes import as_dict, as_int, as_list, meta
from modules.upstream.cluster import Cluster
from modules.upstream.field import FieldError, formatted
from modules.upstream.volcano.common import BOTH_TIERS, go_list, key, topology_both
from modules.upstream.volcano.partitions import webhook_refusal
from modules.upstream.webhook_error import refuse

JOB_PLUGINS = frozenset({"ssh", "env", "svc", "tensorflow", "mpi", "pytorch", "hcclrank", "ray"})
POLICY_EVENTS = ("*", "PodFailed", "PodEvicted", "PodPending", "Unknown", "TaskCompleted", "TaskFailed", "JobUpdated")
POLICY_ACTIONS = ("AbortJob", "RestartJob", "RestartTask", "RestartPod", "RestartPartition", "TerminateJob",
                  "CompleteJob", "ResumeJob")


# ---------------------------------------------------------------- policies (validatePolicies)

def _policy_errors(policies: list, path: str, field: str) -> list[FieldError]:
    """``validatePolicies``: the first failing policy, then the ``*`` exclusivity rule over the events
    seen so far (upstream reports both). ``field`` is the path upstream names in its field errors
    (``spec.policies``, ``spec.tasks.policies``)."""
    events_seen: list[str] = []
    out = _first_policy_error(policies, path, field, events_seen)
    if "*" in events_seen and len(events_seen) > 1:
        out.append(refuse(path, "job.policy-any-event-alone", "if there's * here, no other policy should be here"))
    return out


def _first_policy_error(policies: list, path: str, field: str, events_seen: list[str]) -> list[FieldError]:
    codes: set[int] = set()
    for i, policy in enumerate(map(as_dict, policies)):
        at = f"{path}[{i}]"
        listed = as_list(policy.get("events"))
        events = list(dict.fromkeys(str(e) for e in listed + ([policy["event"]] if policy.get("event") else [])))
        has_events = bool(policy.get("event")) or bool(listed)
        if has_events and policy.get("exitCode") is not None:
            return [refuse(at, "job.policy-event-and-exit-code", "must not specify event and exitCode simultaneously")]
        if not has_events and policy.get("exitCode") is None:
            return [refuse(at, "job.policy-event-or-exit-code", "either event and exitCode should be specified")]
        if not has_events:
            code = as_int(policy.get("exitCode"))
            if code == 0:
                return [refuse(f"{at}.exitCode", "job.policy-exit-code-zero", "0 is not a valid error code")]
            if code in codes:
                return [refuse(f"{at}.exitCode", "job.policy-duplicate-exit-code", f"duplicate exitCode {code}")]
            codes.add(code)
            continue
        for event in events:
            if event not in POLICY_EVENTS:
                return [refuse(f"{at}.event", "job.policy-event",
                               f'{field}: Invalid value: "{event}": invalid policy event', event)]
            if policy.get("action") not in POLICY_ACTIONS:
                return [refuse(f"{at}.action", "job.policy-action",
                               f'{field}: Invalid value: "{policy.get("action") or ""}": invalid policy action')]
            if event in events_seen:
                return [refuse(at, "job.policy-duplicate-event", f"duplicate event {event}  across different policy")]
            events_seen.append(event)
    return []


# ---------------------------------------------------------------- volumes (validateIO)

def _io_error(volumes: list) -> FieldError | None:
    """``validateIO``: the first failing job volume."""
    seen: set[str] = set()
    for i, volume in enumerate(map(as_dict, volumes)):
        at = f"spec.volumes[{i}]"
        mount = volume.get("mountPath") or ""
        if not mount:
            return refuse(f"{at}.mountPath", "job.volume-mount-path-required", "mountPath is required")
        if mount in seen:
            return refuse(f"{at}.mountPath", "job.volume-mount-path-duplicate", f"duplicated mountPath: {mount}")
        claim, claim_name = volume.get("volumeClaim"), volume.get("volumeClaimName") or ""
        if claim is None and not claim_name:
            return refuse(at, "job.volume-claim-missing", "either VolumeClaim or VolumeClaimName must be specified")
        if claim_name:
            if claim is not None:
                return refuse(at, "job.volume-claim-conflict",
                              "conflict: If you want to use an existing PVC, just specify VolumeClaimName."
                              "If you want to create a new PVC, you do not need to specify VolumeClaimName")
            errors = dns1123_subdomain(claim_name)
            if errors:
                return refuse(f"{at}.volumeClaimName", "job.volume-claim-name",
                              f"invalid VolumeClaimName {claim_name} : {go_list(errors)}")
        seen.add(mount)
    return None


# ---------------------------------------------------------------- tasks

def tasks_form_dag(tasks: list) -> bool:
    """``topoSort``: every task can be ordered after the tasks its ``dependsOn.name`` lists. As
    upstream counts it: each listed name adds one to the task's in-degree (a name listed twice, or a
    task that is not in the job, is never satisfied), each edge is removed once."""
    names = [key(as_dict(t).get("name")) for t in tasks]
    indegree = {n: 0 for n in names}
    edges: dict[str, dict[str, None]] = {}
    for task, name in zip(map(as_dict, tasks), names):
        for dep in as_list(as_dict(task.get("dependsOn")).get("name")):
            edges.setdefault(key(dep), {})[name] = None
            indegree[name] += 1
    ready = [n for n, d in indegree.items() if d == 0]
    done = 0
    while ready:
        done += 1
        for nxt in edges.pop(ready.pop(), {}):
            indegree[nxt] -= 1
            if indegree[nxt] == 0:
                ready.append(nxt)
    return done == len(names)


def _integer_cpu(value: object) -> bool:
    q = quantity(value)
    return q is not None and q == q.to_integral_value() and q != 0


def task_topology_error(task: dict, index: int) -> FieldError | None:
    """``validateTaskTopoPolicy``: with a topologyPolicy other than none, every container's cpu
    request (its limit when it has no requests) is a whole, non-zero number of cores."""
    if task.get("topologyPolicy") in (None, "", "none"):
        return None
    spec = as_dict(as_dict(task.get("template")).get("spec"))
    containers = as_list(spec.get("containers")) + as_list(spec.get("initContainers"))
    for i, container in enumerate(map(as_dict, containers)):
        resources = as_dict(container.get("resources"))
        requests = as_dict(resources.get("requests")) or as_dict(resources.get("limits"))
        if not _integer_cpu(requests.get("cpu")):
            return refuse(f"spec.tasks[{index}].template.spec.containers[{i}].resources.requests.cpu",
                          "job.task-topology-cpu", f"the cpu request isn't  an integer in spec.task[{index}] "
                                                   f"container[{i}].")
    return None


def task_template_errors(template: object, index: int, pod_level_resources: bool = False,
                         task_name: object = "task") -> list[FieldError]:
    """``validateTaskTemplate``: the API server's ``ValidatePodTemplate`` of a PodTemplate named after
    the task (``ObjectMeta{Name: task.Name, Namespace: job.Namespace}``), with the task's template and
    the job webhook's own ``PodValidationOptions``, each field error prefixed with ``spec.task[<i>].``
    as upstream joins them. The PodTemplate's name is checked first, as ``ValidatePodName`` (a DNS-1123
    subdomain; empty: required): ``Worker`` or ``task_a`` pass the pod-name check (a qualified name)
    and are refused here (``spec.task[0].metadata.name: Invalid value: "Worker": a lowercase RFC 1123
    subdomain ...``), whether or not the chart's VAP (a DNS-1123 label) is installed.

    Upstream passes only ``PodLevelResourcesEnabled`` (its feature gate, off at v1.15.1), so every
    relaxation the API server grants by default is off here: environment variable names must be C
    identifiers (``1F1B_SCHEDULE`` is refused in a Volcano Job, admitted in a Deployment) and
    namespaced sysctls are refused with host network."""
    at = f"spec.tasks[{index}]"
    options = volcano_job_webhook(pod_level_resources)
    named = [refuse(f"{at}.name", "job.pod-template-name", f"spec.task[{index}].{error.error()}")
             for error in _pod_template_name_errors(task_name)]
    return named + [refuse(error.field, "job.pod-template",
                           f"spec.task[{index}].{error.field[len(at) + 1:]}: {error.message()}")
                    for error in validate_pod_template(template, f"{at}.template", options=options)]


def _pod_template_name_errors(name: object) -> list[FieldError]:
    """``ValidateObjectMeta(&podTemplate.ObjectMeta, true, ValidatePodName, ...)`` on the name alone
    (the namespace is the job's, which the API server has already validated)."""
    return formatted("metadata.name", name if isinstance(name, str) else "", dns1123_subdomain,
                     "name or generateName is required")


def _task_errors(job: dict, task: dict, i: int, partitions: dict[str, FieldError],
                 pod_level_resources: bool = False) -> list[FieldError]:
    """Everything ``validateJobCreate`` checks of task ``i`` after its name (policies, pod name, pod
    template, topology policy, partition policy). ``pod_level_resources``: the webhook's
    PodLevelResources feature gate (off in the v1.15.1 chart)."""
    at, name = f"spec.tasks[{i}]", key(meta(job).get("name") or "")
    task_name = key(task.get("name") or "")
    out = _policy_errors(as_list(task.get("policies")), f"{at}.policies", "spec.tasks.policies")
    pod = f"{name}-{task_name}-{i}"
    errors = qualified_name(pod)
    if errors:
        out.append(refuse(f"{at}.name", "job.pod-name",
                          f"create pod with name {pod} validate failed {go_list(errors)}"))
    out += task_template_errors(task.get("template"), i, pod_level_resources, task.get("name"))
    topology = task_topology_error(task, i)
    if topology:
        out.append(topology)
    if at in partitions:
        out.append(partitions[at])
    if topology_both(as_dict(task.get("partitionPolicy")).get("networkTopology")):
        out.append(refuse(f"{at}.partitionPolicy.networkTopology", "job.network-topology-both", BOTH_TIERS))
    return out


def _tasks_errors(job: dict, tasks: list, pod_level_resources: bool = False) -> tuple[list[FieldError], int]:
    """The per-task checks of ``validateJobCreate`` and the tasks' total replicas."""
    name = key(meta(job).get("name") or "")
    partitions = _partition_refusals(job)
    out: list[FieldError] = []
    seen: set = set()
    total = 0
    for i, task in enumerate(map(as_dict, tasks)):
        task_name = key(task.get("name") or "")
        replicas = as_int(task.get("replicas")) or 0
        own_min = as_int(task.get("minAvailable"))
        if own_min is not None and own_min > replicas:
            out.append(refuse(f"spec.tasks[{i}].minAvailable", "job.task-min-available",
                              f"'minAvailable' is greater than 'replicas' in task: {task_name}, job: {name}"))
        total += replicas
        if task_name in seen:
            out.append(refuse(f"spec.tasks[{i}].name", "job.duplicate-task-name", f"duplicated task name {task_name}"))
            break
        seen.add(task_name)
        out += _task_errors(job, task, i, partitions, pod_level_resources)
    return out, total


# ---------------------------------------------------------------- the job

def _queue_errors(spec: dict, cluster: Cluster) -> list[FieldError]:
    """The queue the job names exists, is Open and is a leaf (not ``root``)."""
    queue_name = spec.get("queue") or ""
    queue = cluster.find("Queue", queue_name)
    if queue is None:
        return [refuse("spec.queue", "job.queue-not-found", f"unable to find job queue: queue.scheduling.volcano.sh "
                                                            f"\"{queue_name}\" not found")] if cluster.known else []
    out = []
    state = as_dict(queue.get("status")).get("state") or ""
    if state != "Open":
        out.append(refuse("spec.queue", "job.queue-not-open", f"can only submit job to queue with state `Open`, "
                                                              f"queue `{queue_name}` status is `{state}`"))
    if queue_name == "root":
        out.append(refuse("spec.queue", "job.queue-root", "can not submit job to root queue"))
    else:
        children = [q for q in cluster.of_kind("Queue") if as_dict(q.get("spec")).get("parent") == queue_name]
        if children:
            out.append(refuse("spec.queue", "job.queue-not-leaf", f"can only submit job to leaf queue, queue "
                                                                  f"`{queue_name}` has {len(children)} child queues"))
    return out


def validate_job_create(job: dict, cluster: Cluster) -> list[FieldError]:
    """``validateJobCreate``: every message it would join, each with the field it is about."""
    spec = as_dict(job.get("spec"))
    tasks = as_list(spec.get("tasks"))
    name = key(meta(job).get("name") or "")
    if not tasks:
        return [refuse("spec.tasks", "job.no-task", "No task specified in job spec")]
    plugins = as_dict(spec.get("plugins"))
    if "mpi" in plugins:
        master = _flag(as_list(plugins.get("mpi")), "master", "master")
        if master not in [as_dict(t).get("name") for t in tasks]:
            return [refuse("spec.plugins.mpi", "job.mpi-master", "The specified mpi master task was not found")]
    out: list[FieldError] = []
    if topology_both(spec.get("networkTopology")):
        out.append(refuse("spec.networkTopology", "job.network-topology-both", BOTH_TIERS))
    gates = as_dict(cluster.setting("feature_gates", {}))
    task_errors, total = _tasks_errors(job, tasks, bool(gates.get("PodLevelResources")))
    out += task_errors
    errors = qualified_name(name)
    if errors:
        out.append(refuse("metadata.name", "job.name",
                          f"create job with name {name} validate failed {go_list(errors)}"))
    if total < (as_int(spec.get("minAvailable")) or 0):
        out.append(refuse("spec.minAvailable", "job.min-available",
                          "job 'minAvailable' should not be greater than total replicas in tasks"))
    out += _policy_errors(as_list(spec.get("policies")), "spec.policies", "spec.policies")
    for plugin in sorted(plugins, key=str):
        if plugin not in JOB_PLUGINS:
            out.append(refuse(f"spec.plugins.{plugin}", "job.plugin", f"unable to find job plugin: {plugin}"))
    io = _io_error(as_list(spec.get("volumes")))
    if io:
        out.append(io)
    out += _queue_errors(spec, cluster)
    if any(as_dict(t).get("dependsOn") is not None for t in tasks) and not tasks_form_dag(tasks):
        out.append(refuse("spec.tasks", "job.tasks-not-dag", "job has dependencies between tasks, but doesn't form a "
                                                             "directed acyclic graph(DAG)"))
    return out


def _flag(arguments: list, name: str, default: str) -> str:
    """A plugin argument as Go's ``flag`` package reads it (``-name=v``, ``--name=v``, ``-name v``);
    the last one wins."""
    value, args = default, [a for a in arguments if isinstance(a, str)]
    for i, arg in enumerate(args):
        flag, eq, given = arg.lstrip("-").partition("=")
        if not arg.startswith("-") or flag != name:
            continue
        if eq:
            value = given
        elif i + 1 < len(args):
            value = args[i + 1]
    return value


def _partition_refusals(job: dict) -> dict[str, FieldError]:
    """``validatePartitionPolicy`` per task path (``spec.tasks[i]``): partitions.py decides it once."""
    out = {}
    for policy in partition_policies(job):
        refused = webhook_refusal(job, policy)
        if refused:
            out[policy.path] = refused
    return out


def _task_update_error(task: dict, i: int, partitions: dict[str, FieldError]) -> FieldError | None:
    name, replicas, own_min = task.get("name"), as_int(task.get("replicas")) or 0, as_int(task.get("minAvailable"))
    if replicas < 0:
        return refuse(f"spec.tasks[{i}].replicas", "job.update.replicas", f"'replicas' must be >= 0 in task: {name}")
    if own_min is not None and own_min < 0:
        return refuse(f"spec.tasks[{i}].minAvailable", "job.update.task-min-available-negative",
                      f"'minAvailable' must be >= 0 in task: {name}")
    if own_min is not None and own_min > replicas:
        return refuse(f"spec.tasks[{i}].minAvailable", "job.update.task-min-available",
                      f"'minAvailable' must be <= 'replicas' in task: {name}")
    return partitions.get(f"spec.tasks[{i}]")


def validate_job_update(new: dict, old: dict) -> list[FieldError]:
    """``validateJobUpdate``: only minAvailable, tasks' replicas/minAvailable and priorityClassName
    may change; the first failing check."""
    spec, old_spec = as_dict(new.get("spec")), as_dict(old.get("spec"))
    tasks, total = as_list(spec.get("tasks")), 0
    partitions = _partition_refusals(new)
    for i, task in enumerate(map(as_dict, tasks)):
        error = _task_update_error(task, i, partitions)
        if error:
            return [error]
        total += as_int(task.get("replicas")) or 0
    job_min = as_int(spec.get("minAvailable")) or 0
    if job_min > total:
        return [refuse("spec.minAvailable", "job.update.min-available",
                       "job 'minAvailable' must not be greater than total replicas")]
    if job_min < 0:
        return [refuse("spec.minAvailable", "job.update.min-available-negative", "job 'minAvailable' must be >= 0")]
    if topology_both(spec.get("networkTopology")):
        return [refuse("spec.networkTopology", "job.network-topology-both", BOTH_TIERS)]
    if len(tasks) != len(as_list(old_spec.get("tasks"))):
        return [refuse("spec.tasks", "job.update.tasks", "job updates may not add or remove tasks")]
    if _frozen(spec) != _frozen(old_spec):
        return [refuse("spec", "job.update.frozen", "job updates may not change fields other than `minAvailable`, "
                                                    "`tasks[*].replicas under spec` and `PriorityClassName`")]
    return []


def _frozen(spec: dict) -> dict:
    """The spec without the fields an update may change (and a generated claim's name)."""
    out = {k: v for k, v in spec.items() if k not in ("minAvailable", "priorityClassName")}
    out["tasks"] = [{k: v for k, v in as_dict(t).items() if k not in ("replicas", "minAvailable")}
                    for t in as_list(spec.get("tasks"))]
    out["volumes"] = [{k: v for k, v in as_dict(vol).items()
                       if not (k == "volumeClaimName" and as_dict(vol).get("volumeClaim") is not None)}
                      for vol in as_list(spec.get("volumes"))]
    return out


def validate_job(obj: dict, operation: str, old: dict | None, cluster: Cluster) -> list[FieldError]:
    """``/jobs/validate``: ``validateJobCreate`` on CREATE, ``validateJobUpdate`` on UPDATE."""
    if operation == "UPDATE" and old is not None:
        return validate_job_update(obj, old)
    return validate_job_create(obj, cluster)
