"""Kubeflow Trainer v2.3.0's validating webhooks (kubeflow/trainer v2.3.0 ``pkg/webhooks`` and plugins)."""
