"""What the API server makes of a job handed to the simulator (``--submit``, ``--workloads``): the
object goes through the one admission chain (``modules/upstream/chain.py``, the registry the rules
use) before anything is placed. The mutating webhooks' defaults are applied (a Volcano Job's queue,
``minAvailable``, task names, as the job controller later reads them), and what a validating check
refuses is said in upstream's words, naming the file, the document and the field, with the fix for
its code: a warning of placement, the first note of the what-if. The job is still simulated as
admitted, so the answer shows what Volcano would do once the job is fixed, and never without the
line that says the cluster would refuse it as written.

The cluster the checks look up is the stack's (its rendered objects, Queues Open, complete for the
Queues and PriorityClasses a stack declares) or the snapshot's (its objects as read, a Queue keeping
its live ``status.state``; complete when it holds Queues and PriorityClasses, which the documented
``kubectl get`` lines include). The install is the Volcano chart release among those objects, else
the chart's defaults.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from modules.semantics.podspec import Reader
from modules.semantics.scheduler_conf import is_volcano_release
from modules.semantics.shapes import is_kind
from modules.upstream.chain import admit
from modules.upstream.cluster import Cluster, as_applied
from modules.upstream.field import FieldError
from modules.upstream.fixes import fix_for
from modules.upstream.install import Install, install_of
from modules.upstream.registry import Check

QUEUED = (("Job", "batch.volcano.sh"), ("PodGroup", "scheduling.volcano.sh"))   # kinds whose spec names the queue


@dataclass(frozen=True)
class Admission:
    """The API server a submission meets: the webhooks installed and what they look up."""

    install: Install
    cluster: Cluster

    def admit(self, obj: dict) -> tuple[dict, "list[tuple[Check, FieldError]] | Exception"]:
        """``obj`` as the API server stores it, and what its validating checks refuse; ``obj`` as
        written and the exception when a check cannot judge its shape (a name or annotation of the
        wrong type, which the API server's schema refuses before any webhook): the simulator's
        reader says what is wrong with the object, or ``refusal`` says it was not judged."""
        try:
            return admit(obj, self.install, self.cluster)
        except Exception as exc:   # noqa: BLE001 - said by refusal, never a traceback
            return obj, exc


def refusal(refused: "list[tuple[Check, FieldError]] | Exception", doc: Reader, obj: dict) -> str | None:
    """The first refusal of ``obj``, said at ``doc``'s refused field in upstream's words, with the
    check that words it and the fix named for its code; None when nothing refuses it. The caller
    says it after its own reader has read the object (a field's shape mistake is an input error in
    the simulator's words first) and goes on with the object as admitted: the answer that follows
    is what Volcano would do were the job created, and the line says that it would not be. An
    object the checks could not judge is an input error: it is never simulated unjudged."""
    if isinstance(refused, Exception):
        raise doc.error("", f"the API server's admission checks cannot judge this object "
                            f"({type(refused).__name__}: {refused}); nothing was simulated")
    if not refused:
        return None
    check, error = refused[0]
    more = f" (and {len(refused) - 1} more refusal(s))" if len(refused) > 1 else ""
    by = check.webhook or check.name or check.source
    fix = fix_for(error, obj)
    return str(doc.error(error.field, f"the API server refuses this object at create: {error.message()} "
                         f"({by}, {check.upstream}){more}; {f'fix: {fix}; ' if fix else ''}"
                         "simulated as if it were admitted"))


def of_stack(manifests: Iterable[dict], submitted: Iterable[dict] = ()) -> Admission:
    """A stack's cluster: its rendered objects as applied; its Queues are all there are when it
    installs Volcano (its chart release is among them). ``submitted``: the objects handed to
    ``simulate`` beside them, which the checks look up (a runtime given alongside its TrainJob) but
    which never make the cluster's lists complete."""
    cluster = [o for o in manifests if isinstance(o, dict)]
    known = any(is_volcano_release(o) for o in cluster)
    objects = [o for o in submitted if isinstance(o, dict)] + cluster
    return Admission(install_of(objects), Cluster(as_applied(objects), known))


def of_snapshot(objects: Iterable[dict], submitted: Iterable[dict] = ()) -> Admission:
    """A snapshot's cluster: its objects as read; complete when it lists Queues and PriorityClasses
    (``kubectl get`` lists every one of a kind it is asked for). ``submitted``: as for ``of_stack``:
    a PriorityClass or Queue in the submission is looked up, but says nothing of the snapshot's."""
    cluster = [o for o in objects if isinstance(o, dict)]
    known = any(is_kind(o, "Queue", "scheduling.volcano.sh") for o in cluster) and \
        any(is_kind(o, "PriorityClass", "scheduling.k8s.io") for o in cluster)
    objects = [o for o in submitted if isinstance(o, dict)] + cluster
    return Admission(install_of(objects), Cluster(as_applied(objects, live=True), known))


def with_queue(obj: dict, queue: str | None) -> dict:
    """``obj`` submitted into ``queue`` (``--queue``) where its own spec names the queue (a
    PodGroup without a spec gets one with only the queue; a spec of another type, or a Job's that
    is absent, is left for the reader to say)."""
    spec = obj.get("spec")
    if spec is None and is_kind(obj, "PodGroup", "scheduling.volcano.sh"):
        spec = {}
    if not queue or not any(is_kind(obj, *kind) for kind in QUEUED) or not isinstance(spec, dict):
        return obj
    return {**obj, "spec": {**spec, "queue": queue}}
