"""Find upstream's admission rules on disk and extract them, never from the repository.

Where they come from (first that is set):

1. ``--admission-dir DIR`` / ``$TRAINSTACK_ADMISSION_DIR``: an offline folder. Volcano's
   admission policies are ``DIR/volcano/*.yaml`` (the chart's ``policy/`` files), the same under
   ``DIR/admission/``, or a Volcano chart archive ``DIR/**/volcano-*.tgz`` (its ``policy/*.yaml``
   members are read); CRDs are read from ``$TRAINSTACK_CRD_DIR`` or else ``DIR/crds/``, so one
   folder may hold both.
2. The cache ``$TRAINSTACK_CACHE_DIR/admission`` (default ``~/.cache/trainstack/admission``), which
   ``trainstack admission fetch`` fills from the pinned sources in ``sources.yaml`` (sha256 verified).

Every file is recognised by its sha256 against ``sources.yaml``, so findings can name the upstream
release; a file that matches no pin is still evaluated and reported as "unpinned". Extracting the
rules means parsing the CRDs (several MB), so the extracted index is cached in the cache folder,
keyed by the inputs' paths, sizes and modification times.
"""
from __future__ import annotations

import fnmatch
import io
import os
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from modules.core import cache, yamlio
from modules.core.cache import ENV_CACHE, cache_root  # noqa: F401 - ENV_CACHE: the admission commands read it here
from modules.core.errors import InputError

from . import cost, limits
from .index_shape import valid_index

HERE = Path(__file__).resolve().parent
SOURCES = HERE / "sources.yaml"
ENV_DIR = "TRAINSTACK_ADMISSION_DIR"
ENV_CRDS = "TRAINSTACK_CRD_DIR"
POLICY_KINDS = ("ValidatingAdmissionPolicy", "MutatingAdmissionPolicy")
BINDING_KINDS = ("ValidatingAdmissionPolicyBinding", "MutatingAdmissionPolicyBinding")
INDEX_VERSION = 6   # 2: the index carries the problems met while extracting; 3: malformed policies skipped;
                    # 4: one entry per binding; 5: expressions over the API server's CEL limits skipped;
                    # 6: policies and CRD rules whose cost floor passes the API server's cost limits skipped
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
MAX_BYTES = yamlio.MAX_FABRIC_FILE_BYTES   # the largest YAML yamlio parses (a CRD is at most a few MB)
# A chart archive is read no further than this many uncompressed bytes or members (Volcano's chart:
# about 1 MB in some 150 members); a gzip bomb stops there instead of decompressing on.
MAX_ARCHIVE_BYTES = 8 * MAX_BYTES
MAX_ARCHIVE_MEMBERS = 10_000


def cache_dir() -> Path:
    return cache_root() / "admission"


def pinned() -> dict[str, dict]:
    """sha256 -> {"release", "path", "url"} for every pinned file."""
    data = yaml.load(SOURCES.read_text(encoding="utf-8"), Loader=_Loader)
    out = {}
    for source in data["sources"]:
        for f in source.get("files", []):
            out[f["sha256"]] = {"release": source["release"], "path": f["path"], "url": f["url"]}
    return out


@dataclass
class RuleSources:
    """The folders rules are read from and why."""

    policies: Path | None     # folder with the Volcano policy files or chart archives
    crds: Path | None
    origin: str               # "option/env" or "cache"
    problems: list[str] = field(default_factory=list)


def locate() -> RuleSources:
    configured = os.environ.get(ENV_DIR)
    crd_env = os.environ.get(ENV_CRDS)
    if configured:
        base, origin = Path(configured), f"${ENV_DIR} / --admission-dir ({configured})"
    else:
        base, origin = cache_dir(), f"the cache {cache_dir()}"
    problems = []
    if not base.is_dir():
        problems.append(f"{base} does not exist")
    crds = Path(crd_env) if crd_env else base / "crds"
    if crd_env and not crds.is_dir():
        problems.append(f"${ENV_CRDS} {crds} does not exist")
    if configured and (base / "admission").is_dir() and not (base / "volcano").is_dir():
        base = base / "admission"   # one folder holding both: DIR/admission/volcano/*.yaml beside DIR/crds/
    return RuleSources(policies=base if base.is_dir() else None, crds=crds if crds.is_dir() else None,
                    origin=origin, problems=problems)


