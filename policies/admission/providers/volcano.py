"""Volcano v1.15.1's admission webhooks (volcano-sh/volcano ``pkg/webhooks/admission``), our own
code in ``modules/semantics`` (``mutation.py``, ``volcano_webhooks.py``): which function stands for
which upstream webhook, and the chart's ``enabled_admissions`` entry that switches it on."""
from __future__ import annotations

from modules.semantics import mutation
from modules.semantics import volcano_webhooks as vw

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
    from ...rules.hypernodes import re2_problem   # Go's RE2 syntax, as the hypernode rules decide it
    return vw.validate_hypernode(request.object, re2_problem)


def _podgroup(request: Request):
    return vw.validate_podgroup(request.object, _lookup(request), request.cluster_known)


def _podgroup_mutate(request: Request) -> dict:
    namespaces = {(o.get("metadata") or {}).get("name"): o for o in request.cluster if o.get("kind") == "Namespace"}
    return mutation.mutate_volcano_podgroup(request.object, namespaces)


WEBHOOKS = (
    Webhook("volcano", BATCH, "Job", MUTATE, _mutator(mutation.mutate_volcano_job),
            f"{_REPO}/jobs/mutate/mutate_job.go", "createPatch", "/jobs/mutate"),
    Webhook("volcano", SCHEDULING, "Queue", MUTATE, _mutator(mutation.mutate_volcano_queue),
            f"{_REPO}/queues/mutate/mutate_queue.go", "createQueuePatch", "/queues/mutate"),
    Webhook("volcano", SCHEDULING, "PodGroup", MUTATE, _podgroup_mutate,
            f"{_REPO}/podgroups/mutate/mutate_podgroup.go", "createPodGroupPatch", "/podgroups/mutate"),
    Webhook("volcano", BATCH, "Job", VALIDATE, _job, f"{_REPO}/jobs/validate/admit_job.go",
            "validateJobCreate / validateJobUpdate", "/jobs/validate", BOTH),
    Webhook("volcano", SCHEDULING, "Queue", VALIDATE, _queue, f"{_REPO}/queues/validate/validate_queue.go",
            "AdmitQueues", "/queues/validate", BOTH),
    Webhook("volcano", SCHEDULING, "PodGroup", VALIDATE, _podgroup,
            f"{_REPO}/podgroups/validate/validate_podgroup.go", "validatePodGroup", "/podgroups/validate"),
    Webhook("volcano", TOPOLOGY, "HyperNode", VALIDATE, _hypernode,
            f"{_REPO}/hypernodes/validate/admit_hypernode.go", "validateHyperNode", "/hypernodes/validate", BOTH),
    Webhook("volcano", BATCH, "CronJob", VALIDATE, lambda r: vw.validate_cronjob(r.object),
            f"{_REPO}/cronjobs/validate/admit_cronjob.go", "validateCronjobSpec / validateCronJobName",
            "/cronjobs/validate", BOTH),
    Webhook("volcano", "", "Pod", VALIDATE, lambda r: vw.validate_pod(r.object),
            f"{_REPO}/pods/validate/admit_pod.go", "validatePod", "/pods/validate"),
    Webhook("volcano", FLOW, "JobFlow", VALIDATE, lambda r: vw.validate_jobflow(r.object),
            f"{_REPO}/jobflows/validate/validate_jobflow.go", "validateJobFlowDAG", "/jobflows/validate", BOTH),
)
