"""What Volcano v1.15.1's validating admission webhooks check in Go (volcano-sh/volcano
``pkg/webhooks/admission/<kind>/validate``), our own code. Each check takes the object (and the old
one on UPDATE) plus a ``lookup`` for cluster objects (queues, by name) and returns
``[(path, message)]`` with upstream's wording; an empty list admits.

``lookup(kind, name)`` returns the object or None; ``queues()`` lists every known Queue. When the
caller does not know the cluster (a manifest set), it passes ``cluster_known=False`` and every check
that needs a missing object is skipped rather than failed.

The pod-template validation the job webhook runs on each task (the API server's
``ValidatePodTemplate``) is ``apivalidation.validate_pod_template``. Not evaluated: the
PodLevelResources feature gate's pod-level resource checks.
"""
from __future__ import annotations

import copy
import re
from decimal import Decimal
from typing import Callable, Iterable

from modules.core.quantity import parse_quantity
from modules.semantics.apivalidation import (cron_schedule_error, dns1123_subdomain, qualified_name,
                                             validate_pod_template)
from modules.semantics.shapes import annotations, as_dict, as_int, as_list, meta
from modules.upstream.volcano.partitions import partition_policies, webhook_refusal

Problem = tuple[str, str]
Lookup = Callable[[str, str], "dict | None"]

JOB_PLUGINS = frozenset({"ssh", "env", "svc", "tensorflow", "mpi", "pytorch", "hcclrank", "ray"})
POLICY_EVENTS = ("*", "PodFailed", "PodEvicted", "PodPending", "Unknown", "TaskCompleted", "TaskFailed", "JobUpdated")
POLICY_ACTIONS = ("AbortJob", "RestartJob", "RestartTask", "RestartPod", "RestartPartition", "TerminateJob",
                  "CompleteJob", "ResumeJob")


def _go_list(items: list[str]) -> str:
    """A list as Go's %v prints a []string: [a b]."""
    return "[" + " ".join(items) + "]"


def _topology_both(topology: object) -> bool:
    t = as_dict(topology)
    return t.get("highestTierAllowed") is not None and bool(t.get("highestTierName"))


BOTH_TIERS = "must not specify 'highestTierAllowed' and 'highestTierName' in networkTopology simultaneously"


# ---------------------------------------------------------------- jobs (admit_job.go, util.go)

def _policy_problems(policies: list, path: str, field: str) -> list[Problem]:
    """``validatePolicies``: the first failing policy, then the ``*`` exclusivity rule over the events
    seen so far (upstream reports both). ``field`` is the path upstream names in its field errors
    (``spec.policies``, ``spec.tasks.policies``)."""
    events_seen: list[str] = []
    out = _first_policy_problem(policies, path, field, events_seen)
    if "*" in events_seen and len(events_seen) > 1:
        out.append((path, "if there's * here, no other policy should be here"))
    return out


def _first_policy_problem(policies: list, path: str, field: str, events_seen: list[str]) -> list[Problem]:
    codes: set[int] = set()
    for i, policy in enumerate(map(as_dict, policies)):
        at = f"{path}[{i}]"
        listed = as_list(policy.get("events"))
        events = list(dict.fromkeys(str(e) for e in listed + ([policy["event"]] if policy.get("event") else [])))
        has_events = bool(policy.get("event")) or bool(listed)
        if has_events and policy.get("exitCode") is not None:
            return [(at, "must not specify event and exitCode simultaneously")]
        if not has_events and policy.get("exitCode") is None:
            return [(at, "either event and exitCode should be specified")]
        if not has_events:
            code = as_int(policy.get("exitCode"))
            if code == 0:
                return [(f"{at}.exitCode", "0 is not a valid error code")]
            if code in codes:
                return [(f"{at}.exitCode", f"duplicate exitCode {code}")]
            codes.add(code)
            continue
        for event in events:
            if event not in POLICY_EVENTS:
                return [(f"{at}.event", f'{field}: Invalid value: "{event}": invalid policy event')]
            if policy.get("action") not in POLICY_ACTIONS:
                return [(f"{at}.action", f'{field}: Invalid value: "{policy.get("action") or ""}": '
                                         "invalid policy action")]
            if event in events_seen:
                return [(at, f"duplicate event {event}  across different policy")]
            events_seen.append(event)
    return []


