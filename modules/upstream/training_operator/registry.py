"""The Kubeflow Training Operator v1.9.4's validating webhooks (kubeflow/trainer tag v1.9.4
``pkg/webhooks``) in the registry. v1.9.4 has no MPIJob webhook: an MPIJob is judged by its CRD
schema only."""
from __future__ import annotations

from modules.upstream.registry import BOTH, VALIDATE, Check
from modules.upstream.training_operator.webhooks import GROUP, KINDS, validate

_REPO = "kubeflow/trainer v1.9.4"

CHECKS = tuple(
    Check("training-operator", GROUP, kind.kind, VALIDATE, validate, f"{_REPO} {kind.upstream}",
          f"validate{kind.kind}", f"validator.{kind.kind.lower()}.training-operator.kubeflow.org", None, BOTH)
    for kind in KINDS.values()
)
