"""Kubeflow Trainer v2.3.0's validating webhooks (kubeflow/trainer tag v2.3.0 ``pkg/webhooks`` and the
plugins' ``Validate`` under ``pkg/runtime/framework/plugins``), our own code in
``policies/rules/trainer_admission.py`` (rule ``trainer-admission`` reports them in every runner)."""
from __future__ import annotations

from modules.upstream.trainer.webhooks import admission_problems
from ..webhooks import CREATE, UPDATE, VALIDATE, Request, Webhook

_REPO = "kubeflow/trainer v2.3.0"
GROUP = "trainer.kubeflow.org"


def _validate(request: Request) -> list[tuple[str, str]]:
    classes = {str((o.get("metadata") or {}).get("name")) for o in request.cluster if o.get("kind") == "PriorityClass"}
    old = request.old_object if request.operation == UPDATE else None
    return admission_problems(request.object, list(request.cluster), request.cluster_known,
                              classes if request.cluster_known else None, old) or []


WEBHOOKS = (
    Webhook("trainer", GROUP, "TrainJob", VALIDATE, _validate,
            f"{_REPO} pkg/webhooks/trainjob_webhook.go and pkg/runtime/framework/plugins/{{torch,mpi,volcano,jobset}}",
            "ValidateCreate", None, frozenset({CREATE, UPDATE})),
    Webhook("trainer", GROUP, "TrainingRuntime", VALIDATE, _validate,
            f"{_REPO} pkg/webhooks/trainingruntime_webhook.go", "validateReplicatedJobs"),
    Webhook("trainer", GROUP, "ClusterTrainingRuntime", VALIDATE, _validate,
            f"{_REPO} pkg/webhooks/clustertrainingruntime_webhook.go", "validateReplicatedJobs"),
)
