"""How the Kubernetes API server's built-in validation judges an object on CREATE (kubernetes v1.35:
``pkg/apis/core/validation``, ``pkg/apis/apps|batch|autoscaling|scheduling/validation`` and
apimachinery's ``pkg/util/validation``), written in our own code.

Every check returns ``(field path, message)`` pairs. The path is ours (``spec.containers[0].name``;
map keys as ``metadata.labels[key]``), the message is worded as the API server words its field
errors (``Invalid value: "Foo": a lowercase RFC 1123 label must ...``, ``Not found: "data"``,
``Required value``), so a finding can quote upstream's reason. An empty list: the API server
admits the object (as far as these checks go: see ``docs/policies.md`` for what is evaluated).

The object is judged as the API server sees it after its v1 defaulting: a missing
``restartPolicy`` is ``Always``, a port's missing ``protocol`` is ``TCP``, a volume with no source
is an ``emptyDir``, an HPA's missing ``minReplicas`` is 1, a Service's missing ``type`` is
``ClusterIP``. Custom resources get only the object-metadata checks (name, labels, annotations):
the API server validates their bodies against the CRD schema, not with these rules (Volcano's job
webhook calls ``validate_pod_template`` itself for every task).

Values are read leniently: a field of the wrong shape is skipped here (the CRD or OpenAPI schema
check reports it); nothing raises.
"""
from __future__ import annotations

from modules.semantics.shapes import api_group, as_dict, as_int
from .apps import APPS_KINDS, BATCH_RESTART_POLICIES, apps_selector, deployment_strategy, stateful_set_template
from .autoscaling import validate_hpa
from .batch import validate_cronjob_spec, validate_indexed
from .core_other import validate_config_map, validate_pvc, validate_secret, validate_service
from .core_pod import validate_pod, validate_pod_template
from .meta import validate_object_meta
from .rbac import policy_rules, validate_binding
from .scheduling import validate_priority_class
from .storage import validate_storage_class
from modules.upstream.field import FieldError, forbidden, invalid


def _workload(obj: dict) -> list[FieldError]:
    kind, group = obj.get("kind"), api_group(obj)
    spec = as_dict(obj.get("spec"))
    if kind in APPS_KINDS and group == "apps" or kind == "ReplicationController" and group == "":
        if kind == "StatefulSet":
            out = stateful_set_template(as_dict(spec.get("template")))
        else:
            out = validate_pod_template(spec.get("template"), "spec.template", ("Always",))
        if as_dict(as_dict(spec.get("template")).get("spec")).get("activeDeadlineSeconds") is not None:
            owner = {"Deployment": "ReplicaSet"}.get(str(kind), kind)   # a Deployment's check reuses the words
            out.append(forbidden("spec.template.spec.activeDeadlineSeconds",
                                 f"activeDeadlineSeconds in {owner} is not Supported"))
        replicas = as_int(spec.get("replicas"))
        if replicas is not None and replicas < 0:
            out.append(invalid("spec.replicas", replicas, "must be greater than or equal to 0"))
        if group == "apps":
            out += apps_selector(kind, spec)
        if kind == "Deployment":
            out += deployment_strategy(as_dict(spec.get("strategy")))
        return out
    if kind == "Job" and group == "batch":
        template = spec.get("template")
        return validate_pod_template(template, "spec.template", BATCH_RESTART_POLICIES) + validate_indexed(spec)
    if kind == "CronJob" and group == "batch":
        template = as_dict(as_dict(spec.get("jobTemplate")).get("spec")).get("template")
        out = validate_pod_template(template, "spec.jobTemplate.spec.template", BATCH_RESTART_POLICIES)
        return out + validate_cronjob_spec(spec)
    if kind == "PodTemplate" and group == "":
        return validate_pod_template(obj.get("template"), "template")
    if kind == "Pod" and group == "":
        return validate_pod(obj)
    return []


