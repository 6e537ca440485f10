"""Kubernetes' HorizontalPodAutoscaler, modelled once (kubernetes/kubernetes v1.35.0,
pkg/controller/podautoscaler): the replica calculator (``replicas``), the normalisation with
stabilisation windows and scaling policies (``behavior``) and one sync over every metric
(``controller``), measured against upstream's own tests (``fidelity``)."""
