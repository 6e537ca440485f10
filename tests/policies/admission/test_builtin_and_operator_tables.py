"""The tables of the API server's built-in validation (source ``kubernetes``) and the Training Operator
v1.9.4's webhooks (source ``training-operator``): what each file names and holds. The cases themselves
run once, in tests/policies/admission/test_upstream_tables.py, whose runner compares upstream's fields
(Go's notation: ``[Worker]`` for a replica type's key) and messages."""
from __future__ import annotations

from pathlib import Path

from policies.admission.upstream_tables import load_fixture

FOLDER = Path(__file__).resolve().parent / "upstream"
SOURCES = ("kubernetes", "training-operator")


def _files(source: str) -> list[tuple[Path, dict]]:
    return [(p, load_fixture(p)) for p in sorted((FOLDER / source).glob("*.yaml"))]


FILES = {source: _files(source) for source in SOURCES}


def test_every_file_names_its_upstream_test_and_counts():
    for source, repo, tag in (("kubernetes", "kubernetes/kubernetes", None),
                              ("training-operator", "kubeflow/trainer", "v1.9.4")):
        files = FILES[source]
        assert files
        total = 0
        for path, doc in files:
            prov = doc["provenance"]
            assert prov["repo"] == repo and (tag is None or prov["tag"] == tag)
            assert prov["path"].endswith("_test.go") and path.stem.endswith("_" + prov["test"])
            names = [c["name"] for c in doc["cases"]]
            assert names and len(names) == len(set(names))
            assert {c["expect"]["allowed"] for c in doc["cases"]} == {True, False}
            total += len(names)
        assert total >= 40, source


def test_docs_give_the_ported_counts():
    from policies.rules.kubernetes_validation import DOCS
    flat = " ".join(DOCS.split())
    k8s = FILES["kubernetes"]
    assert f": {len(k8s)} tables, {sum(len(d['cases']) for _, d in k8s)} cases." in flat
    assert "Two are divergent" in flat and sum(len(d["divergent"]) for _, d in k8s) == 2
    assert f"webhook tables ({sum(len(d['cases']) for _, d in FILES['training-operator'])} cases)" in flat
