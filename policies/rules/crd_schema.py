"""Custom resources as apiextensions-apiserver admits them on create: the served version's
structural schema (modules/upstream/apiextensions) and the fate of unknown fields under the field
validation the stack's engine sends.

Two rules: ``crd-schema`` (mandatory) reports what the API server refuses: a schema error (types,
enum, pattern, format, bounds, required, list-type uniqueness, embedded resources), judged after
decoding (unknown fields pruned, schema defaults, nulls) and after the mutating webhooks, and an
unknown field where the engine's request refuses it (kubectl's Strict, or a server-side apply into a
schema that declares its properties). ``crd-unknown-fields`` (advisory) reports unknown fields the
API server prunes with a warning. The CRDs are read from where the CEL rules of the CRDs are read
(``--admission-dir DIR``/``crds``, ``$TRAINSTACK_CRD_DIR``; policies/admission/loader.py).
"""
from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from pathlib import Path
from typing import Iterator

from modules.upstream import apiextensions
from modules.upstream.apiextensions import crds, fieldvalidation
from modules.upstream.chain import mutate as _mutate
from modules.upstream.field import ErrorType, FieldError
from modules.core.vocabulary.go import go_quote

from ..framework import ADVISORY, MANDATORY, CheckContext, Finding, NotChecked, Rule, api_group, meta, where


RULE_ID = "crd-schema"
UNKNOWN_RULE_ID = "crd-unknown-fields"
_UPSTREAM = "apiextensions-apiserver v0.35.0"
_TYPE_FIX = ("write the value in the type or format the schema names (a number without quotes, a string in "
             "quotes, a list or a mapping)")
_FIX = {
    ErrorType.NOT_SUPPORTED: "use one of the supported values",
    ErrorType.REQUIRED: "set the field",
    ErrorType.TOO_LONG: "shorten the value",
    ErrorType.TOO_MANY: "remove entries",
    ErrorType.DUPLICATE: "give each entry of the list its own key",
}

_SCHEMAS: dict[str, crds.Schemas] = {}


def schemas(ctx: CheckContext | None = None) -> crds.Schemas:
    """The CRD schemas of the configured folder, read once per process and folder; the folder is
    located once per rule evaluation (``ctx``), not once per object."""
    from ..admission.loader import locate

    folder = ctx.remember("crd-schema:folder", lambda: locate().crds) if ctx is not None else locate().crds
    key = str(folder)
    if key not in _SCHEMAS:
        _SCHEMAS[key] = crds.load(Path(folder) if folder else None)
    return _SCHEMAS[key]


def _entry(obj: dict, ctx: CheckContext | None = None) -> dict | None:
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str) or "/" not in api_version:
        return None
    return schemas(ctx).find(api_version, kind)


def _enabled(ctx: CheckContext):
    """The Volcano install (its registered mutating webhooks) the checked objects describe."""
    from .admission import stack_install

    return stack_install(ctx)


# Both rules and upstream-admission ask about the same objects in one run: the answer is kept by a
# digest of the object's content (its canonical JSON) and the enabled webhooks, for the last
# _JUDGED_MAX objects (a 16,384-node fabric renders a few thousand custom resources).
_JUDGED: OrderedDict[tuple[bytes, frozenset | None], object] = OrderedDict()
_JUDGED_MAX = 65536


def _content(obj: dict) -> bytes:
    text = json.dumps(obj, sort_keys=True, separators=(",", ":"), default=repr)
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=20).digest()


def admission(obj: dict, ctx: CheckContext) -> tuple[dict, apiextensions.Admission] | None:
    """(the CRD entry, what the API server makes of ``obj``), or None for an object of no known CRD.
    :class:`apiextensions.LimitError` for an object beyond the bounds evaluated."""
    entry = _entry(obj, ctx)
    if entry is None:
        return None
    enabled = _enabled(ctx)
    try:
        key = (_content(obj), enabled)
    except (TypeError, ValueError, RecursionError):   # not JSON-like (a cycle, mixed key types): not kept
        key = None
    outcome = _JUDGED.get(key) if key is not None else None
    if outcome is None:
        # With the status subresource the API server resets .status on create (PrepareForCreate).
        body = {k: v for k, v in obj.items() if k != "status"} if entry.get("status_subresource") else obj
        try:
            outcome = apiextensions.admit(body, entry["schema"], lambda o: _mutate(o, enabled))
        except apiextensions.LimitError as exc:
            outcome = exc
        if key is not None:
            _JUDGED[key] = outcome
            while len(_JUDGED) > _JUDGED_MAX:
                _JUDGED.popitem(last=False)
    if isinstance(outcome, apiextensions.LimitError):
        raise outcome
    return entry, outcome


def refused_by_schema(obj: dict, ctx: CheckContext) -> bool:
    """Whether the API server refuses ``obj`` in its schema validation, before any validating
    admission (Volcano's webhooks and policies) runs, or has no resource for its version at all:
    admission policies then never see it."""
    try:
        judged = admission(obj, ctx)
    except apiextensions.LimitError:
        return False
    if judged is None:   # a kind of a CRD read, in a version none serves: no resource to admit it to
        return any(True for _ in _unserved(obj, ctx))
    return bool(judged[1].errors)


