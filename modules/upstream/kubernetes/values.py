"""Lenient readers of object fields, and the field errors as the API server words them."""
from __future__ import annotations

from decimal import Decimal
from typing import Any, Iterable

from modules.core.quantity import parse_quantity

Problem = tuple[str, str]


# --- field errors, worded as the API server words them -----------------------------------------

def _q(value: Any) -> str:
    """Go's %q of a string; other values as Go's %v prints them."""
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, dict) and all(isinstance(v, str) for v in value.values()):   # labels: Go's %#v
        return "map[string]string{" + ", ".join(f"{_q(str(k))}:{_q(v)}" for k, v in sorted(value.items())) + "}"
    return str(value)


def required(detail: str = "") -> str:
    return "Required value" + (f": {detail}" if detail else "")


def invalid(value: Any, detail: str) -> str:
    return f"Invalid value: {_q(value)}: {detail}"


def duplicate(value: Any) -> str:
    return f"Duplicate value: {_q(value)}"


def not_found(value: Any) -> str:
    return f"Not found: {_q(value)}"


def not_supported(value: Any, supported: Iterable[str]) -> str:
    return f"Unsupported value: {_q(value)}: supported values: " + ", ".join(_q(s) for s in supported)


def forbidden(detail: str) -> str:
    return f"Forbidden: {detail}"


def too_long(limit: int) -> str:
    return f"Too long: may not be more than {limit} bytes"


def key_path(path: str, key: object) -> str:
    return f"{path}[{key}]"


def as_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def quantity(value: Any) -> Decimal | None:
    try:
        return parse_quantity(value) if isinstance(value, (str, int, float)) and not isinstance(value, bool) else None
    except Exception:   # a malformed quantity is the schema check's to report
        return None
