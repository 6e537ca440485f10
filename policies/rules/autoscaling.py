"""HorizontalPodAutoscalers must target something that scales, within sane and consistent bounds,
on targets that can converge (judged with the HPA model, modules/upstream/autoscaling)."""
from __future__ import annotations

from typing import Iterator

from ..framework import MANDATORY, CheckContext, Finding, Rule, as_dict, as_int, meta, where

RULE = "hpa-target-scalable"
CONVERGES = "hpa-converges"

# apiVersion group -> kinds with a scale subresource (of the training CRDs only
# PyTorchJob v1 has one; TrainJob, TFJob, MPIJob, XGBoostJob and Volcano Jobs have none).
SCALABLE = {"apps": {"Deployment", "StatefulSet", "ReplicaSet"}, "": {"ReplicationController"},
            "kubeflow.org": {"PyTorchJob"}}
NOT_SCALABLE_WHY = {
    "TrainJob": "Trainer v2's TrainJob has no scale subresource and no elastic training (kubeflow/trainer#2903); "
                "its gang is always all numNodes pods",
    "Job": "a Job (batch/v1 or Volcano) has no scale subresource",
    "TFJob": "TFJob has no scale subresource", "MPIJob": "MPIJob has no scale subresource",
    "XGBoostJob": "XGBoostJob has no scale subresource",
}


def _find(objects: list[dict], kind: str, name: str, namespace: str | None) -> dict | None:
    for obj in objects:
        if obj.get("kind") == kind and meta(obj).get("name") == name and \
                (not namespace or meta(obj).get("namespace") in (None, namespace)):
            return obj
    return None


def _hpa(obj: dict, ctx: CheckContext, objects: list[dict]) -> Iterator[Finding]:
    spec = as_dict(obj.get("spec"))
    ref = as_dict(spec.get("scaleTargetRef"))
    kind, name = str(ref.get("kind")), ref.get("name")
    group = str(ref.get("apiVersion", "")).rpartition("/")[0]
    extra = {(str(k).rpartition("/")[0], str(k).rpartition("/")[2]) for k in ctx.config.get("scalableKinds", [])}
    min_replicas = as_int(spec.get("minReplicas"))
    min_replicas = 1 if min_replicas is None else min_replicas
    max_replicas = as_int(spec.get("maxReplicas"))
    # minReplicas <= maxReplicas and maxReplicas >= 1 are the API server's own validation:
    # kubernetes-api-validation reports them (modules/upstream/kubernetes/autoscaling.py validate_hpa).
    scalable = kind in SCALABLE.get(group, set()) or (group, kind) in extra
    if not scalable:
        why = NOT_SCALABLE_WHY.get(str(kind), f"{ref.get('apiVersion')} {kind} has no scale subresource")
        yield Finding("spec.scaleTargetRef", f"{where(obj, 'spec.scaleTargetRef')}: targets {kind} {name!r}, "
                      f"but {why}; "
                      "the HPA only reports FailedGetScale and never scales anything. Target a Deployment, "
                      "StatefulSet or a v1 PyTorchJob with elasticPolicy, or delete the HPA.")
        return
    if kind != "PyTorchJob":
        return
    stack = ctx.stack
    trainer = (stack.values.get("trainer") if stack is not None and isinstance(stack.values, dict) else None) or {}
    if isinstance(trainer, dict) and trainer.get("api") == "v2":
        yield Finding("spec.scaleTargetRef", f"{where(obj, 'spec.scaleTargetRef')}: targets a PyTorchJob, "
                      "but the stack "
                      "installs Kubeflow Trainer v2 (trainstack:trainer.api v2), which has no PyTorchJob; elastic "
                      "training with an HPA needs the v1 Training Operator. Set trainstack:trainer.api: v1 or "
                      "delete the HPA.")
        return
    job = _find(objects, "PyTorchJob", str(name), meta(obj).get("namespace"))
    if job is None:
        return   # ML engineers submit jobs later; nothing to compare with
    elastic = as_dict(as_dict(job.get("spec")).get("elasticPolicy"))
    job_id = f"PyTorchJob {meta(job).get('name')!r}"
    if not elastic:
        yield Finding("spec.scaleTargetRef", f"{where(obj, 'spec.scaleTargetRef')}: {job_id} has no elasticPolicy, so "
                      "changing its Worker replicas restarts torchrun with a fixed world size instead of "
                      "re-rendezvousing. Add spec.elasticPolicy (minReplicas, maxReplicas, rdzvBackend) to the job.")
        return
    if elastic.get("metrics"):
        yield Finding("spec.scaleTargetRef", f"{where(obj, 'spec.scaleTargetRef')}: {job_id} sets "
                      "elasticPolicy.metrics, so the training operator creates and owns its own HPA named after the "
                      "job; two HPAs fight over the replicas. Delete this HPA or drop elasticPolicy.metrics.")
    lo, hi = as_int(elastic.get("minReplicas")), as_int(elastic.get("maxReplicas"))
    if lo is not None and min_replicas < lo:
        yield Finding("spec.minReplicas", f"{where(obj, 'spec.minReplicas')}: minReplicas {min_replicas} is below "
                      f"{job_id}'s elasticPolicy.minReplicas {lo}; torchrun's rendezvous waits for {lo} workers and "
                      f"the job stalls. Set minReplicas >= {lo}.")
    if hi is not None and max_replicas is not None and max_replicas > hi:
        yield Finding("spec.maxReplicas", f"{where(obj, 'spec.maxReplicas')}: maxReplicas {max_replicas} is above "
                      f"{job_id}'s elasticPolicy.maxReplicas {hi}; workers beyond {hi} are refused by the "
                      f"rendezvous. Set maxReplicas <= {hi}.")


