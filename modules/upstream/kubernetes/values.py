"""Lenient readers of object fields: a field of the wrong shape reads as absent (the schema check
reports it), so no check raises."""
from __future__ import annotations

from decimal import Decimal
from typing import Any

from modules.core.quantity import parse_quantity


def key_path(path: str, key: object) -> str:
    """A map entry's path as the API server writes it: ``metadata.labels[key]``."""
    return f"{path}[{key}]"


def as_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def quantity(value: Any) -> Decimal | None:
    try:
        return parse_quantity(value) if isinstance(value, (str, int, float)) and not isinstance(value, bool) else None
    except Exception:   # a malformed quantity is the schema check's to report
        return None