def _sha(data: bytes) -> str:
    import hashlib   # only to match files to their pins when the index is extracted: OpenSSL costs 3 ms

    return hashlib.sha256(data).hexdigest()


def _too_large(label: str, size: int, problems: list[str]) -> bool:
    if size <= MAX_BYTES:
        return False
    problems.append(f"{label}: not read, {size} bytes (at most {MAX_BYTES})")
    return True


def _read(path: Path, label: str, problems: list[str]) -> bytes | None:
    """A file's bytes within MAX_BYTES, read by yamlio's bounded reader; a folder named like a file,
    a broken link or an unreadable file is a problem, not a crash."""
    try:
        return yamlio.read_bytes(path, label, MAX_BYTES)
    except InputError as exc:
        problems.append(f"{label}: not read, {exc.message}")
        return None


def policy_documents(folder: Path, problems: list[str]) -> list[tuple[str, bytes]]:
    """``(label, bytes)`` of every Volcano policy file under ``folder``: ``volcano/*.yaml`` files
    and the ``policy/*.yaml`` members of chart archives (``*.tgz``). What cannot be read is added
    to ``problems``."""
    out = []
    volcano = folder / "volcano"
    if volcano.is_dir():
        for p in sorted(volcano.glob("*.yaml")):
            if (data := _read(p, str(p.relative_to(folder)), problems)) is not None:
                out.append((str(p.relative_to(folder)), data))
    for archive in sorted(folder.rglob("*.tgz")):
        if (packed := _read(archive, archive.name, problems)) is None:   # a FIFO, a folder, too large
            continue
        import tarfile   # only chart archives need it

        try:
            with tarfile.open(fileobj=io.BytesIO(packed), mode="r:gz") as tar:
                for number, member in enumerate(tar, 1):   # lazily: each member's end is checked first
                    if number > MAX_ARCHIVE_MEMBERS or member.offset_data + member.size > MAX_ARCHIVE_BYTES:
                        problems.append(f"{archive.name}: read only its first {number - 1} members (at most "
                                        f"{MAX_ARCHIVE_MEMBERS} members and {MAX_ARCHIVE_BYTES} bytes)")
                        break
                    label = f"{archive.name}:{member.name}"
                    if member.isfile() and fnmatch.fnmatch(member.name, "*/policy/*.yaml") \
                            and member.name.count("/policy/") == 1 and "/charts/" not in member.name \
                            and not _too_large(label, member.size, problems):
                        out.append((label, tar.extractfile(member).read()))
        except (tarfile.TarError, OSError, EOFError) as exc:
            problems.append(f"{archive.name}: not read ({exc})")
    return out


def _documents(label: str, data: bytes, problems: list[str]) -> list:
    """The YAML documents of one upstream file, within yamlio's bounds; else none and a problem."""
    try:
        text = data.decode("utf-8")
        yamlio.check_bounds(text, label)
        return list(yaml.load_all(text, Loader=yamlio.BoundedLoader))   # integers of at most 30 digits
    except (UnicodeDecodeError, yaml.YAMLError, InputError, ValueError) as exc:
        problems.append(f"{label}: not read ({' '.join(str(exc).split())[:200]})")
        return []


