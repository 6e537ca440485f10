"""Volcano v1.15.1's CronJob validating webhook (volcano-sh/volcano ``pkg/webhooks/admission/cronjobs/validate``
``admit_cronjob.go``), our own code, and the Job the cronjob controller creates from a CronJob at
each run (``pkg/controllers/cronjob`` ``getJobFromTemplate``), which the job webhook judges then."""
from __future__ import annotations

import copy
import re

from modules.upstream.kubernetes.batch import cron_schedule_error
from modules.core.vocabulary.names import qualified_name
from modules.semantics.shapes import as_dict, meta
from modules.upstream.cluster import Cluster
from modules.upstream.field import FieldError
from modules.upstream.volcano.common import key
from modules.core.vocabulary.go import go_quote
from modules.core.vocabulary.timezones import zones
from modules.upstream.webhook_error import refuse

_TZ_PART = re.compile(r"[A-Za-z.\-_0-9+]{1,14}")
# A Volcano CronJob's Jobs are named <cronjob>-<scheduled minute since the epoch> (cronjob controller
# getJobName); the minute has 8 digits in this century, so this one stands for any.
SCHEDULED_MINUTE = 29_000_000


def cron_schedule_valid(schedule: str) -> bool:
    """robfig/cron ``ParseStandard`` accepts ``schedule`` (see ``kubernetes.batch.cron_schedule_error``)."""
    return cron_schedule_error(schedule) is None


def _schedule_error(schedule: str) -> FieldError | None:
    if not schedule:
        return refuse("spec.schedule", "cronjob.schedule-required", "schedule is required, but got empty")
    if "TZ" in schedule:
        return refuse("spec.schedule", "cronjob.schedule-time-zone", "schedule should not contain TZ or CRON_TZ, "
                                                                     "TZ should only be set in the timeZone field")
    if not cron_schedule_valid(schedule):
        return refuse("spec.schedule", "cronjob.schedule", "schedule is not a valid cron expression")
    return None


def _time_zone_errors(tz: str) -> list[FieldError]:
    if not tz:
        return [refuse("spec.timeZone", "cronjob.time-zone-empty",
                       "timeZone must be nil or non-empty string, got empty string")]
    out = [refuse("spec.timeZone", "cronjob.time-zone", "unknown timeZone")
           for part in tz.split("/") if part in (".", "..") or part.startswith("-") or not _TZ_PART.fullmatch(part)]
    if tz.lower() == "local":
        out.append(refuse("spec.timeZone", "cronjob.time-zone-local", "timeZone can't be Local, and must be defined "
                                                                      "in https://www.iana.org/time-zones"))
    elif tz != "UTC" and tz not in zones():   # the pinned IANA names, never the host's database
        out.append(refuse("spec.timeZone", "cronjob.time-zone", "invalid timeZone"))
    return out


def validate_cronjob(cron: dict, operation: str = "CREATE", old: dict | None = None,
                     cluster: Cluster | None = None) -> list[FieldError]:
    """``validateCronjobSpec`` + ``validateCronJobName`` (the job template is not checked here: the
    job webhook judges each Job the CronJob creates, see ``job_of_cronjob``)."""
    spec = as_dict(cron.get("spec"))
    out: list[FieldError] = []
    schedule = _schedule_error(key(spec.get("schedule") or ""))
    if schedule:
        out.append(schedule)
    if spec.get("timeZone") is not None:
        out += _time_zone_errors(str(spec.get("timeZone")))
    problem = cronjob_name_problem(key(meta(cron).get("name") or ""))
    if problem:
        out.append(refuse("metadata.name", "cronjob.name", problem))
    return out


def cronjob_name_problem(name: str) -> str | None:
    """``validateCronJobName``: at most 52 characters (its Jobs add ``-<minutes>``, up to 11), and a
    qualified name."""
    if len(name) > 52:
        return "cronJob name must be no more than 52 characters to accommodate job name suffix (max 63 total)"
    errors = qualified_name(name)
    return f"invalid cronJob name {go_quote(name)}: {'; '.join(errors)}" if errors else None


def job_of_cronjob(cron: dict) -> dict:
    """The Job the Volcano cronjob controller creates from ``cron`` (getJobFromTemplate): the job
    template's labels, annotations and spec, named ``<cronjob>-<minute>``, in the CronJob's namespace."""
    template = as_dict(as_dict(cron.get("spec")).get("jobTemplate"))
    md = as_dict(template.get("metadata"))
    job_md = {"name": f"{meta(cron).get('name') or ''}-{SCHEDULED_MINUTE}"}
    if meta(cron).get("namespace"):
        job_md["namespace"] = meta(cron)["namespace"]
    for field in ("labels", "annotations"):
        if isinstance(md.get(field), dict):
            job_md[field] = dict(md[field])
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": job_md,
            "spec": copy.deepcopy(as_dict(template.get("spec")))}
