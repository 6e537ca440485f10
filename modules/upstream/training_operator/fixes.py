"""How to fix what the Kubeflow Training Operator v1.9.4's validating webhooks refuse
(``modules/upstream/training_operator/webhooks.py``), by code. ``{container}``: the container the
job's kind must hold."""
from __future__ import annotations

_REPLICAS = "give a Master exactly 1 replica and every other replica type at least 1"
_ELASTIC = "configure a Worker replica type for the elastic policy and set nprocPerNode only once (spec.nprocPerNode)"

FIXES = {
    "to.container-name": "name the training container `{container}` (the operator finds it by that name)",
    "to.name": "use a DNS-1035 label: lower case letters, digits and '-', starting with a letter",
    "to.master-replicas": _REPLICAS,
    "to.replicas": _REPLICAS,
    "to.image": "set the container's image",
    "to.elastic-worker": _ELASTIC,
    "to.elastic-nproc": _ELASTIC,
}
GENERIC = "change the job as the message says"
