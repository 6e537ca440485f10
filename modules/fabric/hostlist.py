"""Host-list expressions as Slurm and topograph write them: ``gpu-[0001-0032]``, ``I[21-22,25]``.

Each bracket group holds comma-separated numbers or ``lo-hi`` ranges; zero padding follows the
width of ``lo``. Several groups in one expression expand as a cartesian product, left to right.
"""
from __future__ import annotations

import re

_GROUP = re.compile(r"\[([^\[\]]*)\]")
_RANGE = re.compile(r"^(\d+)(?:-(\d+))?$")
MAX_EXPANSION = 1_000_000


class HostlistError(ValueError):
    """The expression is malformed; the message says how."""


def _expand_group(body: str) -> list[str]:
    out: list[str] = []
    for part in body.split(","):
        match = _RANGE.match(part.strip())
        if not match:
            raise HostlistError(f"[{body}] is not a list of numbers or lo-hi ranges")
        lo, hi = match.group(1), match.group(2)
        if hi is None:
            out.append(lo)
            continue
        if int(hi) < int(lo):
            raise HostlistError(f"range {lo}-{hi} runs backwards")
        if int(hi) - int(lo) >= MAX_EXPANSION:
            raise HostlistError(f"range {lo}-{hi} is too large")
        width = len(lo) if lo.startswith("0") or len(lo) == len(hi) else 0
        out.extend(str(n).zfill(width) for n in range(int(lo), int(hi) + 1))
    return out


def expand(expression: str) -> list[str]:
    """All names an expression stands for, in order. Plain names expand to themselves."""
    if not isinstance(expression, str) or not expression:
        raise HostlistError("expected a non-empty name or range such as gpu-[01-08]")
    if "[" not in expression and "]" not in expression:
        return [expression]
    pieces = _GROUP.split(expression)  # literal, group, literal, group, ..., literal
    if any("[" in p or "]" in p for p in pieces[0::2]):
        raise HostlistError(f"unbalanced brackets in {expression!r}")
    names = [""]
    for i, piece in enumerate(pieces):
        if i % 2 == 0:
            names = [n + piece for n in names]
        else:
            options = _expand_group(piece)
            if len(names) * len(options) > MAX_EXPANSION:
                raise HostlistError(f"{expression!r} expands to too many names")
            names = [n + o for n in names for o in options]
    return names


def expand_all(expressions: list[str]) -> list[str]:
    out: list[str] = []
    for expression in expressions:
        out.extend(expand(expression))
    return out
