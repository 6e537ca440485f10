"""The stack's TrainJobs go through Trainer v2.3's TrainJob webhook before they are written.

The webhook's port is upstream's, shared with the `trainer-admission` rule (which judges the same
rendered TrainJobs, and users' manifests, in `trainstack check`): ``modules/upstream/trainer/``.
This file only calls it; it implements no check of its own.
"""
from __future__ import annotations

from modules.upstream.trainer import webhooks


def refusals(job: dict, runtime: dict) -> list[tuple[str, str]]:
    """``[(field path, upstream's message)]`` the TrainJob webhook refuses ``job`` on ``runtime``
    with, on CREATE (the PriorityClass lookup is left to the rule, which knows the cluster's)."""
    return [(error.field, error.message()) for error in webhooks.trainjob_problems(job, runtime)]
