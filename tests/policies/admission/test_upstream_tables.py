"""Every ported upstream webhook case is reproduced by our own checks, except those the fixture lists
as divergent (each with its reason), which must still fail (strict xfail): a case that stops being
reproduced, or a divergent one that starts to be, fails here."""
from __future__ import annotations

import pytest

from modules.upstream.registry import SOURCES
from policies.admission.upstream_tables import ROOT, fixture_files, load_fixture, run_case

# Release tags each source's fixtures come from (the Kubernetes tables are pinned by their own tests).
RELEASES = {"volcano": ("volcano-sh/volcano", "v1.15.1"), "trainer": ("kubeflow/trainer", "v2.3.0"),
            "training-operator": ("kubeflow/trainer", "v1.9.4")}


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


def test_every_fixture_names_a_test_function_that_exists_upstream_at_its_release_tag():
    """functions.yaml records the Test functions each upstream test file defines at the tag (read
    with ``git show <tag>:<path>``); a fixture naming a function the file does not hold (such as the
    Training Operator's TestValidateV1TFJob, which is TestValidateTFJob at v1.9.4) fails here."""
    found = {(f["repo"], f["tag"], f["path"]): set(f["functions"])
             for f in load_fixture(ROOT / "functions.yaml")["files"]}
    checked = 0
    for source, path in fixture_files(tuple(RELEASES)):
        prov = load_fixture(path)["provenance"]
        assert (prov["repo"], prov["tag"]) == RELEASES[source], path
        assert prov["test"] in found[(prov["repo"], prov["tag"], prov["path"])], path
        assert path.stem.endswith("_" + prov["test"]), path
        checked += 1
    assert checked >= 30


def test_the_runner_compares_upstreams_fields_and_messages():
    """A refusal on the wrong field, or worded otherwise than upstream's table says, is not reproduced."""
    case = {"name": "x", "operation": "CREATE",
            "object": {"apiVersion": "kubeflow.org/v1", "kind": "JAXJob", "metadata": {"name": "0-bad"},
                       "spec": {"jaxReplicaSpecs": {"Worker": {"template": {"spec": {"containers": [
                           {"name": "jax", "image": "i"}]}}}}}}}
    right = {"allowed": False, "fields": ["metadata.name"], "message": 'Invalid value: "0-bad"'}
    assert run_case("training-operator", {**case, "expect": right})[0]
    assert not run_case("training-operator", {**case, "expect": {**right, "fields": ["spec.runPolicy"]}})[0]
    assert not run_case("training-operator", {**case, "expect": {**right, "message": "must be 1"}})[0]
    assert run_case("training-operator", {**case, "expect": {**right, "types": ["Invalid value"]}})[0]
    assert not run_case("training-operator", {**case, "expect": {**right, "types": ["Required value"]}})[0]


def test_refusals_are_compared_on_what_upstream_gives():
    """Every refusal the Kubernetes and Training Operator tables give fields for is compared on them,
    every Trainer refusal on its error list; the Volcano refusals without a message are those whose
    upstream test checks only the verdict (``response.Allowed``)."""
    from policies.admission.upstream_tables import compared

    counts = compared()
    assert counts["kubernetes"]["outcome_only"] == 0 and counts["kubernetes"]["fields"] >= 200
    operator = counts["training-operator"]
    assert operator["fields"] == operator["types"] == operator["message"] > 30
    assert counts["trainer"]["errors"] == 33 and counts["trainer"]["outcome_only"] == 0
    assert counts["volcano"]["message"] >= 77 and counts["volcano"]["outcome_only"] <= 10
