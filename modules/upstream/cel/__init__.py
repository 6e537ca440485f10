"""The Kubernetes CEL library functions (``k8s.io/apiserver/pkg/cel/library``) the admission rules call."""
