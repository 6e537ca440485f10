"""The served schemas of the CRDs in a folder (``../shared/crds``, ``$TRAINSTACK_CRD_DIR``): one
entry per (API group, version, kind), prepared for validation (``structural.prepare``).

Files are read with yamlio's bounded reader and YAML loader (size, depth, aliases); a CRD whose
schema is beyond ``structural``'s bounds is listed in ``problems`` and skipped, as is a version
that is not served (the API server refuses its objects with "no matches for kind"). The prepared
schemas are cached as JSON in trainstack's cache folder, keyed by the files' paths, sizes and
modification times (parsing the CRDs costs about a second; the cache read a few milliseconds).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import yaml

from modules.core import cache, yamlio
from modules.core.errors import InputError

from .structural import LimitError, prepare

CACHE_VERSION = "crd-schemas-1"
MAX_BYTES = yamlio.MAX_FABRIC_FILE_BYTES


@dataclass
class Schemas:
    """Prepared schemas by ``"group/version/Kind"``, with where each came from."""

    by_gvk: dict[str, dict] = field(default_factory=dict)   # key -> {"schema", "source", "crd"}
    problems: list[str] = field(default_factory=list)

    def find(self, api_version: str, kind: str) -> dict | None:
        group, _, version = api_version.rpartition("/")
        return self.by_gvk.get(f"{group}/{version}/{kind}")

    def served_versions(self, group: str, kind: str) -> list[str]:
        """The versions the CRDs read serve for ``group``/``kind`` (none: no CRD of that kind here)."""
        return [key.split("/")[1] for key in self.by_gvk if key.startswith(f"{group}/") and key.endswith(f"/{kind}")
                and key.count("/") == 2]


def _documents(path: Path, label: str, problems: list[str]) -> list:
    try:
        text = yamlio.read_text(path, label, MAX_BYTES)
        if "CustomResourceDefinition" not in text:
            return []
        yamlio.check_bounds(text, label)
        return list(yaml.load_all(text, Loader=yamlio.BoundedLoader))
    except (InputError, yaml.YAMLError, UnicodeDecodeError, ValueError) as exc:
        problems.append(f"{label}: not read ({' '.join(str(exc).split())[:200]})")
        return []


def _entries(doc: dict, label: str, problems: list[str]) -> dict[str, dict]:
    spec = doc.get("spec") if isinstance(doc.get("spec"), dict) else {}
    group, names = spec.get("group"), spec.get("names") if isinstance(spec.get("names"), dict) else {}
    kind, name = names.get("kind"), (doc.get("metadata") or {}).get("name")
    if not isinstance(group, str) or not isinstance(kind, str) or not isinstance(spec.get("versions"), list):
        problems.append(f"{label}: a CustomResourceDefinition without spec.group, spec.names.kind or versions, "
                        "skipped")
        return {}
    out = {}
    for version in spec["versions"]:
        if not isinstance(version, dict) or not isinstance(version.get("name"), str) or not version.get("served"):
            continue
        raw = ((version.get("schema") or {}).get("openAPIV3Schema")) if isinstance(version.get("schema"), dict) \
            else None
        try:
            schema = prepare(raw) if isinstance(raw, dict) else None
        except LimitError as exc:
            problems.append(f"{label}: CustomResourceDefinition {name!r} version {version['name']}: {exc}; its "
                            "objects are not schema-checked")
            continue
        subresources = version.get("subresources") if isinstance(version.get("subresources"), dict) else {}
        out[f"{group}/{version['name']}/{kind}"] = {"schema": schema, "source": label, "crd": name,
                                                    "status_subresource": "status" in subresources}
    return out


def read_folder(folder: Path) -> Schemas:
    """Every served CRD version under ``folder`` (``*.yaml``, recursively)."""
    result = Schemas()
    for path in sorted(folder.rglob("*.yaml")):
        label = str(path.relative_to(folder))
        for doc in _documents(path, label, result.problems):
            if isinstance(doc, dict) and doc.get("kind") == "CustomResourceDefinition":
                result.by_gvk.update(_entries(doc, label, result.problems))
    return result


def load(folder: Path | None) -> Schemas:
    """``read_folder``, through the cache."""
    if folder is None or not folder.is_dir():
        return Schemas(problems=[f"no CRD folder ({folder})" if folder else "no CRD folder"])
    code = sorted(Path(__file__).parent.glob("*.py"))   # a change in how schemas are prepared is a new key
    key = cache.files_key(CACHE_VERSION, [*code, *sorted(folder.rglob("*.yaml"))])
    data = cache.load_json("crd-schemas", key)
    if isinstance(data, dict) and isinstance(data.get("by_gvk"), dict):
        return Schemas(by_gvk=data["by_gvk"], problems=list(data.get("problems") or []))
    result = read_folder(folder)
    if result.by_gvk:
        try:   # a schema holding a value JSON cannot carry (a YAML timestamp) is simply not cached
            cache.store_json("crd-schemas", key, {"by_gvk": result.by_gvk, "problems": result.problems})
        except (TypeError, ValueError):
            pass
    return result
