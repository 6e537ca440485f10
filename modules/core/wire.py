"""Objects on the wire: one place for the small normalisations every runner needs, so the rules
see the same dict whether an object came from the renderer, the Pulumi engine (property bags) or
the program under mocks (``preview_engine``).

* ``plain``: engine values as plain JSON-like data (SDK proxies unwrapped, integral floats back to
  ints: the engine's Struct has only floats).
* ``object_key``: the stable id of an object, ``<kind>/<namespace>/<name>`` (``<kind>/<name>`` when
  cluster-scoped).
* ``release_manifest``: a chart release as rules see it (``helm.sh/v3`` ``Release``), built from a
  rendered ``ChartRelease`` or from a ``kubernetes:helm.sh/v3:Release``'s inputs.
* ``resource_type``: the Pulumi type token of a manifest (``kubernetes:core/v1:ConfigMap``).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def plain(value: Any) -> Any:
    """A property bag as plain JSON-like data: the SDK's unknown-checking proxies unwrapped (without
    touching unknowns), integral floats back to ints (the wire has only floats)."""
    # Plain types first: the rules' hot path (the admission engine copies every object through here),
    # and the ABC checks the proxies need are several times slower.
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}   # YAML may give int keys; the API has none
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, float):
        return int(value) if value.is_integer() else value
    if value is None or isinstance(value, (str, bytes, int)):
        return value
    target = None
    if isinstance(value, (Mapping, Sequence)):
        target = value["__target"]
    return value if target is None else plain(target)


def object_key(obj: dict) -> str:
    """``<kind>/<namespace>/<name>``, or ``<kind>/<name>`` for cluster-scoped objects."""
    kind = obj.get("kind", "")
    meta = obj.get("metadata") or {}
    name = meta.get("name", "")
    namespace = meta.get("namespace")
    return f"{kind}/{namespace}/{name}" if namespace else f"{kind}/{name}"


def release_manifest(name: str, namespace: str | None, chart: str, repository: str, version: Any,
                     values: dict) -> dict:
    """A chart release as every rule sees it, in-process, in the pack and under preview alike."""
    metadata = {"name": name}
    if namespace:
        metadata["namespace"] = namespace
    return {"apiVersion": "helm.sh/v3", "kind": "Release", "metadata": metadata,
            "spec": {"chart": chart, "repository": repository, "version": version, "values": values}}


def release_from_inputs(props: dict, name: str) -> dict:
    """``release_manifest`` from a ``kubernetes:helm.sh/v3:Release``'s inputs (an OCI chart URL
    splits into repository and chart)."""
    chart = str(props.get("chart") or "")
    opts = props.get("repositoryOpts")
    repository = opts.get("repo") if isinstance(opts, dict) else None
    if not repository and chart.startswith("oci://"):
        repository, _, chart = chart.rpartition("/")
    return release_manifest(props.get("name") or name, props.get("namespace") or None, chart, repository or "",
                            props.get("version"), props.get("values") or {})


def resource_type(obj: dict) -> str:
    """The Pulumi type token of a manifest (``kubernetes:core/v1:ConfigMap``)."""
    group, _, version = str(obj.get("apiVersion", "")).rpartition("/")
    return f"kubernetes:{group or 'core'}/{version}:{obj.get('kind')}"
