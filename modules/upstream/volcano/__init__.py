"""Volcano v1.15.1's admission webhooks (volcano-sh/volcano ``pkg/webhooks/admission``), our own code."""
