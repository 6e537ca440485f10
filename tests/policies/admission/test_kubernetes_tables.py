"""Kubernetes' own tables (tests/policies/admission/upstream/kubernetes/) as their one runner
(``policies.admission.kubernetes_tables``, which ``upstream_tables.run_case`` calls and
test_upstream_tables.py runs for every case) judges them: the provenance each file names, the counts the
docs give, and a runner that fails a refusal on the wrong field, of the wrong type or with other words."""
from __future__ import annotations

import copy
from pathlib import Path

from policies.admission import kubernetes_tables
from policies.admission.upstream_tables import load_fixture

FOLDER = Path(__file__).resolve().parent / "upstream" / "kubernetes"
FILES = [(p, load_fixture(p)) for p in sorted(FOLDER.glob("*.yaml"))]


def test_every_file_names_the_release_tag_or_says_why_not():
    for path, doc in FILES:
        prov = doc["provenance"]
        assert prov["repo"] == "kubernetes/kubernetes"
        assert prov["tag"] == "v1.35.0" or prov.get("tag_reason"), path
        assert prov["path"].endswith("_test.go") and path.stem.endswith("_" + prov["test"])
        names = [c["name"] for c in doc["cases"]]
        assert names and len(names) == len(set(names))
        assert {c["expect"]["allowed"] for c in doc["cases"]} == {True, False}
        assert all(c["expect"]["allowed"] or c["expect"].get("fields") for c in doc["cases"]), path


def test_the_apimachinery_tables_are_at_the_release_tag():
    tagged = {doc["provenance"]["test"] for _, doc in FILES if doc["provenance"]["tag"] == "v1.35.0"}
    assert {"TestIsDNS1123Label", "TestIsDNS1123Subdomain", "TestIsDNS1035Label", "TestIsQualifiedName",
            "TestIsValidLabelValue", "TestIsConfigMapKey", "TestIsRelaxedEnvVarName", "TestIsValidPortName",
            "TestIsValidPortNum"} <= tagged


def test_docs_give_the_ported_counts():
    from policies.rules.kubernetes_validation import DOCS
    flat = " ".join(DOCS.split())
    assert f": {len(FILES)} tables, {sum(len(d['cases']) for _, d in FILES)} cases." in flat
    assert "Two are divergent" in flat and sum(len(d["divergent"]) for _, d in FILES) == 2


def _refused_case() -> dict:
    doc = dict(FILES)[FOLDER / "core_validation_validation_TestValidateContainers.yaml"]
    return copy.deepcopy(next(c for c in doc["cases"] if c["name"] == "zero-length name"))


def test_a_refusal_passes_on_upstreams_field_type_and_words():
    case = _refused_case()
    case["expect"]["types"] = {"template.spec.containers[0].name": "Required value"}
    case["expect"]["message"] = "template.spec.containers[0].name: Required value"
    assert kubernetes_tables.run_case(case) == (True, "template.spec.containers[0].name: Required value")


def test_a_refusal_on_another_field_type_or_wording_fails():
    wrong_field, wrong_type, wrong_words = _refused_case(), _refused_case(), _refused_case()
    wrong_field["expect"]["fields"] = ["template.spec.containers[0].image"]
    wrong_type["expect"]["types"] = {"template.spec.containers[0].name": "Invalid value"}
    wrong_words["expect"]["message"] = "Required value: name is required"
    for case in (wrong_field, wrong_type, wrong_words):
        ok, said = kubernetes_tables.run_case(case)
        assert not ok and said.endswith("template.spec.containers[0].name: Required value"), said


def test_the_container_tables_carry_upstreams_error_lists():
    for path, doc in FILES:
        if doc["provenance"]["test"] in ("TestValidateContainers", "TestValidateInitContainers"):
            refused = [c for c in doc["cases"] if not c["expect"]["allowed"]]
            assert refused and all(c["expect"].get("errors") for c in refused), path


def test_a_refusal_with_one_error_too_many_or_too_few_fails():
    case = _refused_case()
    case["expect"]["errors"] = [{"type": "Required value", "field": "template.spec.containers[0].name"}] * 2
    ok, said = kubernetes_tables.run_case(case)
    assert not ok and said.startswith("errors ")
