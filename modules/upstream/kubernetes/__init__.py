"""The Kubernetes API server's built-in validation (kubernetes v1.35 ``pkg/apis/*/validation``), one
module per API group and concern; ``registry.validate_object`` judges an object on create."""
