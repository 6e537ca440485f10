"""The Kubeflow Training Operator v1.9.4's job kinds (kubeflow/trainer tag v1.9.4
``pkg/apis/kubeflow.org/v1/*_types.go``): each kind's replica-specs field, the container every
replica must run and its replica types. One table: the pod template walk (``shapes.py``) and the
webhook port (``modules/upstream/training_operator/webhooks.py``) read it. It imports nothing.
"""
from __future__ import annotations

from dataclasses import dataclass

GROUP = "kubeflow.org"


@dataclass(frozen=True)
class JobKind:
    """One Training Operator job kind and what its admission webhook checks."""
    kind: str
    specs: str                       # the replica specs' field
    container: str                   # the container every replica must hold (``<Kind>DefaultContainerName``)
    replica_types: tuple[str, ...] | None   # allowed replica types (None: any)
    master_once: bool = False        # a Master replica must have replicas: 1
    run_policy: bool = False         # spec.runPolicy.managedBy is validated
    quoted_container: bool = False   # PaddleJob's message quotes the container name
    upstream: str = ""               # its validating webhook; "" when v1.9.4 registers none


TABLE = {k.kind: k for k in (
    JobKind("PyTorchJob", "pytorchReplicaSpecs", "pytorch", ("Master", "Worker"), True, True,
            upstream="pkg/webhooks/pytorch/pytorchjob_webhook.go"),
    JobKind("TFJob", "tfReplicaSpecs", "tensorflow", None, False, True,
            upstream="pkg/webhooks/tensorflow/tfjob_webhook.go"),
    JobKind("MPIJob", "mpiReplicaSpecs", "mpi", ("Launcher", "Worker")),
    JobKind("XGBoostJob", "xgbReplicaSpecs", "xgboost", ("Master", "Worker"), True, True,
            upstream="pkg/webhooks/xgboost/xgboostjob_webhook.go"),
    JobKind("JAXJob", "jaxReplicaSpecs", "jax", ("Worker",), False, False,
            upstream="pkg/webhooks/jax/jaxjob_webhook.go"),
    JobKind("PaddleJob", "paddleReplicaSpecs", "paddle", ("Master", "Worker"), False, True,
            quoted_container=True, upstream="pkg/webhooks/paddlepaddle/paddlepaddle_webhook.go"),
)}
# The kinds with a validating webhook (v1.9.4 has none for MPIJob: its CRD schema alone judges it).
WEBHOOK_KINDS = {name: k for name, k in TABLE.items() if k.upstream}
REPLICA_SPECS = {name: k.specs for name, k in TABLE.items()}   # kind -> its replica specs' field
