"""Generate the options table of each module README from its schema.yaml.

Each README holds the markers ``<!-- options:begin -->`` and ``<!-- options:end -->``; the table
between them is rewritten. ``python -m modules.core.docs`` writes; ``--check`` exits 1 when stale.
"""
from __future__ import annotations

import json
import sys

from .config import MODULES_DIR, module_schema
from .registry import MODULES

BEGIN, END = "<!-- options:begin -->", "<!-- options:end -->"


def _type(schema: dict) -> str:
    if "enum" in schema:
        return " \\| ".join(f"`{json.dumps(v)}`" for v in schema["enum"])
    kind = schema.get("type", "")
    if isinstance(kind, list):
        kind = " or ".join(kind)
    if kind == "array" and isinstance(schema.get("items"), dict):
        inner = schema["items"]
        return f"list of {_type(inner) if 'enum' in inner or inner.get('type') != 'object' else 'objects'}"
    if "format" in schema:
        return f"{kind} ({schema['format']})"
    return kind or "any"


def _default(schema: dict) -> str:
    if "default" not in schema:
        return "required" if schema.get("x-required") else "—"
    return f"`{json.dumps(schema['default'], sort_keys=True)}`"


def rows(schema: dict, prefix: str, required: frozenset = frozenset()) -> list[str]:
    out = []
    for name, sub in schema.get("properties", {}).items():
        path = f"{prefix}.{name}"
        description = " ".join(str(sub.get("description", "")).split()).replace("|", "\\|")
        default = "**required**" if name in required else _default(sub)
        out.append(f"| `{path}` | {_type(sub)} | {default} | {description} |")
        if "object" in (sub.get("type") if isinstance(sub.get("type"), list) else [sub.get("type")]) \
                and "properties" in sub:   # also nullable objects, type [object, "null"]
            out.extend(rows(sub, path, frozenset(sub.get("required", ()))))
        items = sub.get("items")
        if sub.get("type") == "array" and isinstance(items, dict) and "properties" in items:
            out.extend(rows(items, f"{path}[]", frozenset(items.get("required", ()))))
    return out


def table(module: str) -> str:
    schema = module_schema(module)
    head = ["| option | type | default | description |", "|---|---|---|---|"]
    body = rows(schema, f"trainstack:{module}", frozenset(schema.get("required", ())))
    return "\n".join(head + body)


def updated(readme: str, module: str) -> str:
    if BEGIN not in readme or END not in readme:
        raise SystemExit(f"modules/{module}/README.md lacks the {BEGIN} ... {END} markers")
    before, rest = readme.split(BEGIN, 1)
    _, after = rest.split(END, 1)
    return f"{before}{BEGIN}\n{table(module)}\n{END}{after}"


def main(argv: list[str]) -> int:
    check = "--check" in argv
    stale = []
    for module in MODULES:
        path = MODULES_DIR / module / "README.md"
        current = path.read_text(encoding="utf-8")
        new = updated(current, module)
        if new != current:
            stale.append(str(path.relative_to(MODULES_DIR.parent)))
            if not check:
                path.write_text(new, encoding="utf-8")
    if check and stale:
        print("options tables are stale (run python -m modules.core.docs):", *stale, sep="\n  ")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
