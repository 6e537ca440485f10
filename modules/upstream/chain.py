"""The API server's admission chain for the ported checks, in its order: on CREATE ``.status`` of a
status-subresource kind is dropped (``modules/semantics/created.py``), then the mutating webhooks the install
registers apply their defaults in registration order (``mutate``), then the validating webhooks
judge the mutated object (``refusals``); the ValidatingAdmissionPolicies and CRD rules
(``policies/admission``) are handed the same mutated object, so validation always sees what the
mutating webhooks made of it (an unnamed Volcano task is ``default0`` by then).

One registry (``registry.py``) serves the rules, the upstream-table runner, ``simulate`` and
``preview``; nothing else applies a mutation.
"""
from __future__ import annotations

from typing import Callable

from modules.semantics.created import as_created
from modules.semantics.shapes import api_group
from modules.upstream.cluster import EMPTY, Cluster
from modules.upstream.field import FieldError
from modules.upstream.install import CHART_DEFAULTS, Install
from modules.upstream.registry import CREATE, MUTATE, SOURCES, VALIDATE, Check, checks


def mutate(obj: dict, install: Install = CHART_DEFAULTS, cluster: Cluster = EMPTY, operation: str = CREATE,
           old: dict | None = None) -> dict:
    """``obj`` as admitted to validation: created (``as_created``, on CREATE) and defaulted by every
    mutating webhook ``install`` registers for it, in registration order. A new object when any
    mutation applies; ``obj`` itself otherwise."""
    current = as_created(obj) if operation == CREATE else obj
    for check in checks(api_group(current), str(current.get("kind")), MUTATE, operation, install, current):
        current = check.fn(current, operation, old, cluster)
    return current


def _validators(obj: dict, install: Install, operation: str, sources: tuple[str, ...]) -> list[Check]:
    return checks(api_group(obj), str(obj.get("kind")), VALIDATE, operation, install, obj, sources)


def _judged(mutated: dict, hooks: list[Check], operation: str, old: dict | None,
            cluster: Cluster) -> list[tuple[Check, FieldError]]:
    return [(check, error) for check in hooks for error in check.fn(mutated, operation, old, cluster)]


def refusals(obj: dict, install: Install = CHART_DEFAULTS, cluster: Cluster = EMPTY, operation: str = CREATE,
             old: dict | None = None, sources: tuple[str, ...] = SOURCES,
             mutated: Callable[[], dict] | None = None) -> list[tuple[Check, FieldError]]:
    """Each validating check of ``sources`` that ``install`` sends ``obj`` to, run on the mutated
    object, with the coded errors it returns. ``mutated``: where the caller already holds ``obj`` as
    ``mutate`` makes it with these arguments (a check mutates each object once, for validation and
    the admission policies alike), what returns it; called only when a check applies."""
    hooks = _validators(obj, install, operation, sources)
    if not hooks:
        return []
    admitted = mutated() if mutated is not None else mutate(obj, install, cluster, operation, old)
    return _judged(admitted, hooks, operation, old, cluster)


def admit(obj: dict, install: Install = CHART_DEFAULTS, cluster: Cluster = EMPTY, operation: str = CREATE,
          old: dict | None = None, sources: tuple[str, ...] = SOURCES
          ) -> tuple[dict, list[tuple[Check, FieldError]]]:
    """``obj`` as the API server stores it (created and mutated, once) and what the validating
    checks refuse of it: an object is admitted when the list is empty."""
    mutated = mutate(obj, install, cluster, operation, old)
    return mutated, _judged(mutated, _validators(obj, install, operation, sources), operation, old, cluster)
