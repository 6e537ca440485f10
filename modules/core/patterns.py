"""Regular expressions that come from input, compiled as Go's ``regexp`` would compile them.

Node-pool ``match`` patterns, HyperNode ``regexMatch`` patterns (rendered, in manifests, in
cluster snapshots) and the regex functions of admission expressions are evaluated by Go programs
(Volcano, the API server) with RE2: linear time, and no lookarounds, backreferences, atomic
groups, possessive quantifiers or ``\\Z``. Python's backtracking ``re`` would both accept patterns
Go refuses and take exponential time on patterns like ``(a+)+$``. Every input pattern therefore
goes through :func:`compile_go`, which uses the RE2 library (``google-re2``); ``re`` stays for
trainstack's own fixed patterns.

Go's syntax is RE2's with one difference we check by hand: Go has no ``\\C`` (any byte).
Repetitions are bounded at 1000 (``a{1001}`` is refused) and a pattern's compiled program at
RE2's default memory budget, as in Go.
"""
from __future__ import annotations

import functools
from typing import Callable, Iterable, Protocol

import re2

MAX_PATTERN_CHARS = 65536   # Go has no length limit; RE2's memory budget refuses far shorter monsters

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False   # the library would print its own line on stderr


# RE2's error texts for constructs of Perl and Python regexes that Go does not have.
_PERL_ONLY = [("operator: (?=", "lookaround assertions"), ("operator: (?!", "lookaround assertions"),
              ("operator: (?<=", "lookaround assertions"), ("operator: (?<!", "lookaround assertions"),
              ("operator: (?>", "atomic groups"), ("operator: (?(", "conditionals"),
              *((f"escape sequence: \\{d}", "backreferences") for d in "123456789"),
              *((f"repetition operator: {q}+", "possessive quantifiers") for q in "*+?"),
              ("escape sequence: \\Z", "\\Z (Go has \\z)")]


class PatternError(ValueError):
    """A pattern Go's regexp would not compile; the message says why (without the pattern).
    ``go_error`` is the error Go's ``regexp.Compile`` returns for it (Volcano's webhook quotes it)."""

    def __init__(self, message: str, go_error: str = "") -> None:
        super().__init__(message)
        self.go_error = go_error or f"error parsing regexp: {message}"


# RE2's error codes as Go's regexp/syntax words the same mistake (its ErrorCode strings); Go quotes
# the same part of the pattern after the code, between backquotes.
_GO_CODES = {"missing ]": "missing closing ]", "missing )": "missing closing )",
             "no argument for repetition operator": "missing argument to repetition operator",
             "bad repetition operator": "invalid nested repetition operator",
             "invalid perl operator": "invalid or unsupported Perl syntax",
             "invalid named capture group": "invalid named capture",
             "invalid repetition size": "invalid repeat count"}


def _go_error(reason: str) -> str:
    """``error parsing regexp: <Go's code>: `<expr>``` from RE2's ``<code>: <expr>``."""
    code, sep, expr = reason.partition(": ")
    if not sep and code == "trailing \\":
        return "error parsing regexp: trailing backslash at end of expression: ``"
    return f"error parsing regexp: {_GO_CODES.get(code, code)}: `{expr}`"


class Pattern(Protocol):
    pattern: str

    def search(self, text: str, pos: int = ..., endpos: int = ...): ...

    def fullmatch(self, text: str, pos: int = ..., endpos: int = ...): ...


