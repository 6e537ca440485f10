"""A CRD version's ``openAPIV3Schema`` made ready for validation, within bounds.

What the API server does to the schema before it validates anything (apiextensions-apiserver
v0.35.0 ``pkg/apiserver/validation/validation.go`` ``ConvertJSONSchemaPropsWithPostProcess`` and
``formats.go``): ``type`` becomes a list; ``x-kubernetes-int-or-string`` means the types integer
and string; a format apiextensions does not support is dropped; ``$ref`` cannot occur (the API
server refuses a CRD with one).

Schemas and objects come from outside (a CRD folder, ``--manifests``), so every walk here is
bounded: a schema deeper than ``MAX_DEPTH`` or with more than ``MAX_NODES`` schema nodes, or an
object deeper than ``MAX_DEPTH`` or with more than ``MAX_VALUES`` values, raises
:class:`LimitError` (the caller reports it as not evaluated); patterns are RE2 (linear time).
"""
from __future__ import annotations

import base64
from datetime import date, datetime
from typing import Any

from . import formats

MAX_DEPTH = 64            # nesting of a schema or an object (Kubernetes objects stay under 25)
MAX_NODES = 200_000       # schema nodes of one CRD version (Volcano's Job CRD: about 9,000)
MAX_VALUES = 100_000      # values in one object (a 16,384-node HyperNode tree: a few thousand)


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _count(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def _strings(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) for x in v)


# The keywords kept, each with the shape the API server's CRD validation requires of it (a CRD
# breaking one is refused at its own creation; a hostile one here simply loses the keyword).
_KEYWORDS: dict[str, Any] = {
    "nullable": lambda v: isinstance(v, bool), "default": lambda v: True, "enum": lambda v: isinstance(v, list),
    "maximum": _number, "minimum": _number, "exclusiveMaximum": lambda v: isinstance(v, bool),
    "exclusiveMinimum": lambda v: isinstance(v, bool), "multipleOf": _number, "maxLength": _count,
    "minLength": _count, "pattern": lambda v: isinstance(v, str), "maxItems": _count, "minItems": _count,
    "uniqueItems": lambda v: isinstance(v, bool), "maxProperties": _count, "minProperties": _count,
    "required": _strings, "x-kubernetes-preserve-unknown-fields": lambda v: isinstance(v, bool),
    "x-kubernetes-embedded-resource": lambda v: isinstance(v, bool),
    "x-kubernetes-list-type": lambda v: isinstance(v, str), "x-kubernetes-list-map-keys": _strings,
    "x-kubernetes-int-or-string": lambda v: isinstance(v, bool),
}


class LimitError(ValueError):
    """A schema or an object beyond the bounds this module evaluates."""


def prepare(schema: Any) -> dict:
    """The validation form of a CRD schema node (a new dict; the input is not changed)."""
    budget = [MAX_NODES]
    return _prepare(schema, 0, budget)


def _prepare(node: Any, depth: int, budget: list[int]) -> dict:
    if depth > MAX_DEPTH:
        raise LimitError(f"the schema is nested deeper than {MAX_DEPTH} levels")
    budget[0] -= 1
    if budget[0] < 0:
        raise LimitError(f"the schema has more than {MAX_NODES} nodes")
    if not isinstance(node, dict):
        return {}
    out: dict = {k: node[k] for k, shape in _KEYWORDS.items() if k in node and shape(node[k])}
    if isinstance(node.get("type"), str) and node["type"]:
        out["type"] = [node["type"]]
    if node.get("x-kubernetes-int-or-string") is True:
        out["type"] = ["integer", "string"]
    fmt = node.get("format")
    if isinstance(fmt, str) and formats.normalize(fmt) in formats.SUPPORTED:
        out["format"], out["x-format"] = fmt, formats.normalize(fmt)   # messages name it as written
    if isinstance(node.get("properties"), dict):
        out["properties"] = {str(k): _prepare(v, depth + 1, budget) for k, v in node["properties"].items()}
    if isinstance(node.get("items"), dict):
        out["items"] = _prepare(node["items"], depth + 1, budget)
    extra = node.get("additionalProperties")
    if isinstance(extra, dict):
        out["additionalProperties"] = _prepare(extra, depth + 1, budget)
    elif isinstance(extra, bool):
        out["additionalProperties"] = extra
    for key in ("allOf", "anyOf", "oneOf"):
        if isinstance(node.get(key), list):
            out[key] = [_prepare(v, depth + 1, budget) for v in node[key]]
    if isinstance(node.get("not"), dict):
        out["not"] = _prepare(node["not"], depth + 1, budget)
    return out


def check_object(value: Any) -> None:
    """Raise :class:`LimitError` for an object deeper than MAX_DEPTH or larger than MAX_VALUES
    (an explicit stack: no recursion on hostile input)."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    seen = 0
    while stack:
        node, depth = stack.pop()
        seen += 1
        if seen > MAX_VALUES:
            raise LimitError(f"the object holds more than {MAX_VALUES} values")
        if depth > MAX_DEPTH:
            raise LimitError(f"the object is nested deeper than {MAX_DEPTH} levels")
        if isinstance(node, dict):
            stack.extend((v, depth + 1) for v in node.values())
        elif isinstance(node, list):
            stack.extend((v, depth + 1) for v in node)


def as_decoded(value: Any) -> Any:
    """The object as the API server decodes the JSON a client sends: a whole-number float is an
    integer (kubectl and Pulumi write ``2.0`` as ``2``); YAML keys that are not strings become
    strings (JSON has only string keys)."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2 ** 63:
        return int(value)
    if isinstance(value, (date, datetime)):   # an unquoted YAML timestamp: a JSON string once sent
        return value.isoformat().replace("+00:00", "Z")
    if isinstance(value, bytes):              # a YAML !!binary: base64 text in JSON
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, dict):
        return {_key(k): as_decoded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [as_decoded(v) for v in value]
    return value


def _key(key: Any) -> str:
    if isinstance(key, str):
        return key
    if isinstance(key, bool):
        return "true" if key else "false"
    return "null" if key is None else str(key)
