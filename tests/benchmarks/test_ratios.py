"""The speed figures guarded as ratios (benchmarks/ratios.py), never as wall-clock times: each may
not regress by more than half against benchmarks/ratios.json."""
from __future__ import annotations

import json
import sys

import pytest

from tests.support.cli import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
import ratios  # noqa: E402

RECORDED = json.loads(ratios.RECORDED.read_text(encoding="utf-8"))


def test_every_ratio_is_recorded():
    assert set(RECORDED) == set(ratios.LOWER_IS_BETTER) | set(ratios.HIGHER_IS_BETTER)


@pytest.mark.parametrize("measure", [ratios.pipeline, ratios.placement, ratios.check_process],
                         ids=["pipeline", "placement", "check-process"])
def test_ratio_holds(measure):
    measured = [measure()]
    problems = ratios.regressions(measured[0], RECORDED)
    while problems and len(measured) < 4:   # a busy moment can cost a measurement, not a ratio's best of four
        measured.append(measure())
        problems = ratios.regressions(ratios.best_of(measured), RECORDED)
    assert problems == []


def test_best_of_takes_each_ratio_at_its_best():
    assert ratios.best_of([{"check_over_floor": 3.0, "aware_over_oblivious": 0.5},
                           {"check_over_floor": 2.0, "aware_over_oblivious": 0.4}]) == \
        {"check_over_floor": 2.0, "aware_over_oblivious": 0.5}


def test_regressions_are_found_both_ways():
    recorded = {"check_over_floor": 2.0, "aware_over_oblivious": 0.5}
    assert ratios.regressions({"check_over_floor": 2.9, "render_write_over_floor": 9, "aware_over_oblivious": 0.34,
                               "check_process_over_imports": 1}, recorded) == []
    found = ratios.regressions({"check_over_floor": 3.1, "render_write_over_floor": 9, "aware_over_oblivious": 0.3,
                                "check_process_over_imports": 1}, recorded)
    assert [line.split(":")[0] for line in found] == ["check_over_floor", "aware_over_oblivious"]
