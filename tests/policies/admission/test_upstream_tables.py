"""Every ported upstream webhook case is reproduced by our own checks, except those the fixture lists
as divergent (each with its reason), which must still fail (strict xfail): a case that stops being
reproduced, or a divergent one that starts to be, fails here."""
from __future__ import annotations

import pytest

from policies.admission.upstream_tables import fixture_files, load_fixture, run_case
from policies.admission.webhooks import SOURCES


def _cases():
    for source, path in fixture_files():
        doc = load_fixture(path)
        divergent = {d["case"]: d["reason"] for d in doc.get("divergent") or ()}
        for case in doc.get("cases") or ():
            reason = divergent.get(case["name"])
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            yield pytest.param(source, case, id=f"{source}/{path.stem}/{case['name']}", marks=marks)


@pytest.mark.parametrize(("source", "case"), list(_cases()))
def test_upstream_case(source, case):
    ok, got = run_case(source, case)
    assert ok, got


def test_every_fixture_names_its_provenance_and_lists_divergent_cases_it_holds():
    for source, path in fixture_files():
        doc = load_fixture(path)
        assert source in SOURCES
        assert set(doc["provenance"]) >= {"repo", "tag", "path", "test"}, path
        names = [c["name"] for c in doc.get("cases") or ()]
        assert all(d["case"] in names and d["reason"] for d in doc.get("divergent") or ()), path
        assert all(n["case"] not in names and n["why"] for n in doc.get("not_ported") or ()), path
