"""Run the rules over manifests with a stack's policy settings; report in several formats."""
from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Iterable

import jsonschema

from modules.core.bundle import Bundle, ChartRelease
from modules.core.errors import ConfigError, show

from .framework import ADVISORY, DISABLED, LEVELS, MANDATORY, CheckContext, Rule, Violation, resource_id
from .rules import RULES

POLICY_DIR = Path(__file__).resolve().parent


def release_object(release: ChartRelease) -> dict:
    """A chart release as rules see it, in-process and inside the pack alike."""
    return {"apiVersion": "helm.sh/v3", "kind": "Release",
            "metadata": {"name": release.name, "namespace": release.namespace},
            "spec": {"chart": release.chart, "repository": release.repository, "version": release.version,
                     "values": release.values}}


def bundle_objects(bundle: Bundle) -> list[dict]:
    """Every object of a bundle in order, chart releases included."""
    return [release_object(i) if isinstance(i, ChartRelease) else i.obj for i in bundle.items]


@dataclass
class Settings:
    """Per-rule enforcement level and settings, from ``policies/config.<stack>.json``."""

    levels: dict[str, str] = field(default_factory=dict)
    configs: dict[str, dict] = field(default_factory=dict)

    def level(self, rule: Rule) -> str:
        return self.levels.get(rule.id, rule.enforcement)

    def config(self, rule: Rule) -> dict:
        return {**rule.config_defaults, **self.configs.get(rule.id, {})}


def config_path(stack: str) -> Path:
    return POLICY_DIR / f"config.{stack}.json"


def parse_settings(data: object, file: str, rules: Iterable[Rule] = RULES) -> Settings:
    """Pulumi's policy-pack-config format: ``{"all": level, "<rule>": level | {"enforcementLevel": ..., ...}}``."""
    rules = {r.id: r for r in rules}
    if not isinstance(data, dict):
        raise ConfigError(file, "(document)", f"expected a JSON object keyed by rule id, got {show(data)}")
    settings = Settings()
    if "all" in data:
        if data["all"] not in LEVELS:
            raise ConfigError(file, "all", f"expected one of {', '.join(LEVELS)}, got {show(data['all'])}")
        settings.levels = {rid: data["all"] for rid in rules}
    for key, value in data.items():
        if key == "all":
            continue
        if key not in rules:
            import difflib
            close = difflib.get_close_matches(key, list(rules), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ConfigError(file, key, f"unknown rule {key!r}{hint}")
        rule = rules[key]
        if isinstance(value, str):
            value = {"enforcementLevel": value}
        if not isinstance(value, dict):
            raise ConfigError(file, key, f"expected a level or an object with enforcementLevel, got {show(value)}")
        level = value.get("enforcementLevel", settings.levels.get(key, rule.enforcement))
        if level not in LEVELS:
            raise ConfigError(file, f"{key}.enforcementLevel", f"expected one of {', '.join(LEVELS)}, got {show(level)}")
        settings.levels[key] = level
        props = {k: v for k, v in value.items() if k != "enforcementLevel"}
        schema = {"type": "object", "properties": rule.config_schema, "additionalProperties": False}
        errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(props), key=lambda e: list(e.path))
        if errors:
            err = errors[0]
            sub = ".".join(str(p) for p in err.absolute_path)
            raise ConfigError(file, f"{key}.{sub}" if sub else key, err.message)
        settings.configs[key] = props
    return settings


def load_settings(stack: str) -> Settings:
    path = config_path(stack)
    if not path.is_file():
        return Settings()
    shown = f"policies/{path.name}"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ConfigError(shown, f"line {exc.lineno}, column {exc.colno}", f"invalid JSON: {exc.msg}") from None
    return parse_settings(data, shown)


def run_rules(objects: list[dict], ctx: CheckContext, settings: Settings, rules: Iterable[Rule] = RULES,
              sources: dict[int, str] | None = None) -> list[Violation]:
    """Every violation, in rule order then object order."""
    sources = sources or {}
    ctx = replace(ctx, manifests=objects)
    out: list[Violation] = []
    for rule in rules:
        level = settings.level(rule)
        if level == DISABLED:
            continue
        rctx = replace(ctx, config=settings.config(rule))
        if rule.is_stack_rule:
            findings = [(f.obj or {}, f) for f in rule.check_stack(objects, rctx)]
        else:
            findings = [(obj, f) for obj in objects if rule.applies_to(obj) for f in rule.check(obj, rctx)]
        for obj, finding in findings:
            out.append(Violation(rule=rule.id, level=level, severity=rule.severity, resource=resource_id(obj),
                                 path=finding.path, message=finding.message, source=sources.get(id(obj))))
    return out


def has_mandatory(violations: Iterable[Violation]) -> bool:
    return any(v.level == MANDATORY for v in violations)


def summary(name: str, violations: list[Violation], objects: int) -> str:
    mandatory = sum(v.level == MANDATORY for v in violations)
    advisory = sum(v.level == ADVISORY for v in violations)
    return f"{name}: {mandatory} mandatory, {advisory} advisory violation(s) in {objects} object(s)"
