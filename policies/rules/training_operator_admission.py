"""What the Kubeflow Training Operator v1.9.4's validating webhooks refuse (modules/semantics/
training_operator.py): PyTorchJob, TFJob, XGBoostJob, JAXJob and PaddleJob. v1.9.4 has no MPIJob webhook."""
from __future__ import annotations

from typing import Iterator

from ..framework import MANDATORY, CheckContext, Finding, Rule, where
from modules.upstream.training_operator import webhooks as training_operator

RULE_ID = "training-operator-admission"
_REPO = "kubeflow/trainer v1.9.4 (the Training Operator)"


def _fix(obj: dict, path: str, message: str) -> str:
    kind = training_operator.KINDS[str(obj.get("kind"))]
    if "must have at least one container with name" in message:
        return f"name the training container `{kind.container}` (the operator finds it by that name)"
    if path == "metadata.name":
        return "use a DNS-1035 label: lower case letters, digits and '-', starting with a letter"
    if path.endswith(".replicas"):
        return "give a Master exactly 1 replica and every other replica type at least 1"
    if path.endswith(".image"):
        return "set the container's image"
    if "elasticPolicy" in path or "elastic policy" in message:
        return "configure a Worker replica type for the elastic policy and set nprocPerNode only once " \
               "(spec.nprocPerNode)"
    return "change the job as the message says"


def _training_operator(obj: dict, ctx: CheckContext) -> Iterator[Finding]:
    for path, message in training_operator.validate(obj):
        yield Finding(path, f"{where(obj, path)}: the Training Operator's {obj['kind']} webhook rejects it: "
                            f"\"{message}\" ({_REPO} {training_operator.upstream_file(obj)}); "
                            f"{_fix(obj, path, message)}.")


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
