"""The one registry of ported upstream admission checks: per check its kind, operations, upstream
function and webhook name, and the install it needs (the Volcano chart's ``enabled_admissions`` entry
and whether the webhook's namespaceSelector leaves out the release namespace and kube-system).

Every check has one signature, ``fn(obj, operation, old, cluster)``: a validator returns a list of
coded :class:`~modules.upstream.field.FieldError`, a mutator the object with its defaults applied (a
new object). The ``upstream-admission`` rule, the upstream-table runner, ``simulate`` and ``preview``
all select checks here (``checks``) and run them in the API server's order (``chain.py``).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Callable

from modules.upstream.install import Install

SOURCES = ("volcano", "trainer", "training-operator", "kubernetes")
VALIDATE, MUTATE = "validate", "mutate"
CREATE, UPDATE = "CREATE", "UPDATE"
BOTH = frozenset({CREATE, UPDATE})


@dataclass(frozen=True)
class Check:
    """One of upstream's Go-only admission checks, in our code, with where upstream holds it."""

    source: str                   # one of SOURCES
    group: str                    # API group ("" = core)
    kind: str
    phase: str                    # VALIDATE or MUTATE
    fn: Callable
    upstream: str                 # "volcano-sh/volcano v1.15.1 pkg/webhooks/admission/jobs/validate/admit_job.go"
    name: str = ""                # upstream's function, for messages
    webhook: str = ""             # the webhook as registered (validatejob.volcano.sh)
    admission: str | None = None  # the Volcano chart's enabled_admissions entry; None: always on
    operations: frozenset[str] = field(default_factory=lambda: frozenset({CREATE}))
    namespaced_selector: bool = False   # the chart's namespaceSelector (NotIn release namespace, kube-system)

    def installed(self, install: Install, obj: dict) -> bool:
        """Whether the cluster ``install`` describes sends ``obj`` to this check."""
        if not install.registers(self.admission):
            return False
        if self.namespaced_selector:
            md = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
            namespace = md.get("namespace")
            return not namespace or install.selects(namespace)
        return True


def _volcano() -> tuple[Check, ...]:
    from modules.upstream.volcano import registry
    return registry.CHECKS


def _trainer() -> tuple[Check, ...]:
    from modules.upstream.trainer import registry
    return registry.CHECKS


def _training_operator() -> tuple[Check, ...]:
    from modules.upstream.training_operator import registry
    return registry.CHECKS


def _kubernetes() -> tuple[Check, ...]:
    from modules.upstream.kubernetes_registry import CHECKS
    return CHECKS


_PROVIDERS = {"volcano": _volcano, "trainer": _trainer, "training-operator": _training_operator,
              "kubernetes": _kubernetes}


def all_checks(sources: tuple[str, ...] = SOURCES) -> list[Check]:
    """Every registered check of ``sources``, in registration order (each source's module is
    imported on first use, so a run that never meets a kind never loads its port)."""
    return [check for source in sources for check in _PROVIDERS[source]()]


@functools.lru_cache(maxsize=None)   # the registry is code: built once per process, never changed
def _by_kind(sources: tuple[str, ...]) -> dict[tuple[str, str, str], tuple[Check, ...]]:
    out: dict[tuple[str, str, str], list[Check]] = {}
    for check in all_checks(sources):
        out.setdefault((check.group, check.kind, check.phase), []).append(check)
    return {key: tuple(found) for key, found in out.items()}


def checks(group: str, kind: str, phase: str, operation: str = CREATE, install: Install | None = None,
           obj: dict | None = None, sources: tuple[str, ...] = SOURCES) -> list[Check]:
    """The checks for ``kind`` of ``group`` in ``phase`` on ``operation``, in registration order; with
    ``install`` and ``obj``, only those the install sends ``obj`` to."""
    return [c for c in _by_kind(sources).get((group, kind, phase), ())
            if operation in c.operations and (install is None or obj is None or c.installed(install, obj))]
