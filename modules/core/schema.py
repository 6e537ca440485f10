"""Module schemas (JSON Schema in each module's ``schema.yaml``): defaults and friendly errors.

One source of truth per option: its type, default and description live in the schema. This file
fills defaults from it and turns jsonschema errors into InputError messages of the form
``expected <what>, got <value>``. Schemas may say what they expect in words with ``x-expected``.
"""
from __future__ import annotations

import copy
import functools
import json
import re
from pathlib import Path
from typing import Any, Callable

import jsonschema
from jsonschema import Draft202012Validator, FormatChecker

from . import cache, yamlio
from .errors import InputError, show
from .quantity import is_positive_quantity, is_quantity
from .vocabulary.names import is_dns1123_label, is_dns1123_subdomain

PROM_DURATION = re.compile(r"^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?"
                           r"(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)\Z")

FORMATS: dict[str, tuple[Callable[[object], bool], str]] = {
    "quantity": (is_quantity, "a Kubernetes quantity such as 500Gi or 250m"),
    "positive-quantity": (is_positive_quantity, "a positive Kubernetes quantity such as 500Gi"),
    "dns1123-label": (is_dns1123_label,
                      "a Kubernetes name (lower-case letters, digits and '-', at most 63 characters)"),
    "dns1123-subdomain": (is_dns1123_subdomain,
                          "a Kubernetes name (lower-case letters, digits, '-' and '.', at most 253 characters)"),
    "prometheus-duration": (lambda v: isinstance(v, str) and v != "" and bool(PROM_DURATION.match(v)),
                            "a Prometheus duration such as 15m or 1h30m"),
}

_format_checker = FormatChecker(formats=())
for _name, (_check, _text) in FORMATS.items():
    _format_checker.checks(_name)(lambda value, _c=_check: not isinstance(value, str) or _c(value))

TYPE_WORDS = {
    "integer": "an integer", "number": "a number", "string": "a string", "boolean": "true or false",
    "object": "a mapping", "array": "a list", "null": "null",
}


SCHEMA_CACHE_VERSION = "1"


@functools.lru_cache(maxsize=None)
def load_schema(path: Path) -> dict:
    """Read a module's schema.yaml (cached: schemas are code, not input; tests check them against
    the JSON Schema metaschema, which is too slow to repeat on every command). Parsed once per
    content across processes: the user cache keeps it as JSON, which loads about 40x faster than
    the YAML (every command reads all twelve schemas)."""
    text = yamlio.read_text(path, str(path))
    key = cache.content_key(SCHEMA_CACHE_VERSION, text)
    data = cache.load_json("schemas", key, lambda d: isinstance(d, dict))
    if data is None:
        data = yamlio.loads(text, str(path))
        cache.store_json("schemas", key, data)
    return _inline_shared(data, path.parent)


def _inline_shared(node: Any, base: Path) -> Any:
    """An option several modules share is written once, in its own file, and named by a relative
    ``$ref`` (e.g. ``../storage/volumes.yaml``); inlined here, so defaults, docs and errors see it."""
    if isinstance(node, list):
        return [_inline_shared(item, base) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.endswith(".yaml"):
        shared = {k: v for k, v in load_schema((base / ref).resolve()).items() if k != "$schema"}
        return {**copy.deepcopy(shared), **{k: v for k, v in node.items() if k != "$ref"}}
    return {key: _inline_shared(value, base) for key, value in node.items()}


_VALIDATORS: dict[str, Draft202012Validator] = {}   # by the schema's text: one per content


def validator_for(schema: dict) -> Draft202012Validator:
    """The validator of a schema's content (its JSON text, key order included): a schema built
    afresh on each call (the fabric importer's) reuses it, and a later change to the caller's dict
    cannot reach it (it validates a copy)."""
    key = json.dumps(schema, default=repr)
    validator = _VALIDATORS.get(key)
    if validator is None:
        validator = _VALIDATORS[key] = Draft202012Validator(copy.deepcopy(schema), format_checker=_format_checker)
    return validator


def apply_defaults(schema: dict, value: Any) -> Any:
    """Return ``value`` with every missing property that has a ``default`` filled in, recursively.

    Values of the wrong type are left alone: validation reports them afterwards.
    """
    if isinstance(value, dict):
        props = schema.get("properties", {})
        out = dict(value)
        for key, sub in props.items():
            if key not in out and "default" in sub:
                out[key] = copy.deepcopy(sub["default"])
            if key in out:
                out[key] = apply_defaults(sub, out[key])
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict):
            for key in out:
                if key not in props:
                    out[key] = apply_defaults(extra, out[key])
        return out
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [apply_defaults(schema["items"], item) for item in value]
    return value


