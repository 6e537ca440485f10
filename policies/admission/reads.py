"""Which object fields and which of the policy's variables a CEL expression reads (through other
variables too): where a finding points, which variables an expression needs converted, and which
variables the cost floors count (``cost.policy_problem``)."""
from __future__ import annotations

import functools
import re
from typing import Iterable, Mapping

_OBJECT_PATH = re.compile(r"\b(?:object|oldObject)((?:\.[A-Za-z_]\w*+(?!\s*\())+)")
# ``variables.<name>``: a CEL identifier is ASCII; CEL's grammar allows space around the dot.
_VARIABLE = re.compile(r"\bvariables\s*\.\s*([A-Za-z_][A-Za-z0-9_]*)")


def fields_read(source: str, variables: dict[str, str]) -> tuple[str, ...]:
    """The deepest object fields an expression reads (through its variables too)."""
    return _fields_read(source, tuple(variables.items()))


@functools.lru_cache(maxsize=None)
def _fields_read(source: str, variable_items: tuple) -> tuple[str, ...]:
    variables = dict(variable_items)
    texts = [source, *(variables[name] for name in variables_reached([source], variables))]
    paths = {m.lstrip(".") for text in texts for m in _OBJECT_PATH.findall(text)}
    deepest = sorted(p for p in paths if not any(o.startswith(p + ".") for o in paths))
    return tuple(deepest)


@functools.lru_cache(maxsize=None)
def variables_in(source: str) -> tuple[str, ...]:
    """The variables ``source`` names itself (``variables.<name>``), in order."""
    return tuple(_VARIABLE.findall(source))


def variables_reached(sources: Iterable[str], variables: Mapping[str, str]) -> list[str]:
    """The variables of ``variables`` (name -> expression) that ``sources`` read, directly or
    through the variables they read, each once."""
    reached: list[str] = []
    seen: set[str] = set()
    todo = [name for source in sources for name in variables_in(source)]
    while todo:
        name = todo.pop()
        if name in variables and name not in seen:
            seen.add(name)
            reached.append(name)
            todo.extend(variables_in(variables[name]))
    return reached


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
