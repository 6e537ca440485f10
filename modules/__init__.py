"""trainstack: a declarative bundle for network-topology-aware training on Kubernetes."""
