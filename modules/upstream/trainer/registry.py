"""Kubeflow Trainer v2.3.0's validating webhooks (kubeflow/trainer v2.3.0 ``pkg/webhooks``, each
registered with ``verbs=create;update`` by its kubebuilder marker) in the registry."""
from __future__ import annotations

from modules.upstream.registry import BOTH, VALIDATE, Check
from modules.upstream.trainer.webhooks import GROUP, validate

_REPO = "kubeflow/trainer v2.3.0"

CHECKS = (
    Check("trainer", GROUP, "TrainJob", VALIDATE, validate,
          f"{_REPO} pkg/webhooks/trainjob_webhook.go and pkg/runtime/framework/plugins/{{torch,mpi,volcano,jobset}}",
          "ValidateCreate", "validator.trainjob.trainer.kubeflow.org", None, BOTH),
    Check("trainer", GROUP, "TrainingRuntime", VALIDATE, validate, f"{_REPO} pkg/webhooks/trainingruntime_webhook.go",
          "validateReplicatedJobs", "validator.trainingruntime.trainer.kubeflow.org", None, BOTH),
    Check("trainer", GROUP, "ClusterTrainingRuntime", VALIDATE, validate,
          f"{_REPO} pkg/webhooks/clustertrainingruntime_webhook.go", "validateReplicatedJobs",
          "validator.clustertrainingruntime.trainer.kubeflow.org", None, BOTH),
)
