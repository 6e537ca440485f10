"""``x-kubernetes-embedded-resource``: an object the schema marks as a Kubernetes object of its
own, checked as apiextensions-apiserver v0.35.0 does on every write
(``pkg/apiserver/schema/objectmeta/validation.go``, called with ``isResourceRoot`` false, so the
custom resource itself is left to the API server's object-metadata validation): ``apiVersion``
and ``kind`` are required strings, not empty, the apiVersion a group/version, the kind a DNS-1035
label up to letter case; ``metadata``, when present, is ObjectMeta validated with path-segment
names (name and generateName), a DNS-1123 namespace, label keys and values and annotation keys.
"""
from __future__ import annotations

from typing import Any, Iterator

from modules.upstream import field as fe
from modules.upstream.field import FieldError

from .gofmt import printed

from modules.core.vocabulary import names as _names


def _child(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def validate(schema: dict | None, obj: Any, path: str = "", root_embedded: bool = False) -> list[FieldError]:
    """Every embedded resource under ``obj`` (at ``path``), against the prepared schema; with
    ``root_embedded`` (upstream's ``isResourceRoot``) ``obj`` itself is one."""
    if root_embedded:
        schema = {**(schema or {}), "x-kubernetes-embedded-resource": True}
    return list(_walk(schema, obj, path)) if schema else []


def _walk(schema: dict | None, value: Any, path: str) -> Iterator[FieldError]:
    if not schema:
        return
    if isinstance(value, dict):
        if schema.get("x-kubernetes-embedded-resource"):
            yield from embedded_resource(value, path)
        properties = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        for key, child in value.items():
            if key in properties:
                yield from _walk(properties[key], child, _child(path, key))
            elif isinstance(extra, dict):
                yield from _walk(extra, child, f"{path}[{key}]")
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for index, item in enumerate(value):
            yield from _walk(schema["items"], item, f"{path}[{index}]")


def _group_version_problem(text: str) -> str | None:
    """``schema.ParseGroupVersion``'s error, or None."""
    if text == "v1" or text.count("/") == 0:
        return None
    if text.count("/") == 1:
        return None
    return f"unexpected GroupVersion string: {text}"


def embedded_resource(obj: dict, path: str) -> Iterator[FieldError]:
    if "apiVersion" not in obj:
        yield fe.required(_child(path, "apiVersion"))
    if "kind" not in obj:
        yield fe.required(_child(path, "kind"))
    for key, value in obj.items():
        if key == "apiVersion":
            yield from _api_version(value, _child(path, key))
        elif key == "kind":
            yield from _kind(value, _child(path, key))
        elif key == "metadata":
            yield from _metadata(value, _child(path, key))


def _api_version(value: Any, where: str) -> Iterator[FieldError]:
    if not isinstance(value, str):
        yield fe.invalid(where, printed(value), "must be a string")
    elif not value:
        yield fe.invalid(where, value, "must not be empty")
    elif (problem := _group_version_problem(value)) is not None:
        yield fe.invalid(where, value, problem)


def _kind(value: Any, where: str) -> Iterator[FieldError]:
    if not isinstance(value, str):
        yield fe.invalid(where, printed(value), "must be a string")
    elif not value:
        yield fe.invalid(where, value, "must not be empty")
    elif problems := _names.dns1035_label(value.lower()):
        yield fe.invalid(where, value, "may have mixed case, but should otherwise match: " + ",".join(problems))


def _metadata(value: Any, where: str) -> Iterator[FieldError]:
    if not isinstance(value, dict):
        yield fe.invalid(where, printed(value), "must be an object")   # GetObjectMeta's decoding error
        return
    for key in ("name", "generateName"):
        text = value.get(key)
        if isinstance(text, str) and text:
            for problem in _names.path_segment_name(text):
                yield fe.invalid(f"{where}.{key}", text, problem)
    namespace = value.get("namespace")
    if isinstance(namespace, str) and namespace:
        for problem in _names.dns1123_label(namespace):
            yield fe.invalid(f"{where}.namespace", namespace, problem)
    labels = value.get("labels")
    for key, label in (labels.items() if isinstance(labels, dict) else ()):
        for problem in _names.qualified_name(str(key)):
            yield fe.invalid(f"{where}.labels", str(key), problem)
        if isinstance(label, str):
            for problem in _names.label_value(label):
                yield fe.invalid(f"{where}.labels", label, problem)
    annotations = value.get("annotations")
    for key in (annotations if isinstance(annotations, dict) else ()):
        for problem in _names.qualified_name(str(key).lower()):
            yield fe.invalid(f"{where}.annotations", str(key), problem)