def _io_problem(volumes: list) -> Problem | None:
    """``validateIO``: the first failing job volume."""
    seen: set[str] = set()
    for i, volume in enumerate(volumes):
        volume = as_dict(volume)
        at = f"spec.volumes[{i}]"
        mount = volume.get("mountPath") or ""
        if not mount:
            return (f"{at}.mountPath", "mountPath is required")
        if mount in seen:
            return (f"{at}.mountPath", f"duplicated mountPath: {mount}")
        claim, claim_name = volume.get("volumeClaim"), volume.get("volumeClaimName") or ""
        if claim is None and not claim_name:
            return (at, "either VolumeClaim or VolumeClaimName must be specified")
        if claim_name:
            if claim is not None:
                return (at, "conflict: If you want to use an existing PVC, just specify VolumeClaimName."
                            "If you want to create a new PVC, you do not need to specify VolumeClaimName")
            errors = dns1123_subdomain(claim_name)
            if errors:
                return (f"{at}.volumeClaimName", f"invalid VolumeClaimName {claim_name} : {_go_list(errors)}")
        seen.add(mount)
    return None


def tasks_form_dag(tasks: list) -> bool:
    """``topoSort``: every task can be ordered after the tasks its ``dependsOn.name`` lists. As
    upstream counts it: each listed name adds one to the task's in-degree (a name listed twice, or a
    task that is not in the job, is never satisfied), each edge is removed once."""
    names = [_name(as_dict(t).get("name")) for t in tasks]
    indegree = {n: 0 for n in names}
    edges: dict[str, dict[str, None]] = {}
    for task, name in zip(map(as_dict, tasks), names):
        for dep in as_list(as_dict(task.get("dependsOn")).get("name")):
            edges.setdefault(_name(dep), {})[name] = None
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


def _name(value: object) -> str:
    """A name as a key: the CRD schema makes names strings; anything else stands for itself."""
    return value if isinstance(value, str) else repr(value)


def _integer_cpu(value: object) -> bool:
    try:
        q = parse_quantity(value)
    except (ValueError, TypeError):
        return False
    return q == q.to_integral_value() and q != 0


def task_topology_problem(task: dict, index: int) -> Problem | None:
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
            return (f"spec.tasks[{index}].template.spec.containers[{i}].resources.requests.cpu",
                    f"the cpu request isn't  an integer in spec.task[{index}] container[{i}].")
    return None


def validate_job_create(job: dict, lookup: Lookup, queues: Callable[[], Iterable[dict]],
                        cluster_known: bool = True) -> list[Problem]:
    """``validateJobCreate``: every message it would join, each with the field it is about."""
    spec = as_dict(job.get("spec"))
    tasks = as_list(spec.get("tasks"))
    name = meta(job).get("name") or ""
    if not tasks:
        return [("spec.tasks", "No task specified in job spec")]
    plugins = as_dict(spec.get("plugins"))
    if "mpi" in plugins:
        master = _flag(as_list(plugins.get("mpi")), "master", "master")
        if master not in [as_dict(t).get("name") for t in tasks]:
            return [("spec.plugins.mpi", "The specified mpi master task was not found")]
    out: list[Problem] = []
    if _topology_both(spec.get("networkTopology")):
        out.append(("spec.networkTopology", BOTH_TIERS))
    partitions = _partition_refusals(job)
    seen: set = set()
    total = 0
    for i, task in enumerate(map(as_dict, tasks)):
        at = f"spec.tasks[{i}]"
        task_name = _name(task.get("name") or "")
        replicas = as_int(task.get("replicas")) or 0
        own_min = as_int(task.get("minAvailable"))
        if own_min is not None and own_min > replicas:
            out.append((f"{at}.minAvailable", f"'minAvailable' is greater than 'replicas' in task: {task_name}, "
                                              f"job: {name}"))
        total += replicas
        if task_name in seen:
            out.append((f"{at}.name", f"duplicated task name {task_name}"))
            break
        seen.add(task_name)
        out += _policy_problems(as_list(task.get("policies")), f"{at}.policies", "spec.tasks.policies")
        pod = f"{name}-{task_name}-{i}"
        errors = qualified_name(pod)
        if errors:
            out.append((f"{at}.name", f"create pod with name {pod} validate failed {_go_list(errors)}"))
        for path, message in validate_pod_template(task.get("template"), f"{at}.template"):
            # Upstream prefixes each field error of the task's PodTemplate with spec.task[<i>].
            out.append((path, f"spec.task[{i}].{path[len(at) + 1:]}: {message}"))
        topo = task_topology_problem(task, i)
        if topo:
            out.append(topo)
        if at in partitions:
            out.append(partitions[at])
        if _topology_both(as_dict(task.get("partitionPolicy")).get("networkTopology")):
            out.append((f"{at}.partitionPolicy.networkTopology", BOTH_TIERS))
    errors = qualified_name(name)
    if errors:
        out.append(("metadata.name", f"create job with name {name} validate failed {_go_list(errors)}"))
    if total < (as_int(spec.get("minAvailable")) or 0):
        out.append(("spec.minAvailable", "job 'minAvailable' should not be greater than total replicas in tasks"))
    out += _policy_problems(as_list(spec.get("policies")), "spec.policies", "spec.policies")
    for plugin in sorted(plugins, key=str):
        if plugin not in JOB_PLUGINS:
            out.append((f"spec.plugins.{plugin}", f"unable to find job plugin: {plugin}"))
    io = _io_problem(as_list(spec.get("volumes")))
    if io:
        out.append(io)
    queue_name = spec.get("queue") or ""
    queue = lookup("Queue", queue_name)
    if queue is None:
        if cluster_known:
            out.append(("spec.queue", f"unable to find job queue: queue.scheduling.volcano.sh \"{queue_name}\" "
                                      "not found"))
    else:
        state = as_dict(queue.get("status")).get("state") or ""
        if state != "Open":
            out.append(("spec.queue", f"can only submit job to queue with state `Open`, queue `{queue_name}` "
                                      f"status is `{state}`"))
        if queue_name == "root":
            out.append(("spec.queue", "can not submit job to root queue"))
        else:
            children = [q for q in queues() if as_dict(q.get("spec")).get("parent") == queue_name]
            if children:
                out.append(("spec.queue", f"can only submit job to leaf queue, queue `{queue_name}` has "
                                          f"{len(children)} child queues"))
    if any(as_dict(t).get("dependsOn") is not None for t in tasks) and not tasks_form_dag(tasks):
        out.append(("spec.tasks", "job has dependencies between tasks, but doesn't form a directed acyclic "
                                  "graph(DAG)"))
    return out


