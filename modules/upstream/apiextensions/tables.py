"""apiextensions-apiserver's (and kube-openapi's) own test tables, ported as data under
tests/modules/upstream/apiextensions/tables/, run against this port.

A fixture file: ``provenance: {repo, tag, path, test}``, ``check`` (the upstream function its test
calls), optional ``root`` (the field path upstream passes), ``cases: [{name, schema?, object,
include_root?, expect: {allowed, errors? | matches?}}]``, ``not_ported: [{case, why}]``.

- ``validate``: ``ValidateCustomResource(nil, object, validator)``: kube-openapi's errors, compared
  as a set of ``Error()`` strings when upstream lists them (as upstream compares them), else the
  verdict alone.
- ``listtype``: ``ValidateListSetsAndMaps(root, schema, object)``.
- ``embedded-resource``: ``validateEmbeddedResource(nil, object, ...)``.
- ``objectmeta``: ``objectmeta.Validate(nil, object, schema, include_root)``.

``listtype``, ``embedded-resource`` and ``objectmeta`` cases match each expected ``{type, field}``
once (a multiset, as upstream's ``validationMatch``) and allow no other error.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import yaml

from modules.upstream.field import FieldError

from . import embedded, listtype, openapi
from .structural import prepare

ROOT = Path(__file__).resolve().parents[3] / "tests" / "modules" / "upstream" / "apiextensions" / "tables"
SOURCE = "crd-schema"


@dataclass(frozen=True)
class Result:
    """One ported apiextensions test case's outcome here."""

    file: str
    name: str
    reproduced: bool
    got: list[str]


def _errors(check: str, case: dict, root: str) -> list[FieldError]:
    schema = prepare(case["schema"]) if isinstance(case.get("schema"), dict) else None
    obj = case.get("object")
    if check == "validate":
        return openapi.validate(schema or {}, obj)
    if check == "listtype":
        return listtype.validate(schema, obj, root) if isinstance(obj, dict) else []
    if check == "embedded-resource":
        return list(embedded.embedded_resource(obj, ""))
    if check == "objectmeta":
        return embedded.validate(schema, obj, "", root_embedded=bool(case.get("include_root")))
    raise ValueError(f"unknown check {check!r}")


def _matches(expect: dict, errors: list[FieldError]) -> bool:
    if "errors" in expect:
        return set(expect["errors"]) == {e.error() for e in errors}
    if "matches" in expect:
        wanted = Counter((m["type"], m["field"]) for m in expect["matches"])
        return wanted == Counter((e.type.text, e.field) for e in errors)
    return bool(expect.get("allowed")) == (not errors)


def run_file(path: Path) -> list[Result]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    check, root = data["check"], data.get("root", "")
    out = []
    for case in data["cases"]:
        errors = _errors(check, case, root)
        out.append(Result(path.name, case["name"], _matches(case["expect"], errors), [e.error() for e in errors]))
    return out


def results(folder: Path = ROOT) -> list[Result]:
    return [r for path in sorted(folder.glob("*.yaml")) for r in run_file(path)]


def compared(folder: Path = ROOT) -> dict[str, int]:
    """How the refusal cases are compared, in the upstream admission runner's terms: ``errors`` (the
    ``Error()`` strings: field path, error type and detail), ``fields`` and ``types`` (``{type,
    field}`` matches), ``outcome_only`` (upstream's table gives a verdict and nothing more: the JSON
    schema suite, the strfmt predicates)."""
    out = {"fields": 0, "types": 0, "errors": 0, "message": 0, "outcome_only": 0}
    for path in sorted(folder.glob("*.yaml")):
        for case in yaml.safe_load(path.read_text(encoding="utf-8"))["cases"]:
            expect = case["expect"]
            if "errors" in expect:
                out["errors"] += 1
            elif "matches" in expect:
                out["fields"] += 1
                out["types"] += 1
            elif not expect.get("allowed"):
                out["outcome_only"] += 1
    return out


def report(folder: Path = ROOT) -> dict:
    """``{"cases", "reproduced", "not_ported", "refusals_compared", "divergent": [{"file", "case",
    "got"}]}``."""
    found = results(folder)
    not_ported = sum(len(yaml.safe_load(p.read_text(encoding="utf-8")).get("not_ported") or ())
                     for p in sorted(folder.glob("*.yaml")))
    return {"cases": len(found), "reproduced": sum(r.reproduced for r in found), "not_ported": not_ported,
            "refusals_compared": compared(folder),
            "divergent": [{"file": r.file, "case": r.name, "got": r.got} for r in found if not r.reproduced]}