class GoPattern:
    """A compiled input pattern: ``search``/``fullmatch`` as RE2's (match objects), and the yes/no
    questions the hot loops ask (a regexMatch member over every node, a node pool over every node)
    answered through a one-pattern RE2 set, which builds no match object: about 1 µs a name
    instead of 5."""

    __slots__ = ("regex", "pattern", "_sets")

    def __init__(self, regex) -> None:
        self.regex, self.pattern, self._sets = regex, regex.pattern, {}

    def __getattr__(self, name: str):   # search, fullmatch, finditer, ...: RE2's own
        return getattr(self.regex, name)

    def _set(self, kind: str):
        """The one-pattern set, or False where RE2 cannot build it within its memory budget (a
        set's program is larger than the pattern's own: ``(\\w{1000})`` sixty times compiles alone
        but not as a set); the match object path answers then."""
        found = self._sets.get(kind)
        if found is None:
            found = getattr(re2.Set, kind)(options=_OPTIONS)
            try:
                found.Add(self.pattern)
                found.Compile()
            except re2.error:
                found = False
            self._sets[kind] = found
        return found

    def found_in(self, text: str) -> bool:
        """Go's ``MatchString``: a match anywhere in ``text``."""
        found = self._set("SearchSet")
        return found.Match(text) is not None if found else self.regex.search(text) is not None

    def whole(self, text: str) -> bool:
        """A match of all of ``text``."""
        found = self._set("FullMatchSet")
        return found.Match(text) is not None if found else self.regex.fullmatch(text) is not None


def whole_matcher(pattern) -> "Callable[[str], bool]":
    """A yes/no test that ``pattern`` matches all of a text: the fast path of an input pattern
    (:class:`GoPattern`), ``fullmatch`` of one of our own ``re`` patterns."""
    return pattern.whole if isinstance(pattern, GoPattern) else (lambda text: pattern.fullmatch(text) is not None)


def _has_any_byte(pattern: str) -> bool:
    escaped, in_class = False, False
    for ch in pattern:
        if escaped:
            if ch == "C" and not in_class:
                return True
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == "[":
            in_class = True
        elif ch == "]":
            in_class = False
    return False


@functools.lru_cache(maxsize=65536)   # fabrics repeat a handful of patterns over thousands of leaves
def compile_go(pattern: str) -> GoPattern:
    """``pattern`` compiled with RE2 as Go's ``regexp.Compile`` would; :class:`PatternError` if Go
    would refuse it. ``.search`` is Go's ``MatchString`` (a match anywhere), ``.fullmatch`` a match
    of the whole text."""
    if not isinstance(pattern, str):
        raise PatternError(f"expected a string, got {type(pattern).__name__}")
    if len(pattern) > MAX_PATTERN_CHARS:
        raise PatternError(f"is {len(pattern)} characters long; at most {MAX_PATTERN_CHARS} are accepted")
    if _has_any_byte(pattern):
        raise PatternError("uses \\C (any byte), which Go's regexp does not support",
                           "error parsing regexp: invalid escape sequence: `\\C`")
    try:
        return GoPattern(re2.compile(pattern, options=_OPTIONS))
    except re2.error as exc:
        reason = exc.args[0] if exc.args else exc
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", "backslashreplace")
        reason = str(reason)
        go_error = _go_error(reason)
        for marker, what in _PERL_ONLY:
            if marker in reason:
                raise PatternError(f"uses {what}, which Go's regexp (RE2) does not support", go_error) from None
        raise PatternError(f"does not compile as a Go regexp (RE2): {reason}", go_error) from None


def matches_by_pattern(patterns: list[str], texts: Iterable[str]) -> list[list[str]] | None:
    """For each pattern (each one :func:`compile_go` accepts), the texts it matches anywhere (Go's
    ``MatchString``), from one RE2 set: every text is read once, whatever the number of patterns
    (512 leaf patterns over 16,384 node names: 16,384 set matches instead of hundreds of
    thousands). None when RE2 cannot build the set within its memory budget."""
    found = re2.Set.SearchSet(options=_OPTIONS)
    try:
        for pattern in patterns:
            found.Add(pattern)
        found.Compile()
    except re2.error:
        return None
    out: list[list[str]] = [[] for _ in patterns]
    for text in texts:
        for index in found.Match(text) or ():
            out[index].append(text)
    return out


def go_error(pattern: str) -> str | None:
    """The error Go's ``regexp.Compile`` returns for ``pattern`` (``error parsing regexp: <code>:
    `<expr>```), or None when it compiles."""
    try:
        compile_go(pattern)
    except PatternError as exc:
        return exc.go_error
    return None


def go_problem(pattern: str) -> str | None:
    """Why Go's regexp would refuse ``pattern`` (a phrase), or None when it compiles."""
    try:
        compile_go(pattern)
    except PatternError as exc:
        return str(exc)
    return None