def _flag(arguments: list, name: str, default: str) -> str:
    """A plugin argument as Go's ``flag`` package reads it (``-name=v``, ``--name=v``, ``-name v``);
    the last one wins."""
    value, args = default, [a for a in arguments if isinstance(a, str)]
    for i, arg in enumerate(args):
        key, eq, given = arg.lstrip("-").partition("=")
        if not arg.startswith("-") or key != name:
            continue
        if eq:
            value = given
        elif i + 1 < len(args):
            value = args[i + 1]
    return value


def _partition_refusals(job: dict) -> dict[str, Problem]:
    """``validatePartitionPolicy`` per task path (``spec.tasks[i]``): partitions.py decides it once."""
    out = {}
    for policy in partition_policies(job):
        refused = webhook_refusal(job, policy)
        if refused:
            out[policy.path] = refused
    return out


def validate_job_update(new: dict, old: dict) -> list[Problem]:
    """``validateJobUpdate``: only minAvailable, tasks' replicas/minAvailable and priorityClassName
    may change; the first failing check."""
    spec, old_spec = as_dict(new.get("spec")), as_dict(old.get("spec"))
    tasks, total = as_list(spec.get("tasks")), 0
    partitions = _partition_refusals(new)
    for i, task in enumerate(map(as_dict, tasks)):
        name, replicas, own_min = task.get("name"), as_int(task.get("replicas")) or 0, as_int(task.get("minAvailable"))
        if replicas < 0:
            return [(f"spec.tasks[{i}].replicas", f"'replicas' must be >= 0 in task: {name}")]
        if own_min is not None and own_min < 0:
            return [(f"spec.tasks[{i}].minAvailable", f"'minAvailable' must be >= 0 in task: {name}")]
        if own_min is not None and own_min > replicas:
            return [(f"spec.tasks[{i}].minAvailable", f"'minAvailable' must be <= 'replicas' in task: {name}")]
        if f"spec.tasks[{i}]" in partitions:
            return [partitions[f"spec.tasks[{i}]"]]
        total += replicas
    job_min = as_int(spec.get("minAvailable")) or 0
    if job_min > total:
        return [("spec.minAvailable", "job 'minAvailable' must not be greater than total replicas")]
    if job_min < 0:
        return [("spec.minAvailable", "job 'minAvailable' must be >= 0")]
    if _topology_both(spec.get("networkTopology")):
        return [("spec.networkTopology", BOTH_TIERS)]
    if len(tasks) != len(as_list(old_spec.get("tasks"))):
        return [("spec.tasks", "job updates may not add or remove tasks")]
    if _frozen(spec) != _frozen(old_spec):
        return [("spec", "job updates may not change fields other than `minAvailable`, `tasks[*].replicas under "
                         "spec` and `PriorityClassName`")]
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


