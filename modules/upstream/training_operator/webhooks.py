"""What the Kubeflow Training Operator v1.9.4's validating webhooks refuse (kubeflow/trainer tag v1.9.4
``pkg/webhooks/{pytorch,tensorflow,xgboost,jax,paddlepaddle}``, ``pkg/common/util/webhooks.go``),
written in our own code.

The operator registers validators only (no defaulting webhook): a job is judged as written, so a
``Master`` without ``replicas`` is refused although the controller would later default it to 1.
v1.9.4 has no MPIJob webhook: an MPIJob gets the CRD schema check only.

``validate(job, operation, old, cluster)`` returns apimachinery field errors, coded for the fix hints
(``origin``): the path is ours (``spec.pytorchReplicaSpecs.Worker.template.spec.containers``), the
message the webhook's (``Required value: must have at least one container with name pytorch``).
Upstream keeps the replica specs in a Go map, so
its error order is random; ours follows the replica types' sorted order.
"""
from __future__ import annotations

from modules.semantics.shapes import api_group, as_dict, as_int, as_list
from modules.upstream.cluster import Cluster
from modules.semantics.training_kinds import GROUP, WEBHOOK_KINDS, JobKind
from modules.upstream.field import FieldError, forbidden, invalid, not_supported, required
from modules.core.vocabulary.names import dns1035_label
from modules.upstream.webhook_error import coded

MANAGED_BY = ("kubeflow.org/training-operator", "kueue.x-k8s.io/multikueue")
KINDS = WEBHOOK_KINDS
CHIEF_OR_MASTER = ("Chief", "Master")   # TFJob: at most one of them


def _replicas(kind: JobKind, specs: dict) -> list[FieldError]:
    base = f"spec.{kind.specs}"
    out: list[FieldError] = []
    chief_or_master = 0
    for role in sorted(specs, key=str):
        spec = specs[role]
        role_path = f"{base}.{role}"
        containers_path = f"{role_path}.template.spec.containers"
        if kind.replica_types is not None and role not in kind.replica_types:
            out.append(coded(not_supported(role_path, role, kind.replica_types), "to.replica-type"))
        containers = [as_dict(c) for c in as_list(as_dict(as_dict(as_dict(spec).get("template")).get("spec"))
                                                  .get("containers"))]
        if not isinstance(spec, dict) or not containers:
            out.append(coded(required(containers_path, "must be specified"), "to.containers"))
        if role in CHIEF_OR_MASTER:
            chief_or_master += 1
        for i, container in enumerate(containers):
            if not container.get("image"):
                out.append(coded(required(f"{containers_path}[{i}].image", "must be required"), "to.image"))
        if not any(c.get("name") == kind.container for c in containers):
            name = f'"{kind.container}"' if kind.quoted_container else kind.container
            out.append(coded(required(containers_path, f"must have at least one container with name {name}"),
                             "to.container-name"))
        replicas = as_int(as_dict(spec).get("replicas"))
        if kind.master_once and role == "Master":
            if replicas != 1:
                out.append(coded(forbidden(f"{role_path}.replicas", "must be 1"), "to.master-replicas"))
        elif kind.kind == "PyTorchJob" and replicas is not None and replicas < 1:
            out.append(coded(forbidden(f"{role_path}.replicas", "must be at least 1"), "to.replicas"))
    if kind.kind == "TFJob" and chief_or_master > 1:
        out.append(coded(forbidden(base, "must not have more than 1 Chief or Master role"), "to.chief-or-master"))
    if kind.kind == "XGBoostJob" and "Master" not in specs:
        out.append(coded(required(f"{base}.Master", "must be present"), "to.master-required"))
    return out


def validate(job: dict, operation: str = "CREATE", old: dict | None = None,
             cluster: Cluster | None = None) -> list[FieldError]:
    """Everything the Training Operator's webhook for ``job``'s kind refuses (CREATE, or UPDATE from
    ``old``). Kinds without a webhook (MPIJob) or outside kubeflow.org: nothing."""
    kind = KINDS.get(str(job.get("kind")))
    if kind is None or api_group(job) != GROUP:
        return []
    out: list[FieldError] = []
    name = str(as_dict(job.get("metadata")).get("name", ""))
    problems = dns1035_label(name)
    if problems:
        out.append(coded(invalid("metadata.name", name, "should match: " + ",".join(problems)), "to.name"))
    spec = as_dict(job.get("spec"))
    manager = as_dict(spec.get("runPolicy")).get("managedBy")
    if kind.run_policy:
        if operation == "UPDATE" and old is not None:
            old_manager = as_dict(as_dict(old.get("spec")).get("runPolicy")).get("managedBy")
            if old_manager != manager:
                out.append(coded(invalid("spec.runPolicy.managedBy", manager if manager is not None else "null",
                                         "field is immutable"), "to.managed-by-immutable"))
        if manager is not None and manager not in MANAGED_BY:
            out.append(coded(not_supported("spec.runPolicy.managedBy", manager, MANAGED_BY), "to.managed-by"))
    if kind.kind == "PyTorchJob":
        out += _elastic(spec)
    specs = spec.get(kind.specs)
    if not isinstance(specs, dict):
        out.append(coded(required(f"spec.{kind.specs}", "must be required"), "to.specs"))
    else:
        out += _replicas(kind, specs)
    return out


def _elastic(spec: dict) -> list[FieldError]:
    elastic = spec.get("elasticPolicy")
    if not isinstance(elastic, dict):
        return []
    out: list[FieldError] = []
    if "Worker" not in as_dict(spec.get("pytorchReplicaSpecs")):
        out.append(coded(required("spec.pytorchReplicaSpecs.Worker", "must be configured if elastic policy is used"),
                         "to.elastic-worker"))
    if elastic.get("nProcPerNode") is not None and spec.get("nprocPerNode") is not None:
        out.append(coded(forbidden("spec.elasticPolicy.nProcPerNode", "must not be used with spec.nprocPerNode"),
                         "to.elastic-nproc"))
    return out
