"""What the Kubeflow Training Operator v1.9.4's validating webhooks refuse (kubeflow/trainer tag v1.9.4
``pkg/webhooks/{pytorch,tensorflow,xgboost,jax,paddlepaddle}``, ``pkg/common/util/webhooks.go``),
written in our own code.

The operator registers validators only (no defaulting webhook): a job is judged as written, so a
``Master`` without ``replicas`` is refused although the controller would later default it to 1.
v1.9.4 has no MPIJob webhook: an MPIJob gets the CRD schema check only.

``validate(job, old=None)`` returns ``(field path, message)``: our path (``spec.pytorchReplicaSpecs.Worker
.template.spec.containers``), the message worded as the webhook's field error (``Required value: must
have at least one container with name pytorch``). Upstream keeps the replica specs in a Go map, so
its error order is random; ours follows the replica types' sorted order.
"""
from __future__ import annotations

from dataclasses import dataclass

from modules.semantics.apivalidation import Problem, dns1035_label, forbidden, invalid, not_supported, required
from modules.semantics.shapes import as_dict, as_int, as_list

GROUP = "kubeflow.org"
MANAGED_BY = ("kubeflow.org/training-operator", "kueue.x-k8s.io/multikueue")


@dataclass(frozen=True)
class JobKind:
    """What the Training Operator's admission webhook checks for one job kind."""
    kind: str
    specs: str                       # the replica specs' field
    container: str                   # the container every replica must hold
    replica_types: tuple[str, ...] | None   # allowed replica types (None: any)
    master_once: bool                # a Master replica must have replicas: 1
    run_policy: bool                 # spec.runPolicy.managedBy is validated
    quoted_container: bool = False   # PaddleJob's message quotes the container name
    upstream: str = ""


KINDS = {
    "PyTorchJob": JobKind("PyTorchJob", "pytorchReplicaSpecs", "pytorch", ("Master", "Worker"), True, True,
                          upstream="pkg/webhooks/pytorch/pytorchjob_webhook.go"),
    "TFJob": JobKind("TFJob", "tfReplicaSpecs", "tensorflow", None, False, True,
                     upstream="pkg/webhooks/tensorflow/tfjob_webhook.go"),
    "XGBoostJob": JobKind("XGBoostJob", "xgbReplicaSpecs", "xgboost", ("Master", "Worker"), True, True,
                          upstream="pkg/webhooks/xgboost/xgboostjob_webhook.go"),
    "JAXJob": JobKind("JAXJob", "jaxReplicaSpecs", "jax", ("Worker",), False, False,
                      upstream="pkg/webhooks/jax/jaxjob_webhook.go"),
    "PaddleJob": JobKind("PaddleJob", "paddleReplicaSpecs", "paddle", ("Master", "Worker"), False, True,
                         quoted_container=True, upstream="pkg/webhooks/paddlepaddle/paddlepaddle_webhook.go"),
}
CHIEF_OR_MASTER = ("Chief", "Master")   # TFJob: at most one of them


def _replicas(kind: JobKind, specs: dict) -> list[Problem]:
    base = f"spec.{kind.specs}"
    out: list[Problem] = []
    chief_or_master = 0
    for role in sorted(specs, key=str):
        spec = specs[role]
        role_path = f"{base}.{role}"
        containers_path = f"{role_path}.template.spec.containers"
        if kind.replica_types is not None and role not in kind.replica_types:
            out.append((role_path, not_supported(role, kind.replica_types)))
        containers = [as_dict(c) for c in as_list(as_dict(as_dict(as_dict(spec).get("template")).get("spec"))
                                                  .get("containers"))]
        if not isinstance(spec, dict) or not containers:
            out.append((containers_path, required("must be specified")))
        if role in CHIEF_OR_MASTER:
            chief_or_master += 1
        for i, container in enumerate(containers):
            if not container.get("image"):
                out.append((f"{containers_path}[{i}].image", required("must be required")))
        if not any(c.get("name") == kind.container for c in containers):
            name = f'"{kind.container}"' if kind.quoted_container else kind.container
            out.append((containers_path, required(f"must have at least one container with name {name}")))
        replicas = as_int(as_dict(spec).get("replicas"))
        if kind.master_once and role == "Master":
            if replicas != 1:
                out.append((f"{role_path}.replicas", forbidden("must be 1")))
        elif kind.kind == "PyTorchJob" and replicas is not None and replicas < 1:
            out.append((f"{role_path}.replicas", forbidden("must be at least 1")))
    if kind.kind == "TFJob" and chief_or_master > 1:
        out.append((base, forbidden("must not have more than 1 Chief or Master role")))
    if kind.kind == "XGBoostJob" and "Master" not in specs:
        out.append((f"{base}.Master", required("must be present")))
    return out


def validate(job: dict, old: dict | None = None) -> list[Problem]:
    """Everything the Training Operator's webhook for ``job``'s kind refuses (CREATE, or UPDATE from
    ``old``). Kinds without a webhook (MPIJob) or outside kubeflow.org: nothing."""
    kind = KINDS.get(str(job.get("kind")))
    if kind is None or str(job.get("apiVersion", "")).rpartition("/")[0] != GROUP:
        return []
    out: list[Problem] = []
    name = str(as_dict(job.get("metadata")).get("name", ""))
    problems = dns1035_label(name)
    if problems:
        out.append(("metadata.name", invalid(name, "should match: " + ",".join(problems))))
    spec = as_dict(job.get("spec"))
    manager = as_dict(spec.get("runPolicy")).get("managedBy")
    if kind.run_policy:
        if old is not None:
            old_manager = as_dict(as_dict(old.get("spec")).get("runPolicy")).get("managedBy")
            if old_manager != manager:
                out.append(("spec.runPolicy.managedBy", invalid(manager if manager is not None else "null",
                                                                "field is immutable")))
        if manager is not None and manager not in MANAGED_BY:
            out.append(("spec.runPolicy.managedBy", not_supported(manager, MANAGED_BY)))
    if kind.kind == "PyTorchJob":
        out += _elastic(spec)
    specs = spec.get(kind.specs)
    if not isinstance(specs, dict):
        out.append((f"spec.{kind.specs}", required("must be required")))
    else:
        out += _replicas(kind, specs)
    return out


def _elastic(spec: dict) -> list[Problem]:
    elastic = spec.get("elasticPolicy")
    if not isinstance(elastic, dict):
        return []
    out: list[Problem] = []
    if "Worker" not in as_dict(spec.get("pytorchReplicaSpecs")):
        out.append(("spec.pytorchReplicaSpecs.Worker", required("must be configured if elastic policy is used")))
    if elastic.get("nProcPerNode") is not None and spec.get("nprocPerNode") is not None:
        out.append(("spec.elasticPolicy.nProcPerNode", forbidden("must not be used with spec.nprocPerNode")))
    return out


def upstream_file(job: dict) -> str:
    kind = KINDS.get(str(job.get("kind")))
    return kind.upstream if kind else ""
