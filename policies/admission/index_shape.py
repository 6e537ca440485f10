"""The shape of the admission index as `loader.load_index` stores it in the user cache, checked
before a cached index is used (modules/core/cache.py): an entry of any other shape is discarded and
the index extracted again, never handed to the engine."""
from __future__ import annotations

from typing import Any

_POLICY_STRINGS = ("kind", "name", "source", "release", "failurePolicy")
_POLICY_LISTS = ("matchConditions", "variables", "validations", "mutations")
_CRD_STRINGS = ("crd", "group", "kind", "plural", "source", "release", "version")
_RULE_STRINGS = ("rule", "message", "messageExpression", "reason", "fieldPath")
_EXPRESSION_KEYS = ("expression", "messageExpression", "name", "message", "reason")


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _expressions(items: Any) -> bool:
    """A list of mappings whose expression-bearing fields, where present, are strings."""
    return isinstance(items, list) and all(
        isinstance(item, dict) and all(isinstance(item[k], str) for k in _EXPRESSION_KEYS if k in item)
        for item in items)


def _policy(p: Any) -> bool:
    return (isinstance(p, dict) and all(isinstance(p.get(k), str) for k in _POLICY_STRINGS)
            and all(_expressions(p.get(k)) for k in _POLICY_LISTS)
            and isinstance(p.get("matchConstraints"), dict) and isinstance(p.get("bindingMatch", {}), dict)
            and (p.get("paramKind") is None or isinstance(p.get("paramKind"), dict))
            and _strings(p.get("validationActions", [])))


def _rule(r: Any) -> bool:
    return (isinstance(r, dict) and isinstance(r.get("rule"), str)
            and isinstance(r.get("path"), list) and all(isinstance(s, (str, list)) for s in r["path"])
            and all(isinstance(r[k], str) for k in _RULE_STRINGS if k in r)
            and isinstance(r.get("optionalOldSelf", False), bool))


def _crd(c: Any) -> bool:
    return (isinstance(c, dict) and all(isinstance(c.get(k), str) for k in _CRD_STRINGS)
            and isinstance(c.get("rules"), list) and all(_rule(r) for r in c["rules"]))


def valid_index(data: Any) -> bool:
    """Whether ``data`` has the shape of a stored admission index."""
    return (isinstance(data, dict) and isinstance(data.get("policies"), list) and isinstance(data.get("crds"), list)
            and _strings(data.get("problems")) and all(_policy(p) for p in data["policies"])
            and all(_crd(c) for c in data["crds"]))
