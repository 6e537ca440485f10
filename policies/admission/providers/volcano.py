"""Volcano v1.15.1's admission webhooks (volcano-sh/volcano ``pkg/webhooks/admission``), our own
code in ``modules/semantics`` (``mutation.py``, ``volcano_webhooks.py``): which function stands for
which upstream webhook, and the chart's ``enabled_admissions`` entry that switches it on."""
from __future__ import annotations

from modules.upstream.volcano import mutation
from modules.upstream.volcano import webhooks as vw

from ..webhooks import CREATE, MUTATE, UPDATE, VALIDATE, Request, Webhook

_REPO = "volcano-sh/volcano v1.15.1 pkg/webhooks/admission"
BATCH, SCHEDULING = "batch.volcano.sh", "scheduling.volcano.sh"
TOPOLOGY, FLOW = "topology.volcano.sh", "flow.volcano.sh"
BOTH = frozenset({CREATE, UPDATE})


def _mutator(fn):
    def check(request: Request) -> dict:
        return fn(request.object)
    return check


def _lookup(request: Request):
    return lambda kind, name: request.find(kind, name)


def _queues(request: Request):
    return lambda: [o for o in request.cluster if o.get("kind") == "Queue"]


def _job(request: Request):
    if request.operation == UPDATE and request.old_object is not None:
        return vw.validate_job_update(request.object, request.old_object)
    return vw.validate_job_create(request.object, _lookup(request), _queues(request), request.cluster_known)


def _queue(request: Request):
    return vw.validate_queue(request.object, request.old_object, _lookup(request), _queues(request),
                             request.operation, request.settings.get("MaxQueueDepth", vw.MAX_QUEUE_DEPTH),
                             request.cluster_known)


def _hypernode(request: Request):
    from modules.core.patterns import go_error   # Go's RE2 syntax, as the hypernode rules decide it
    return vw.validate_hypernode(request.object, go_error)


def _podgroup(request: Request):
    return vw.validate_podgroup(request.object, _lookup(request), request.cluster_known)


def _podgroup_mutate(request: Request) -> dict:
    namespaces = {(o.get("metadata") or {}).get("name"): o for o in request.cluster if o.get("kind") == "Namespace"}
    return mutation.mutate_volcano_podgroup(request.object, namespaces)


# Upstream's message fragment -> how to fix the object (first match wins).
FIXES = (
    ("must be greater than 0 in task", "set totalPartitions and partitionSize to at least 1"),
    ("'Replicas' are not equal", "make replicas = totalPartitions x partitionSize"),
    ("'MinAvailable' is not equal", "drop the task's minAvailable (the mutating webhook derives it) or make it "
                                    "minPartitions x partitionSize"),
    ("No task specified", "add at least one task to spec.tasks"),
    ("mpi master task was not found", "name a task `master`, or pass `--master=<task>` to the mpi plugin"),
    ("'minAvailable' is greater than 'replicas'", "set the task's minAvailable to at most its replicas"),
    ("duplicated task name", "give every task its own name"),
    ("invalid policy event", f"use one of the events {', '.join(vw.POLICY_EVENTS)}"),
    ("invalid policy action", f"use one of the actions {', '.join(vw.POLICY_ACTIONS)}"),
    ("must not specify event and exitCode", "give the policy either events or an exitCode, not both"),
    ("either event and exitCode", "give the policy an event or a non-zero exitCode"),
    ("0 is not a valid error code", "use a non-zero exitCode"),
    ("mountPath", "give each job volume its own, non-empty mountPath"),
    ("VolumeClaim", "give each job volume either volumeClaimName (an existing PVC) or volumeClaim (a new one)"),
    ("duplicate", "name each event or exit code in one policy only"),
    ("if there's * here", "use the `*` event alone, in a single policy"),
    ("create pod with name", "shorten the job or task name: `<job>-<task>-<index>` must be a qualified name of at "
                             "most 63 characters"),
    ("create job with name", "use a qualified name of at most 63 characters for the job"),
    ("greater than total replicas", "lower spec.minAvailable to at most the tasks' total replicas"),
    ("job updates may not add or remove tasks", "delete and re-create the job to change its tasks"),
    ("job updates may not change fields", "change only minAvailable, the tasks' replicas and priorityClassName of a "
                                          "running job; re-create it for anything else"),
    ("must be >= 0", "use a non-negative number"),
    ("must be <= 'replicas'", "set the task's minAvailable to at most its replicas"),
    ("unable to find job plugin", f"use only the job plugins {', '.join(sorted(vw.JOB_PLUGINS))}"),
    ("can only submit job to queue with state", "open the queue (`vcctl queue operate --action open`) or use an "
                                                "open one"),
    ("root queue", "submit the job to a leaf queue, not `root`"),
    ("leaf queue", "submit the job to one of the queue's child queues: only leaf queues take jobs"),
    ("directed acyclic graph", "remove the dependsOn cycle between the tasks"),
    ("'highestTierAllowed' and 'highestTierName'", "keep one of highestTierAllowed and highestTierName"),
    ("cpu request isn't", "request whole CPUs (\"2\", not \"1.5\") in every container when topologyPolicy is set"),
    ("spec.task[", "fix the task's pod template as the quoted field error says (the API server's own validation)"),
    ("must be >= guarantee", "set deserved to at least the guarantee for that resource"),
    ("must be <= capability", "keep deserved within capability for that resource"),
    ("greater than or equal to 0", "use a non-negative quantity"),
    ("queue state must be in", "leave the state to Volcano (Open or Closed)"),
    ("must have the same length", "give volcano.sh/hierarchy and volcano.sh/hierarchy-weights the same number of "
                                  "levels"),
    ("invalid number", "write each hierarchy weight as a positive number"),
    ("must be larger than 0", "write each hierarchy weight as a positive number"),
    ("sub path of", "choose a hierarchy path that no other queue's path extends"),
    ("cannot use itself as parent", "name another queue (or root) as parent"),
    ("maximum allowed depth", "flatten the queue hierarchy (the webhook's --max-queue-depth, 5 by default)"),
    ("allocated Pods", "choose a parent queue that runs no pods"),
    ("not found", "create the queue it names first, or name an existing one"),
    ("exceeds its ancestor's capability", "lower the capability to the nearest ancestor's, or raise the ancestor's"),
    ("smaller than its descendants'", "raise the capability to the largest of its descendants', or lower theirs"),
    ("sum of children's guarantee", "lower the children's guarantee or raise the parent's"),
    ("sum of children's deserved", "lower the children's deserved or raise the parent's"),
    ("can only submit PodGroup to queue", "open the queue or use an open one"),
    ("at least one member", "list at least one member"),
    ("regexMatch pattern is invalid", "write the pattern in Go's RE2 syntax"),
    ("schedule is required", "set spec.schedule"),
    ("TZ", "move the time zone to spec.timeZone"),
    ("not a valid cron expression", "write five cron fields (minute hour day-of-month month day-of-week) or a "
                                    "descriptor such as @daily"),
    ("timeZone", "use an IANA time zone name such as Europe/Berlin (not Local)"),
    ("cronJob name", "use a qualified name of at most 52 characters (its jobs add -<minutes>)"),
    ("jobflow Flow is not DAG", "make every dependsOn target a flow of this JobFlow, without cycles"),
    ("jdb", "use one job-disruption-budget annotation, a positive integer or a percentage in 1%..99%"),
)


