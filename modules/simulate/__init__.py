"""What-if placement: a model of Volcano's network-topology-aware allocation."""
