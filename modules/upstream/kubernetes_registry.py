"""The Kubernetes API server's built-in validation (kubernetes/kubernetes v1.35, ``pkg/apis/*/validation``),
our own code in ``modules/upstream/kubernetes/``, in the registry: which kinds it judges. Custom resources get
the object-metadata checks only (name, labels, annotations): their bodies are the CRD schema's to judge."""
from __future__ import annotations

from modules.upstream.cluster import Cluster
from modules.upstream.field import FieldError
from modules.upstream.kubernetes import registry
from modules.upstream.registry import VALIDATE, Check

_REPO = "kubernetes/kubernetes v1.35"


def _validate(obj: dict, operation: str, old: dict | None, cluster: Cluster) -> list[FieldError]:
    """The API server's validation of ``obj`` on create: apimachinery's coded field errors."""
    return list(registry.validate_object(obj))


# (API group, kind, the upstream file that holds its checks)
_KINDS = (
    ("", "Pod", "pkg/apis/core/validation/validation.go ValidatePodCreate"),
    ("", "PodTemplate", "pkg/apis/core/validation/validation.go ValidatePodTemplate"),
    ("", "ReplicationController", "pkg/apis/core/validation/validation.go ValidateReplicationController"),
    ("", "Service", "pkg/apis/core/validation/validation.go ValidateService"),
    ("", "ConfigMap", "pkg/apis/core/validation/validation.go ValidateConfigMap"),
    ("", "Secret", "pkg/apis/core/validation/validation.go ValidateSecret"),
    ("", "PersistentVolumeClaim", "pkg/apis/core/validation/validation.go ValidatePersistentVolumeClaim"),
    ("", "Namespace", "pkg/apis/core/validation/validation.go ValidateNamespace"),
    ("", "ServiceAccount", "pkg/apis/core/validation/validation.go ValidateServiceAccount"),
    ("apps", "Deployment", "pkg/apis/apps/validation/validation.go ValidateDeployment"),
    ("apps", "StatefulSet", "pkg/apis/apps/validation/validation.go ValidateStatefulSet"),
    ("apps", "DaemonSet", "pkg/apis/apps/validation/validation.go ValidateDaemonSet"),
    ("apps", "ReplicaSet", "pkg/apis/apps/validation/validation.go ValidateReplicaSet"),
    ("batch", "Job", "pkg/apis/batch/validation/validation.go ValidateJob"),
    ("batch", "CronJob", "pkg/apis/batch/validation/validation.go ValidateCronJobCreate"),
    ("autoscaling", "HorizontalPodAutoscaler",
     "pkg/apis/autoscaling/validation/validation.go ValidateHorizontalPodAutoscaler"),
    ("scheduling.k8s.io", "PriorityClass", "pkg/apis/scheduling/validation/validation.go ValidatePriorityClass"),
    ("storage.k8s.io", "StorageClass", "pkg/apis/storage/validation/validation.go ValidateStorageClass"),
    ("rbac.authorization.k8s.io", "Role", "pkg/apis/rbac/validation/validation.go ValidateRole"),
    ("rbac.authorization.k8s.io", "ClusterRole", "pkg/apis/rbac/validation/validation.go ValidateClusterRole"),
    ("rbac.authorization.k8s.io", "RoleBinding", "pkg/apis/rbac/validation/validation.go ValidateRoleBinding"),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding",
     "pkg/apis/rbac/validation/validation.go ValidateClusterRoleBinding"),
)
# Custom resources: metadata only (apiextensions-apiserver pkg/registry/customresource/validator.go).
_CUSTOM = tuple((group, kind) for group, kinds in (
    ("batch.volcano.sh", ("Job",)), ("bus.volcano.sh", ("Command",)),
    ("scheduling.volcano.sh", ("Queue", "PodGroup")),
    ("topology.volcano.sh", ("HyperNode",)), ("flow.volcano.sh", ("JobFlow", "JobTemplate")),
    ("trainer.kubeflow.org", ("TrainJob", "TrainingRuntime", "ClusterTrainingRuntime")),
    ("jobset.x-k8s.io", ("JobSet",)),
    ("kubeflow.org", ("PyTorchJob", "MPIJob", "TFJob", "XGBoostJob", "JAXJob", "PaddleJob")),
    ("monitoring.coreos.com", ("PrometheusRule", "ServiceMonitor", "PodMonitor")),
) for kind in kinds)

CHECKS = tuple(
    Check("kubernetes", group, kind, VALIDATE, _validate, f"{_REPO} {where}", where.rsplit(" ", 1)[-1])
    for group, kind, where in _KINDS
) + tuple(
    Check("kubernetes", group, kind, VALIDATE, _validate,
          f"{_REPO} staging/src/k8s.io/apiextensions-apiserver/pkg/registry/customresource/validator.go",
          "ValidateObjectMetaAccessor")
    for group, kind in _CUSTOM
)
