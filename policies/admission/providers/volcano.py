"""Volcano v1.15.1's admission webhooks (volcano-sh/volcano ``pkg/webhooks/admission``), our own
code in ``modules/semantics``: which function stands for which upstream webhook."""
from __future__ import annotations

from modules.semantics import mutation

from ..webhooks import MUTATE, Request, Webhook

_REPO = "volcano-sh/volcano v1.15.1"


def _mutator(fn):
    def check(request: Request) -> dict:
        return fn(request.object)
    return check


WEBHOOKS = (
    Webhook("volcano", "batch.volcano.sh", "Job", MUTATE, _mutator(mutation.mutate_volcano_job),
            f"{_REPO} pkg/webhooks/admission/jobs/mutate/mutate_job.go", "createPatch", "/jobs/mutate"),
    Webhook("volcano", "scheduling.volcano.sh", "Queue", MUTATE, _mutator(mutation.mutate_volcano_queue),
            f"{_REPO} pkg/webhooks/admission/queues/mutate/mutate_queue.go", "createQueuePatch", "/queues/mutate"),
)
