"""Run the rules over manifests with a stack's policy settings; report in several formats."""
from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Iterable

import jsonschema

from modules.core import yamlio
from modules.core.bundle import Bundle, ChartRelease, Resource
from modules.core.errors import InputError, show
from modules.core.wire import release_manifest

from .framework import (ADVISORY, DISABLED, LEVELS, MANDATORY, NOTE, CheckContext, Finding, NotChecked, Rule,
                        Violation, resource_id)
from .rules import RULES

POLICY_DIR = Path(__file__).resolve().parent


def release_object(release: ChartRelease) -> dict:
    """A chart release as rules see it, in-process and inside the pack alike."""
    return release_manifest(release.name, release.namespace, release.chart, release.repository, release.version,
                            release.values)


def bundle_objects(bundle: Bundle) -> list[dict]:
    """Every object of a bundle in order, chart releases included. Kustomize overlays are left out:
    their objects come from a pinned remote base that is only built at apply time."""
    return [release_object(i) if isinstance(i, ChartRelease) else i.obj
            for i in bundle.items if isinstance(i, (ChartRelease, Resource))]


@dataclass
class PolicySettings:
    """Per-rule enforcement level and settings, from ``policies/config.<stack>.json``."""

    levels: dict[str, str] = field(default_factory=dict)
    configs: dict[str, dict] = field(default_factory=dict)

    def level(self, rule: Rule) -> str:
        return self.levels.get(rule.id, rule.enforcement)

    def config(self, rule: Rule) -> dict:
        return {**schema_defaults(rule), **self.configs.get(rule.id, {})}


def schema_defaults(rule: Rule) -> dict:
    """A rule's settings before any file: its config schema's defaults, then its own defaults."""
    return {**{k: v["default"] for k, v in rule.config_schema.items() if "default" in v}, **rule.config_defaults}


def config_path(stack: str, folder: Path | None = None) -> Path:
    return (folder or POLICY_DIR) / f"config.{stack}.json"


def parse_settings(data: object, file: str, rules: Iterable[Rule] = RULES) -> PolicySettings:
    """Pulumi's policy-pack-config format: ``{"all": level, "<rule>": level | {"enforcementLevel": ..., ...}}``."""
    rules = {r.id: r for r in rules}
    if not isinstance(data, dict):
        raise InputError(file, "(document)", f"expected a JSON object keyed by rule id, got {show(data)}")
    settings = PolicySettings()
    if "all" in data:
        if data["all"] not in LEVELS:
            raise InputError(file, "all", f"expected one of {', '.join(LEVELS)}, got {show(data['all'])}")
        settings.levels = {rid: data["all"] for rid in rules}
    for key, value in data.items():
        if key == "all":
            continue
        if key not in rules:
            import difflib
            close = difflib.get_close_matches(key, list(rules), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise InputError(file, key, f"unknown rule {key!r}{hint}")
        rule = rules[key]
        if isinstance(value, str):
            value = {"enforcementLevel": value}
        if not isinstance(value, dict):
            raise InputError(file, key, f"expected a level or an object with enforcementLevel, got {show(value)}")
        level = value.get("enforcementLevel", settings.levels.get(key, rule.enforcement))
        if level not in LEVELS:
            raise InputError(file, f"{key}.enforcementLevel",
                              f"expected one of {', '.join(LEVELS)}, got {show(level)}")
        settings.levels[key] = level
        props = {k: v for k, v in value.items() if k != "enforcementLevel"}
        schema = {"type": "object", "properties": rule.config_schema, "additionalProperties": False}
        errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(props), key=lambda e: list(e.path))
        if errors:
            err = errors[0]
            sub = ".".join(str(p) for p in err.absolute_path)
            raise InputError(file, f"{key}.{sub}" if sub else key, err.message)
        settings.configs[key] = props
    return settings


