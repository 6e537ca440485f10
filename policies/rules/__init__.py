"""Every rule of the pack, in the order reports and docs list them (mandatory first, as in the issue)."""
from __future__ import annotations

from ..framework import Rule
from . import (autoscaling, hypernodes, nccl, owned, pod_security, references, requests, scheduler, security,
               storage, topology, trainer_admission)
from . import admission, kubernetes_validation, training_operator_admission, volcano_admission
from . import controller_podgroups, crd_schema

ORDER = (
    "requests-required", "topology-tier-exists", "topology-satisfiable", "scheduler-plugin-enabled",
    "scheduler-args-typed", "topology-source-exclusive", "hypernode-tree-valid", "nccl-env-valid",
    "nccl-ifname-pod-network", "trainer-admission", "volcano-job-admission", "training-operator-admission",
    "controller-podgroups-admitted",
    "crd-schema",
    "kubernetes-api-validation",
    "scheduler-name-volcano", "shared-claims-rwx-retained", "claims-serve-pods", "hpa-target-scalable", "hpa-converges",
    "controller-owned-fields",
    "image-pinned",
    "host-network-opt-in", "no-secrets-in-configmaps", "rbac-no-wildcards", "configmap-refs-exist",
    "nccl-debug-production", "nccl-algo-override", "volcano-cronjob-runs", "pod-security-baseline",
    "pod-security-restricted",
    "crd-unknown-fields",
    "upstream-admission",
)

_MODULES = (requests, topology, scheduler, hypernodes, nccl, storage, autoscaling, owned, security, references,
            trainer_admission, pod_security)
_MODULES += (admission, volcano_admission, training_operator_admission, kubernetes_validation)
_MODULES += (crd_schema, controller_podgroups)
_ALL = {r.id: r for module in _MODULES for r in module.RULES}
assert set(_ALL) == set(ORDER), sorted(set(_ALL) ^ set(ORDER))

RULES: tuple[Rule, ...] = tuple(_ALL[rule_id] for rule_id in ORDER)
BY_ID: dict[str, Rule] = {r.id: r for r in RULES}
