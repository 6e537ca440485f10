"""apiextensions-apiserver's and kube-openapi's own test tables (fixtures under tables/) reproduced
by the schema port: every case's errors, field paths and messages as upstream states them."""
from __future__ import annotations

import pytest
import yaml

from modules.upstream.apiextensions import tables

FILES = sorted(tables.ROOT.glob("*.yaml"))
CASES = [(path, r) for path in FILES for r in tables.run_file(path)]


def test_fixtures_hold_at_least_100_cases_with_provenance():
    assert len(CASES) >= 100
    for path in FILES:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        provenance = data["provenance"]
        assert provenance["repo"] in ("kubernetes/apiextensions-apiserver", "kubernetes/kube-openapi")
        # v1.35's release of apiextensions-apiserver, and the kube-openapi commit its go.mod pins
        assert provenance["tag"] in ("v0.35.0", "589584f1c912"), path.name
        assert provenance["path"].endswith("_test.go") and provenance["test"].startswith("Test")
        assert path.name.endswith(f"_{provenance['test']}.yaml")
        assert data["check"] in ("validate", "listtype", "embedded-resource", "objectmeta")
        names = [c["name"] for c in data["cases"]]
        assert len(names) == len(set(names)), path.name


@pytest.mark.parametrize("path,result", CASES, ids=[f"{p.stem}:{r.name}" for p, r in CASES])
def test_upstream_case_is_reproduced(path, result):
    assert result.reproduced, result.got


def test_cases_with_upstream_messages_compare_every_message():
    """A refusal case of TestValidateCustomResource lists upstream's full error strings; a planted
    change of wording in one error is caught."""
    data = yaml.safe_load((tables.ROOT / "validation_TestValidateCustomResource.yaml").read_text(encoding="utf-8"))
    refusals = [c for c in data["cases"] if not c["expect"]["allowed"]]
    assert refusals and all(c["expect"].get("errors") for c in refusals)
    case = next(c for c in refusals if c["name"] == "maxLength / failingObjects[0]")
    assert tables._matches(case["expect"], tables._errors("validate", case, ""))
    wrong = {**case["expect"], "errors": ["fieldX: Too long: may not be more than 3 bytes"]}
    assert not tables._matches(wrong, tables._errors("validate", case, ""))


def test_report_counts_every_case_and_lists_the_not_ported():
    report = tables.report()
    assert report["cases"] == len(CASES)
    assert report["reproduced"] == sum(r.reproduced for _, r in CASES)
    listed = {path.name: [n["case"] for n in yaml.safe_load(path.read_text(encoding="utf-8")).get("not_ported") or ()]
              for path in FILES}
    assert report["not_ported"] == sum(map(len, listed.values()))
    # the CEL transition-rule cases (upstream-admission's), and suite cases no CRD schema can hold
    assert len(listed["validation_TestValidateCustomResource.yaml"]) == 3
    assert all(n.split(":")[0] in ("additionalItems", "additionalProperties", "dependencies", "items",
                                   "patternProperties", "properties", "type", "not", "allOf", "anyOf", "oneOf",
                                   "required", "enum", "uniqueItems", "default", "ref", "definitions", "refRemote")
               for n in listed["validate_jsonschema_suite_TestJSONSchemaSuite.yaml"])
