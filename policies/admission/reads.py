"""Which object fields a CEL expression reads (through the policy's variables too): where a
finding points, and which variables an expression needs converted."""
from __future__ import annotations

import functools
import re

_OBJECT_PATH = re.compile(r"\b(?:object|oldObject)((?:\.[A-Za-z_]\w*+(?!\s*\())+)")
_VARIABLE = re.compile(r"\bvariables\.([A-Za-z_]\w*)")


def fields_read(source: str, variables: dict[str, str]) -> tuple[str, ...]:
    """The deepest object fields an expression reads (through its variables too)."""
    return _fields_read(source, tuple(variables.items()))


@functools.lru_cache(maxsize=None)
def _fields_read(source: str, variable_items: tuple) -> tuple[str, ...]:
    variables = dict(variable_items)
    seen, todo, texts = set(), [source], []
    while todo:
        text = todo.pop()
        texts.append(text)
        for name in _VARIABLE.findall(text):
            if name not in seen and name in variables:
                seen.add(name)
                todo.append(variables[name])
    paths = {m.lstrip(".") for text in texts for m in _OBJECT_PATH.findall(text)}
    deepest = sorted(p for p in paths if not any(o.startswith(p + ".") for o in paths))
    return tuple(deepest)


@functools.lru_cache(maxsize=None)
def variables_in(source: str) -> tuple[str, ...]:
    return tuple(_VARIABLE.findall(source))


def common_path(paths: tuple[str, ...]) -> str:
    if not paths:
        return ""
    split = [p.split(".") for p in paths]
    out = []
    for parts in zip(*split):
        if len(set(parts)) != 1:
            break
        out.append(parts[0])
    return ".".join(out)