def read_settings_file(stack: str, folder: Path | None = None) -> tuple[object, str]:
    """The raw JSON of ``policies/config.<stack>.json`` (None when there is none) and its shown name;
    ``folder`` is another checkout's ``policies/`` (``trainstack diff``)."""
    path = config_path(stack, folder)
    shown = f"policies/{path.name}"
    if not path.is_file():
        return None, shown
    text = yamlio.read_text(path, shown)
    try:
        return json.loads(text, parse_constant=yamlio.refuse_constant), shown
    except json.JSONDecodeError as exc:
        raise InputError(shown, f"line {exc.lineno}, column {exc.colno}", f"invalid JSON: {exc.msg}") from None
    except (ValueError, RecursionError):
        return yamlio.loads_json(text, shown), shown   # names the bound it broke


def load_settings(stack: str, folder: Path | None = None) -> PolicySettings:
    """The policy settings of ``stack``: ``policies/config.<stack>.json`` of ``folder`` (another
    checkout's ``policies/``, ``trainstack diff``) when there is one, else the installed pack's; the
    rules' defaults when neither exists. A file that is there but wrong is an ``InputError`` naming it."""
    data, shown = read_settings_file(stack, folder)
    if data is None and folder is not None:
        data, shown = read_settings_file(stack)
    return PolicySettings() if data is None else parse_settings(data, shown)


STACK = "stack"   # the resource named by a finding that concerns the whole stack


class LazyObjects(Sequence):
    """The objects a rule may consult, built on first use: most rules never look beyond the object
    they judge, and building the stack's context for every object would make the pack quadratic."""

    def __init__(self, build: Callable[[], list[dict]]):
        self._build, self._items = build, None

    def _get(self) -> list[dict]:
        if self._items is None:
            self._items = self._build()
        return self._items

    def __getitem__(self, index):
        return self._get()[index]

    def __len__(self) -> int:
        return len(self._get())

    def __iter__(self):
        return iter(self._get())

    def __bool__(self) -> bool:
        return bool(self._get())


def _rule_context(ctx: CheckContext, objects: list[dict],
                  context: "list[dict] | Callable[[], list[dict]]", memo: dict | None = None) -> CheckContext:
    """``ctx`` for one evaluation of ``objects``: its manifests, and ``memo`` (a check's, shared by
    its rules) or a memo of its own."""
    build = context if callable(context) else (lambda: list(context))
    # ``replace(ctx, manifests=..., memo={})`` without its per-call field walk (the pack does this
    # for every policy of every Analyze): CheckContext has no __post_init__ nor init-only fields
    rctx = object.__new__(CheckContext)
    rctx.__dict__.update(ctx.__dict__)
    rctx.manifests, rctx.memo = LazyObjects(lambda: list(objects) + build()), ({} if memo is None else memo)
    return rctx


def _stack_objects(objects: list[dict]) -> list[dict]:
    return [o for o in objects if isinstance(o, dict) and o.get("kind")]


def prepare(rule: Rule, objects: list[dict], ctx: CheckContext,
            context: "list[dict] | Callable[[], list[dict]]" = (), memo: dict | None = None) -> None:
    """Let a stack rule begin its work (``Rule.prepare``) with what ``evaluate`` will hand it (with
    the same ``memo``, what it computes there is not computed again). Never fails: the rule meets
    and reports any problem when it runs."""
    if rule.prepare is not None and rule.is_stack_rule:
        try:
            rule.prepare(_stack_objects(objects), _rule_context(ctx, objects, context, memo))
        except Exception:   # noqa: BLE001 - the rule itself runs next and says what went wrong
            pass


def evaluate(rule: Rule, objects: list[dict], ctx: CheckContext,
             context: "list[dict] | Callable[[], list[dict]]" = (), memo: dict | None = None
             ) -> list[tuple[dict | None, Finding | NotChecked]]:
    """Run one rule. ``objects`` are judged; ``context`` objects (e.g. the stack's bundle when the
    pack checks a user's manifests; a callable to build them only if a rule asks) are only
    consulted, and findings on them are dropped. ``memo``: what ``ctx.remember`` keeps, when the
    caller shares it among the rules of one check (``run_rules``); else the evaluation's own.
    Returns ``(object or None, finding or note)`` in the order the rule produced them."""
    rctx = _rule_context(ctx, objects, context, memo)
    out: list[tuple[dict | None, Finding | NotChecked]] = []
    if rule.is_stack_rule:
        judged = {id(o) for o in objects}
        for item in rule.check_stack(_stack_objects(objects), rctx):
            if item.obj is None or id(item.obj) in judged:
                out.append((item.obj, item))
    else:
        for obj in objects:
            if rule.applies_to(obj):
                out.extend((obj, item) for item in rule.check(obj, rctx))
    return out


