"""The Kubeflow Training Operator v1.9.4's validating webhooks (kubeflow/trainer tag v1.9.4
``pkg/webhooks``), our own code in ``modules/upstream/training_operator/webhooks.py``. v1.9.4 has no MPIJob
webhook: an MPIJob is judged by its CRD schema only."""
from __future__ import annotations

from modules.upstream.training_operator import webhooks as training_operator

from ..webhooks import CREATE, UPDATE, VALIDATE, Request, Webhook

_REPO = "kubeflow/trainer v1.9.4"


def _validate(request: Request) -> list[tuple[str, str]]:
    return training_operator.validate(request.object, request.old_object if request.operation == UPDATE else None)


WEBHOOKS = tuple(
    Webhook("training-operator", training_operator.GROUP, kind.kind, VALIDATE, _validate,
            f"{_REPO} {kind.upstream}", f"validate{kind.kind}", None, frozenset({CREATE, UPDATE}))
    for kind in training_operator.KINDS.values()
)
