"""The Kubeflow Training Operator v1.9.4's validating webhooks (kubeflow/trainer v1.9.4 ``pkg/webhooks``)."""