# ---------------------------------------------------------------- cronjobs (admit_cronjob.go)

def cron_schedule_valid(schedule: str) -> bool:
    """robfig/cron ``ParseStandard`` accepts ``schedule`` (see ``apivalidation.cron_schedule_error``)."""
    return cron_schedule_error(schedule) is None


_TZ_PART = re.compile(r"[A-Za-z.\-_0-9+]{1,14}")


def validate_cronjob(cron: dict) -> list[Problem]:
    """``validateCronjobSpec`` + ``validateCronJobName`` (the job template is not checked here: the
    job webhook judges each Job the CronJob creates)."""
    spec = as_dict(cron.get("spec"))
    out: list[Problem] = []
    schedule = spec.get("schedule") or ""
    if not schedule:
        out.append(("spec.schedule", "schedule is required, but got empty"))
    elif "TZ" in schedule:
        out.append(("spec.schedule", "schedule should not contain TZ or CRON_TZ, TZ should only be set in the "
                                     "timeZone field"))
    elif not cron_schedule_valid(schedule):
        out.append(("spec.schedule", "schedule is not a valid cron expression"))
    tz = spec.get("timeZone")
    if tz is not None:
        tz = str(tz)
        if not tz:
            out.append(("spec.timeZone", "timeZone must be nil or non-empty string, got empty string"))
        else:
            for part in tz.split("/"):
                if part in (".", "..") or part.startswith("-") or not _TZ_PART.fullmatch(part):
                    out.append(("spec.timeZone", "unknown timeZone"))
            if tz.lower() == "local":
                out.append(("spec.timeZone", "timeZone can't be Local, and must be defined in "
                                             "https://www.iana.org/time-zones"))
            elif tz != "UTC" and _zones() and tz not in _zones():   # no zone database here: not judged
                out.append(("spec.timeZone", "invalid timeZone"))
    problem = cronjob_name_problem(meta(cron).get("name") or "")
    if problem:
        out.append(("metadata.name", problem))
    return out


_ZONES: set[str] = set()


def _zones() -> set[str]:
    if not _ZONES:
        import zoneinfo   # only a CronJob with a timeZone needs the zone list
        _ZONES.update(zoneinfo.available_timezones())
    return _ZONES


def cronjob_name_problem(name: str) -> str | None:
    """``validateCronJobName``: at most 52 characters (its Jobs add ``-<minutes>``, up to 11), and a
    qualified name."""
    if len(name) > 52:
        return "cronJob name must be no more than 52 characters to accommodate job name suffix (max 63 total)"
    errors = qualified_name(name)
    return f"invalid cronJob name {name!r}: {'; '.join(errors)}" if errors else None


# ---------------------------------------------------------------- hypernodes, podgroups, jobflows

def validate_hypernode(hypernode: dict, regex_error: Callable[[str], "str | None"]) -> list[Problem]:
    """``validateHyperNode``: at least one member; each regexMatch pattern compiles (Go's RE2:
    ``regex_error`` says why a pattern does not, or None)."""
    members = as_list(as_dict(hypernode.get("spec")).get("members"))
    out: list[Problem] = []
    if not members:
        out.append(("spec.members", "member must have at least one member"))
    for i, member in enumerate(map(as_dict, members)):
        pattern = as_dict(as_dict(member.get("selector")).get("regexMatch")).get("pattern")
        if isinstance(pattern, str) and pattern:
            error = regex_error(pattern)
            if error:
                out.append((f"spec.members[{i}].selector.regexMatch.pattern",
                            f"member regexMatch pattern is invalid: {error}"))
    return out


