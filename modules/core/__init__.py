"""Config loading, the Bundle, object ordering, YAML output and the Pulumi adapter."""
