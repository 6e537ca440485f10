"""What a CEL expression is sure to cost, by cel-go's cost model, before anything evaluates it.

The `cel` library tracks no cost, so the API server's CEL cost limits cannot be read from it. This
module parses an expression (CEL's grammar, macros included) and computes a *floor*: the least cost
cel-go's runtime tracker (``interpreter/runtimecost.go``) charges on any input, and the least size
of its value, from what is known without the object: literals, the sizes of earlier variables,
and what a comprehension over a literal must iterate. The unit costs are cel-go's (an identifier or
field selection 1, a call 1, string concatenation and comparison one per ten characters, list
concatenation 1 (cel-go joins lists without copying), ``in`` the list's size, ``matches`` the
string's by the pattern's, a comprehension its range's size times its step; constant lists are
folded to constants and cost nothing, as ``cel.OptOptimize`` does). Where an operand's size is
unknown (a field of ``object``) the floor counts it as empty, so a floor is never above what the
API server would charge.

So a floor over a limit is a verdict, the same on every machine and for every object:

- ``PER_CALL_LIMIT`` (k8s.io/apiserver ``PerCallLimit``): every evaluation of the expression (a
  policy's variable is evaluated as its own call) fails with "actual cost limit exceeded";
- ``STATIC_ESTIMATED_COST_LIMIT`` (apiextensions ``StaticEstimatedCostLimit``): the API server
  refuses a CRD whose rule's estimated cost exceeds it (its estimate is at least the floor);
- ``MAX_LIST_ELEMENTS``: a list this long is cheap for cel-go, which joins lists lazily, but the
  `cel` library copies every concatenation; such an expression is not evaluated here at all.

With the inputs in hand (``Calls.over_limit``, before each call of the engine's ``Scope.run``) the
floor counts the object's real sizes, each comprehension element by element (once, times its size,
when its body does not name the element), and stops counting once past the per-call limit: such a
call fails as cel-go's does ("actual cost limit exceeded"), deterministically. What the floor cannot
count within ``MAX_VISITS`` steps is left to the evaluating child's CPU-time and memory budget
(``worker.py``): the safety net, whose verdict depends on the machine. Not counted: the per-object
budget over all of a policy's calls (``RUNTIME_COST_BUDGET``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from .reads import variables_reached

PER_CALL_LIMIT = 1_000_000                  # k8s.io/apiserver/pkg/apis/cel: PerCallLimit
RUNTIME_COST_BUDGET = 10_000_000            # ... RuntimeCELCostBudget (per policy binding or object)
STATIC_ESTIMATED_COST_LIMIT = 10_000_000    # k8s.io/apiextensions-apiserver validation: per CRD rule
MAX_LIST_ELEMENTS = 1_000_000               # what the `cel` library may materialise in one list
# cel-go's common.StringTraversalCostFactor (0.1) and RegexStringLengthCostFactor (0.25): _tenth, _quarter
LIST_CREATE, MAP_CREATE, STRUCT_CREATE = 10, 30, 40
MACROS = {"all", "exists", "exists_one", "existsOne", "map", "filter", "transformList", "transformMap"}


class Unparsable(Exception):
    """Text this parser does not read (the library reports the real error, if any)."""


# --- lexing -------------------------------------------------------------------------------------

_TOKEN = re.compile(r"""
    (?P<space>\s+|//[^\n]*)
  | (?P<string>(?:[rR][bB]?|[bB][rR]?)?(?:'''(?:\\.|[^\\])*?'''|\"\"\"(?:\\.|[^\\])*?\"\"\"
                |'(?:\\.|[^\\'\n])*'|"(?:\\.|[^\\"\n])*"))
  | (?P<number>0[xX][0-9a-fA-F]+[uU]?|(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?[uU]?)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<op>\|\||&&|==|!=|<=|>=|\.\?|\[\?|\{\?|[-+*/%!<>?:.,\[\](){}])
""", re.X | re.S)


def _tokens(text: str) -> list[tuple[str, str]]:
    out, i = [], 0
    while i < len(text):
        m = _TOKEN.match(text, i)
        if m is None:
            raise Unparsable(f"unexpected {text[i]!r}")
        i = m.end()
        if m.lastgroup != "space":
            out.append((m.lastgroup, m.group()))
    out.append(("end", ""))
    return out


def _string_size(token: str) -> int:
    """Code points of a string literal (escapes count as one; a floor either way)."""
    body = token.lstrip("rRbB")
    quote = 3 if body[:3] in ("'''", '"""') else 1
    body = body[quote:-quote]
    return len(re.sub(r"\\(?:[0-7]{3}|x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|.)", "x", body, flags=re.S))


# --- parsing ------------------------------------------------------------------------------------
# Nodes are tuples: ("lit", size, value), ("ident", name), ("select", operand, field),
# ("call", name, target or None, args), ("list", items), ("map", entries), ("struct", values),
# ("macro", name, target, args), ("has", operand), ("and" | "or", lhs, rhs), ("cond", c, t, f).

class _Parser:
    RELATIONS = ("<", "<=", ">=", ">", "==", "!=", "in")

    def __init__(self, text: str) -> None:
        self.toks = _tokens(text)
        self.i = 0

    def peek(self) -> str:
        kind, text = self.toks[self.i]
        return text if kind in ("op", "ident") else kind

    def take(self, want: str | None = None) -> tuple[str, str]:
        tok = self.toks[self.i]
        if want is not None and (tok[1] if tok[0] in ("op", "ident") else tok[0]) != want:
            raise Unparsable(f"expected {want!r}, got {tok[1]!r}")
        self.i += 1
        return tok

    def parse(self) -> tuple:
        node = self.expr()
        self.take("end")
        return node

    def expr(self) -> tuple:
        cond = self.binary(0)
        if self.peek() == "?":
            self.take()
            yes = self.binary(0)
            self.take(":")
            return ("cond", cond, yes, self.expr())
        return cond

    LEVELS = (("||",), ("&&",), RELATIONS, ("+", "-"), ("*", "/", "%"))

    def binary(self, level: int) -> tuple:
        if level == len(self.LEVELS):
            return self.unary()
        node = self.binary(level + 1)
        while self.peek() in self.LEVELS[level]:
            op = self.take()[1]
            rhs = self.binary(level + 1)
            node = ("and" if op == "&&" else "or", node, rhs) if op in ("&&", "||") else ("call", op, None,
                                                                                          [node, rhs])
        return node

    def unary(self) -> tuple:
        if self.peek() in ("!", "-"):
            op = self.take()[1]
            operand = self.unary()
            if op == "-" and operand[0] == "lit":
                return operand
            return ("call", op, None, [operand])
        return self.member(self.primary())

    def args(self, close: str) -> list[tuple]:
        out = []
        while self.peek() != close:
            if self.peek() in ("?",):
                self.take()
            out.append(self.expr())
            if self.peek() != ",":
                break
            self.take()
        self.take(close)
        return out

    def member(self, node: tuple) -> tuple:
        while True:
            tok = self.peek()
            if tok in (".", ".?"):
                self.take()
                name = self.take()[1]
                if self.peek() == "(":
                    self.take()
                    args = self.args(")")
                    node = ("macro", name, node, args) if name in MACROS and args else ("call", name, node, args)
                else:
                    node = ("select", node, name)
            elif tok in ("[", "[?"):
                self.take()
                index = self.expr()
                self.take("]")
                node = ("call", "[]", None, [node, index])
            else:
                return node

    def primary(self) -> tuple:
        kind, text = self.take()
        if kind == "number":
            return ("lit", 1, None)
        if kind == "string":
            return ("lit", _string_size(text), None)
        if kind == "ident":
            if text in ("true", "false"):
                return ("lit", 1, text == "true")
            if text == "null":
                return ("lit", 1, None)
            if self.peek() == "(":
                self.take()
                args = self.args(")")
                return ("has", args[0]) if text == "has" and args else ("call", text, None, args)
            if self.peek() == "{":      # a message literal
                self.take()
                return ("struct", [value for _, value in self.entries()])
            return ("ident", text)
        if text == ".":
            return self.primary()
        if text == "(":
            node = self.expr()
            self.take(")")
            return node
        if text in ("[",):
            return ("list", self.args("]"))
        if text in ("{", "{?"):
            return ("map", self.entries())
        raise Unparsable(f"unexpected {text!r}")

    def entries(self) -> list[tuple[tuple, tuple]]:
        out = []
        while self.peek() != "}":
            if self.peek() == "?":
                self.take()
            key = self.expr()
            self.take(":")
            out.append((key, self.expr()))
            if self.peek() != ",":
                break
            self.take()
        self.take("}")
        return out


def parse(text: str) -> tuple:
    """The expression's tree; Unparsable when this parser does not read it."""
    try:
        return _Parser(text).parse()
    except (RecursionError, IndexError) as exc:
        raise Unparsable(type(exc).__name__) from None


# --- the floor ----------------------------------------------------------------------------------

class _Unknown:
    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN = _Unknown()          # a value this floor does not know (the object's fields when judged alone)
MAX_VISITS = 50_000           # nodes one floor visits (about 0.1 s); beyond, no verdict: the safety net decides


@dataclass(slots=True)      # built once per node visited: no frozen-dataclass setattr cost
class Floor:
    """The least cost and value size of an expression; ``value`` a known constant (bool),
    ``listy`` whether the value is a list (for the materialisation bound), ``known`` the concrete
    value when the inputs are given (else UNKNOWN)."""
    cost: int
    size: int = 0
    value: Any = None
    listy: bool = False
    known: Any = UNKNOWN


EMPTY = Floor(0)


class _TooBig(Exception):
    pass


def _tenth(size: int) -> int:
    """``ceil(size * 0.1)`` in integers (sizes of doubled strings pass a float's range)."""
    return -(-size // 10)


def _quarter(size: int) -> int:
    return -(-size // 4)


def _of(cost: int, value: Any) -> Floor:
    """A concrete value's floor: its size as cel-go's tracker measures it (length, else 1)."""
    size = len(value) if isinstance(value, (str, bytes, list, dict)) else 1
    return Floor(cost, size, listy=isinstance(value, list), known=value)


class _Coster:
    """Floors of one expression: ``variables`` the static floors of a policy's variables;
    ``values`` the concrete inputs (``object``, ``self``, ``variables``...) when judging one call;
    ``limit``: a comprehension stops counting once past it (the verdict is known)."""

    def __init__(self, variables: Mapping[str, Floor], values: Mapping[str, Any] = {},
                 limit: int | None = None) -> None:
        self.variables, self.values, self.limit = variables, values, limit
        self.scopes: list[dict[str, Any]] = []
        self.visits = 0
        self.mentioned: dict[int, bool] = {}

    def floor(self, node: tuple) -> Floor:
        self.visits += 1
        if self.visits > MAX_VISITS:
            raise _TooBig
        return getattr(self, "_" + node[0])(node)

    def _bound(self, name: str) -> Any:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return self.values.get(name, UNKNOWN)

    def _lit(self, node: tuple) -> Floor:
        return Floor(0, node[1], node[2])

    def _ident(self, node: tuple) -> Floor:
        value = self._bound(node[1])
        return Floor(1) if value is UNKNOWN else _of(1, value)

    def _select(self, node: tuple) -> Floor:
        # a chain of selections is one attribute to cel-go's tracker: the identifier's cost is its floor
        operand = node[1]
        if operand == ("ident", "variables") and self._bound("variables") is UNKNOWN \
                and not any("variables" in scope for scope in self.scopes):
            known = self.variables.get(node[2], EMPTY)
            return Floor(1, known.size, known.value, known.listy)
        base = self.floor(operand)
        if isinstance(base.known, dict) and node[2] in base.known:
            return _of(base.cost, base.known[node[2]])
        return Floor(base.cost)

    def _has(self, node: tuple) -> Floor:
        return Floor(self.floor(node[1]).cost + 1)

    def _and(self, node: tuple) -> Floor:        # short-circuit: the left side always runs
        return Floor(self.floor(node[1]).cost)

    _or = _and

    def _cond(self, node: tuple) -> Floor:
        c, t, f = (self.floor(n) for n in node[1:])
        return Floor(c.cost + min(t.cost, f.cost), min(t.size, f.size))

    def _list(self, node: tuple) -> Floor:
        items = [self.floor(n) for n in node[1]]
        constant = all(n[0] == "lit" for n in node[1])     # folded to a constant (cel.OptOptimize)
        return Floor(0 if constant else LIST_CREATE + sum(i.cost for i in items), len(items), listy=True)

    def _map(self, node: tuple) -> Floor:
        cost = sum(self.floor(k).cost + self.floor(v).cost for k, v in node[1])
        constant = all(k[0] == "lit" and v[0] == "lit" for k, v in node[1])
        return Floor(0 if constant else MAP_CREATE + cost, len(node[1]))

    def _struct(self, node: tuple) -> Floor:
        return Floor(STRUCT_CREATE + sum(self.floor(v).cost for v in node[1]))

    def _body(self, args: list[tuple], names: list[str], bound: Iterable[Any]) -> Floor:
        self.scopes.append(dict(zip(names, bound)))
        try:
            bodies = [self.floor(a) for a in args[len(names):]]
        finally:
            self.scopes.pop()
        return Floor(sum(b.cost for b in bodies), value=bodies[-1].value if bodies else None)

    def _mentions(self, node: tuple, names: list[str]) -> bool:
        """Whether the body of the comprehension ``node`` names any of ``names`` (shadowing
        ignored: a yes may be spurious, and only costs counting element by element)."""
        if id(node) not in self.mentioned:     # the tree outlives the coster: ids stay unique
            todo, found = list(node[3][len(names):]), False
            while todo and not found:
                part = todo.pop()
                found = len(part) == 2 and part[0] == "ident" and part[1] in names if isinstance(part, tuple) \
                    else False
                todo.extend(p for p in part if isinstance(p, (tuple, list)))
            self.mentioned[id(node)] = found
        return self.mentioned[id(node)]

    def _macro(self, node: tuple) -> Floor:
        _, name, target, args = node
        rng = self.floor(target)
        count = 1 if len(args) == 2 or name == "map" else 2      # map(x, p, f) binds one name
        names = [a[1] for a in args[:count] if a[0] == "ident"]
        # all/exists stop at the first false/true: an element after the first counts only when
        # the body cannot stop them; the other macros visit every element
        goes_on = {"all": True, "exists": False}.get(name)
        if isinstance(rng.known, (list, dict)) and self._mentions(node, names):
            items = list(rng.known.items() if isinstance(rng.known, dict) else enumerate(rng.known))
            cost, steps, body = rng.cost, 0, EMPTY
            for key, item in items:
                body = self._body(args, names, (key, item) if len(names) == 2 else
                                  (key if isinstance(rng.known, dict) else item,))
                cost, steps = cost + 1 + body.cost, steps + 1
                if goes_on is not None and body.value is not goes_on or \
                        (self.limit is not None and cost > self.limit):
                    break
            size = len(items)
        else:   # the body is the same for every element (or the elements are unknown)
            body = self._body(args, names, [UNKNOWN] * len(names))
            size = rng.size
            steps = size if goes_on is None or body.value is goes_on else min(size, 1)
            cost = rng.cost + steps * (1 + body.cost)
        if name in ("map", "transformList", "filter"):
            return Floor(cost, size if name != "filter" else 0, listy=True)
        value = body.value if goes_on is not None and body.value is goes_on and steps == size and size else None
        return Floor(cost, 1, value)

    def _call(self, node: tuple) -> Floor:
        _, name, target, args = node
        if name == "bind" and target == ("ident", "cel") and len(args) == 3:   # cel.bind(x, init, body): init
            self.scopes.append({str(args[0][1]): UNKNOWN})                   # runs only if body reads x
            try:
                return self.floor(args[2])
            finally:
                self.scopes.pop()
        target_floor = self.floor(target) if target is not None else None
        floors = [self.floor(a) for a in args]
        base = sum(f.cost for f in floors) + (target_floor.cost if target_floor else 0)
        operands = ([target_floor] if target_floor else []) + floors
        return self._function(name, base, floors, operands)

    @staticmethod
    def _function(name: str, base: int, floors: list[Floor], operands: list[Floor]) -> Floor:
        if name == "dyn" and floors:
            return Floor(base + 1, floors[0].size, floors[0].value, floors[0].listy, floors[0].known)
        if name == "[]" and len(floors) == 2:
            box, key = floors[0].known, floors[1].known
            if isinstance(box, list) and type(key) is int and 0 <= key < len(box) or \
                    isinstance(box, dict) and isinstance(key, (str, int)) and key in box:
                return _of(base + 1, box[key])
        if name == "+" and len(floors) == 2:
            a, b = floors
            size = a.size + b.size
            if a.listy or b.listy:
                return Floor(base + 1, size, listy=True)
            return Floor(base + _tenth(size), size)
        if name in ("==", "!=", "<", "<=", ">", ">=") and len(floors) == 2:
            return Floor(base + _tenth(min(floors[0].size, floors[1].size)), 1)
        if name == "in" and len(floors) == 2:   # a list is searched; a map's key is one look-up
            return Floor(base + (1 if isinstance(floors[1].known, dict) else floors[1].size), 1)
        if name in ("startsWith", "endsWith") and len(operands) == 2:   # the receiver's length at run time,
            return Floor(base + _tenth(min(operands[0].size, operands[1].size)), 1)   # the prefix's estimated
        if name == "contains" and len(operands) == 2:
            return Floor(base + _tenth(operands[0].size) * _tenth(operands[1].size), 1)
        if name == "matches" and len(operands) == 2:
            return Floor(base + _tenth(operands[0].size + 1) * _quarter(operands[1].size), 1)
        # cel-go's own functions and operators cost 1; the Kubernetes libraries' functions have their
        # own estimators (apiserver cel/library/cost.go), some 0 for short inputs: counted as 0
        return Floor(base + (1 if name in _CEL_GO_UNIT else 0), 1 if name == "size" else 0)


def floor(text: str, variables: Mapping[str, Floor] = {}) -> Floor | None:
    """The floor of ``text`` on any input, given the floors of the policy's variables; None when
    unparsable."""
    try:
        return _Coster(variables).floor(parse(text))
    except (Unparsable, RecursionError, _TooBig):
        return None


class Calls:
    """The per-call verdict with the inputs known, for one evaluating context (its parse trees are
    kept here, not in a module global): the floor of the expression on these inputs, whose fields'
    sizes are now known and whose comprehensions over them are counted element by element."""

    def __init__(self) -> None:
        self.trees: dict[str, tuple | None] = {}
        self.spent = 0   # the floors of this policy's calls on this object (``new_budget`` resets it)

    def new_budget(self) -> None:
        """A policy (or a CRD's rules) starts on an object: the per-object budget is whole again."""
        self.spent = 0

    def over_limit(self, source: str, values: Mapping[str, Any]) -> str | None:
        """The API server's error when ``source`` on ``values`` is sure to pass the per-call cost
        limit, or the calls so far on this object are sure to pass the per-object budget
        (``RUNTIME_COST_BUDGET``, counted from the floors, so never early); else None (and None when
        this parser does not read it)."""
        if source not in self.trees:
            try:
                tree = parse(source)
            except Unparsable:
                tree = None
            self.trees[source] = tree if tree is not None and _sized(tree) else None
        tree = self.trees[source]
        if tree is None:
            return None
        try:
            est = _Coster({}, values, PER_CALL_LIMIT).floor(tree)
        except (RecursionError, _TooBig):
            return None
        except Exception:   # noqa: BLE001 - a fault here must never decide a verdict: the safety net does
            return None
        if est.cost > PER_CALL_LIMIT:
            return (f"operation cancelled: actual cost limit exceeded (on this object the expression costs more "
                    f"than {PER_CALL_LIMIT:,}, the API server's per-call CEL cost limit, by cel-go's cost model)")
        self.spent += est.cost
        if self.spent <= RUNTIME_COST_BUDGET:
            return None
        return (f"validation failed due to running out of cost budget, no further validation rules will be run "
                f"(this object's calls cost more than {RUNTIME_COST_BUDGET:,}, the API server's per-object CEL "
                "cost budget, by cel-go's cost model)")


_CEL_GO_UNIT = frozenset({"!", "-", "*", "/", "%", "[]", "size", "int", "uint", "double", "bool", "type",
                          "duration", "timestamp", "getFullYear", "getMonth", "getDayOfYear", "getDayOfMonth",
                          "getDate", "getDayOfWeek", "getHours", "getMinutes", "getSeconds", "getMilliseconds",
                          "hasValue", "value", "orValue", "or", "of", "none"})
_SIZED_CALLS = frozenset({"in", "matches", "contains", "startsWith", "endsWith", "+"})


def _sized(node: Any) -> bool:
    """Whether the tree has a part whose cost grows with its inputs' sizes (a comprehension, ``in``,
    string matching or joining): only those can pass the limit on some objects and not others."""
    if isinstance(node, list):
        return any(_sized(item) for item in node)
    if not isinstance(node, tuple):
        return False
    if node and (node[0] == "macro" or node[0] == "call" and node[1] in _SIZED_CALLS):
        return True
    return any(_sized(part) for part in node if isinstance(part, (tuple, list)))


def policy_problem(variables: Iterable[tuple[str, str]], expressions: Iterable[tuple[str, str]]) -> str | None:
    """Why a policy's expressions cannot pass on any object (``(where, source)`` pairs; variables
    ``(name, source)`` in order, each seeing the earlier ones), or None. Only variables an
    expression reaches count (they are evaluated lazily, each as its own call; ``reads``)."""
    floors: dict[str, Floor] = {}
    sources = {}
    for name, source in variables:
        sources[name] = source
        floors[name] = floor(source, floors) or EMPTY
    expressions = list(expressions)
    reached = set(variables_reached((source for _, source in expressions), sources))
    checks = [(f"variable {name!r}", floors[name]) for name in sources if name in reached]
    checks += [(where, floor(source, floors) or EMPTY) for where, source in expressions]
    return problem_of(checks, PER_CALL)


@dataclass(frozen=True)
class Limit:
    """A cost limit of the API server: its value, its name and what passing it does."""

    value: int
    name: str
    outcome: str


PER_CALL = Limit(PER_CALL_LIMIT, "the API server's per-call CEL cost limit",
                 "every evaluation fails (with failurePolicy Fail, every matching object is denied)")
CRD_ESTIMATE = Limit(STATIC_ESTIMATED_COST_LIMIT, "the API server's estimated cost limit for a CRD rule",
                     "the API server refuses the CRD")


def problem_of(checks: Iterable[tuple[str, Floor]], limit: Limit = PER_CALL) -> str | None:
    for where, est in checks:
        if est.cost > limit.value:
            return (f"{where} costs at least {est.cost:,} on every object by cel-go's cost model, over "
                    f"{limit.name} ({limit.value:,}): {limit.outcome}")
        if est.listy and est.size > MAX_LIST_ELEMENTS:
            return (f"{where} builds a list of at least {est.size:,} elements: cel-go joins lists without copying "
                    f"them, the `cel` library copies them (at most {MAX_LIST_ELEMENTS:,} elements are evaluated "
                    "here)")
    return None


def rule_problem(rule: Mapping[str, Any]) -> str | None:
    """Why a CRD validation rule cannot pass, or None: a floor over the API server's static limit
    for CRD rules (it refuses the CRD) or over the per-call limit (every evaluation fails)."""
    checks = [(f"the {part}", floor(rule[part]) or EMPTY) for part in ("rule", "messageExpression")
              if isinstance(rule.get(part), str)]
    return problem_of(checks, CRD_ESTIMATE) or problem_of(checks, PER_CALL)
