"""``x-kubernetes-list-type`` ``set`` and ``map`` uniqueness, as apiextensions-apiserver v0.35.0
checks it on every write (``pkg/apiserver/schema/listtype/validation.go``
``ValidateListSetsAndMaps``): a set may not hold one value twice, a map-list may not hold two
items with the same values of its ``x-kubernetes-list-map-keys`` (a missing key counts as a value
of its own). Each repeated item after the first is reported once as ``Duplicate``, at its index;
an item of a map-list that is not an object is ``Invalid`` ("must be an object for an array of
list-type map") and stops that list's check."""
from __future__ import annotations

import json
from typing import Any, Iterator

from modules.upstream import field as fe
from modules.upstream.field import FieldError

from .gofmt import printed

_UNSET = object()


def _child(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def validate(schema: dict | None, obj: Any, path: str = "") -> list[FieldError]:
    """Every set and map-list under ``obj`` (an object at ``path``), against the prepared schema."""
    if not schema or not isinstance(obj, dict):
        return []
    return list(_object(schema, obj, path))


def _object(schema: dict, obj: dict, path: str) -> Iterator[FieldError]:
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict):
        for key, value in obj.items():
            yield from _value(extra, value, f"{path}[{key}]")   # fldPath.Key(k)
    properties = schema.get("properties") or {}
    for key, value in obj.items():
        if key in properties:
            yield from _value(properties[key], value, _child(path, key))


def _value(schema: dict, value: Any, path: str) -> Iterator[FieldError]:
    if isinstance(value, list):
        yield from _array(schema, value, path)
    elif isinstance(value, dict):
        yield from _object(schema, value, path)


def _array(schema: dict, items: list, path: str) -> Iterator[FieldError]:
    kind = schema.get("x-kubernetes-list-type")
    if kind == "set":
        for index in _repeats(items):
            yield fe.duplicate(f"{path}[{index}]", printed(items[index]))
    elif kind == "map":
        yield from _map_list(schema, items, path)
    if isinstance(schema.get("items"), dict):
        for index, item in enumerate(items):
            yield from _value(schema["items"], item, f"{path}[{index}]")


def _identity(value: Any) -> Any:
    """A hashable identity with Go's equality of decoded JSON values (compound values by their JSON)."""
    if value is _UNSET:
        return ("unset",)
    if isinstance(value, (dict, list)):
        return ("json", json.dumps(value, sort_keys=True, separators=(",", ":")))
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, (int, float)):
        return ("int" if isinstance(value, int) else "float", value)
    return (type(value).__name__, value)


def _repeats(values: list) -> list[int]:
    """The index of each value's second occurrence (``validateListSet``: one report per value)."""
    seen: dict[Any, int] = {}
    out = []
    for index, value in enumerate(values):
        key = _identity(value)
        seen[key] = seen.get(key, 0) + 1
        if seen[key] == 2:
            out.append(index)
    return out


def _map_list(schema: dict, items: list, path: str) -> Iterator[FieldError]:
    for index, item in enumerate(items):
        if item is not None and not isinstance(item, dict):
            yield fe.invalid(f"{path}[{index}]", printed(item), "must be an object for an array of list-type map")
            return
    if len(items) <= 1:
        return
    keys = [k for k in schema.get("x-kubernetes-list-map-keys") or () if isinstance(k, str)]
    if len(keys) == 1:
        values = [(item or {}).get(keys[0], _UNSET) for item in items]
        for index in _repeats(values):
            shown = {} if values[index] is _UNSET else {keys[0]: values[index]}
            yield fe.duplicate(f"{path}[{index}]", printed(shown))
        return
    composite = [{k: (item or {})[k] for k in keys if k in (item or {})} for item in items]
    for index in _repeats(composite):
        yield fe.duplicate(f"{path}[{index}]", printed(composite[index]))
