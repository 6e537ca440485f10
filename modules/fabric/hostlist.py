"""Host-list expressions as Slurm and topograph write them: ``gpu-[0001-0032]``, ``I[21-22,25]``.

Each bracket group holds comma-separated numbers or ``lo-hi`` ranges; zero padding follows the
width of ``lo``. Several groups in one expression expand as a cartesian product, left to right.
"""
from __future__ import annotations

import contextvars
import functools
import re
from dataclasses import dataclass

from modules.core.yamlio import MAX_FABRIC_NODES
from modules.core.vocabulary.go import is_ascii_digits

_GROUP = re.compile(r"\[([^\[\]]*)\]")
_RANGE = re.compile(r"^(\d+)(?:-(\d+))?\Z")
MAX_EXPANSION = 1_000_000
MAX_NODES = MAX_FABRIC_NODES   # nodes in one fabric, all expressions together (docs/reliability.md)
MAX_DIGITS = 18           # numbers in ranges fit in int64

_budget: contextvars.ContextVar[list[int] | None] = contextvars.ContextVar("node_budget", default=None)


def node_budget() -> contextvars.Token:
    """Start counting the nodes of one fabric; ``take`` refuses more than MAX_NODES in all."""
    return _budget.set([MAX_NODES])


def end_budget(token: contextvars.Token) -> None:
    _budget.reset(token)


def take(count: int) -> None:
    """Count ``count`` more nodes against the fabric's budget, before they are built."""
    budget = _budget.get()
    if count > MAX_NODES or (budget is not None and count > budget[0]):
        raise HostlistError(f"the fabric would hold more than {MAX_NODES:,} nodes (the documented maximum)")
    if budget is not None:
        budget[0] -= count


class HostlistError(ValueError):
    """The expression is malformed; the message says how."""


def _expand_group(body: str) -> list[str]:
    out: list[str] = []
    for part in body.split(","):
        match = _RANGE.match(part.strip())
        if not match:
            raise HostlistError(f"[{body}] is not a list of numbers or lo-hi ranges")
        lo, hi = match.group(1), match.group(2)
        if len(lo) > MAX_DIGITS or len(hi or "") > MAX_DIGITS:
            raise HostlistError(f"numbers in [{body[:40]}] have more than {MAX_DIGITS} digits")
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
                raise HostlistError(f"{expression[:60]!r} expands to too many names")
            names = [n + o for n in names for o in options]
    take(len(names))
    return names


# --- the other way: names -> ranges and patterns -------------------------------------------

_NUMBERED = re.compile(r"^(.*?)([0-9]+)([^0-9]*)$")   # prefix, last run of digits, suffix
_ESCAPES = str.maketrans({c: "\\" + c for c in "\\.^$|?*+()[]{}"})   # each regex metacharacter escaped


def _split(name: str) -> tuple[str, str, str] | None:
    match = _NUMBERED.match(name)
    return (match.group(1), match.group(2), match.group(3)) if match else None


@dataclass(frozen=True)
class NumberedRange:
    """Names ``prefix + <number zero-padded to width> + suffix`` for every number in lo..hi."""

    prefix: str
    width: int
    suffix: str
    lo: int
    hi: int

    def __len__(self) -> int:
        return self.hi - self.lo + 1

    def names(self) -> list[str]:
        prefix, suffix, width = self.prefix, self.suffix, self.width   # zfill: twice as fast as a format spec
        return [prefix + str(number).zfill(width) + suffix for number in range(self.lo, self.hi + 1)]

    def regex(self) -> str:
        """An anchored RE2/Python pattern that matches exactly ``names()``."""
        digits = _group(_alternatives(str(self.lo).zfill(self.width), str(self.hi).zfill(self.width)))
        return f"^{_escape(self.prefix)}{digits}{_escape(self.suffix)}$"

    def expression(self) -> str:
        """The same names as a host-list expression (``gpu-[0001-0032]``)."""
        if self.lo == self.hi:
            return f"{self.prefix}{self.lo:0{self.width}d}{self.suffix}"
        return f"{self.prefix}[{self.lo:0{self.width}d}-{self.hi:0{self.width}d}]{self.suffix}"


def numbered_range(names: list[str]) -> NumberedRange | None:
    """The one range that holds exactly these (distinct) names, or None.

    All names must share prefix, suffix and digit width, and their numbers must be contiguous.
    Linear and allocation-light: it runs for every leaf of 65k-node fabrics.
    """
    if not names:
        return None
    parts = _split(names[0])
    if parts is None:
        return None
    prefix, digits, suffix = parts
    size, start, end = len(names[0]), len(prefix), len(names[0]) - len(suffix)
    lo = hi = int(digits)
    for name in names:
        if len(name) != size or not name.startswith(prefix) or not name.endswith(suffix):
            return None
        middle = name[start:end]
        if not (middle.isascii() and middle.isdigit()):
            return None
        number = int(middle)
        if number < lo:
            lo = number
        elif number > hi:
            hi = number
    if hi - lo + 1 != len(names):
        return None
    return NumberedRange(prefix, len(digits), suffix, lo, hi)


_PLAIN_DECIMAL = re.compile(r"0?[0-9]{0,2}d?")   # `{n}`, `{n:04d}`, `{n:5}`: digits, maybe padded


