"""The CRD-schema source of benchmarks/upstream_admission.py says how each refusal case is compared,
and only the tables whose upstream test asserts a bare verdict are compared by outcome alone."""
from __future__ import annotations

import yaml

from modules.upstream.apiextensions import tables

VERDICT_ONLY = {"strfmt_TestFormatLongName.yaml", "strfmt_TestIsShortName.yaml",
                "validate_jsonschema_suite_TestJSONSchemaSuite.yaml"}   # upstream: a bool per case


def test_every_refusal_with_upstream_fields_is_compared_by_path():
    outcome_only = 0
    refusals = 0
    for path in sorted(tables.ROOT.glob("*.yaml")):
        for case in yaml.safe_load(path.read_text(encoding="utf-8"))["cases"]:
            expect = case["expect"]
            if expect.get("allowed") and not ({"errors", "matches"} & set(expect)):
                continue
            refusals += 1
            if not ({"errors", "matches"} & set(expect)):
                assert path.name in VERDICT_ONLY, (path.name, case["name"])
                outcome_only += 1
    counts = tables.report()["refusals_compared"]
    assert counts["outcome_only"] == outcome_only
    assert counts["errors"] + counts["fields"] + counts["outcome_only"] == refusals
    assert counts["errors"] > 0 and counts["fields"] > 0
