"""A budget verdict reached while running on one object belongs to that check: the next check runs
the expression again (it refused every later HyperNode of a test worker once, for the life of the
process), while a compile crash stays the expression's own."""
from __future__ import annotations

from policies.admission import rules, worker
from tests.support.cli import run


def test_run_verdicts_last_one_round_and_compile_crashes_stay():
    saved = dict(worker.over_budget)
    try:
        worker.over_budget.clear()
        worker.over_budget.update({"size(object.spec.members) > 0": "ran out", "C:broken(": "crashed"})
        assert worker.forget_run_verdicts() is True
        assert worker.over_budget == {"C:broken(": "crashed"}
        assert worker.forget_run_verdicts() is False
    finally:
        worker.over_budget.clear()
        worker.over_budget.update(saved)


def test_a_check_forgets_the_last_checks_run_verdicts():
    """Every expression of the rule set marked over budget, as a hostile object before it would
    leave them: the legacy stack still checks clean, because a check starts a new round."""
    ruleset = rules()
    sources = {text for policy in ruleset.policies for entry in [*policy["validations"], *policy["variables"]]
               for text in (entry.get("expression"), str(entry.get("expression")).strip())}
    assert len(sources) > 10
    saved = dict(worker.over_budget)
    try:
        worker.over_budget.update({source: "ran out on another object" for source in sources if source})
        result = run("check", "legacy")
        assert result.code == 0, result.out + result.err
        assert not any(source in worker.over_budget for source in sources if source)
    finally:
        worker.over_budget.clear()
        worker.over_budget.update(saved)
