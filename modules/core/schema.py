"""Module schemas (JSON Schema in each module's ``schema.yaml``): defaults and friendly errors.

One source of truth per option: its type, default and description live in the schema. This file
fills defaults from it and turns jsonschema errors into InputError messages of the form
``expected <what>, got <value>``. Schemas may say what they expect in words with ``x-expected``.
"""
from __future__ import annotations

import copy
import functools
import re
from pathlib import Path
from typing import Any, Callable

from typing import TYPE_CHECKING

from . import cache, yamlio
from .errors import InputError, show
from .quantity import is_positive_quantity, is_quantity

if TYPE_CHECKING:
    import jsonschema
    from jsonschema import Draft202012Validator

DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?\Z")
DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z")
PROM_DURATION = re.compile(r"^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?"
                           r"(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)\Z")

FORMATS: dict[str, tuple[Callable[[object], bool], str]] = {
    "quantity": (is_quantity, "a Kubernetes quantity such as 500Gi or 250m"),
    "positive-quantity": (is_positive_quantity, "a positive Kubernetes quantity such as 500Gi"),
    "dns1123-label": (lambda v: isinstance(v, str) and len(v) <= 63 and bool(DNS1123_LABEL.match(v)),
                      "a Kubernetes name (lower-case letters, digits and '-', at most 63 characters)"),
    "dns1123-subdomain": (lambda v: isinstance(v, str) and len(v) <= 253 and bool(DNS1123_SUBDOMAIN.match(v)),
                          "a Kubernetes name (lower-case letters, digits, '-' and '.', at most 253 characters)"),
    "prometheus-duration": (lambda v: isinstance(v, str) and v != "" and bool(PROM_DURATION.match(v)),
                            "a Prometheus duration such as 15m or 1h30m"),
}


@functools.lru_cache(maxsize=None)
def _format_checker():
    from jsonschema import FormatChecker

    checker = FormatChecker(formats=())
    for name, (check, _text) in FORMATS.items():
        checker.checks(name)(lambda value, _c=check: not isinstance(value, str) or _c(value))
    return checker

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
    data = cache.load_json("schemas", key)
    if data is None:
        data = yamlio.loads(text, str(path))
        cache.store_json("schemas", key, data)
    return data


_VALIDATORS: dict[int, Draft202012Validator] = {}


def validator_for(schema: dict) -> Draft202012Validator:
    """A validator per schema object (schemas are loaded once and cached, so ids are stable)."""
    from jsonschema import Draft202012Validator

    validator = _VALIDATORS.get(id(schema))
    if validator is None or validator.schema is not schema:
        validator = Draft202012Validator(schema, format_checker=_format_checker())
        _VALIDATORS[id(schema)] = validator
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


# Draft 2020-12's keywords: those jsonschema's Draft202012Validator validates (a test keeps the two
# equal). Any other key in a schema (description, default, x-rule, ...) is one validation ignores.
VOCABULARY = frozenset({
    "$dynamicRef", "$ref", "additionalProperties", "allOf", "anyOf", "const", "contains", "dependentRequired",
    "dependentSchemas", "enum", "exclusiveMaximum", "exclusiveMinimum", "format", "if", "items", "maxItems",
    "maxLength", "maxProperties", "maximum", "minItems", "minLength", "minProperties", "minimum", "multipleOf",
    "not", "oneOf", "pattern", "patternProperties", "prefixItems", "properties", "propertyNames", "required",
    "type", "unevaluatedItems", "unevaluatedProperties", "uniqueItems",
})
_PLAIN = (str, dict, list, bool, int, float, type(None))   # what YAML and JSON give


def _is_type(value: Any, name: str) -> bool | None:
    """Draft 2020-12's ``type``: True or False, None for a value or type name not decided here."""
    if not isinstance(value, _PLAIN) or not isinstance(name, str):
        return None
    if name in ("integer", "number"):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return False
        return name == "number" or isinstance(value, int) or value.is_integer()
    kinds = {"string": str, "object": dict, "array": list, "boolean": bool, "null": type(None)}
    return isinstance(value, kinds[name]) if name in kinds else None


