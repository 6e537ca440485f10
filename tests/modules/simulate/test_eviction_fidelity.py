"""Volcano v1.15.1's action tests (preempt, reclaim, enqueue, backfill, gangpreempt, gangreclaim),
ported as data, run through the eviction model: counts per upstream function, and planted bugs
that the upstream figure must catch."""
from __future__ import annotations

import pytest

from modules.simulate import eviction, fidelity

ACTION_TESTS = {"TestPreempt": 13, "TestTopologyAwarePreempt": 12, "TestReclaim": 9, "TestEnqueue": 5,
                "TestPickUpPendingTasks": 1}


@pytest.fixture(scope="module")
def action_cases():
    return [c for c in fidelity.load_cases() if c.expect["check"] in fidelity.fidelity_actions.CHECKS]


def reproduced(cases) -> int:
    return sum(fidelity.run_case(c).reproduced for c in cases)


def test_every_action_table_is_ported_whole(action_cases):
    counts = {t: sum(c.test == t for c in action_cases) for t in ACTION_TESTS}
    assert counts == ACTION_TESTS
    gang = [c for c in action_cases if "gang" in c.source["file"]]
    assert len(gang) == 10 and {c.source["file"].split("/")[3] for c in gang} == {"gangpreempt", "gangreclaim"}
    assert sum(counts[t] for t in ("TestPreempt", "TestTopologyAwarePreempt", "TestReclaim")) >= 30


def test_evictions_are_compared_by_name_not_only_by_count(action_cases):
    case = next(c for c in action_cases if c.expect.get("evicted"))
    renamed = fidelity.Case(case.test, case.name, case.source, case.conf, case.objects,
                            {**case.expect, "evicted": [f"{e}-other" for e in case.expect["evicted"]]}, case.index)
    assert fidelity.run_case(case).reproduced and not fidelity.run_case(renamed).reproduced


@pytest.mark.parametrize("attr, planted", [
    ("victim_order", lambda orig: lambda self, v, p: list(reversed(orig(self, v, p)))),
    ("allocatable", lambda orig: lambda self, q, t: True),
])
def test_planted_bugs_lower_the_figure(action_cases, monkeypatch, attr, planted):
    base = reproduced(action_cases)
    monkeypatch.setattr(eviction.Session, attr, planted(getattr(eviction.Session, attr)))
    assert reproduced(action_cases) < base



def test_the_tier_walk_reproduces_upstreams_own_walk_tests(action_cases):
    walks = [c for c in action_cases if c.expect["check"] == "tier-walk"]
    assert len(walks) == 4 and reproduced(walks) == 4
