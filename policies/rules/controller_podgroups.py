"""The PodGroup a workload's controller creates passes Volcano's PodGroup webhook.

A TrainJob, a PyTorchJob or a pod-grouped Deployment/StatefulSet/ReplicaSet is admitted whatever
queue it names: its own webhook (if any) never reads the queue. Its controller then creates the
PodGroup Volcano schedules (``modules.semantics.controllers``: the same model ``simulate --submit``
places), and Volcano's PodGroup webhook refuses that one when its queue is missing or not Open, or
its network topology sets both highestTierAllowed and highestTierName. The job exists, its PodGroup
never does, and nothing of it runs. This rule sends that PodGroup through the one admission chain
(``modules/upstream/chain.py``) in the check's install and cluster.

Volcano Jobs are left out on purpose: Volcano's job webhook checks the same queue (and the same
topology) on the Job itself, so ``upstream-admission`` already reports what the PodGroup would meet.
An object its own webhooks or its CRD schema refuse is never created: the rule that refuses it says
so, and this one says nothing more (Trainer's webhook excepted: ``_refused_itself`` says why). An
object whose PodGroup cannot be worked out (an odd shape, a TrainJob whose runtime is not among the
objects) gives no finding.
"""
from __future__ import annotations

from typing import Iterator

from modules.semantics.controllers import REPLICAS_KINDS, podgroup_creator
from modules.semantics.scheduler_conf import expected_scheduler_name
from modules.semantics.volcano import effective_constraints, job_constraint
from modules.semantics.workloads import QUEUE_ANNOTATION, find_runtime, runtime_patches, workload_of

from ..framework import MANDATORY, CheckContext, Finding, Rule, annotations, as_dict, where
from .admission import stack_admission

RULE_ID = "controller-podgroups-admitted"
KINDS = frozenset({"TrainJob", "PyTorchJob", *REPLICAS_KINDS})


def _queue_path(obj: dict, context: list[dict]) -> str:
    """Where ``obj`` names the queue its PodGroup gets (the object itself when the queue comes from
    elsewhere, a TrainJob's runtime)."""
    kind = obj.get("kind")
    if kind in REPLICAS_KINDS:
        return f"spec.template.metadata.annotations[{QUEUE_ANNOTATION}]"
    if kind == "PyTorchJob":
        policy = as_dict(as_dict(as_dict(obj.get("spec")).get("runPolicy")).get("schedulingPolicy"))
        if policy.get("queue"):
            return "spec.runPolicy.schedulingPolicy.queue"
        return f"metadata.annotations[{QUEUE_ANNOTATION}]" if QUEUE_ANNOTATION in annotations(obj) else ""
    patched = [p for p in runtime_patches(obj) if QUEUE_ANNOTATION in p.annotations]
    if patched:
        return f"{patched[-1].path}.trainingRuntimeSpec.template.metadata.annotations[{QUEUE_ANNOTATION}]"
    return "spec.runtimeRef" if find_runtime(obj, context) is not None else ""


def _field(obj: dict, context: list[dict], refused: str) -> str:
    """The field of ``obj`` behind the PodGroup's refused field."""
    if refused == "spec.queue":
        return _queue_path(obj, context)
    found = job_constraint(effective_constraints(obj, context))
    return found.path if found is not None and refused.startswith("spec.networkTopology") else ""


