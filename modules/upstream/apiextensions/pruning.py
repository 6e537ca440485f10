"""Unknown fields: what apiextensions-apiserver drops from a custom resource because its
structural schema does not declare them (v0.35.0 ``pkg/apiserver/schema/pruning/algorithm.go``
``PruneWithOptions``), and the paths it reports for them.

At the resource root (and in every ``x-kubernetes-embedded-resource`` object) ``apiVersion``,
``kind`` and ``metadata`` are kept; a field is kept when the schema names it in ``properties`` or
has ``additionalProperties``; under ``x-kubernetes-preserve-unknown-fields: true`` unknown fields
are kept and only the declared ones are walked. Paths read ``spec.tasks[0].bogus`` and are sorted
(Go's ``sort.Strings``). Unknown fields of the root ``metadata`` are reported too
(``objectmeta/coerce.go``: ObjectMeta decoded strictly), as ``metadata.<field>``.

What happens to them depends on the request's ``fieldValidation`` (``customresource_handler.go``
``schemaCoercingDecoder``): ``Strict`` refuses the object with ``strict decoding error: unknown
field "<path>"``; ``Warn`` (the server's default) prunes them and answers the warning
``unknown field "<path>"``; ``Ignore`` prunes them silently (``fieldvalidation.py``).
"""
from __future__ import annotations

import json
from typing import Any

from .openapi import path_name

META_FIELDS = ("apiVersion", "kind", "metadata")
# metav1.ObjectMeta's JSON fields (apimachinery pkg/apis/meta/v1/types.go).
OBJECT_META_FIELDS = frozenset({
    "name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation", "creationTimestamp",
    "deletionTimestamp", "deletionGracePeriodSeconds", "labels", "annotations", "ownerReferences", "finalizers",
    "managedFields",
})


def unknown_fields(obj: dict, schema: dict | None) -> list[str]:
    """The sorted paths of the fields the API server prunes from ``obj`` (a custom resource)."""
    return sorted((text for text, _ in _unknown(obj, schema)), key=lambda p: p.encode("utf-8"))


def unknown_paths(obj: dict, schema: dict | None) -> list[tuple[str, tuple]]:
    """(path text, path parts) of every unknown field, sorted as the API server sorts them."""
    return sorted(_unknown(obj, schema), key=lambda u: u[0].encode("utf-8"))


def declared_parent(schema: dict | None, parts: tuple) -> bool:
    """Whether the object holding the field at ``parts`` has a schema that declares ``properties``
    (a struct to server-side apply's typed conversion, which then refuses the field). Root
    ``metadata`` is ObjectMeta, a struct."""
    if parts[:1] == ("metadata",) and len(parts) == 2:
        return True
    node = schema
    for part in parts[:-1]:
        if not isinstance(node, dict):
            return False
        if isinstance(part, int):
            node = node.get("items")
        elif part in (node.get("properties") or {}):
            node = node["properties"][part]
        else:
            extra = node.get("additionalProperties")
            node = extra if isinstance(extra, dict) else None
    return isinstance(node, dict) and bool(node.get("properties"))


def apply_path(obj: dict, schema: dict | None, parts: tuple) -> str:
    """The path as a server-side apply's typed conversion names it (structured-merge-diff's
    ``PathElement.String``): ``.field`` per field, ``[k="v",...]`` for an item of an
    ``x-kubernetes-list-type: map`` list (its key fields, sorted), ``[=v]`` for a set item, ``[i]``
    otherwise (an atomic list)."""
    out, node, value = "", schema, obj
    for part in parts:
        if isinstance(part, int):
            item = value[part] if isinstance(value, list) and part < len(value) else None
            kind = node.get("x-kubernetes-list-type") if isinstance(node, dict) else None
            keys = node.get("x-kubernetes-list-map-keys") if isinstance(node, dict) else None
            if kind == "map" and isinstance(item, dict) and keys:
                out += "[" + ",".join(f"{k}={_smd_value(item[k])}" for k in sorted(keys) if k in item) + "]"
            elif kind == "set":
                out += f"[={_smd_value(item)}]"
            else:
                out += f"[{part}]"
            node, value = (node.get("items") if isinstance(node, dict) else None), item
        else:
            out += f".{part}"
            sub = (node.get("properties") or {}).get(part) if isinstance(node, dict) else None
            if sub is None and isinstance(node, dict) and isinstance(node.get("additionalProperties"), dict):
                sub = node["additionalProperties"]
            node, value = sub, (value.get(part) if isinstance(value, dict) else None)
    return out


def _smd_value(value: Any) -> str:
    """structured-merge-diff's ``value.ToString``: JSON for scalars."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def prune(obj: dict, schema: dict | None) -> None:
    """Drop the unknown fields from ``obj`` in place, as the API server does while decoding."""
    for _, parts in sorted(_unknown(obj, schema), key=lambda u: len(u[1]), reverse=True):
        node: Any = obj
        for part in parts[:-1]:
            node = node[part]
        node.pop(parts[-1], None)


def _unknown(obj: dict, schema: dict | None) -> list[tuple[str, tuple]]:
    """(path text, path parts) of every unknown field."""
    out: list[tuple[str, tuple]] = []
    root = dict(schema or {})
    root["x-kubernetes-embedded-resource"] = True
    _prune(obj, root, (), out)
    metadata = obj.get("metadata")
    if isinstance(metadata, dict):
        out += [(f"metadata.{k}", ("metadata", k)) for k in metadata if k not in OBJECT_META_FIELDS]
    return out


def _join(path: tuple, key: Any) -> tuple:
    return (*path, key)


def _record(out: list, path: tuple) -> None:
    out.append((path_name(path), path))


def _prune(value: Any, schema: dict | None, path: tuple, out: list) -> None:
    if schema is not None and schema.get("x-kubernetes-preserve-unknown-fields") is True:
        _walk_declared(value, schema, path, out)
        return
    if isinstance(value, dict):
        if schema is None:
            for key in value:
                _record(out, _join(path, key))
            return
        properties = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        for key, child in value.items():
            if schema.get("x-kubernetes-embedded-resource") and key in META_FIELDS:
                continue
            if key in properties:
                _prune(child, properties[key], _join(path, key), out)
            elif extra is not None and extra is not False:
                _prune(child, extra if isinstance(extra, dict) else None, _join(path, key), out)
            elif key not in META_FIELDS or path:
                _record(out, _join(path, key))
    elif isinstance(value, list):
        items = schema.get("items") if schema is not None else None
        for index, item in enumerate(value):
            _prune(item, items if isinstance(items, dict) else None, _join(path, index), out)


def _walk_declared(value: Any, schema: dict, path: tuple, out: list) -> None:
    """``skipPrune``: unknown fields stay; declared ones are pruned below as usual."""
    if isinstance(value, dict):
        properties = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        for key, child in value.items():
            if schema.get("x-kubernetes-embedded-resource") and key in META_FIELDS:
                continue
            if key in properties:
                _prune(child, properties[key], _join(path, key), out)
            elif isinstance(extra, dict):
                _prune(child, extra, _join(path, key), out)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for index, item in enumerate(value):
            _walk_declared(item, schema["items"], _join(path, index), out)