def is_valid(schema: Any, value: Any, formats: bool = True) -> bool | None:
    """Whether ``value`` is valid against ``schema``, decided without jsonschema (importing it is a
    third of a `check`'s start-up) for the keywords trainstack's schemas use: True or False where
    the answer is certain, None where this does not decide (another keyword, a value that is no
    YAML or JSON type): jsonschema then decides, and words the error. Draft 2020-12 with FORMATS as
    the format checker (``formats``: False for a validator without one), as jsonschema applies
    them; tests compare the two over every schema and many values."""
    if schema is True or schema is False:
        return schema
    if not isinstance(schema, dict):
        return None
    verdict: bool | None = True

    def judge(outcome: bool | None) -> bool:   # False: certain to fail, stop here
        nonlocal verdict
        if outcome is None:
            verdict = None
        return outcome is False

    is_str, is_dict, is_list = isinstance(value, str), isinstance(value, dict), isinstance(value, list)
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    for key, arg in schema.items():
        if key not in VOCABULARY:
            continue
        if key == "type":
            names = arg if isinstance(arg, list) else [arg]
            outcomes = [_is_type(value, n) for n in names]
            if judge(True if True in outcomes else (False if outcomes and all(o is False for o in outcomes) else None)):
                return False
        elif key == "enum":
            if not isinstance(arg, list):
                verdict = None
            elif not isinstance(value, (dict, list)) and any(type(e) is type(value) and e == value for e in arg):
                pass   # (containers: jsonschema tells True from 1 inside them, == does not)
            elif is_str:   # jsonschema compares a string with == alone
                return False
            else:
                verdict = None
        elif key == "properties":
            if is_dict and isinstance(arg, dict):
                for name, sub in arg.items():
                    if name in value and judge(is_valid(sub, value[name], formats)):
                        return False
            elif is_dict:
                verdict = None
        elif key == "additionalProperties":
            if is_dict:
                if "patternProperties" in schema:
                    verdict = None
                    continue
                known = schema.get("properties") or {}
                for name in value:
                    if name not in known and judge(is_valid(arg, value[name], formats)):
                        return False
        elif key == "required":
            if is_dict and isinstance(arg, list) and any(name not in value for name in arg):
                return False
        elif key in ("minProperties", "maxProperties", "minItems", "maxItems", "minLength", "maxLength"):
            if (is_dict if "Prop" in key else is_list if "Items" in key else is_str):
                if not isinstance(arg, int) or isinstance(arg, bool):
                    verdict = None
                elif (len(value) < arg) if key.startswith("min") else (len(value) > arg):
                    return False
        elif key == "propertyNames":
            if is_dict:
                for name in value:
                    if judge(is_valid(arg, name, formats)):
                        return False
        elif key == "items":
            if is_list:
                if "prefixItems" in schema:
                    verdict = None
                    continue
                for item in value:
                    if judge(is_valid(arg, item, formats)):
                        return False
        elif key == "uniqueItems":
            if is_list and arg is True:
                if not (all(isinstance(item, str) for item in value)
                        or all(isinstance(item, int) and not isinstance(item, bool) for item in value)):
                    verdict = None   # (jsonschema tells True from 1, a set does not)
                elif len(set(value)) != len(value):
                    return False
            elif is_list and arg is not False:
                verdict = None
        elif key == "pattern":
            if not isinstance(arg, str):
                verdict = None
            elif is_str and re.search(arg, value) is None:
                return False
        elif key == "format":
            if not isinstance(arg, str):
                verdict = None
            elif is_str and formats and arg in FORMATS and not FORMATS[arg][0](value):
                return False
        elif key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
            if not number:
                continue
            if not isinstance(arg, (int, float)) or isinstance(arg, bool):
                verdict = None
            elif ((key == "minimum" and value < arg) or (key == "maximum" and value > arg)
                  or (key == "exclusiveMinimum" and value <= arg) or (key == "exclusiveMaximum" and value >= arg)):
                return False
        elif key == "not":
            inner = is_valid(arg, value, formats)
            if inner is True:
                return False
            if inner is None:
                verdict = None
        else:   # a keyword our schemas do not use: jsonschema decides
            verdict = None
    return verdict


def validate(schema: dict, value: Any, file: str, format_path: Callable[[list], str]) -> None:
    """Validate ``value`` against ``schema``; raise InputError for the first problem found."""
    if is_valid(schema, value) is True:
        return
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
