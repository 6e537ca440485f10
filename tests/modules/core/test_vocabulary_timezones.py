"""Volcano's CronJob timeZone is judged against one pinned IANA release (vocabulary/timezones.json),
never the zone database of the machine that runs trainstack."""
from __future__ import annotations

import zoneinfo

from modules.core.vocabulary.timezones import release, zones
from modules.upstream.volcano.cronjob import validate_cronjob


def _cron(tz: str) -> dict:
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "CronJob", "metadata": {"name": "nightly"},
            "spec": {"schedule": "0 2 * * *", "timeZone": tz, "jobTemplate": {"spec": {}}}}


def _codes(tz: str) -> list[str]:
    return [e.origin for e in validate_cronjob(_cron(tz))]


def test_the_pinned_release_holds_canonical_zones_and_backward_links():
    assert release() == "2026f" and len(zones()) == 598
    assert {"UTC", "Europe/Berlin", "America/Ciudad_Juarez", "US/Pacific"} <= zones()
    assert not {"localtime", "posixrules", "Local"} & zones()


def test_the_verdict_is_the_same_without_a_host_zone_database(monkeypatch):
    monkeypatch.setattr(zoneinfo, "available_timezones", lambda: set())   # a slim image: no /usr/share/zoneinfo
    assert _codes("Europe/Berlin") == []
    assert _codes("Mars/Olympus_Mons") == ["cronjob.time-zone"]   # was admitted unjudged without a database
    assert _codes("localtime") == ["cronjob.time-zone"]           # a Debian host's database holds it