def validate_podgroup(podgroup: dict, lookup: Lookup, cluster_known: bool = True) -> list[Problem]:
    """``validatePodGroup``: its queue exists and is Open; no networkTopology (its own or a
    subGroupPolicy's) sets both highestTierAllowed and highestTierName."""
    spec = as_dict(podgroup.get("spec"))
    out: list[Problem] = []
    name = spec.get("queue") or ""
    if name:
        queue = lookup("Queue", name)
        if queue is None:
            if cluster_known:
                out.append(("spec.queue", f"unable to find queue: queue.scheduling.volcano.sh \"{name}\" not found"))
        elif as_dict(queue.get("status")).get("state") != "Open":
            out.append(("spec.queue", f"can only submit PodGroup to queue with state `Open`, queue `{name}` status "
                                      f"is `{as_dict(queue.get('status')).get('state') or ''}`."))
    if _topology_both(spec.get("networkTopology")):
        out.append(("spec.networkTopology", BOTH_TIERS + "."))
    for i, policy in enumerate(map(as_dict, as_list(spec.get("subGroupPolicy")))):
        if _topology_both(policy.get("networkTopology")):
            out.append((f"spec.subGroupPolicy[{i}].networkTopology",
                        f"in subGroupPolicy '{policy.get('name')}': {BOTH_TIERS}."))
            break
    return out


def validate_jobflow(jobflow: dict) -> list[Problem]:
    """``validateJobFlowDAG``: every ``dependsOn.targets`` names a flow, and the flows form a DAG."""
    flows = [as_dict(f) for f in as_list(as_dict(jobflow.get("spec")).get("flows"))]
    graph = {_name(f.get("name")): [_name(t) for t in as_list(as_dict(f.get("dependsOn")).get("targets"))]
             for f in flows}
    for targets in graph.values():
        for target in targets:
            if target not in graph:
                return [("spec.flows", f"jobflow Flow is not DAG: vertex is not defined: {target}")]
    # Kahn's algorithm: the flows form a DAG when every flow can be removed once its targets are.
    waiting = {name: len(set(targets)) for name, targets in graph.items()}
    needed_by: dict = {}
    for name, targets in graph.items():
        for target in set(targets):
            needed_by.setdefault(target, []).append(name)
    ready = [name for name, count in waiting.items() if count == 0]
    done = 0
    while ready:
        done += 1
        for name in needed_by.get(ready.pop(), ()):
            waiting[name] -= 1
            if waiting[name] == 0:
                ready.append(name)
    if done != len(graph):
        return [("spec.flows", "jobflow Flow is not DAG")]
    return []


# ---------------------------------------------------------------- queues (validate_queue.go)

# The webhook server's --max-queue-depth default (config.MaxQueueDepth).
MAX_QUEUE_DEPTH = 5


def _field_invalid(path: str, value: object, detail: str) -> str:
    shown = '"' + str(value).replace('"', '\\"') + '"'
    return f"requestBody.{path}: Invalid value: {shown}: {detail}"


def _quantity(value: object) -> Decimal | None:
    try:
        return parse_quantity(value)
    except (ValueError, TypeError):
        return None


def _queue_spec_problems(queue: dict) -> list[Problem]:
    """``validateQueue``: quantities not negative, deserved >= guarantee and <= capability, the state
    Open or Closed, the hierarchy annotations well formed (the aggregate of every failure)."""
    spec = as_dict(queue.get("spec"))
    capability, deserved = as_dict(spec.get("capability")), as_dict(spec.get("deserved"))
    guarantee = as_dict(as_dict(spec.get("guarantee")).get("resource"))
    out: list[Problem] = []
    for where, values in (("spec.capability", capability), ("spec.deserved", deserved)):
        for name, value in values.items():
            q = _quantity(value)
            if q is not None and q < 0:
                out.append((f"{where}.{name}", _field_invalid(f"{where}.{name}", value,
                                                              "must be greater than or equal to 0")))
    for name, value in guarantee.items():
        q = _quantity(value)
        if q is not None and q < 0:
            out.append((f"spec.guarantee.resource.{name}", _field_invalid(
                f"spec.guarantee.resource.{name}", value, "must be greater than or equal to 0")))
        if name not in deserved:
            out.append((f"spec.deserved.{name}", _field_invalid(
                f"spec.deserved.{name}", "<nil>", f"deserved[{name}] must be >= guarantee[{name}]={value}")))
            continue
        d = _quantity(deserved[name])
        if d is not None and q is not None and d < q:
            out.append((f"spec.deserved.{name}", _field_invalid(
                f"spec.deserved.{name}", deserved[name],
                f"deserved[{name}]={deserved[name]} must be >= guarantee[{name}]={value}")))
    for name, value in deserved.items():
        if name in capability:
            d, c = _quantity(value), _quantity(capability[name])
            if d is not None and c is not None and d > c:
                out.append((f"spec.deserved.{name}", _field_invalid(
                    f"spec.deserved.{name}", value,
                    f"deserved[{name}]={value} must be <= capability[{name}]={capability[name]}")))
    state = as_dict(queue.get("status")).get("state")
    if state and state not in ("Open", "Closed"):
        out.append(("status.state", _field_invalid("spec.state", state, "queue state must be in [Open Closed]")))
    out.extend(_hierarchy_annotation_problems(queue))
    return out


