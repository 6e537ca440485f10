"""The rule framework: rules are pure functions over manifests (plain dicts).

A resource rule sees one object at a time; a stack rule sees every object of the stack plus the
fabric. The same functions run in ``trainstack check``, inside the CrossGuard pack and in tests.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

# Plain-dict helpers live in the semantic core; rules import them from here.
from modules.semantics.shapes import (  # noqa: F401
    annotations, api_group, as_dict, as_int, as_list, containers, is_kind, labels, meta, pod_templates)

from modules.core.secrets import redact

MANDATORY, ADVISORY, DISABLED = "mandatory", "advisory", "disabled"
LEVELS = (MANDATORY, ADVISORY, DISABLED)
# A report level, not an enforcement level: a rule said what it could not check. Never fails a run.
NOTE = "note"


@dataclass(frozen=True)
class Finding:
    """What a rule reports: the field path, what is wrong and how to fix it."""

    path: str
    message: str
    obj: dict | None = None     # stack rules name the object; resource rules leave it None


@dataclass(frozen=True)
class NotChecked:
    """What a rule could not check and why (e.g. capacity on a label-defined fabric).

    Rules yield it beside their findings; reports show it as a note, the pack as "not applicable".
    """

    reason: str
    obj: dict | None = None     # stack rules name the object; resource rules leave it None
    path: str = ""


@dataclass
class CheckContext:
    """What rules may consult besides the object itself."""

    stack: Any = None                 # modules.core.config.StackConfig, when checking a stack
    fabric: Any = None                # modules.fabric.model.Fabric, when the stack has one
    manifests: list[dict] = field(default_factory=list)   # every object rules may consult
    config: dict = field(default_factory=dict)             # this rule's settings (set per rule)
    memo: dict = field(default_factory=dict, compare=False, repr=False)   # per check or evaluation, see remember()
    profile: str | None = None        # manifests checked without a stack: `check --profile` (else the stack's)

    def remember(self, key: str, compute: Callable[[], Any]) -> Any:
        """A fact about ``manifests`` computed once, not once per object: once per check where the
        runner shares the memo among the check's rules (``run_rules``), else once per evaluation. A
        key names one fact (every rule of the check reads the same answer)."""
        if key not in self.memo:
            self.memo[key] = compute()
        return self.memo[key]

    @property
    def production(self) -> bool:
        if self.stack is not None:
            return bool(self.stack.production)
        return self.profile == "production"


RuleOutcome = Finding | NotChecked
ResourceCheck = Callable[[dict, CheckContext], Iterable[RuleOutcome]]
StackCheck = Callable[[list[dict], CheckContext], Iterable[RuleOutcome]]


@dataclass(frozen=True)
class Rule:
    """A policy rule: what it catches and why, how to fix it, its default level and its check."""
    id: str
    description: str             # what it catches, one sentence
    why: str                     # the upstream behaviour it guards against
    fix: str                     # how to fix a violation
    severity: str                # low | medium | high | critical
    enforcement: str             # default level: mandatory | advisory
    check: ResourceCheck | None = None        # resource rule
    check_stack: StackCheck | None = None     # stack rule
    kinds: frozenset[str] | None = None       # kinds a resource rule looks at (None: all)
    config_schema: dict = field(default_factory=dict)   # JSON Schema properties of its settings
    config_defaults: dict = field(default_factory=dict)
    # Work a stack rule may begin before the rules run, with the objects and context it will judge
    # (upstream-admission hands them to its evaluating process, which works while the other rules
    # run); reports nothing: what it finds, the rule finds again or reads back when it runs.
    prepare: Callable[[list[dict], CheckContext], None] | None = None

    @property
    def is_stack_rule(self) -> bool:
        return self.check_stack is not None

    def applies_to(self, obj: dict) -> bool:
        # No kind: a patch fragment or values file, not an object any rule can judge.
        return bool(obj.get("kind")) and (self.kinds is None or obj.get("kind") in self.kinds)


@dataclass(frozen=True)
class Violation:
    """One finding of one rule, located in the user's files where known."""
    rule: str
    level: str
    severity: str
    resource: str        # kind/namespace/name
    path: str
    message: str
    source: str | None = None   # file the object came from, when known
    line: int | None = None     # 1-based line and column of the field in source, when known
    column: int | None = None
    origin: str | None = None   # "file:line:column" of the stack key that renders the object

    def __post_init__(self) -> None:
        # The report boundary: every rule's message, an admission policy's messageExpression output,
        # resource names and paths may quote a user's value; none ever shows a credential.
        for name in ("message", "resource", "path", "source", "origin"):
            value = getattr(self, name)
            if isinstance(value, str):
                object.__setattr__(self, name, redact(value))

    @property
    def is_note(self) -> bool:
        return self.level == NOTE

    def as_dict(self) -> dict:
        return {"rule": self.rule, "level": self.level, "severity": self.severity,
                "resource": self.resource, "path": self.path, "message": self.message,
                **({"source": self.source} if self.source else {}),
                **({"line": self.line, "column": self.column} if self.line else {}),
                **({"origin": self.origin} if self.origin else {})}


def resource_id(obj: dict) -> str:
    """``apiVersion/Kind/namespace/name`` (namespace left out when cluster-scoped): the apiVersion
    tells ``batch/v1`` Jobs from ``batch.volcano.sh/v1alpha1`` ones."""
    m = as_dict(obj.get("metadata"))
    kind, name, ns = obj.get("kind", "?"), m.get("name", "?"), m.get("namespace")
    api = obj.get("apiVersion")
    head = f"{api}/{kind}" if api else str(kind)
    return f"{head}/{ns}/{name}" if ns else f"{head}/{name}"


def kind_of_id(resource: str) -> tuple[str, str]:
    """``(kind, name)`` of a resource id: the kind is the first CamelCase segment (API groups and
    versions are lower case)."""
    parts = resource.split("/")
    kind = next((p for p in parts if p[:1].isupper()), parts[0])
    return kind, parts[-1]


def where(obj: dict, path: str) -> str:
    """``Kind/namespace/name at field.path`` for messages."""
    return f"{resource_id(obj)} at {path}" if path else resource_id(obj)

