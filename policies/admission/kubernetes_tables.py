"""The runner for Kubernetes' own test tables (tests/policies/admission/upstream/kubernetes/): each
case's object goes through the API server port (``modules.upstream.kubernetes.registry``) and must come
out as upstream's table says, on upstream's terms.

A refused case passes only when every error is on a field the table names and every named field has
an error (``expect.fields``), each error has upstream's type where the table gives one
(``expect.types``: the type of each field, as apimachinery's ``ErrorType.String()`` words it; or
``expect.errors``: upstream's whole expected list of ``{type, field}``, repeats included), and,
where upstream's table holds a message, one error says exactly that (``expect.message``: the whole
``field: body`` text or the body). An admitted case passes when nothing is refused.

``policies/admission/upstream_tables.py`` calls ``run_case`` for the ``kubernetes`` source, so each
table has this one runner.
"""
from __future__ import annotations

from collections import Counter

from modules.upstream.field import FieldError
from modules.upstream.kubernetes.registry import validate_object


def _mismatch(errors: list[FieldError], expect: dict) -> str:
    """What the refusal lacks against the table ('' when it matches)."""
    if not errors:
        return "admitted"
    fields = expect.get("fields")
    got = {e.field for e in errors}
    if fields is not None and got != set(fields):
        return f"fields {sorted(got)} != {sorted(set(fields))}"
    for field, kind in (expect.get("types") or {}).items():
        if kind not in {e.type.text for e in errors if e.field == field}:
            return f"no {kind!r} error on {field}"
    wanted = expect.get("errors")
    if wanted is not None:
        got_list = Counter((e.type.text, e.field) for e in errors)
        if got_list != Counter((w["type"], w["field"]) for w in wanted):
            return f"errors {sorted(got_list.elements())} != upstream's"
    message = expect.get("message")
    if message and not any(message in (e.error(), e.message()) for e in errors):
        return f"no error says {message!r}"
    return ""


def run_case(case: dict) -> tuple[bool, str]:
    """(reproduced, what the port said) for one case of a Kubernetes table (creates only)."""
    errors = validate_object(case["object"])
    said = "; ".join(e.error() for e in errors) or "allowed"
    expect = case.get("expect") or {}
    if expect.get("allowed", True):
        return not errors, said
    problem = _mismatch(errors, expect)
    return not problem, said if not problem else f"{problem}: {said}"
