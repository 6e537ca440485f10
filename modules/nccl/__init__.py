"""NCCL tuning ConfigMaps, one per transport profile."""
