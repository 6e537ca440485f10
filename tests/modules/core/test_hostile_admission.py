"""Hostile admission rules (tests/modules/core/hostile/cel_corpus.py): CEL over the API server's size
and depth limits, through every place an expression sits (validations, matchConditions, variables,
messageExpression, CRD rules, chart archives), evaluation that would run for minutes or fill memory,
a FIFO named like a chart archive and 5,000-digit integers. Each case ends with exit 0, 1 or 2, at
most one error line and no traceback within 10 s and 1 GiB (the same bounded runner as the rest of
the corpus); a rule over a limit is named in the `upstream-admission` note."""
from __future__ import annotations

import json

import pytest

from tests.modules.core.hostile.cel_corpus import CEL_CASES
from tests.modules.core.test_hostile import build_cases, run_cases
from tests.support.admission import admission_env

# What the run must say about each case, beside ending cleanly (outputs are JSON reports).
SAYS = {
    "cel-plus-20000": "nests deeper than 250 levels",
    "cel-has-20000-deep": "nests deeper than 250 levels",
    "cel-parens-100000": "is 200004 characters long",
    "cel-match-condition-deep": "spec.matchConditions[0].expression nests deeper",
    "cel-variable-deep": "spec.variables[0].expression nests deeper",
    "cel-message-expression-deep": "spec.validations[0].messageExpression nests deeper",
    "cel-crd-rule-deep": "the rule at spec nests deeper",
    "cel-crd-message-expression-deep": "the messageExpression at spec nests deeper",
    "cel-chart-archive-deep": "volcano-1.15.1.tgz:volcano/policy/hostile.yaml: document 1",
    # cel-go's cost model, when the policy or CRD is read (policies/admission/cost.py): one note
    "cel-nested-comprehensions": "costs at least 11,111,110 on every object",
    "cel-crd-nested-comprehensions": "over the API server's estimated cost limit for a CRD rule",
    "cel-doubling-variables": "variable 'v18' builds a list of at least 1,048,576 elements",
    "cel-doubling-strings": "variable 's21' costs at least 1,677,724 on every object",
    "cel-message-expression-huge": "hostile",
    "cel-chart-archive-fifo": "volcano-1.15.1.tgz: not read",
    "cel-preview-plus-20000": "nests deeper than 250 levels",
    "cel-preview-nested-comprehensions": "costs at least 11,111,110 on every object",
    "cel-policy-int-5000-digits": "p.yaml: not read",
    "cel-crd-int-5000-digits": "queues.yaml: not read",
    "scheduler-conf-int-5000-digits": "integer with 5000 digits; at most 30 are allowed",
    "snapshot-json-int-5000-digits": "snap.json: (document): invalid JSON: Exceeds the limit (4300 digits)",
}


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    base = tmp_path_factory.mktemp("hostile-cel")
    cases = [(name, files, args + (["--format", "json"] if args[0] != "simulate" else []))
             for name, files, args in CEL_CASES]
    before = build_cases(base, cases)
    with admission_env(None, None):   # each case's own adm/ and adm/crds/, never the shared folders
        return before, run_cases(base, cases)


def test_every_case_is_listed():
    assert sorted(SAYS) == sorted(name for name, _, _ in CEL_CASES)


@pytest.mark.parametrize("name", [case[0] for case in CEL_CASES])
def test_hostile_admission_case(results, name):
    _, ran = results
    result = ran[name]
    err = result["err"]
    assert result["code"] in (0, 1, 2), (result["code"], err[-600:])
    assert "Traceback" not in err and "please report" not in err, err[-600:]
    assert len(err.splitlines()) <= 1, err
    said = json.dumps(json.loads(result["out"])) if result["out"].strip() else err
    assert SAYS[name] in said, said[-2000:]