def _path(error: FieldError) -> str:
    return "" if error.field == "<nil>" else error.field


def _schema_findings(obj: dict, ctx: CheckContext) -> Iterator[Finding | NotChecked]:
    try:
        judged = admission(obj, ctx)
    except apiextensions.LimitError as exc:
        yield NotChecked(f"{where(obj, '')}: not schema-checked: {exc}")
        return
    if judged is None:
        yield from _unserved(obj, ctx)
        return
    entry, result = judged
    crd = f"CRD {entry['crd']} ({entry['source']})"
    for error in result.errors:
        path = _path(error)
        fix = _TYPE_FIX if apiextensions.is_type_error(error) else \
            _FIX.get(error.type, "change the value so that the quoted rule of the schema holds")
        yield Finding(path, f"{where(obj, path)}: the API server rejects it: \"{error.error()}\" ({_UPSTREAM}, "
                            f"the structural schema of {crd}); {fix}.")
    engine = _engine(ctx)
    for text, in_struct, (level, words) in _unknown(obj, result, engine):
        if level == fieldvalidation.REFUSED:
            yield Finding(text, f"{where(obj, text)}: unknown field: the API server rejects it: \"{words}\" "
                                f"(sent by {engine.name}: {engine.sends}; {crd} declares no such field); remove "
                                "it or correct its name.")


def _unserved(obj: dict, ctx: CheckContext) -> Iterator[Finding]:
    """A kind the CRDs define, in a version none of them serves: the API server has no such resource
    (apimachinery's ``NoKindMatchError``; kubectl stops before sending anything)."""
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str) or "/" not in api_version:
        return
    served = schemas(ctx).served_versions(api_version.rpartition("/")[0], kind)
    if served:
        group = api_version.rpartition("/")[0]
        yield Finding("apiVersion", f"{where(obj, 'apiVersion')}: the API server has no such resource: \"no matches "
                                    f"for kind {go_quote(kind)} in version {go_quote(api_version)}\" (the pinned CRD "
                                    f"serves {', '.join(f'{group}/{v}' for v in served)}); use a served version.")


def _engine(ctx: CheckContext) -> fieldvalidation.Engine:
    gitops = ctx.stack.values.get("gitops") if ctx.stack is not None else None
    key = gitops.get("engine") if isinstance(gitops, dict) else None
    return fieldvalidation.engine_for(key, ctx.stack is not None)


def _unknown(obj: dict, result: apiextensions.Admission, engine: fieldvalidation.Engine):
    md = meta(obj)
    gvk = f"{api_group(obj)}/{str(obj.get('apiVersion')).rpartition('/')[2]}, Kind={obj.get('kind')}"
    for unknown in result.unknown:
        yield unknown.path, unknown.in_struct, fieldvalidation.outcome(
            engine, unknown.path, unknown.in_struct, str(md.get("namespace") or ""), str(md.get("name") or ""), gvk,
            unknown.apply_path)


def _unknown_findings(obj: dict, ctx: CheckContext) -> Iterator[Finding]:
    try:
        judged = admission(obj, ctx)
    except apiextensions.LimitError:
        return   # crd-schema says it was not checked
    if judged is None:
        return
    entry, result = judged
    engine = _engine(ctx)
    for text, _, (level, words) in _unknown(obj, result, engine):
        if level == fieldvalidation.PRUNED:
            yield Finding(text, f"{where(obj, text)}: unknown field: the API server drops it and answers the "
                                f"warning \"{words}\" (sent by {engine.name}: {engine.sends}; CRD {entry['crd']} "
                                "declares no such field), so the setting has no effect; remove it or correct its "
                                "name.")


RULES = (
    Rule(
        id=RULE_ID,
        description="Every custom resource passes the structural schema of its CRD's served version, as the API "
                    "server validates it on create after decoding and the mutating webhooks: types (int-or-string, "
                    "nullable), enum, pattern, format, numeric and length bounds, required fields, list-type "
                    "set/map uniqueness, embedded resources; names a version its CRD serves; and carries no "
                    "unknown field where the engine's request refuses one (kubectl's Strict field validation, a "
                    "server-side apply).",
        why="apiextensions-apiserver validates every custom resource against the CRD's openAPIV3Schema before "
            "any admission webhook or policy runs; an object that breaks it (a Queue weight above 65535, "
            "`minAvailable: \"two\"`, a duplicate key of a map-list) is refused, and `pulumi up` or the GitOps "
            "sync fails after part of the stack was applied.",
        fix="Follow the message: it quotes the API server's field error. Unknown fields: remove them or correct "
            "their names (the CRD of the pinned release does not declare them).",
        severity="high", enforcement=MANDATORY, check=_schema_findings),
    Rule(
        id=UNKNOWN_RULE_ID,
        description="Custom resources carry no field their CRD's schema does not declare where the API server "
                    "would drop it with a warning (the engine sends no Strict field validation).",
        why="The API server prunes fields the structural schema does not declare; without Strict field "
            "validation the object is admitted without them (a stale `mlPolicy.torch.numProcPerNode` copied from "
            "an older Trainer document has no effect) and only a warning says so.",
        fix="Remove the field or correct its name; check the CRD of the pinned release for where the setting "
            "moved.",
        severity="medium", enforcement=ADVISORY, check=_unknown_findings),
)
