"""How to fix what Volcano v1.15.1's admission webhooks refuse (``modules/upstream/volcano/``), by the
code of each refusal (``FieldError.origin``)."""
from __future__ import annotations

from modules.upstream.volcano.job import JOB_PLUGINS, POLICY_ACTIONS, POLICY_EVENTS

_PARTITION_SIZES = "set totalPartitions and partitionSize to at least 1"
_MOUNT = "give each job volume its own, non-empty mountPath"
_CLAIM = "give each job volume either volumeClaimName (an existing PVC) or volumeClaim (a new one)"
_ONCE = "name each event or exit code in one policy only"
_NON_NEGATIVE = "use a non-negative number"
_TASK_MIN = "set the task's minAvailable to at most its replicas"
_JOB_MIN = "lower spec.minAvailable to at most the tasks' total replicas"
_MISSING_QUEUE = "create the queue it names first, or name an existing one"
_TIERS = "keep one of highestTierAllowed and highestTierName"
_WEIGHT = "write each hierarchy weight as a positive number"
_TIME_ZONE = "use an IANA time zone name such as Europe/Berlin (not Local)"
_FLOW = "make every dependsOn target a flow of this JobFlow, without cycles"
_JDB = "use one job-disruption-budget annotation, a positive integer or a percentage in 1%..99%"

FIXES = {
    # jobs (admit_job.go)
    "job.partition-total": _PARTITION_SIZES,
    "job.partition-size": _PARTITION_SIZES,
    "job.partition-replicas": "make replicas = totalPartitions x partitionSize",
    "job.partition-min-available": "drop the task's minAvailable (the mutating webhook derives it) or make it "
                                   "minPartitions x partitionSize",
    "job.no-task": "add at least one task to spec.tasks",
    "job.mpi-master": "name a task `master`, or pass `--master=<task>` to the mpi plugin",
    "job.task-min-available": _TASK_MIN,
    "job.duplicate-task-name": "give every task its own name",
    "job.policy-event": f"use one of the events {', '.join(POLICY_EVENTS)}",
    "job.policy-action": f"use one of the actions {', '.join(POLICY_ACTIONS)}",
    "job.policy-event-and-exit-code": "give the policy either events or an exitCode, not both",
    "job.policy-event-or-exit-code": "give the policy an event or a non-zero exitCode",
    "job.policy-exit-code-zero": "use a non-zero exitCode",
    "job.policy-duplicate-exit-code": _ONCE,
    "job.policy-duplicate-event": _ONCE,
    "job.policy-any-event-alone": "use the `*` event alone, in a single policy",
    "job.volume-mount-path-required": _MOUNT,
    "job.volume-mount-path-duplicate": _MOUNT,
    "job.volume-claim-missing": _CLAIM,
    "job.volume-claim-conflict": _CLAIM,
    "job.volume-claim-name": _CLAIM,
    "job.pod-name": "shorten the job or task name: `<job>-<task>-<index>` must be a qualified name of at most 63 "
                    "characters",
    "job.name": "use a qualified name of at most 63 characters for the job",
    "job.pod-template-name": "name every task as a DNS-1123 subdomain (lowercase letters, digits, '-' and '.'): "
                             "the job webhook validates each task's pod template under the task's name",
    "job.min-available": _JOB_MIN,
    "job.update.min-available": _JOB_MIN,
    "job.update.tasks": "delete and re-create the job to change its tasks",
    "job.update.frozen": "change only minAvailable, the tasks' replicas and priorityClassName of a running job; "
                         "re-create it for anything else",
    "job.update.replicas": _NON_NEGATIVE,
    "job.update.task-min-available-negative": _NON_NEGATIVE,
    "job.update.min-available-negative": _NON_NEGATIVE,
    "job.update.task-min-available": _TASK_MIN,
    "job.plugin": f"use only the job plugins {', '.join(sorted(JOB_PLUGINS))}",
    "job.queue-not-found": _MISSING_QUEUE,
    "job.queue-not-open": "open the queue (`vcctl queue operate --action open`) or use an open one",
    "job.queue-root": "submit the job to a leaf queue, not `root`",
    "job.queue-not-leaf": "submit the job to one of the queue's child queues: only leaf queues take jobs",
    "job.tasks-not-dag": "remove the dependsOn cycle between the tasks",
    "job.network-topology-both": _TIERS,
    "job.task-topology-cpu": "request whole CPUs (\"2\", not \"1.5\") in every container when topologyPolicy is set",
    "job.pod-template": "fix the task's pod template as the quoted field error says (the API server's own "
                        "validation)",
    # queues (validate_queue.go)
    "queue.quantity-negative": "use a non-negative quantity",
    "queue.quantity-not-integer": "write extended resources (nvidia.com/gpu, ...) as whole numbers",
    "queue.deserved-below-guarantee": "set deserved to at least the guarantee for that resource",
    "queue.deserved-above-capability": "keep deserved within capability for that resource",
    "queue.state": "leave the state to Volcano (Open or Closed)",
    "queue.hierarchy-length": "give volcano.sh/hierarchy and volcano.sh/hierarchy-weights the same number of levels",
    "queue.hierarchy-weight": _WEIGHT,
    "queue.hierarchy-sub-path": "choose a hierarchy path that no other queue's path extends",
    "queue.parent-itself": "name another queue (or root) as parent",
    "queue.depth": "flatten the queue hierarchy (the webhook's --max-queue-depth, 5 by default)",
    "queue.parent-has-pods": "choose a parent queue that runs no pods",
    "queue.parent-not-found": _MISSING_QUEUE,
    "queue.capability-above-ancestor": "lower the capability to the nearest ancestor's, or raise the ancestor's",
    "queue.capability-below-descendants": "raise the capability to the largest of its descendants', or lower theirs",
    "queue.children-guarantee": "lower the children's guarantee or raise the parent's",
    "queue.children-deserved": "lower the children's deserved or raise the parent's",
    # podgroups, hypernodes, cronjobs, jobflows, pods
    "podgroup.queue-not-found": _MISSING_QUEUE,
    "podgroup.queue-not-open": "open the queue or use an open one",
    "podgroup.network-topology-both": _TIERS,
    "hypernode.members": "list at least one member",
    "hypernode.regex": "write the pattern in Go's RE2 syntax",
    "cronjob.schedule-required": "set spec.schedule",
    "cronjob.schedule-time-zone": "move the time zone to spec.timeZone",
    "cronjob.schedule": "write five cron fields (minute hour day-of-month month day-of-week) or a descriptor such "
                        "as @daily",
    "cronjob.time-zone-empty": _TIME_ZONE,
    "cronjob.time-zone": _TIME_ZONE,
    "cronjob.time-zone-local": _TIME_ZONE,
    "cronjob.name": "use a qualified name of at most 52 characters (its jobs add -<minutes>)",
    "jobflow.target": _FLOW,
    "jobflow.not-dag": _FLOW,
    "pod.disruption-budget": _JDB,
    "pod.disruption-budget-both": _JDB,
}