# (API group, kind) -> the kind's own validation, beside the metadata checks every object gets.
_BY_KIND = {
    ("autoscaling", "HorizontalPodAutoscaler"): lambda o, gates: validate_hpa(o, "HPAScaleToZero" in gates),
    ("", "PersistentVolumeClaim"): lambda o, gates: validate_pvc(o),
    ("", "Service"): lambda o, gates: validate_service(o),
    ("scheduling.k8s.io", "PriorityClass"): lambda o, gates: validate_priority_class(o),
    ("", "ConfigMap"): lambda o, gates: validate_config_map(o),
    ("", "Secret"): lambda o, gates: validate_secret(o),
    ("storage.k8s.io", "StorageClass"): lambda o, gates: validate_storage_class(o),
    ("rbac.authorization.k8s.io", "Role"): lambda o, gates: policy_rules(o, True),
    ("rbac.authorization.k8s.io", "ClusterRole"): lambda o, gates: policy_rules(o, False),
    ("rbac.authorization.k8s.io", "RoleBinding"): lambda o, gates: validate_binding(o, True),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"): lambda o, gates: validate_binding(o, False),
}
WORKLOAD_KINDS = frozenset({("apps", k) for k in APPS_KINDS} | {("", "ReplicationController"), ("batch", "Job"),
                                                           ("batch", "CronJob"), ("", "PodTemplate"), ("", "Pod")})

# Where the workload kinds check their own spec (selector and template labels, strategy, completions).
_SPEC_CHECKS = {("apps", k): f"pkg/apis/apps/validation/validation.go Validate{k}Spec" for k in APPS_KINDS}
_SPEC_CHECKS[("batch", "Job")] = "pkg/apis/batch/validation/validation.go validateJobSpec"
_SPEC_CHECKS[("batch", "CronJob")] = "pkg/apis/batch/validation/validation.go ValidateCronJobSpec"

# The upstream file that holds each kind's checks (for messages): kubernetes/kubernetes at v1.35.
UPSTREAM = {
    "metadata": "staging/src/k8s.io/apimachinery/pkg/api/validation/objectmeta.go ValidateObjectMeta",
    ("autoscaling", "HorizontalPodAutoscaler"): "pkg/apis/autoscaling/validation/validation.go "
                                                "ValidateHorizontalPodAutoscaler",
    ("scheduling.k8s.io", "PriorityClass"): "pkg/apis/scheduling/validation/validation.go ValidatePriorityClass",
    ("apps", "pod-template"): "pkg/apis/apps/validation/validation.go with pkg/apis/core/validation/validation.go "
                              "ValidatePodTemplateSpec",
    ("batch", "pod-template"): "pkg/apis/batch/validation/validation.go with pkg/apis/core/validation/validation.go "
                               "ValidatePodTemplateSpec",
    ("", "pod-template"): "pkg/apis/core/validation/validation.go ValidatePodSpec",
    "core": "pkg/apis/core/validation/validation.go",
    ("storage.k8s.io", "StorageClass"): "pkg/apis/storage/validation/validation.go ValidateStorageClass",
    **{("rbac.authorization.k8s.io", k): f"pkg/apis/rbac/validation/validation.go Validate{k}"
       for k in ("Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding")},
}


def judged_kind(obj: dict) -> tuple[str, str]:
    return api_group(obj), str(obj.get("kind", ""))


# Objects trainstack models that the API server never receives: a chart release (``modules/core/
# wire.py`` ``release_manifest``; Helm stores its own Secrets) is judged by no API server rule.
NOT_API_OBJECTS = frozenset({("helm.sh", "Release")})


def validate_object(obj: dict, feature_gates: frozenset[str] | set[str] = frozenset()) -> list[FieldError]:
    """Everything the API server's built-in validation refuses in ``obj`` on CREATE: its metadata
    (every kind, custom resources included) and, for the core kinds it knows, its body."""
    group, kind = judged_kind(obj)
    if (group, kind) in NOT_API_OBJECTS:
        return []
    out = validate_object_meta(obj)
    if (group, kind) in WORKLOAD_KINDS:
        out += _workload(obj)
    check = _BY_KIND.get((group, kind))
    if check is not None:
        out += check(obj, feature_gates)
    return out


def upstream_file(obj: dict, path: str) -> str:
    """The kubernetes/kubernetes file whose check refused ``path`` of ``obj``."""
    group, kind = judged_kind(obj)
    if path.startswith("metadata."):
        return UPSTREAM["metadata"]
    if (group, kind) in _SPEC_CHECKS and "template.spec." not in path:
        return _SPEC_CHECKS[(group, kind)]   # the controller's own spec: selector, strategy, completions
    if (group, kind) in WORKLOAD_KINDS:
        return UPSTREAM[(group if group in ("apps", "batch") else "", "pod-template")]
    return UPSTREAM.get((group, kind), UPSTREAM["core"] + f" Validate{kind}")