def _refused_itself(obj: dict, ctx: CheckContext) -> bool:
    """Whether the API server refuses ``obj`` itself (so its controller never runs), judged exactly as
    the rule that reports it judges: its CRD schema (``crd-schema``), Volcano's webhooks in the
    check's install (``upstream-admission``), the API server's own validation with the stack's
    feature gates (``kubernetes-api-validation``), the Training Operator's webhook
    (``training-operator-admission``, which reads no setting). Trainer's webhook is not asked:
    ``trainer-admission`` judges a TrainJob against its own settings (``priorityClasses``,
    ``clusterObjectsKnown``), which this rule cannot see, and a guess could hide a true finding;
    a TrainJob both rules refuse gets both findings, each true."""
    from modules.upstream.chain import refusals
    from modules.upstream.cluster import Cluster
    from modules.upstream.install import EVERY_WEBHOOK
    from modules.upstream.kubernetes import registry

    from .crd_schema import refused_by_schema
    from .kubernetes_validation import feature_gates

    if refused_by_schema(obj, ctx) or stack_admission(ctx).judge(obj, ("volcano",)):
        return True
    if registry.validate_object(obj, feature_gates(ctx)):
        return True
    return obj.get("kind") == "PyTorchJob" and \
        bool(refusals(obj, EVERY_WEBHOOK, Cluster(), sources=("training-operator",)))


def _judged(obj: dict, ctx: CheckContext) -> Finding | None:
    from modules.semantics.controllers import controller_podgroup
    from modules.upstream.chain import refusals
    from modules.upstream.fixes import fix_for

    context = ctx.manifests
    scheduler = ctx.remember("scheduler-name", lambda: expected_scheduler_name(context))
    creator = podgroup_creator(obj, context, scheduler)
    if creator is None:
        return None
    workload = workload_of(obj, context)
    admission = stack_admission(ctx)
    if workload is None or _refused_itself(obj, ctx):
        return None          # never created: the rule that refuses the object says so
    podgroup = controller_podgroup(workload, obj, context)
    refused = refusals(podgroup, admission.install, admission.cluster, sources=("volcano",))
    if not refused:
        return None
    check, error = refused[0]
    path = _field(obj, context, error.field)
    fix = fix_for(error, podgroup) or f"change the object so that the PodGroup's {error.field} passes upstream's check"
    runs = "none of its pods runs" if obj.get("kind") in REPLICAS_KINDS else "nothing of the job runs"
    return Finding(path, f"{where(obj, path)}: the PodGroup {workload.name} its controller creates ({creator}) is "
                         f"refused by Volcano's PodGroup webhook: \"{error.message()}\" ({check.upstream}); the "
                         f"{obj.get('kind')} is created but its PodGroup never is, so {runs}; fix: {fix}.")


def _controller_podgroups(obj: dict, ctx: CheckContext) -> Iterator[Finding]:
    try:
        found = _judged(obj, ctx)
    except Exception:   # noqa: BLE001 - an object whose PodGroup cannot be worked out gives no finding
        return
    if found is not None:
        yield found


RULES = (
    Rule(
        id=RULE_ID,
        description="The PodGroup a job's controller creates passes Volcano's PodGroup webhook (its queue exists "
                    "and is Open; its networkTopology sets one of highestTierAllowed and highestTierName): TrainJobs "
                    "whose runtime sets podGroupPolicy.volcano (Trainer's Volcano plugin), PyTorchJobs (the "
                    "Training Operator with --gang-scheduler-name=volcano) and Deployments, StatefulSets and "
                    "ReplicaSets whose pods Volcano's scheduler places without a PodGroup of their own "
                    "(scheduling.k8s.io/group-name), for which Volcano's PodGroup controller creates one. Volcano "
                    "Jobs are upstream-admission's: the job webhook checks the same queue on the Job.",
        why="The job itself is admitted (its own webhook never reads the queue); the controller's create of the "
            "PodGroup is refused, so the job exists, its PodGroup never does and nothing of it is scheduled. "
            "Nothing fails at `pulumi up` or the GitOps sync: the job just never runs.",
        fix="Name a queue the cluster has (runPolicy.schedulingPolicy.queue, the pod template's or the runtime "
            "template's scheduling.volcano.sh/queue-name annotation), open it, or create it first; the finding "
            "names the field and quotes the webhook. Queues are known only where the objects are a stack's: "
            "manifests checked without one give no finding.",
        severity="high", enforcement=MANDATORY, check=_controller_podgroups, kinds=KINDS),
)
