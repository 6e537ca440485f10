"""Upstream's admission rules (Volcano's admission policies, CRD `x-kubernetes-validations`),
loaded from artifacts on disk and evaluated with CEL. See docs/policies.md, `upstream-admission`."""
from __future__ import annotations

import os

from .engine import Denial, RuleSet, SkippedRule
from .loader import ENV_CRDS, ENV_DIR, load_index, locate

_CACHE: dict[tuple, RuleSet] = {}


def rules() -> RuleSet:
    """The rule set for the current environment, built once per process (and per folder setting)."""
    key = (os.environ.get(ENV_DIR), os.environ.get(ENV_CRDS), os.environ.get("TRAINSTACK_CACHE_DIR"))
    if key not in _CACHE:
        _CACHE[key] = RuleSet(load_index(locate()))
    return _CACHE[key]


def start() -> None:
    """Start the current rule set's evaluating process ahead of use (`check`: before the stack
    renders, so that it compiles upstream's rules meanwhile). Costs nothing when no rules load;
    a failure to load them is left to the rule, which reports it."""
    try:
        ruleset = rules()
    except Exception:   # noqa: BLE001 - upstream-admission loads them again and says what failed
        return
    if ruleset.policies or ruleset.crds:
        ruleset.start()


__all__ = ["Denial", "RuleSet", "SkippedRule", "rules", "start", "load_index", "locate"]