def to_violation(rule: Rule, level: str, obj: dict | None, item: Finding | NotChecked,
                 source: str | None = None, where: "dict | None" = None) -> Violation:
    """``where``: source, line, column and origin from a locator (they override ``source``)."""
    note = isinstance(item, NotChecked)
    return Violation(rule=rule.id, level=NOTE if note else level, severity=rule.severity,
                     resource=resource_id(obj) if obj else STACK, path=item.path,
                     message=item.reason if note else item.message, **{"source": source, **(where or {})})


# (object or None, field path) -> {"source", "line", "column", "origin"} or None
Locate = Callable[[dict | None, str], "dict | None"]


def run_rules(objects: list[dict], ctx: CheckContext, settings: PolicySettings, rules: Iterable[Rule] = RULES,
              sources: dict[int, str] | None = None, context: list[dict] = (),
              locate: Locate | None = None) -> list[Violation]:
    """Every violation (and note), in rule order then object order."""
    sources = sources or {}
    enabled = [(rule, level, replace(ctx, config=settings.config(rule)))
               for rule in rules if (level := settings.level(rule)) != DISABLED]
    # One check: every rule sees the same objects, so what one remembers about them (the objects as
    # admitted, mutated once; the install and cluster they describe) serves the others.
    memo: dict = {}
    for rule, _, rctx in enabled:   # work some rules hand elsewhere starts first, and overlaps the others
        prepare(rule, objects, rctx, context, memo)
    # Those rules run last, so that their work elsewhere has the others' time to finish; the
    # violations still come in rule order.
    found: list[list[Violation]] = [[] for _ in enabled]
    for number in sorted(range(len(enabled)), key=lambda n: enabled[n][0].prepare is not None):
        rule, level, rctx = enabled[number]
        found[number] = [to_violation(rule, level, obj, item, sources.get(id(obj)) if obj is not None else None,
                                      locate(obj, item.path) if locate is not None else None)
                         for obj, item in evaluate(rule, objects, rctx, context, memo)]
    return [violation for violations in found for violation in violations]


def render_error_violation(err: InputError, settings: PolicySettings,
                           rules: Iterable[Rule] = RULES) -> Violation | None:
    """A stack the renderer refuses for a mistake a rule also catches (an invalid NCCL value, a tier
    the fabric lacks, a gang that can never fit) is reported as that rule's violation, so `check`
    and `preview` give the rule id and exit 1 while `render` exits 2. Always mandatory: a stack
    that does not render is never accepted, whatever level the settings give the rule for
    manifests. None for other errors and for a disabled rule (then the error stands: exit 2)."""
    rule = next((r for r in rules if r.id == err.rule), None)
    if rule is None or settings.level(rule) == DISABLED:
        return None
    return Violation(rule=rule.id, level=MANDATORY, severity=rule.severity, resource="stack",
                     path=err.path, message=f"{err} (the stack does not render until this is fixed)",
                     source=err.file)


def has_mandatory(violations: Iterable[Violation]) -> bool:
    return any(v.level == MANDATORY for v in violations)


def summary(name: str, violations: list[Violation], objects: int) -> str:
    mandatory = sum(v.level == MANDATORY for v in violations)
    advisory = sum(v.level == ADVISORY for v in violations)
    notes = sum(v.level == NOTE for v in violations)
    tail = f", {notes} not checked" if notes else ""
    return f"{name}: {mandatory} mandatory, {advisory} advisory violation(s) in {objects} object(s){tail}"
