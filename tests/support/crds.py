"""Validate rendered objects against the real schemas.

Custom resources: the upstream CRDs in ../shared/crds (or $TRAINSTACK_CRD_DIR); tests that need them
skip with a clear reason when the folder is absent. Core kinds: kubernetes-validate (strict).
"""
from __future__ import annotations

import functools
import os
from pathlib import Path

import jsonschema
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
KUBERNETES_VERSION = "1.33"   # the oldest version Trainer v2.3 and Volcano 1.15 support is 1.31; test a common one


def crd_dir() -> Path | None:
    configured = os.environ.get("TRAINSTACK_CRD_DIR")
    path = Path(configured) if configured else ROOT.parent / "shared" / "crds"
    return path if path.is_dir() else None


def require_crds() -> Path:
    path = crd_dir()
    if path is None:
        pytest.skip("upstream CRDs not found: set TRAINSTACK_CRD_DIR or keep ../shared/crds beside the project")
    return path


def _to_jsonschema(node):
    if isinstance(node, dict):
        node = dict(node)
        if node.pop("x-kubernetes-int-or-string", False):
            node.pop("type", None)
            node["anyOf"] = [{"type": "integer"}, {"type": "string"}]
        return {k: _to_jsonschema(v) for k, v in node.items() if not k.startswith("x-kubernetes-")}
    if isinstance(node, list):
        return [_to_jsonschema(v) for v in node]
    return node


@functools.lru_cache(maxsize=None)
def crd_documents() -> tuple[dict, ...]:
    """Every vendored CRD, parsed once per test process (6.6 MB of YAML: about a second each time).
    Shared, so never modified by a caller."""
    return tuple(doc for file in sorted(require_crds().rglob("*.yaml"))
                 for doc in yaml.load_all(file.read_text(), Loader=yaml.CSafeLoader)
                 if isinstance(doc, dict) and doc.get("kind") == "CustomResourceDefinition")


@functools.lru_cache(maxsize=None)
def _crd_schemas() -> dict[tuple[str, str, str], dict]:
    """(group, version, kind) -> JSON Schema of every served version of every vendored CRD."""
    out = {}
    for doc in crd_documents():
        spec = doc["spec"]
        for version in spec["versions"]:
            schema = version.get("schema", {}).get("openAPIV3Schema")
            if schema:
                out[(spec["group"], version["name"], spec["names"]["kind"])] = _to_jsonschema(schema)
    return out


def is_custom(obj: dict) -> bool:
    group = obj["apiVersion"].rpartition("/")[0]
    return "." in group and not group.endswith(".k8s.io")


def validate_cr(obj: dict) -> None:
    """Raise jsonschema.ValidationError if the object does not match its upstream CRD."""
    group, _, version = obj["apiVersion"].rpartition("/")
    schemas = _crd_schemas()
    key = (group, version, obj["kind"])
    if key not in schemas:
        raise LookupError(f"no vendored CRD for {obj['apiVersion']} {obj['kind']}")
    jsonschema.Draft7Validator(schemas[key]).validate(obj)


@functools.lru_cache(maxsize=None)
def _kubernetes_validate():
    """kubernetes-validate, reading each of its schema files once per test process: it parsed its
    definitions file (about 1 MB of JSON) again for every object validated. The parsed schemas are
    only read (jsonschema's registry does not change them)."""
    import kubernetes_validate
    from kubernetes_validate import utils

    utils.schema_contents = functools.lru_cache(maxsize=None)(utils.schema_contents)
    return kubernetes_validate


def validate_core(obj: dict) -> None:
    """Raise kubernetes_validate.ValidationError if a built-in kind is malformed (strict: no unknown fields)."""
    _kubernetes_validate().validate(obj, KUBERNETES_VERSION, strict=True)


def validate_any(obj: dict) -> None:
    if is_custom(obj):
        validate_cr(obj)
    else:
        validate_core(obj)
