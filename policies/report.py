"""Violation reports: text for people, JSON for tools."""
from __future__ import annotations

import json

from .framework import Violation
from .runner import summary


def text(results: dict[str, tuple[list[Violation], int]]) -> str:
    lines = []
    for name, (violations, count) in results.items():
        for v in violations:
            lines.append(f"{v.level.upper():9} {v.rule}: {v.message}")
        lines.append(summary(name, violations, count))
    return "\n".join(lines) + "\n"


def as_json(results: dict[str, tuple[list[Violation], int]]) -> str:
    doc = {"stacks": {name: {"objects": count, "violations": [v.as_dict() for v in violations]}
                      for name, (violations, count) in results.items()}}
    return json.dumps(doc, indent=2, sort_keys=True) + "\n"


FORMATS = {"text": text, "json": as_json}
