"""What the Kubeflow Training Operator v1.9.4's validating webhooks refuse (the registry's checks,
modules/upstream/training_operator/): PyTorchJob, TFJob, XGBoostJob, JAXJob and PaddleJob. v1.9.4 has no
MPIJob webhook."""
from __future__ import annotations

from typing import Iterator

from ..framework import MANDATORY, CheckContext, Finding, Rule, where
from modules.upstream.chain import refusals
from modules.upstream.cluster import Cluster
from modules.upstream.install import EVERY_WEBHOOK
from modules.upstream.training_operator import webhooks as training_operator

RULE_ID = "training-operator-admission"
_REPO = "kubeflow/trainer v1.9.4 (the Training Operator)"


def _training_operator(obj: dict, ctx: CheckContext) -> Iterator[Finding]:
    from modules.upstream.fixes import fix_for
    from modules.upstream.training_operator.fixes import GENERIC

    kind = training_operator.KINDS[str(obj.get("kind"))]
    for _, error in refusals(obj, EVERY_WEBHOOK, Cluster(), sources=("training-operator",)):
        fix = fix_for(error, obj) or GENERIC
        yield Finding(error.field, f"{where(obj, error.field)}: the Training Operator's {obj['kind']} webhook rejects "
                                   f"it: \"{error.message()}\" ({_REPO} {kind.upstream}); {fix}.")


RULES = (
    Rule(
        id=RULE_ID,
        description="Kubeflow v1 jobs (PyTorchJob, TFJob, XGBoostJob, JAXJob, PaddleJob) pass the Training "
                    "Operator v1.9.4's validating webhooks: a DNS-1035 name, known replica types, containers with "
                    "images and one named after the framework (`pytorch`, ...), a Master with one replica, a "
                    "Worker when an elastic policy is set, a supported runPolicy.managedBy.",
        why="These checks live in the Training Operator's webhook code (pkg/webhooks), not in its CRDs' "
            "schemas, so schema validation does not see them; the API server refuses the job at creation.",
        fix="Follow the message: it quotes the webhook's own field error.",
        severity="high", enforcement=MANDATORY, check=_training_operator,
        kinds=frozenset(training_operator.KINDS)),
)