def fix_for(message: str) -> str | None:
    return next((fix for fragment, fix in FIXES if fragment in message), None)


WEBHOOKS = (
    Webhook("volcano", BATCH, "Job", MUTATE, _mutator(mutation.mutate_volcano_job),
            f"{_REPO}/jobs/mutate/mutate_job.go", "createPatch", "/jobs/mutate"),
    Webhook("volcano", SCHEDULING, "Queue", MUTATE, _mutator(mutation.mutate_volcano_queue),
            f"{_REPO}/queues/mutate/mutate_queue.go", "createQueuePatch", "/queues/mutate"),
    Webhook("volcano", SCHEDULING, "PodGroup", MUTATE, _podgroup_mutate,
            f"{_REPO}/podgroups/mutate/mutate_podgroup.go", "createPodGroupPatch", "/podgroups/mutate"),
    Webhook("volcano", BATCH, "Job", VALIDATE, _job, f"{_REPO}/jobs/validate/admit_job.go",
            "validateJobCreate / validateJobUpdate", "/jobs/validate", BOTH, fix_for),
    Webhook("volcano", SCHEDULING, "Queue", VALIDATE, _queue, f"{_REPO}/queues/validate/validate_queue.go",
            "AdmitQueues", "/queues/validate", BOTH, fix_for),
    Webhook("volcano", SCHEDULING, "PodGroup", VALIDATE, _podgroup,
            f"{_REPO}/podgroups/validate/validate_podgroup.go", "validatePodGroup", "/podgroups/validate",
            fix=fix_for),
    Webhook("volcano", TOPOLOGY, "HyperNode", VALIDATE, _hypernode,
            f"{_REPO}/hypernodes/validate/admit_hypernode.go", "validateHyperNode", "/hypernodes/validate",
            BOTH, fix_for),
    Webhook("volcano", BATCH, "CronJob", VALIDATE, lambda r: vw.validate_cronjob(r.object),
            f"{_REPO}/cronjobs/validate/admit_cronjob.go", "validateCronjobSpec / validateCronJobName",
            "/cronjobs/validate", BOTH, fix_for),
    Webhook("volcano", "", "Pod", VALIDATE, lambda r: vw.validate_pod(r.object),
            f"{_REPO}/pods/validate/admit_pod.go", "validatePod", "/pods/validate",
            fix=fix_for),
    Webhook("volcano", FLOW, "JobFlow", VALIDATE, lambda r: vw.validate_jobflow(r.object),
            f"{_REPO}/jobflows/validate/validate_jobflow.go", "validateJobFlowDAG", "/jobflows/validate",
            BOTH, fix_for),
)