def _hpa_target_scalable(objects: list[dict], ctx: CheckContext) -> Iterator[Finding]:
    every = ctx.manifests or objects
    for obj in objects:
        if obj.get("kind") == "HorizontalPodAutoscaler":
            for finding in _hpa(obj, ctx, every):
                yield Finding(finding.path, finding.message, obj=obj)


def _hpa_converges(obj: dict, ctx: CheckContext) -> Iterator[Finding]:
    # The HPA model loads with the first HPA checked: a check without one never pays for it.
    from modules.autoscaling.convergence import problems as convergence_problems
    extra = {str(m) for m in ctx.config.get("replicaIndependentMetrics", [])}
    for problem in convergence_problems(obj, extra):
        yield Finding(problem.path, f"{where(obj, problem.path)}: {problem.message}.")


RULES = (
    Rule(
        id=RULE,
        description="An HPA's target kind has a scale subresource (PyTorchJob v1 yes, TrainJob no), and for a "
                    "PyTorchJob its bounds sit inside the job's elasticPolicy, which the stack's trainer API (v1) "
                    "must support (minReplicas <= maxReplicas is kubernetes-api-validation's).",
        why="An HPA on a kind without a scale subresource only reports FailedGetScale; TrainJob (Trainer v2) has "
            "none and no elastic training, so only v1 PyTorchJobs and Deployments can scale. Bounds outside "
            "elasticPolicy stall or refuse the rendezvous, and elasticPolicy.metrics makes the operator create a "
            "competing HPA.",
        fix="Target a Deployment, StatefulSet or a v1 PyTorchJob with elasticPolicy, keep min/max within the "
            "elastic bounds, or delete the HPA.",
        severity="medium", enforcement=MANDATORY, check_stack=_hpa_target_scalable,
        config_schema={"scalableKinds": {
            "type": "array", "items": {"type": "string", "pattern": "^[^/]*/?[A-Za-z][A-Za-z0-9]*$"},
            "default": [],
            "description": "More kinds with a scale subresource, as <group>/<Kind> (e.g. argoproj.io/Rollout)."}},
        config_defaults={"scalableKinds": []}),
)
RULES += (
    Rule(
        id=CONVERGES,
        description="An HPA's targets can converge: no Value target on a metric that does not change with the "
                    "target's replicas (trainstack's fabric metrics, fabric_busbw_gbps and the probe's "
                    "trainstack_probe_* gauges), no target a bounded metric can never exceed (it only scales down).",
        why="Every sync the HPA sets replicas x metric / value for a Value target (Kubernetes' replica "
            "calculator); a metric the replicas do not move keeps the same ratio, so the target is pinned at "
            "maxReplicas or minReplicas. A bounded metric (GPU utilisation <= 100) whose target sits within the "
            "tolerance of its bound never asks for more replicas.",
        fix="Use an AverageValue target on such metrics (replicas = metric / averageValue: one replica per "
            "averageValue), or a metric the pods' load drives; keep bounded metrics' targets below bound / 1.1.",
        severity="high", enforcement=MANDATORY, check=_hpa_converges,
        kinds=frozenset({"HorizontalPodAutoscaler"}),
        config_schema={"replicaIndependentMetrics": {
            "type": "array", "items": {"type": "string", "minLength": 1}, "default": [],
            "description": "More metric names that do not depend on the scaled workload's replicas (an "
                           "exporter's gauge of something else): a Value target on them is refused too."}},
        config_defaults={"replicaIndependentMetrics": []}),
)