def number_pattern(pattern: str) -> tuple[str, str, str] | None:
    """``(prefix, spec, suffix)`` when a ``str.format`` name pattern is literal text around one
    ``{n}`` written as a plain decimal (``gpu-{n:04d}``), else None."""
    import string   # generated fabrics only: a file's or topograph's import needs it not

    try:
        parts = list(string.Formatter().parse(pattern))
    except ValueError:
        return None
    fields = [i for i, (_, name, _, _) in enumerate(parts) if name is not None]
    if len(fields) != 1:
        return None
    _, name, spec, conversion = parts[fields[0]]
    if name != "n" or conversion is not None or not _PLAIN_DECIMAL.fullmatch(spec or ""):
        return None
    prefix = "".join(text for text, _, _, _ in parts[:fields[0] + 1])
    suffix = "".join(text for text, _, _, _ in parts[fields[0] + 1:])
    return prefix, spec or "", suffix


def pattern_range(prefix: str, spec: str, suffix: str, lo: int, hi: int) -> NumberedRange | None:
    """The range that the names ``prefix + format(n, spec) + suffix`` for n in lo..hi are, exactly
    as ``numbered_range`` finds it from the names (all of one width, the number the last run of
    digits), without building them; None where the numbers change width, the prefix or suffix holds
    digits, or the padding is not zeros (then the caller builds the names and looks at them)."""
    first, last = format(lo, spec), format(hi, spec)
    if not (is_ascii_digits(first) and is_ascii_digits(last) and len(first) == len(last)) \
            or not _bare_affixes(prefix, suffix):
        return None
    return NumberedRange(prefix, len(first), suffix, lo, hi)


@functools.lru_cache(maxsize=64)   # asked once per leaf, with the same prefix and suffix
def _bare_affixes(prefix: str, suffix: str) -> bool:
    """Whether ``_split`` finds ``prefix``, the digits and ``suffix`` again in ``prefix + digits +
    suffix``, whichever digits: it depends only on the affixes (no digit at the end of the prefix
    nor in the suffix), so one digit stands for all."""
    return _split(prefix + "0" + suffix) == (prefix, "0", suffix)


_SINGLE = re.compile(r"([^\[\]]*)\[(\d+)-(\d+)\]([^\[\]]*)")


def single_range(expression: str) -> NumberedRange | None:
    """The range one expression such as ``gpu-[0001-0032]`` stands for, when its names all have
    the same width (``[1-10]`` does not), else None. ``expand`` gives the same names."""
    match = _SINGLE.fullmatch(expression)
    if match is None:
        return None
    prefix, lo, hi, suffix = match.groups()
    if len(lo) != len(hi) or len(lo) > MAX_DIGITS or int(lo) > int(hi):
        return None
    return NumberedRange(prefix, len(lo), suffix, int(lo), int(hi))


def compress(names: list[str]) -> list[str]:
    """Host-list expressions for names in order, merging runs of consecutive numbers."""
    out: list[str] = []
    run: NumberedRange | None = None
    for name in names:
        parts = _split(name)
        if parts is None:
            if run is not None:
                out.append(run.expression())
                run = None
            out.append(name)
            continue
        prefix, digits, suffix = parts
        number = int(digits)
        if (run is not None and (run.prefix, run.width, run.suffix) == (prefix, len(digits), suffix)
                and number == run.hi + 1):
            run = NumberedRange(prefix, run.width, suffix, run.lo, number)
            continue
        if run is not None:
            out.append(run.expression())
        run = NumberedRange(prefix, len(digits), suffix, number, number)
    if run is not None:
        out.append(run.expression())
    return out


def _escape(text: str) -> str:
    return text.translate(_ESCAPES)


def _group(alternatives: tuple[str, ...]) -> str:
    return alternatives[0] if len(alternatives) == 1 else "(" + "|".join(alternatives) + ")"


def _digit_class(a: int, b: int) -> str:
    if a == b:
        return str(a)
    return f"[{a}{b}]" if b == a + 1 else f"[{a}-{b}]"


def _any_digits(count: int) -> str:
    return "" if count == 0 else "[0-9]" if count == 1 else f"[0-9]{{{count}}}"


@functools.lru_cache(maxsize=4096)   # neighbouring leaves share most of their digit ranges
def _alternatives(lo: str, hi: str) -> tuple[str, ...]:
    """Regex alternatives matching every digit string from lo to hi (same length) and no other."""
    if lo == hi:
        return (lo,)
    if lo[0] == hi[0]:
        return (lo[0] + _group(_alternatives(lo[1:], hi[1:])),)
    rest = len(lo) - 1
    first, last = int(lo[0]), int(hi[0])
    out = []
    tail = None
    if lo[1:] != "0" * rest:                 # a partial block at the low end
        out.append(lo[0] + _group(_alternatives(lo[1:], "9" * rest)))
        first += 1
    if hi[1:] != "9" * rest:                 # a partial block at the high end
        tail = hi[0] + _group(_alternatives("0" * rest, hi[1:]))
        last -= 1
    if first <= last:                        # whole blocks in between
        out.append(_digit_class(first, last) + _any_digits(rest))
    if tail is not None:
        out.append(tail)
    return tuple(out)
