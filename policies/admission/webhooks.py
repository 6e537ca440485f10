"""Upstream's Go-only admission checks (Volcano's webhooks, Trainer's and the Training Operator's
webhooks, the API server's built-in validation), each written in our own code and registered here by
(source, API group, kind), so that one registry serves the `upstream-admission` rule and the runner
that measures each port against upstream's own test tables (benchmarks/upstream_admission.py).

A provider is a module under ``policies/admission/providers/`` holding ``WEBHOOKS``, a sequence of
``Webhook``; every provider there is registered on first use (no list to edit, so providers merge
without touching this file).

Contracts:
- a validator: ``check(request: Request) -> list[(path, message)]``; an empty list admits. ``path``
  is the field path in the object (``spec.tasks[0].replicas``), ``message`` upstream's own words.
- a mutator: ``check(request: Request) -> dict``: the object with the webhook's defaults applied
  (a new object; the request's object is never changed).
- ``admission``: the Volcano chart's ``custom.enabled_admissions`` entry that switches the webhook
  on (``/jobs/validate``); None for checks that are always on (the API server's own validation,
  Trainer's and the Training Operator's webhooks, which their installs always register).
"""
from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field
from typing import Callable, Iterable

SOURCES = ("volcano", "trainer", "training-operator", "kubernetes")
VALIDATE, MUTATE = "validate", "mutate"
CREATE, UPDATE = "CREATE", "UPDATE"

# The Volcano v1.15.1 chart's defaults (installer/helm/chart/volcano/values.yaml custom.admission_enable
# true and custom.enabled_admissions): jobflows and pods webhooks are off.
CHART_DEFAULT_ADMISSIONS = frozenset({"/jobs/mutate", "/jobs/validate", "/podgroups/validate", "/queues/mutate",
                                      "/queues/validate", "/hypernodes/validate", "/cronjobs/validate"})


@dataclass(frozen=True)
class Request:
    """What an admission webhook is handed: the operation, the object (and the old one on UPDATE),
    and the cluster objects a webhook looks up (parent queues, namespaces, the queue a job names)."""
    operation: str
    object: dict
    old_object: dict | None = None
    cluster: tuple[dict, ...] = ()
    # When False the webhook may not assume that an object missing from ``cluster`` is missing from
    # the cluster (a manifest set without the cluster's queues): lookups that would fail are skipped.
    cluster_known: bool = True
    # Settings of the webhook server that upstream's tables vary (e.g. Volcano's MaxQueueDepth).
    settings: dict = field(default_factory=dict)

    def find(self, kind: str, name: str, namespace: str | None = None) -> dict | None:
        for obj in self.cluster:
            md = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
            if obj.get("kind") == kind and md.get("name") == name and \
                    (namespace is None or md.get("namespace", "default") == namespace):
                return obj
        return None


@dataclass(frozen=True)
class Webhook:
    """One of upstream's Go-only admission checks, in our code, with where upstream holds it."""
    source: str                  # one of SOURCES
    group: str                   # API group ("" = core)
    kind: str
    operation: str               # VALIDATE or MUTATE
    check: Callable[[Request], object]
    upstream: str                # the upstream file that holds the check: "volcano-sh/volcano v1.15.1 pkg/..."
    name: str = ""               # upstream's function / webhook name, for messages
    admission: str | None = None  # the chart's enabled_admissions entry, or None (always on)
    operations: frozenset[str] = field(default_factory=lambda: frozenset({CREATE}))
    # How to fix a refusal, from upstream's message (None: the finding says to make the check hold).
    fix: Callable[[str], "str | None"] | None = None


_REGISTRY: list[Webhook] = []
_LOADED = False


def register(hooks: Iterable[Webhook]) -> None:
    for hook in hooks:
        if hook.source not in SOURCES or hook.operation not in (VALIDATE, MUTATE):
            raise ValueError(f"webhook {hook.name or hook.kind}: unknown source or operation")
        _REGISTRY.append(hook)


def _load() -> None:
    global _LOADED
    if _LOADED:
        return
    _LOADED = True
    from . import providers
    for info in sorted(pkgutil.iter_modules(providers.__path__), key=lambda i: i.name):
        module = importlib.import_module(f"{providers.__name__}.{info.name}")
        register(getattr(module, "WEBHOOKS", ()))


def webhooks(group: str, kind: str, operation: str, source: str | None = None,
             enabled: frozenset[str] | None = None, request_operation: str = CREATE) -> list[Webhook]:
    """The registered webhooks for a kind, in registration order. ``enabled``: the chart's
    enabled_admissions (None: every webhook, as the upstream-table runner wants)."""
    _load()
    return [h for h in _REGISTRY
            if h.group == group and h.kind == kind and h.operation == operation
            and (source is None or h.source == source)
            and request_operation in h.operations
            and (enabled is None or h.admission is None or h.admission in enabled)]


def all_webhooks() -> list[Webhook]:
    _load()
    return list(_REGISTRY)