def _expected_text(error: jsonschema.ValidationError) -> str:
    schema = error.schema if isinstance(error.schema, dict) else {}
    if "x-expected" in schema:
        return schema["x-expected"]
    v, arg = error.validator, error.validator_value
    kind = schema.get("type")
    noun = TYPE_WORDS.get(kind, "a value") if isinstance(kind, str) else "a value"
    if v == "type":
        types = arg if isinstance(arg, list) else [arg]
        return " or ".join(TYPE_WORDS.get(t, t) for t in types)
    if v == "enum":
        return "one of " + ", ".join(show(x) for x in arg)
    if v == "const":
        return show(arg)
    if v == "minimum":
        return f"{noun} >= {arg}"
    if v == "maximum":
        return f"{noun} <= {arg}"
    if v == "exclusiveMinimum":
        return f"{noun} > {arg}"
    if v == "exclusiveMaximum":
        return f"{noun} < {arg}"
    if v == "multipleOf":
        return f"a multiple of {arg}"
    if v == "minLength":
        return "a non-empty string" if arg == 1 else f"a string of at least {arg} characters"
    if v == "maxLength":
        return f"a string of at most {arg} characters"
    if v == "minItems":
        return "a non-empty list" if arg == 1 else f"a list of at least {arg} items"
    if v == "maxItems":
        return f"a list of at most {arg} items"
    if v == "minProperties":
        return "a non-empty mapping"
    if v == "uniqueItems":
        return "a list without duplicates"
    if v == "pattern":
        return f"a string matching {arg}"
    if v == "format":
        return FORMATS.get(arg, (None, f"a {arg}"))[1]
    if v in ("oneOf", "anyOf"):
        return "one of the forms described in the module README"
    return error.message


def _did_you_mean(word: str, options: list[str]) -> str:
    import difflib   # only a mistake needs it

    close = difflib.get_close_matches(word, options, n=1, cutoff=0.6)
    if close:
        return f"did you mean {close[0]!r}?"
    return "expected one of " + ", ".join(sorted(options)) if options else "no keys are allowed here"


def _first(errors: list[jsonschema.ValidationError]) -> jsonschema.ValidationError:
    # Deterministic: shallowest path first, then by path text and validator.
    return min(errors, key=lambda e: (len(e.absolute_path), [str(p) for p in e.absolute_path], e.validator))


def validate(schema: dict, value: Any, file: str, format_path: Callable[[list], str]) -> None:
    """Validate ``value`` against ``schema``; raise InputError for the first problem found."""
    errors = list(validator_for(schema).iter_errors(value))
    if not errors:
        return
    error = _first(errors)
    where = list(error.absolute_path)
    # `x-rule` names the policy rule that catches the same mistake in manifests (see InputError.rule).
    rule = _rule_for(schema, where)
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        allowed = list(error.schema.get("properties", {}))
        patterns = list(error.schema.get("patternProperties", {}))
        unknown = sorted(k for k in error.instance if k not in allowed
                         and not any(re.search(p, str(k)) for p in patterns))
        key = unknown[0] if unknown else "?"
        raise InputError(file, format_path(where + [key]), f"unknown key {key!r}; {_did_you_mean(str(key), allowed)}",
                          rule=rule)
    if error.validator == "required":
        missing = [k for k in error.validator_value if k not in error.instance][0]
        sub = error.schema.get("properties", {}).get(missing, {})
        if sub.get("x-expected"):
            detail = f"; expected {sub['x-expected']}"
        elif sub.get("description"):
            detail = f" ({str(sub['description']).strip().rstrip('.')})"
        else:
            detail = ""
        raise InputError(file, format_path(where + [missing]), f"missing required value{detail}", rule=rule)
    raise InputError(file, format_path(where), f"expected {_expected_text(error)}, got {show(error.instance)}",
                      rule=rule)


def _rule_for(schema: dict, path: list) -> str | None:
    """The innermost ``x-rule`` on the way from the root schema to ``path``."""
    rule, node = schema.get("x-rule"), schema
    for part in path:
        if not isinstance(node, dict):
            break
        if isinstance(part, int):
            node = node.get("items")
        else:
            props = node.get("properties", {})
            node = props.get(part) if part in props else node.get("additionalProperties")
        if isinstance(node, dict) and node.get("x-rule"):
            rule = node["x-rule"]
    return rule
