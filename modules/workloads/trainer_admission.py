"""The stack's TrainJobs go through Trainer v2.3's TrainJob webhook before they are written.

The webhook's port is upstream's, shared with the `trainer-admission` rule (which judges the same
rendered TrainJobs, and users' manifests, in `trainstack check`): ``modules/upstream/trainer/``.
This file only calls it; it implements no check of its own. The policy pack held the port until
it moved to modules/upstream/ (modules never import policies/), so where the move has not landed
the render leaves the judgement to `trainstack check`.
"""
from __future__ import annotations

from typing import Any


def _port() -> Any:
    try:
        from modules.upstream.trainer import webhooks
    except ImportError:   # the port still lives in the policy pack: `check` judges the TrainJob
        return None
    return webhooks


def available() -> bool:
    return _port() is not None


def refusals(job: dict, runtime: dict) -> list[tuple[str, str]]:
    """``[(field path, upstream's message)]`` the TrainJob webhook refuses ``job`` on ``runtime``
    with, on CREATE (the PriorityClass lookup is left to the rule, which knows the cluster's)."""
    port = _port()
    if port is None:
        return []
    out = []
    for problem in port.trainjob_problems(job, runtime):
        if isinstance(problem, tuple):
            out.append((str(problem[0]), str(problem[1])))
        else:   # a FieldError of modules/upstream/field.py
            out.append((str(problem.field), problem.message() if hasattr(problem, "message") else str(problem)))
    return out
