"""The API server's bounds on CEL, applied before the CEL library sees an expression.

Compile-time (cel-go's parser defaults, which the Kubernetes CEL environment keeps):

- an expression is at most ``MAX_CODE_POINTS`` code points;
- its parse is at most ``MAX_DEPTH`` levels deep (cel-go's recursion limit). ``depth`` gives an
  upper estimate from one linear scan of the text: brackets, calls and indexing nest; each binary
  operator, member selection and ``?`` in a chain adds a level (the grammar nests them left-deep);
  ``&&``, ``||`` and ``,`` start a new chain (cel-go balances logical chains; arguments are siblings).
  So ``1+1+...+1`` with 20,000 terms, ``has(object.a.a...)`` 20,000 deep or 100,000 nested parentheses
  are refused from the text, without any recursion, before the library could overflow its stack.

Run-time (k8s.io/apiserver's cel config): a cost budget per call (1,000,000 units, "roughly 0.1 s") and
per object and binding (10,000,000 units, "roughly 1 s"); a ``messageExpression`` result at most 5 KiB.
The `cel` library tracks no cost. What is sure to pass those limits on every object is found when a
policy or CRD is read, by cel-go's cost model (``cost.py``: the deterministic verdict); what depends
on the object is bounded by CPU time and memory in the evaluating child (``worker.py``): the safety
net, whose verdict depends on the machine.
"""
from __future__ import annotations

MAX_CODE_POINTS = 100_000          # cel-go parser: expressionSizeCodePointLimit
MAX_DEPTH = 250                    # cel-go parser: maxRecursionDepth
MAX_MESSAGE_BYTES = 5 * 1024       # k8s.io/apiserver cel config: MaxEvaluatedMessageExpressionSizeBytes
# The safety net's budgets in CPU seconds. The API server's per-call and per-object cost limits are
# calibrated to about 0.1 s and 1 s of cel-go, and cost.py applies them deterministically before
# each call; this net only stops what the estimate cannot count. It is generous (ten times and four
# times those), because the child's CPU time also holds what the machine adds: copy-on-write faults
# on the pages of a large parent (a test worker) were enough to push a trivial HyperNode rule past
# 0.25 s, and a verdict that depends on the machine must not refuse what the cluster admits.
CALL_CPU_SECONDS = 1.0
OBJECT_CPU_SECONDS = 4.0
# The memory an evaluation may add to the process (the API server bounds it through cost: a list
# doubling in every variable runs out of budget long before it fills memory).
EVAL_MEMORY_BYTES = 256 * 2**20

_OPENERS, _CLOSERS = "([{", ")]}"
_CHAIN = "+-*/%<>?."


def _string_end(text: str, i: int) -> int:
    """The index just past the string literal whose opening quote is at ``i`` (CEL: single, double,
    triple-quoted; a raw string, prefix r or R, has no escapes)."""
    quote = text[i]
    prefix = text[max(0, i - 2):i].lower()
    raw = "r" in prefix and (i < 3 or not (text[i - 3].isalnum() or text[i - 3] == "_"))
    delim = quote * 3 if text.startswith(quote * 3, i) else quote
    j = i + len(delim)
    while j < len(text):
        if text[j] == "\\" and not raw:
            j += 2
            continue
        if text.startswith(delim, j):
            return j + len(delim)
        if len(delim) == 1 and text[j] == "\n":
            return j   # unterminated: the library reports it
        j += 1
    return j


def depth(text: str, stop: int = MAX_DEPTH) -> int:
    """An upper estimate of the parse depth of ``text`` (stops counting past ``stop``)."""
    saved: list[int] = []
    base = chain = deepest = 0
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in "\"'":
            i = _string_end(text, i)
            continue
        if c == "/" and text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end + 1
            continue
        if c.isalpha() or c == "_":
            j = i + 1
            while j < n and (text[j].isalnum() or text[j] == "_"):
                j += 1
            if text[i:j] == "in":
                chain += 1
            i = j
            continue
        if c.isdigit():
            j = i + 1
            while j < n and (text[j].isalnum() or text[j] in "._" or (text[j] in "+-" and text[j - 1] in "eE")):
                j += 1
            i = j
            continue
        if c in _OPENERS:
            chain += 1
            saved.append(chain)
            base += chain
            chain = 0
        elif c in _CLOSERS:
            if saved:
                chain = saved.pop()
                base -= chain
        elif c == "," or text.startswith(("&&", "||"), i):
            chain = 0
            i += 2 if c in "&|" else 1
            continue
        elif c in _CHAIN or text.startswith(("==", "!="), i):
            chain += 1
            if i + 1 < n and text[i + 1] == "=":
                i += 1
        deepest = max(deepest, base + chain)
        if deepest > stop:
            return deepest
        i += 1
    return deepest


def problem(source: str) -> str | None:
    """Why the API server would refuse the expression ``source`` at compile time, or None."""
    if len(source) > MAX_CODE_POINTS:
        return f"is {len(source)} characters long (the API server's CEL parser takes at most {MAX_CODE_POINTS})"
    if depth(source) > MAX_DEPTH:
        return (f"nests deeper than {MAX_DEPTH} levels (operators, member selections and brackets; the API "
                "server's CEL parser refuses it)")
    return None
