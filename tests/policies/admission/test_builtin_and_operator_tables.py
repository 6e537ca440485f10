"""The Training Operator v1.9.4's webhooks (source ``training-operator``) measured against upstream's
own tables: every ported case in tests/policies/admission/upstream/training-operator/ must be admitted or
refused as upstream says, refused on upstream's fields (Go's notation: ``[Worker]`` for a replica type's
key). Kubernetes' tables have their one runner in ``policies.admission.kubernetes_tables``
(test_kubernetes_tables.py, test_upstream_tables.py)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from policies.admission.upstream_tables import load_fixture
from policies.admission.webhooks import VALIDATE, Request, webhooks

FOLDER = Path(__file__).resolve().parent / "upstream"
SOURCES = ("training-operator",)


def _files(source: str) -> list[tuple[Path, dict]]:
    return [(p, load_fixture(p)) for p in sorted((FOLDER / source).glob("*.yaml"))]


FILES = {source: _files(source) for source in SOURCES}
def _param(source: str, path: Path, doc: dict, case: dict):
    """A case upstream's table holds and we do not reproduce is listed as divergent with the reason:
    it must keep failing (strict), so that reproducing it later moves it out of the list."""
    reasons = [d["reason"] for d in doc.get("divergent") or () if d["case"] == case["name"]]
    marks = [pytest.mark.xfail(reason=reasons[0], strict=True)] if reasons else []
    return pytest.param(source, case, id=f"{source}/{path.stem}::{case['name']}", marks=marks)


CASES = [_param(source, path, doc, case) for source in SOURCES for path, doc in FILES[source] for case in doc["cases"]]


def problems(source: str, case: dict) -> list[tuple[str, str]]:
    obj = case["object"]
    group = str(obj["apiVersion"]).rpartition("/")[0]
    hooks = webhooks(group, obj["kind"], VALIDATE, source=source, request_operation=case["operation"])
    assert hooks, (group, obj["kind"])
    request = Request(case["operation"], obj, case.get("old_object"), tuple(case.get("cluster") or ()))
    return [p for hook in hooks for p in hook.check(request)]


def _go_path(path: str) -> str:
    return re.sub(r"(ReplicaSpecs)\.([A-Za-z]+)", r"\1[\2]", path)


@pytest.mark.parametrize("source, case", CASES)
def test_ported_case_has_upstreams_outcome(source, case):
    found = problems(source, case)
    expect = case["expect"]
    if expect["allowed"]:
        assert not found, found
        return
    assert found
    if "message" in expect:
        assert any(expect["message"] in message for _, message in found), found
    assert sorted(_go_path(path) for path, _ in found) == sorted(expect["fields"]) or \
        {_go_path(path) for path, _ in found} == set(expect["fields"]), found


def test_every_file_names_its_upstream_test_and_counts():
    files = FILES["training-operator"]
    assert files
    total = 0
    for path, doc in files:
        prov = doc["provenance"]
        assert prov["repo"] == "kubeflow/trainer" and prov["tag"] == "v1.9.4"
        assert prov["path"].endswith("_test.go") and path.stem.endswith("_" + prov["test"])
        names = [c["name"] for c in doc["cases"]]
        assert names and len(names) == len(set(names))
        assert {c["expect"]["allowed"] for c in doc["cases"]} == {True, False}
        total += len(names)
    assert total >= 40


def test_docs_give_the_ported_counts():
    from policies.rules.kubernetes_validation import DOCS
    flat = " ".join(DOCS.split())
    assert f"webhook tables ({sum(len(d['cases']) for _, d in FILES['training-operator'])} cases)" in flat
