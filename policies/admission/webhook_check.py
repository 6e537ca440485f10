"""Upstream's Go-only admission checks (the registry, ``modules/upstream/registry.py``) applied to
manifests as the API server meets them on CREATE (``modules/upstream/chain.py``: status dropped, the
mutating webhooks' defaults applied, then every validating check the install registers for the
object's namespace). The install is read from the Volcano chart release among the manifests
(``modules/upstream/install.py``); without one, the chart's defaults are assumed."""
from __future__ import annotations

from dataclasses import replace

from modules.semantics.scheduler_conf import is_volcano_release
from modules.semantics.shapes import as_dict
from modules.upstream.chain import refusals
from modules.upstream.cluster import Cluster, as_applied
from modules.upstream.field import FieldError
from modules.upstream.install import CHART_DEFAULTS, Install
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
    and ``default``, and the Namespaces."""
    return tuple(o for o in as_applied(manifests) if o.get("kind") in ("Queue", "Namespace"))


def judge(obj: dict, cluster: Cluster, install: Install = CHART_DEFAULTS,
          sources: tuple[str, ...] = SOURCES) -> list[tuple[Check, FieldError]]:
    """Each refusal of ``obj`` at CREATE by the checks of ``sources`` that ``install`` sends it to, with
    the check. ``cluster.known``: it holds every queue there is (see ``declares_queues``), so a queue
    missing from it is missing."""
    if obj.get("kind") == "Queue":   # its child queues name it as parent: they come after it
        cluster = cluster.creating_queue(as_dict(obj.get("metadata")).get("name"))
    return refusals(obj, install, cluster, sources=sources)


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
