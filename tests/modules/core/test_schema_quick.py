"""schema.is_valid decides without jsonschema exactly where it answers: over every subschema of the
module schemas, the fabric file schemas and the rules' configuration schemas, and many values."""
from __future__ import annotations

from jsonschema import Draft202012Validator

from modules.core import schema as schemas
from modules.core.config import load_project, load_stack, stack_schema
from modules.fabric import importers
from policies.rules import RULES
from tests.support.cli import ROOT

ODD = [
    None, True, False, 0, 1, -1, 2, 64, 1.0, 1.5, -0.5, 10**12, float("inf"),
    "", "a", "A b", "abc-def", "a.b-c", "-a", "x" * 64, "x" * 300, "500Gi", "250m", "-1Gi", "0", "1e3",
    "15m", "1h30m", "0ms", "pytorch/pytorch:2.1", "img:latest", "img:latest@sha256:" + "a" * 64,
    "img@sha256:" + "a" * 64, "eth0", "NCCL_X",
    [], [1], [1, 1], [1, True], [1, 1.0], ["a"], ["a", "a"], ["a", 1], [{}], [None],
    {}, {"a": 1}, {"name": "x"}, {"unknown": True}, {"enabled": True}, {1: "a"},
]


def subschemas(schema, out: list) -> list:
    """Every schema reachable by the keywords is_valid descends (each once)."""
    if not isinstance(schema, dict) or any(s is schema for s in out):
        return out
    out.append(schema)
    for sub in (schema.get("properties") or {}).values():
        subschemas(sub, out)
    for key in ("additionalProperties", "items", "propertyNames", "not"):
        subschemas(schema.get(key), out)
    return out


def values_for(schema: dict) -> list:
    """ODD, and for an object schema its defaults with each property in turn set to each ODD value."""
    out = list(ODD)
    props = schema.get("properties") or {}
    if props:
        base = schemas.apply_defaults(schema, {})
        out.append(base)
        for name in props:
            out.extend({**base, name: value} for value in ODD)
    return out


def agree(schema: dict, formats: bool) -> int:
    checker = schemas._format_checker() if formats else None
    validator = Draft202012Validator(schema, format_checker=checker)
    decided = 0
    for value in values_for(schema):
        quick = schemas.is_valid(schema, value, formats)
        if quick is not None:
            decided += 1
            assert quick == validator.is_valid(value), (schema, value)
    return decided


def all_schemas() -> list[dict]:
    out: list[dict] = []
    subschemas(stack_schema(), out)
    subschemas(importers._compact_schema(), out)
    subschemas(importers._TOPOGRAPH_SCHEMA, out)
    return out


def test_vocabulary_is_jsonschemas():
    assert schemas.VOCABULARY == set(Draft202012Validator.VALIDATORS)


def test_agrees_with_jsonschema_on_every_module_and_fabric_subschema():
    found = all_schemas()
    assert len(found) > 300
    decided = sum(agree(sub, formats=True) for sub in found)
    assert decided > 10_000   # most values are decided here, not handed to jsonschema


def test_agrees_with_jsonschema_on_rule_configuration():
    for rule in RULES:
        if rule.config_schema:
            wrapped = {"type": "object", "properties": rule.config_schema, "additionalProperties": False}
            for sub in subschemas(wrapped, []):
                agree(sub, formats=False)


def test_shipped_stacks_need_no_jsonschema():
    project = load_project(ROOT)
    full = stack_schema()
    for name in project.stacks():
        stack = load_stack(project, name)
        assert schemas.is_valid(full, stack.values) is True, name
        assert Draft202012Validator(full, format_checker=schemas._format_checker()).is_valid(stack.values)


def test_undecided_keywords_are_left_to_jsonschema():
    assert schemas.is_valid({"multipleOf": 2}, 3) is None
    assert schemas.is_valid({"type": "integer"}, object()) is None
    assert schemas.is_valid({"type": "object", "patternProperties": {"^a": {}}, "additionalProperties": False},
                            {"b": 1}) is None
    assert schemas.is_valid({"description": "not a keyword", "x-rule": "r"}, 1) is True
    assert schemas.is_valid({"not": {"multipleOf": 2}}, 3) is None
