"""An object as the API server hands it to admission on CREATE: ``.status`` of a kind with the status
subresource is dropped first (apiextensions-apiserver ``PrepareForCreate`` resets it; no validating
policy or webhook ever sees it). The admission chain (``modules/upstream/chain.py``) starts here;
the controller-owned fields table (``owned.py``) lists the same kinds' status."""
from __future__ import annotations

from .shapes import api_group


# Kinds whose CRD declares ``subresources.status`` (the upstream CRDs: Volcano Job, Queue, PodGroup,
# HyperNode, CronJob, JobFlow/JobTemplate; Trainer TrainJob; JobSet; Training Operator jobs;
# prometheus-operator and Flux kinds) and the built-in kinds with a status subresource: on CREATE the
# API server keeps none of ``.status``.
STATUS_SUBRESOURCE = frozenset({
    ("batch.volcano.sh", "Job"), ("batch.volcano.sh", "CronJob"), ("scheduling.volcano.sh", "Queue"),
    ("scheduling.volcano.sh", "PodGroup"), ("topology.volcano.sh", "HyperNode"), ("flow.volcano.sh", "JobFlow"),
    ("flow.volcano.sh", "JobTemplate"), ("trainer.kubeflow.org", "TrainJob"), ("jobset.x-k8s.io", "JobSet"),
    ("kubeflow.org", "PyTorchJob"), ("kubeflow.org", "MPIJob"), ("kubeflow.org", "TFJob"),
    ("kubeflow.org", "XGBoostJob"), ("kubeflow.org", "PaddleJob"), ("kubeflow.org", "JAXJob"),
    ("monitoring.coreos.com", "PrometheusRule"), ("monitoring.coreos.com", "ServiceMonitor"),
    ("monitoring.coreos.com", "PodMonitor"),
    ("", "Pod"), ("", "Service"), ("", "PersistentVolumeClaim"), ("", "Namespace"), ("", "Node"),
    ("apps", "Deployment"), ("apps", "StatefulSet"), ("apps", "DaemonSet"), ("apps", "ReplicaSet"),
    ("batch", "Job"), ("batch", "CronJob"), ("autoscaling", "HorizontalPodAutoscaler"),
    ("policy", "PodDisruptionBudget"),
})


def as_created(obj: dict) -> dict:
    """``obj`` as the API server hands it to admission on CREATE: ``.status`` dropped for a kind with
    the status subresource (so a Queue created with ``status.state: Closing`` is judged without it)."""
    if "status" in obj and (api_group(obj), obj.get("kind")) in STATUS_SUBRESOURCE:
        return {k: v for k, v in obj.items() if k != "status"}
    return obj