def _strings(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _rules_wrong(match: object, where: str) -> str | None:
    """What is wrong with a matchConstraints / matchResources block for the engine, or None."""
    if match is None:
        return None
    if not isinstance(match, dict):
        return f"{where} is not a mapping"
    for key in ("resourceRules", "excludeResourceRules"):
        rules = match.get(key)
        if rules is None:
            continue
        if not isinstance(rules, list) or not all(isinstance(r, dict) for r in rules):
            return f"{where}.{key} is not a list of mappings"
        for i, rule in enumerate(rules):
            for part in ("operations", "apiGroups", "apiVersions", "resources"):
                # required and non-empty (the engine read an absent one as "*")
                if not _strings(rule.get(part)) or not rule[part]:
                    return f"{where}.{key}[{i}].{part} is not a non-empty list of strings"
    return None


def _spec_wrong(kind: str, spec: dict) -> str | None:
    """What the API server's validation of a policy or binding would refuse and the engine cannot
    read (a list where a mapping belongs, an expression that is no string), or None."""
    if kind in BINDING_KINDS:
        if not isinstance(spec.get("policyName"), str):
            return "spec.policyName is not a string"
        if spec.get("validationActions") is not None and not _strings(spec["validationActions"]):
            return "spec.validationActions is not a list of strings"
        return _rules_wrong(spec.get("matchResources"), "spec.matchResources")
    need = {"matchConditions": ("name", "expression"), "variables": ("name", "expression"),
            "validations": ("expression",), "mutations": ()}
    for key, fields in need.items():
        items = spec.get(key)
        if items is None:
            continue
        if not isinstance(items, list) or not all(isinstance(item, dict) for item in items):
            return f"spec.{key} is not a list of mappings"
        for i, item in enumerate(items):
            for part in fields:
                if not isinstance(item.get(part), str):
                    return f"spec.{key}[{i}].{part} is not a string"
            for part in ("message", "messageExpression", "patchType"):
                if item.get(part) is not None and not isinstance(item[part], str):
                    return f"spec.{key}[{i}].{part} is not a string"
            patch = item.get("jsonPatch")
            if patch is not None and not (isinstance(patch, dict) and isinstance(patch.get("expression", ""), str)):
                return f"spec.{key}[{i}].jsonPatch is not a mapping with a string expression"
            for where, source in _expressions(item):
                if (wrong := limits.problem(source)) is not None:
                    return f"spec.{key}[{i}].{where} {wrong}"
    return _rules_wrong(spec.get("matchConstraints"), "spec.matchConstraints")


def _cost_wrong(spec: dict) -> str | None:
    """Why every evaluation of the policy fails by the API server's CEL cost limits (or what the
    `cel` library cannot build), known before any object is seen (``cost.policy_problem``); None
    otherwise. A messageExpression that fails falls back to the message: not counted."""
    variables = [(item["name"], item["expression"]) for item in spec.get("variables") or []]
    expressions = [(f"spec.{key}[{i}].{where}", source)
                   for key in ("matchConditions", "validations", "mutations")
                   for i, item in enumerate(spec.get(key) or [])
                   for where, source in _expressions(item) if where != "messageExpression"]
    return cost.policy_problem(variables, expressions)


def _expressions(item: dict) -> list[tuple[str, str]]:
    """``(field, CEL source)`` of every expression in one matchCondition, variable, validation or
    mutation (its types already checked)."""
    out = [(part, item[part]) for part in ("expression", "messageExpression") if isinstance(item.get(part), str)]
    for part in ("jsonPatch", "applyConfiguration"):
        if isinstance(item.get(part), dict) and isinstance(item[part].get("expression"), str):
            out.append((f"{part}.expression", item[part]["expression"]))
    return out


def _name(doc: dict) -> str | None:
    name = doc.get("metadata", {}).get("name") if isinstance(doc.get("metadata"), dict) else None
    return name if isinstance(name, str) else None


def _inputs(loc: RuleSources) -> list[Path]:
    files = []
    if loc.policies is not None:
        volcano = loc.policies / "volcano"
        if volcano.is_dir():
            files += sorted(volcano.glob("*.yaml"))
        files += sorted(loc.policies.rglob("*.tgz"))
    if loc.crds is not None:
        files += sorted(loc.crds.rglob("*.yaml"))
    return files


def _is_skipped_policy_file(label: str) -> bool:
    return Path(label.split(":")[-1]).name.startswith("templates")


def extract_policies(docs: list[tuple[str, bytes]], pins: dict[str, dict], problems: list[str]) -> list[dict]:
    """Admission policies as plain data, one entry per binding with that binding's actions and match
    resources (the API server evaluates a policy once for every binding that names it); a policy no
    binding names is kept with ``bound`` false and does nothing."""
    policies: list[dict] = []
    bindings: dict[object, list[dict]] = {}
    for label, data in docs:
        if _is_skipped_policy_file(label):
            continue
        pin = pins.get(_sha(data))
        release = pin["release"] if pin else "unpinned"
        for number, doc in enumerate(_documents(label, data, problems), 1):
            if not isinstance(doc, dict) or doc.get("kind") not in BINDING_KINDS + POLICY_KINDS:
                continue
            kind, spec = doc.get("kind"), doc.get("spec") or {}
            if _name(doc) is None or not isinstance(spec, dict):
                problems.append(f"{label}: document {number}: a {kind} without metadata.name or spec, skipped")
            elif (wrong := _spec_wrong(kind, spec)) is not None:
                problems.append(f"{label}: document {number}: {kind} {_name(doc)!r} skipped: {wrong} (the API "
                                "server refuses it)")
            elif kind in BINDING_KINDS:
                bindings.setdefault(spec.get("policyName"), []).append(spec)
            elif (wrong := _cost_wrong(spec)) is not None:
                problems.append(f"{label}: document {number}: {kind} {_name(doc)!r} not evaluated: {wrong}")
            elif _name(doc) not in {p["name"] for p in policies}:
                policies.append({
                    "kind": kind, "name": _name(doc), "source": label, "release": release,
                    "failurePolicy": spec.get("failurePolicy", "Fail"),
                    "matchConstraints": spec.get("matchConstraints") or {},
                    "matchConditions": spec.get("matchConditions") or [],
                    "variables": spec.get("variables") or [],
                    "validations": spec.get("validations") or [],
                    "mutations": spec.get("mutations") or [],
                    "paramKind": spec.get("paramKind"),
                })
    out = []
    for policy in policies:
        for binding in bindings.get(policy["name"]) or [None]:
            out.append({**policy, "bound": binding is not None,
                        "validationActions": (binding or {}).get("validationActions", ["Deny"]),
                        "bindingMatch": (binding or {}).get("matchResources") or {}})
    return out


def _walk(node: dict, path: list, out: list) -> None:
    if not isinstance(node, dict):
        return
    rules = node.get("x-kubernetes-validations")
    for rule in rules if isinstance(rules, list) else []:
        if not isinstance(rule, dict) or not isinstance(rule.get("rule"), str):
            continue   # the API server refuses such a CRD; nothing here to evaluate
        out.append({"path": list(path), **{k: rule[k] for k in ("rule", "message", "messageExpression", "reason",
                                                                 "fieldPath", "optionalOldSelf") if k in rule}})
    properties = node.get("properties")
    for name, child in (properties.items() if isinstance(properties, dict) else ()):
        _walk(child, path + [name], out)
    if isinstance(node.get("items"), dict):
        _walk(node["items"], path + [["items"]], out)
    if isinstance(node.get("additionalProperties"), dict):
        _walk(node["additionalProperties"], path + [["additionalProperties"]], out)


def extract_crd_rules(folder: Path, pins: dict[str, dict], problems: list[str]) -> list[dict]:
    """One entry per served CRD version that has `x-kubernetes-validations` rules, and the plural
    of every CRD kind (to match admission policies' resource rules)."""
    out = []
    for file in sorted(folder.rglob("*.yaml")):
        label = str(file.relative_to(folder))
        data = _read(file, label, problems)
        if data is None or b"CustomResourceDefinition" not in data:
            continue
        pin = pins.get(_sha(data))
        for number, doc in enumerate(_documents(label, data, problems), 1):
            if not isinstance(doc, dict) or doc.get("kind") != "CustomResourceDefinition":
                continue
            crd = _crd_names(doc)
            if crd is None:
                problems.append(f"{label}: document {number}: a CustomResourceDefinition without metadata.name, "
                                "spec.group, spec.names.kind/plural or named versions, skipped")
                continue
            versions = []
            for version in doc["spec"]["versions"]:
                rules: list = []
                _walk((version.get("schema") or {}).get("openAPIV3Schema") or {}, [], rules)
                versions.append((version, rules))
            if (wrong := _crd_rules_wrong(versions)) is not None:
                said = wrong.removesuffix("; skipped")
                problems.append(f"{label}: document {number}: CustomResourceDefinition {crd['crd']!r} skipped: "
                                + (said if said != wrong else f"{wrong} (the API server refuses it)"))
                continue
            for version, rules in versions:
                out.append({**crd, "source": label, "release": pin["release"] if pin else "unpinned",
                            "version": version["name"], "rules": rules})
    return out


def _crd_rules_wrong(versions: list[tuple[dict, list[dict]]]) -> str | None:
    """The first rule of a CRD over the API server's CEL limits (size, depth, and the cost floor of
    ``cost.rule_problem``), or None."""
    for version, rules in versions:
        for rule in rules:
            where = ".".join(p if isinstance(p, str) else p[0] for p in rule["path"]) or "<root>"
            for part in ("rule", "messageExpression"):
                if isinstance(rule.get(part), str) and (wrong := limits.problem(rule[part])) is not None:
                    return f"version {version['name']}: the {part} at {where} {wrong}"
            if (wrong := cost.rule_problem(rule)) is not None:   # says what the API server does
                return f"version {version['name']}: at {where}, {wrong}; skipped"
    return None


def _crd_names(doc: dict) -> dict | None:
    """``crd``, ``group``, ``kind`` and ``plural`` of a well-formed CRD (its versions named mappings)."""
    spec = doc.get("spec")
    names = spec.get("names") if isinstance(spec, dict) else None
    versions = spec.get("versions") if isinstance(spec, dict) else None
    fields = {"crd": _name(doc), "group": spec.get("group") if isinstance(spec, dict) else None,
              "kind": names.get("kind") if isinstance(names, dict) else None,
              "plural": names.get("plural") if isinstance(names, dict) else None}
    if not all(isinstance(v, str) for v in fields.values()) or not isinstance(versions, list) \
            or not all(isinstance(v, dict) and isinstance(v.get("name"), str) for v in versions):
        return None
    return fields


@dataclass
class Index:
    """Every upstream rule found, as plain data (what the engine compiles)."""

    policies: list[dict]
    crds: list[dict]
    location: RuleSources
    missing: list[str]        # what could not be found, for the one advisory line


def load_index(loc: RuleSources | None = None) -> Index:
    loc = loc or locate()
    # The pinned sources file counts too: a new pin is a new index.
    key = cache.files_key(f"admission-index-{INDEX_VERSION}", [SOURCES, *_inputs(loc)])
    data = cache.load_json("admission-index", key, valid_index)   # a wrong-shaped entry is never used
    if not isinstance(data, dict):
        pins, problems = pinned(), []
        policies = extract_policies(policy_documents(loc.policies, problems), pins, problems) if loc.policies else []
        data = {"policies": policies, "crds": extract_crd_rules(loc.crds, pins, problems) if loc.crds else [],
                "problems": problems}
        if data["policies"] or data["crds"]:   # a read-only home only costs the extraction next time
            cache.store_json("admission-index", key, data)
    missing = list(loc.problems) + data.get("problems", [])
    if not data["policies"] and loc.policies is not None:   # no folder at all: its problem says it
        missing.append(f"no Volcano admission policies in {loc.policies}")
    if not data["crds"] and (loc.policies is not None or os.environ.get(ENV_CRDS)):
        missing.append(f"no CRDs in {loc.crds}" if loc.crds else
                       f"no CRDs (none in ${ENV_CRDS}, nor in a crds/ folder of the admission folder)")
    return Index(policies=data["policies"], crds=data["crds"], location=loc, missing=list(dict.fromkeys(missing)))