def _hierarchy_annotation_problems(queue: dict, others: Iterable[dict] = ()) -> list[Problem]:
    notes = annotations(queue)
    hierarchy, weights = notes.get("volcano.sh/hierarchy") or "", notes.get("volcano.sh/hierarchy-weights") or ""
    if not hierarchy and not weights:
        return []
    at = "metadata.annotations"
    if len(hierarchy.split("/")) != len(weights.split("/")):
        return [(at, _field_invalid(at, hierarchy, "volcano.sh/hierarchy must have the same length with "
                                                   "volcano.sh/hierarchy-weights"))]
    for weight in weights.split("/"):
        try:
            if "_" in weight or weight != weight.strip():   # Go's ParseFloat takes neither
                raise ValueError(weight)
            value = float(weight)
        except ValueError:
            return [(at, _field_invalid(at, weights, f"{weight} in the {weights} is invalid number: "
                                                     f"strconv.ParseFloat: parsing \"{weight}\": invalid syntax"))]
        if value <= 0:
            return [(at, _field_invalid(at, weights, f"{weight} in the {weights} must be larger than 0"))]
    for other in others:
        theirs = annotations(other).get("volcano.sh/hierarchy") or ""
        if theirs and meta(other).get("name") != meta(queue).get("name") and theirs.startswith(hierarchy + "/"):
            return [(at, _field_invalid(at, hierarchy, f"{hierarchy} is not allowed to be in the sub path of "
                                                       f"{theirs} of queue {meta(other).get('name')}"))]
    return []


class _Res:
    """Volcano's ``api.Resource`` view of a ResourceList: milli-cpu, memory bytes, scalars (milli)."""

    def __init__(self, values: dict):
        self.values: dict[str, float] = {}
        for name, value in as_dict(values).items():
            q = _quantity(value)
            if q is None or name.startswith(("requests.", "limits.")) or name.startswith("count/"):
                continue
            self.values[name] = float(q) * (1000 if name != "memory" else 1)

    def get(self, name: str) -> float:
        return self.values.get(name, 0.0)

    def add(self, other: "_Res") -> None:
        for name, value in other.values.items():
            self.values[name] = self.values.get(name, 0.0) + value

    def less_partly(self, other: "_Res") -> bool:
        """Some dimension of ``self`` is below ``other``'s (cpu and memory always)."""
        names = {"cpu", "memory"} | set(self.values)
        return any(self.get(n) < other.get(n) for n in names)

    def __str__(self) -> str:
        text = f"cpu {self.get('cpu'):.2f}, memory {self.get('memory'):.2f}"
        for name in sorted(n for n in self.values if n not in ("cpu", "memory", "pods")):
            text += f", {name} {self.values[name]:.2f}"
        return text


