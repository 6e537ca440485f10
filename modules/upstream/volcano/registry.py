"""Volcano v1.15.1's admission webhooks as the chart registers them (volcano-sh/volcano v1.15.1
``installer/helm/chart/volcano/templates/webhooks.yaml``): per webhook its path (the
``enabled_admissions`` entry), name, operations and namespaceSelector, and the function of ours that
stands for its handler under ``pkg/webhooks/admission``."""
from __future__ import annotations

from modules.upstream.registry import BOTH, CREATE, MUTATE, UPDATE, VALIDATE, Check
from modules.upstream.volcano.cronjob import validate_cronjob
from modules.upstream.volcano.hypernode import validate_hypernode
from modules.upstream.volcano.job import validate_job
from modules.upstream.volcano.jobflow import validate_jobflow
from modules.upstream.volcano.mutation import mutate_volcano_job, mutate_volcano_queue
from modules.upstream.volcano.pod import validate_pod
from modules.upstream.volcano.podgroup import mutate_podgroup, validate_podgroup
from modules.upstream.volcano.queue import validate_queue

_REPO = "volcano-sh/volcano v1.15.1 pkg/webhooks/admission"
BATCH, SCHEDULING = "batch.volcano.sh", "scheduling.volcano.sh"
TOPOLOGY, FLOW = "topology.volcano.sh", "flow.volcano.sh"
# /queues/validate also takes DELETE (validateQueueDeleting); the chart's queue policy states the same
# rule and deletion is outside what `check` judges.
QUEUE_OPERATIONS = frozenset({CREATE, UPDATE})


def _volcano(group: str, kind: str, phase: str, fn, where: str, name: str, webhook: str, path: str,
             operations: frozenset[str] = frozenset({CREATE}), selector: bool = True) -> Check:
    return Check("volcano", group, kind, phase, fn, f"{_REPO}/{where}", name, webhook, path, operations, selector)


CHECKS = (
    _volcano(BATCH, "Job", MUTATE, mutate_volcano_job, "jobs/mutate/mutate_job.go", "createPatch",
             "mutatejob.volcano.sh", "/jobs/mutate"),
    _volcano(SCHEDULING, "Queue", MUTATE, mutate_volcano_queue, "queues/mutate/mutate_queue.go", "createQueuePatch",
             "mutatequeue.volcano.sh", "/queues/mutate"),
    _volcano(SCHEDULING, "PodGroup", MUTATE, mutate_podgroup, "podgroups/mutate/mutate_podgroup.go",
             "createPodGroupPatch", "mutatepodgroup.volcano.sh", "/podgroups/mutate"),
    _volcano(BATCH, "Job", VALIDATE, validate_job, "jobs/validate/admit_job.go",
             "validateJobCreate / validateJobUpdate", "validatejob.volcano.sh", "/jobs/validate", BOTH),
    _volcano(SCHEDULING, "Queue", VALIDATE, validate_queue, "queues/validate/validate_queue.go", "AdmitQueues",
             "validatequeue.volcano.sh", "/queues/validate", QUEUE_OPERATIONS),
    _volcano(SCHEDULING, "PodGroup", VALIDATE, validate_podgroup, "podgroups/validate/validate_podgroup.go",
             "validatePodGroup", "validatepodgroup.volcano.sh", "/podgroups/validate"),
    _volcano(TOPOLOGY, "HyperNode", VALIDATE, validate_hypernode, "hypernodes/validate/admit_hypernode.go",
             "validateHyperNode", "validatehypernodes.volcano.sh", "/hypernodes/validate", BOTH, selector=False),
    _volcano(BATCH, "CronJob", VALIDATE, validate_cronjob, "cronjobs/validate/admit_cronjob.go",
             "validateCronjobSpec / validateCronJobName", "validatecronjob.volcano.sh", "/cronjobs/validate", BOTH),
    _volcano("", "Pod", VALIDATE, validate_pod, "pods/validate/admit_pod.go", "validatePod",
             "validatepod.volcano.sh", "/pods/validate"),
    # The chart names the jobflow webhook validatejob.volcano.sh too (templates/webhooks.yaml).
    _volcano(FLOW, "JobFlow", VALIDATE, validate_jobflow, "jobflows/validate/validate_jobflow.go",
             "validateJobFlowDAG", "validatejob.volcano.sh", "/jobflows/validate", BOTH),
)
