"""The fixture table through all three runners: `trainstack check`, the CrossGuard pack over gRPC,
and `trainstack preview` (program under mocks + pack) where a stack is involved. They must agree,
and each case must pass or fail exactly as the table says."""
from __future__ import annotations

import pytest

from policies.rules import BY_ID, RULES
from policies.runner import load_settings

from .support import SHIPPED, Case, check, preview, project_with_stacks, start_pack, table, through_pack, \
    write_manifests

STACKS, CASES = table()


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    return project_with_stacks(tmp_path_factory.mktemp("project"))


@pytest.fixture(scope="module")
def pack():
    with start_pack() as running:      # one pack process for the whole table, as the engine keeps one
        yield running


@pytest.fixture(scope="module")
def checked(project, tmp_path_factory):
    """`trainstack check` of every case, once (the other runners compare with it)."""
    folder = tmp_path_factory.mktemp("manifests")
    out = {}
    for case in CASES:
        manifests = write_manifests(case, folder)
        out[case.id] = (manifests, check(project, case, manifests))
    return out


def level_of(case: Case) -> str:
    if case.custom_stack:
        return BY_ID[case.rule].enforcement
    return load_settings(case.stack).level(BY_ID[case.rule])


def test_every_rule_has_a_passing_and_a_failing_case():
    for rule in RULES:
        kinds = {c.expect for c in CASES if c.rule == rule.id}
        assert kinds == {"pass", "fail"}, f"{rule.id}: table has {sorted(kinds)}"
    assert len({c.id for c in CASES}) == len(CASES), "case ids must be unique"
    assert {c.stack for c in CASES} - set(SHIPPED) <= set(STACKS)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_check(case, checked):
    manifests, report = checked[case.id]
    mine = report.on(str(manifests) if manifests else None)
    rules = {v["rule"] for v in mine.violations}
    if case.expect == "fail":
        hits = [v for v in mine.violations if v["rule"] == case.rule]
        assert hits, f"{case.rule} not reported; got {mine.violations}"
        assert any(case.message in v["message"] for v in hits), [v["message"] for v in hits]
        assert all(v["level"] == level_of(case) for v in hits)
        assert rules <= {case.rule, *case.also}, f"the case also breaks {rules - {case.rule}}: {mine.violations}"
        for v in hits:   # what, where and how: the resource and field path lead the message
            assert v["message"].startswith(f"{v['resource']} at {v['path']}") or v["resource"] == "stack"
        assert report.code == (1 if level_of(case) == "mandatory" else 0)
    else:
        assert not mine.violations, mine.violations
        assert report.code == 0, report.violations


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_pack_agrees_with_check(case, checked, pack, project):
    manifests, expected = checked[case.id]
    got = through_pack(pack, project, case, manifests)
    source = str(manifests) if manifests else None
    assert got.on(source).key() == expected.on(source).key()
    if manifests is None:
        assert got.code == expected.code


STACK_CASES = [c for c in CASES if c.manifests is None]


@pytest.mark.parametrize("case", STACK_CASES, ids=lambda c: c.id)
def test_preview_agrees_with_check(case, checked, project):
    _, expected = checked[case.id]
    got = preview(project, case.stack)
    assert got.key() == expected.key()
    assert got.code == expected.code


def test_preview_with_manifests_agrees_with_check(checked, project):
    """One manifest case through `preview --manifests` too: the program's registrations plus the
    user's objects, judged together exactly as `check --manifests` judges the bundle plus them."""
    case = next(c for c in CASES if c.id == "topology-satisfiable/trainjob-on-tier1-runtime")
    manifests, expected = checked[case.id]
    got = preview(project, case.stack, manifests)
    assert got.key() == expected.key()
    assert got.code == expected.code == 1