def _shown(name: str, value: float) -> str:
    if name == "cpu":
        return f"{int(value)}m" if int(value) % 1000 else str(int(value) // 1000)
    if name == "memory":
        v = int(value)
        for suffix, size in (("Ei", 2 ** 60), ("Pi", 2 ** 50), ("Ti", 2 ** 40), ("Gi", 2 ** 30), ("Mi", 2 ** 20),
                             ("Ki", 2 ** 10)):
            if v and v % size == 0:
                return f"{v // size}{suffix}"
        return str(v)
    return f"{value:.2f}"


def validate_queue(queue: dict, old: dict | None, lookup: Lookup, queues: Callable[[], Iterable[dict]],
                   operation: str = "CREATE", max_depth: int = MAX_QUEUE_DEPTH, cluster_known: bool = True
                   ) -> list[Problem]:
    """``AdmitQueues`` on CREATE/UPDATE: the spec checks, then the parent rules, then the hierarchy's
    resources (capability within the nearest ancestor's, children's guarantee/deserved sums within
    the parent's, the parent's capability not below any descendant's). The first failing stage."""
    known = list(queues())
    others = [q for q in known if meta(q).get("name") != meta(queue).get("name")]
    children_of: dict = {}
    for q in known:
        children_of.setdefault(as_dict(q.get("spec")).get("parent") or "", []).append(q)
    problems = _queue_spec_problems(queue)
    if not problems:
        problems = _hierarchy_annotation_problems(queue, others)
    if problems:
        if len(problems) > 1:
            return [(problems[0][0], "[" + ", ".join(m for _, m in problems) + "]")]
        return problems
    name, spec = meta(queue).get("name"), as_dict(queue.get("spec"))
    parent = spec.get("parent") or ""
    old_parent = as_dict(as_dict(old).get("spec")).get("parent") or "" if old else None
    if operation == "CREATE" or old_parent != parent:
        problem = _parent_problem(queue, lookup, children_of, max_depth, cluster_known)
        if problem:
            return [problem]
    if name == "root":
        return []
    if operation == "UPDATE" and old is not None:
        old_spec = as_dict(old.get("spec"))
        if parent == old_parent and all(spec.get(k) == old_spec.get(k) for k in ("capability", "deserved")) and \
                as_dict(spec.get("guarantee")).get("resource") == as_dict(old_spec.get("guarantee")).get("resource"):
            return []
    problem = _hierarchy_resources_problem(queue, lookup, children_of, cluster_known)
    return [problem] if problem else []


def _parent_problem(queue: dict, lookup: Lookup, children_of: dict, max_depth: int, cluster_known: bool
                    ) -> Problem | None:
    name, parent = meta(queue).get("name"), as_dict(queue.get("spec")).get("parent") or ""
    if parent in ("", "root"):
        return None
    if parent == name:
        return ("spec.parent", f"queue {name} cannot use itself as parent")
    depth, current = 1, parent
    while current not in ("", "root"):
        depth += 1
        if depth > max_depth:
            return ("spec.parent", f"queue {name} exceeds the maximum allowed depth of {max_depth}")
        found = lookup("Queue", current)
        if found is None:
            return ("spec.parent", f"failed to get parent queue {current} of queue {name}: queue.scheduling.volcano.sh "
                                   f"\"{current}\" not found") if cluster_known else None
        current = as_dict(found.get("spec")).get("parent") or ""
    parent_queue = lookup("Queue", parent)
    if parent_queue is None:
        return None
    if not children_of.get(parent):
        pods = _quantity(as_dict(as_dict(parent_queue.get("status")).get("allocated")).get("pods"))
        if pods:
            return ("spec.parent", f"queue {parent} cannot be the parent queue of queue {name} because it has "
                                   f"allocated Pods: {int(pods)}")
    return None


def _nearest_ancestor_capability(queue: dict, resource: str, lookup: Lookup) -> float | None:
    parent, seen = as_dict(queue.get("spec")).get("parent") or "", set()
    while parent not in ("", "root") and parent not in seen:
        seen.add(parent)
        found = lookup("Queue", parent)
        if found is None:
            return None
        value = _Res(as_dict(found.get("spec")).get("capability")).get(resource)
        if value > 0:
            return value
        parent = as_dict(found.get("spec")).get("parent") or ""
    return None


def _subtree_max_capability(queue: dict, resource: str, children_of: dict) -> float:
    """``findSubtreeMaxCapability``: the queue's own capability when set, else the largest of its
    children's subtrees (walked without recursion; a queue is visited once)."""
    best, stack, seen = 0.0, [queue], set()
    while stack:
        current = stack.pop()
        own = _Res(as_dict(current.get("spec")).get("capability")).get(resource)
        if own > 0:
            best = max(best, own)
            continue
        name = meta(current).get("name")
        if name in seen:
            continue
        seen.add(name)
        stack.extend(children_of.get(name, ()))
    return best


def _hierarchy_resources_problem(queue: dict, lookup: Lookup, children_of: dict, cluster_known: bool
                                 ) -> Problem | None:
    name, spec = meta(queue).get("name"), as_dict(queue.get("spec"))
    parent_name = spec.get("parent") or ""
    if parent_name not in ("", "root"):
        parent = lookup("Queue", parent_name)
        if parent is None:
            return ("spec.parent", f"parent queue {parent_name} not found") if cluster_known else None
        own = _Res(spec.get("capability"))
        for resource in own.values:
            limit = _nearest_ancestor_capability(queue, resource, lookup)
            if limit is not None and own.get(resource) > limit:
                return (f"spec.capability.{resource}",
                        f"queue {name} capability[{resource}]={_shown(resource, own.get(resource))} exceeds its "
                        f"ancestor's capability={_shown(resource, limit)}")
        siblings = [q for q in children_of.get(parent_name, ()) if meta(q).get("name") != name] + [queue]
        problem = _sums_problem(f"parent queue {parent_name}", parent, siblings)
        if problem:
            return problem
    children = children_of.get(name, [])
    if children:
        capability = _Res(spec.get("capability"))
        for resource in capability.values:
            child_max = max(_subtree_max_capability(c, resource, children_of) for c in children)
            if capability.get(resource) < child_max:
                return (f"spec.capability.{resource}",
                        f"queue {name} capability[{resource}]={_shown(resource, capability.get(resource))} is "
                        f"smaller than its descendants' max capability={_shown(resource, child_max)}")
        return _sums_problem(f"queue {name}", queue, children)
    return None


def _sums_problem(who: str, parent: dict, children: list[dict]) -> Problem | None:
    spec = as_dict(parent.get("spec"))
    limit_g, limit_d = _Res(as_dict(spec.get("guarantee")).get("resource")), _Res(spec.get("deserved"))
    total_g, total_d = _Res({}), _Res({})
    for child in children:
        child_spec = as_dict(child.get("spec"))
        total_g.add(_Res(as_dict(child_spec.get("guarantee")).get("resource")))
        if limit_g.less_partly(total_g):
            return ("spec.guarantee", f"{who} validation failed: sum of children's guarantee ({total_g}) exceeds "
                                      f"parent's guarantee limit ({limit_g})")
        total_d.add(_Res(child_spec.get("deserved")))
        if limit_d.less_partly(total_d):
            return ("spec.deserved", f"{who} validation failed: sum of children's deserved ({total_d}) exceeds "
                                     f"parent's deserved limit ({limit_d})")
    return None


# ---------------------------------------------------------------- pods (admit_pod.go; off in the chart)

JDB_ANNOTATIONS = ("volcano.sh/jdb-min-available", "volcano.sh/jdb-max-unavailable")


def _int_or_percentage_problem(key: str, value: str) -> str | None:
    """``validateIntPercentageStr``: a positive integer, or a percentage strictly between 0 and 100."""
    if re.fullmatch(r"-?\d+", value.strip()):
        return None if int(value) > 0 else f"invalid value <{value!r}> for {key}, it must be a positive integer"
    digits = value.replace("%", "")
    if not re.fullmatch(r"[+-]?\d+", digits):
        return f"invalid value {value!r} for {key}"
    if not 0 < int(digits) < 100:
        return f"invalid value <{value!r}> for {key}, it must be a valid percentage which between 1% ~ 99%"
    return None


def validate_pod(pod: dict, scheduler_names: tuple[str, ...] = ("volcano",)) -> list[Problem]:
    """``validatePod``: a pod for Volcano's scheduler carries at most one of the job-disruption-budget
    annotations, each a positive integer or a percentage in 1%..99%."""
    if as_dict(pod.get("spec")).get("schedulerName") not in scheduler_names:
        return []
    notes = annotations(pod)
    for key in JDB_ANNOTATIONS:
        if key in notes:
            problem = _int_or_percentage_problem(key, str(notes[key]))
            if problem:
                return [(f"metadata.annotations.{key}", problem)]
    if sum(key in notes for key in JDB_ANNOTATIONS) > 1:
        return [("metadata.annotations", f"not allow configure multiple annotations <[{' '.join(JDB_ANNOTATIONS)}]> "
                                         "at same time")]
    return []


# ---------------------------------------------------------------- what a CronJob creates

# A Volcano CronJob's Jobs are named <cronjob>-<scheduled minute since the epoch> (cronjob controller
# getJobName); the minute has 8 digits in this century, so this one stands for any.
SCHEDULED_MINUTE = 29_000_000


def job_of_cronjob(cron: dict) -> dict:
    """The Job the Volcano cronjob controller creates from ``cron`` (getJobFromTemplate): the job
    template's labels, annotations and spec, named ``<cronjob>-<minute>``, in the CronJob's namespace."""
    template = as_dict(as_dict(cron.get("spec")).get("jobTemplate"))
    md = as_dict(template.get("metadata"))
    job_md = {"name": f"{meta(cron).get('name') or ''}-{SCHEDULED_MINUTE}"}
    if meta(cron).get("namespace"):
        job_md["namespace"] = meta(cron)["namespace"]
    for key in ("labels", "annotations"):
        if isinstance(md.get(key), dict):
            job_md[key] = dict(md[key])
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": job_md,
            "spec": copy.deepcopy(as_dict(template.get("spec")))}
