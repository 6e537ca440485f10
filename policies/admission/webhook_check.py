"""Upstream's Go-only admission checks (the registry, ``modules/upstream/registry.py``) applied to
manifests as the API server meets them on CREATE (``modules/upstream/chain.py``: status dropped, the
mutating webhooks' defaults applied, then every validating check the install registers for the
object's namespace). The install is read from the Volcano chart release among the manifests
(``modules/upstream/install.py``); without one, the chart's defaults are assumed."""
from __future__ import annotations

from dataclasses import replace
from typing import Callable

from modules.semantics.scheduler_conf import is_volcano_release
from modules.semantics.shapes import api_group, as_dict
from modules.upstream.chain import mutate, refusals
from modules.upstream.cluster import Cluster, as_applied
from modules.upstream.field import FieldError
from modules.upstream.install import CHART_DEFAULTS, Install, install_of
from modules.upstream.registry import SOURCES, Check
from modules.upstream.volcano.cronjob import job_of_cronjob


def declares_queues(manifests: list[dict]) -> bool:
    """Whether the manifests are a whole stack's: it installs Volcano (its chart release) and so
    declares every queue the cluster has besides Volcano's own ``root`` and ``default`` (a stack's
    workloads may only name the stack's queues). Bare manifests come with no such promise."""
    return any(is_volcano_release(o) for o in manifests)


def cluster_of(manifests: list[dict]) -> tuple[dict, ...]:
    """What the webhooks look up among the manifests, as the cluster holds them once applied
    (``modules.upstream.cluster.as_applied``): the Queues, each Open, with Volcano's own ``root``
    and ``default``, and the core Namespaces (not a custom resource's kind of that name)."""
    return tuple(o for o in as_applied(manifests)
                 if (o.get("kind") == "Queue" and api_group(o) == "scheduling.volcano.sh")
                 or (o.get("kind") == "Namespace" and api_group(o) == ""))


def judge(obj: dict, cluster: Cluster, install: Install = CHART_DEFAULTS, sources: tuple[str, ...] = SOURCES,
          mutated: Callable[[], dict] | None = None) -> list[tuple[Check, FieldError]]:
    """Each refusal of ``obj`` at CREATE by the checks of ``sources`` that ``install`` sends it to, with
    the check. ``cluster.known``: it holds every queue there is (see ``declares_queues``), so a queue
    missing from it is missing. ``mutated``: ``obj`` as already mutated under ``install`` and
    ``cluster`` (``Admitted.mutated``; the Queue's own view below hides only queues, which no
    mutation reads)."""
    if obj.get("kind") == "Queue":   # its child queues name it as parent: they come after it
        cluster = cluster.creating_queue(as_dict(obj.get("metadata")).get("name"))
    return refusals(obj, install, cluster, sources=sources, mutated=mutated)


class Admitted:
    """One check's objects as the API server meets them on CREATE: the Volcano install and the
    cluster the manifests describe, built once, and each object created and mutated by the webhooks
    the install registers (``chain.mutate``) once, for the Go checks, the named Volcano rules and
    the admission policies alike. Held in the check's context (``stack_admission``), never beyond."""

    def __init__(self, manifests: list[dict]):
        self.install = install_of(manifests)
        self.cluster = Cluster(cluster_of(manifests), declares_queues(manifests))
        self._mutated: dict[int, tuple[dict, dict | Exception]] = {}   # id -> (the object, the outcome)

    def mutated(self, obj: dict) -> dict:
        """``obj`` created and mutated; raises what the mutation raised, each time it is asked."""
        held = self._mutated.get(id(obj))
        if held is None or held[0] is not obj:
            try:
                outcome: dict | Exception = mutate(obj, self.install, self.cluster)
            except Exception as exc:   # noqa: BLE001 - kept, and raised to each caller as mutate raised it
                outcome = exc
            held = self._mutated[id(obj)] = (obj, outcome)
        if isinstance(held[1], Exception):
            raise held[1]
        return held[1]

    def admitted(self, obj: dict) -> dict:
        """``obj`` as the policies and CRD rules meet it: mutated, or as written when the mutation
        fails on an odd object (the webhook checks then say why they could not judge it)."""
        try:
            return self.mutated(obj)
        except Exception:   # noqa: BLE001 - see above
            return obj

    def namespaces(self) -> dict[str, dict]:
        """The Namespaces among the manifests by name, as the admission policies' namespaceObject."""
        return self.cluster.namespaces()

    def judge(self, obj: dict, sources: tuple[str, ...] = SOURCES) -> list[tuple[Check, FieldError]]:
        """``judge`` of ``obj`` in this install and cluster, on the object mutated once."""
        return judge(obj, self.cluster, self.install, sources, lambda: self.mutated(obj))


def runs_of_cronjob(cron: dict, cluster: Cluster, install: Install = CHART_DEFAULTS
                    ) -> list[tuple[Check, FieldError]]:
    """What the job webhook refuses of the Job a Volcano CronJob creates at each run (the CronJob
    itself is admitted: its webhook checks only schedule and timeZone), on the CronJob's paths, the
    Job's name written ``<cronjob>-<minutes>`` (cronjob getJobName) where upstream's words quote it."""
    job = job_of_cronjob(cron)
    named, shown = str(job["metadata"]["name"]), f"{as_dict(cron.get('metadata')).get('name') or ''}-<minutes>"
    out = []
    for check, error in judge(job, cluster, install, ("volcano",)):
        if error.field.startswith(("spec.", "metadata.labels", "metadata.annotations")):
            error = replace(error, field=f"spec.jobTemplate.{error.field}")
        out.append((check, replace(error, detail=error.detail.replace(named, shown))))
    return out
