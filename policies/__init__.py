"""trainstack's policy pack: one rule set run in-process, as a CrossGuard pack and over gRPC."""
