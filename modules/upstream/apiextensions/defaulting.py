"""What the API server does to a custom resource's body while decoding it, before any admission
(apiextensions-apiserver v0.35.0 ``pkg/apiserver/schema/defaulting``): ``default`` values of the
schema fill missing fields (and non-nullable nulls), then nulls of non-nullable fields without a
default are dropped (``PruneNonNullableNullsWithoutDefaults``). The object is changed in place
(callers pass a copy)."""
from __future__ import annotations

import copy
from typing import Any


def _non_nullable_null(value: Any, schema: dict | None) -> bool:
    return value is None and schema is not None and not schema.get("nullable")


def apply_defaults(value: Any, schema: dict | None) -> None:
    """``Default``: a property's default where the field is missing or a non-nullable null."""
    if not schema:
        return
    if isinstance(value, dict):
        properties = schema.get("properties") or {}
        for key, prop in properties.items():
            if prop.get("default") is None:
                continue
            if key not in value or _non_nullable_null(value[key], prop):
                value[key] = copy.deepcopy(prop["default"])
        extra = schema.get("additionalProperties")
        for key in list(value):
            if key in properties:
                apply_defaults(value[key], properties[key])
            elif isinstance(extra, dict):
                if _non_nullable_null(value[key], extra) and extra.get("default") is not None:
                    value[key] = copy.deepcopy(extra["default"])
                apply_defaults(value[key], extra)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        items = schema["items"]
        for index, item in enumerate(value):
            if _non_nullable_null(item, items) and items.get("default") is not None:
                value[index] = copy.deepcopy(items["default"])
            apply_defaults(value[index], items)


def _field_schema(key: str, schema: dict | None) -> dict | None:
    if not schema:
        return None
    properties = schema.get("properties") or {}
    if key in properties:
        return properties[key]
    extra = schema.get("additionalProperties")
    return extra if isinstance(extra, dict) else None


def prune_nulls(value: Any, schema: dict | None) -> None:
    """``PruneNonNullableNullsWithoutDefaults``."""
    if isinstance(value, dict):
        for key in list(value):
            sub = _field_schema(key, schema)
            if value[key] is None and sub is not None and not sub.get("nullable") and sub.get("default") is None:
                del value[key]
            else:
                prune_nulls(value[key], sub)
    elif isinstance(value, list):
        items = schema.get("items") if schema else None
        for item in value:
            prune_nulls(item, items if isinstance(items, dict) else None)
