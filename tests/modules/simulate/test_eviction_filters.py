"""Our eviction cases (tests/modules/simulate/ours/eviction_filters.yaml) pin every victim filter
and ordering rule of the eviction model: planting any single fault (a filter dropped or inverted,
the tier walk changed, the victim order reversed, gang bundles ignoring minAvailable) makes some
case fail. Each case is traced to Volcano v1.15.1 source lines; they are counted apart from the
ported upstream cases."""
from __future__ import annotations

import re

import pytest

from modules.semantics import eviction as walk_model
from modules.simulate import cycle, eviction, fidelity

Session = eviction.Session


@pytest.fixture(scope="module")
def ours():
    return fidelity.load_cases(fidelity.OURS, "*.yaml")


def failing(cases) -> list[str]:
    return [c.name for c in cases if not fidelity.run_case(c).reproduced]


def test_our_cases_are_traced_to_upstream_source_and_kept_apart(ours):
    assert len(ours) >= 15
    assert all(c.source["repo"] == "trainstack (ours)" for c in ours)
    upstream = {c.name for c in fidelity.load_cases()}
    for case in ours:
        assert case.name not in upstream
        assert case.fields["pins"] and case.fields["trace"]
        assert all(re.fullmatch(r"pkg/scheduler/[\w/.-]+\.go:\d+", t) for t in case.fields["trace"]), case.fields
    assert failing(ours) == []


def _without(fn, words):
    """A pre-filter of the actions (cycle.*_refusal) that lets through what it refused for ``words``."""
    return lambda *a, **k: (None if (r := fn(*a, **k)) and r.startswith(words) else r)


def _inverted(fn):
    return lambda self, *a: (lambda ts: [t for t in ts if t not in fn(self, *a)(ts)])


def _walk_every_tier(tiers, candidates, filters, key=id):
    """Fault: every tier is asked and intersected (later tiers can veto the first tier's victims)."""
    flat = [[n for names in tiers for n in names]]
    return ORIGINAL_WALK(flat, candidates, filters, key)


def _walk_first_tier_only(tiers, candidates, filters, key=id):
    """Fault: the first tier with a filter decides even when it returns no victim."""
    first = next(([names] for names in tiers if any(n in filters for n in names)), [])
    return ORIGINAL_WALK(first, candidates, filters, key)


ORIGINAL_WALK = walk_model.walk_tiers
GANG, PRIORITY = Session._gang_filter, Session._priority_filter
FAULTS = {
    "gang protection dropped": (Session, "_gang_filter", lambda self, ts: list(ts)),
    "gang protection inverted": (Session, "_gang_filter", lambda self, ts: [t for t in ts if t not in GANG(self, ts)]),
    "capacity reclaim filter dropped": (Session, "_capacity_reclaimable", lambda self, r, ts: list(ts)),
    "capacity share check inverted": (Session, "_capacity_victim",
                                      lambda self, a, al, t, f=Session._capacity_victim: not f(self, a, al, t)),
    "capacity gang-reclaim filter dropped": (Session, "_capacity_unified_reclaim", lambda self, ts: list(ts)),
    "proportion filter dropped": (Session, "_proportion_reclaimable", lambda self, ts: list(ts)),
    "proportion filter inverted": (Session, "_proportion_reclaimable",
                                   lambda self, ts, f=Session._proportion_reclaimable:
                                   [t for t in ts if t not in f(self, ts)]),
    "priority filter dropped": (Session, "_priority_filter", lambda self, p: (lambda ts: list(ts))),
    "priority filter inverted": (Session, "_priority_filter", lambda self, p: (
        lambda ts: [t for t in ts if t not in PRIORITY(self, p)(ts)])),
    "gangpreempt priority check dropped": (cycle, "gang_refusal", _without(cycle.gang_refusal, "priority")),
    "preemptable annotation ignored (preempt)": (cycle, "preempt_refusal",
                                                 _without(cycle.preempt_refusal, "preemptable annotation")),
    "reclaimable queues ignored": (cycle, "reclaim_refusal", _without(cycle.reclaim_refusal, "reclaimable: false")),
    "tier walk asks every tier": (walk_model, "walk_tiers", _walk_every_tier),
    "tier walk stops at an empty first tier": (walk_model, "walk_tiers", _walk_first_tier_only),
    "victim order reversed": (Session, "victim_order", lambda self, v, p, f=Session.victim_order:
                              list(reversed(f(self, v, p)))),
    "gang bundles ignore minAvailable": (cycle, "job_bundles", lambda ssn, job, tasks: [
        ("safe", job, sorted(tasks, key=lambda t: (t.priority, t.uid)))]),
}


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_every_planted_fault_fails_some_case(ours, monkeypatch, fault):
    owner, attr, planted = FAULTS[fault]
    monkeypatch.setattr(owner, attr, planted)
    assert failing(ours), f"no case catches: {fault}"
