"""Object scope: which kinds live outside namespaces.

``BUILTIN_CLUSTER_SCOPED`` is every built-in cluster-scoped kind a Kubernetes v1.35 API server serves
(GA, beta and alpha groups; what ``kubectl api-resources --namespaced=false`` lists with all of them
enabled), as ``(API group, kind)``; ``CUSTOM_CLUSTER_SCOPED`` the custom resources trainstack renders
or checks whose CRD says ``scope: Cluster`` (Volcano v1.15.1, Trainer v2). For these kinds the API
server clears ``metadata.namespace`` on create (apiserver ``rest.BeforeCreate`` ->
``EnsureObjectNamespaceMatchesRequestNamespace``: a cluster-scoped request has no namespace), so a
namespace written there is never validated or refused.
"""
from __future__ import annotations

BUILTIN_CLUSTER_SCOPED: frozenset[tuple[str, str]] = frozenset({
    ("", "ComponentStatus"), ("", "Namespace"), ("", "Node"), ("", "PersistentVolume"),
    ("admissionregistration.k8s.io", "MutatingAdmissionPolicy"),
    ("admissionregistration.k8s.io", "MutatingAdmissionPolicyBinding"),
    ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"),
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"),
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding"),
    ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"),
    ("apiextensions.k8s.io", "CustomResourceDefinition"),
    ("apiregistration.k8s.io", "APIService"),
    ("authentication.k8s.io", "SelfSubjectReview"), ("authentication.k8s.io", "TokenReview"),
    ("authorization.k8s.io", "SelfSubjectAccessReview"), ("authorization.k8s.io", "SelfSubjectRulesReview"),
    ("authorization.k8s.io", "SubjectAccessReview"),
    ("certificates.k8s.io", "CertificateSigningRequest"), ("certificates.k8s.io", "ClusterTrustBundle"),
    ("flowcontrol.apiserver.k8s.io", "FlowSchema"), ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration"),
    ("internal.apiserver.k8s.io", "StorageVersion"),
    ("networking.k8s.io", "IngressClass"), ("networking.k8s.io", "IPAddress"), ("networking.k8s.io", "ServiceCIDR"),
    ("node.k8s.io", "RuntimeClass"),
    ("rbac.authorization.k8s.io", "ClusterRole"), ("rbac.authorization.k8s.io", "ClusterRoleBinding"),
    ("resource.k8s.io", "DeviceClass"), ("resource.k8s.io", "DeviceTaintRule"), ("resource.k8s.io", "ResourceSlice"),
    ("scheduling.k8s.io", "PriorityClass"),
    ("storage.k8s.io", "CSIDriver"), ("storage.k8s.io", "CSINode"), ("storage.k8s.io", "StorageClass"),
    ("storage.k8s.io", "VolumeAttachment"), ("storage.k8s.io", "VolumeAttributesClass"),
    ("storagemigration.k8s.io", "StorageVersionMigration"),
})

CUSTOM_CLUSTER_SCOPED: frozenset[tuple[str, str]] = frozenset({
    ("scheduling.volcano.sh", "Queue"), ("topology.volcano.sh", "HyperNode"),
    ("nodeinfo.volcano.sh", "Numatopology"), ("trainer.kubeflow.org", "ClusterTrainingRuntime"),
})

CLUSTER_SCOPED = BUILTIN_CLUSTER_SCOPED | CUSTOM_CLUSTER_SCOPED


def api_group(obj: dict) -> str:
    """The API group of ``obj``'s ``apiVersion`` (``""`` for the core group ``v1``)."""
    return str(obj.get("apiVersion", "")).rpartition("/")[0]


def is_cluster_scoped(obj: dict) -> bool:
    """Whether ``obj``'s kind, in its API group, lives outside namespaces."""
    return (api_group(obj), str(obj.get("kind", ""))) in CLUSTER_SCOPED
