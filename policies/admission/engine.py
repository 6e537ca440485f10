"""Evaluate upstream's admission rules on one object as the API server would at CREATE.

Order, as in the API server: matching MutatingAdmissionPolicies set their defaults (JSONPatch
mutations), then the CRD's `x-kubernetes-validations` rules run (schema validation), then the
matching ValidatingAdmissionPolicies. Semantics followed:

- ``request.operation`` is ``"CREATE"``; ``oldObject`` is null; transition rules (those reading
  ``oldSelf``) do not run on create (with ``optionalOldSelf`` they see ``optional.none()``).
- ``matchConstraints`` and the binding's ``matchResources`` (resourceRules by group, version,
  resource and operation; excludeResourceRules; label selectors), then ``matchConditions``.
- ``variables`` in order, each seeing the earlier ones; ``messageExpression`` before ``message``.
- An expression that errors at run time counts as the API server counts it: with
  ``failurePolicy: Fail`` (Volcano's choice) the request is denied.
- An expression the library cannot compile, or that calls a function not implemented here, is
  not evaluated: it becomes a note naming the rule, never a crash and never a silent pass.
- The API server's CEL limits: expressions over its size and depth limits never reach this engine
  (the loader refuses the policy or CRD, ``limits``); evaluation runs in a forked child with a CPU
  time and memory budget (``worker``), and an expression that runs out of it fails as one that runs
  out of cost budget fails in the API server. A ``messageExpression`` result over 5 KiB is not used.

Each expression is compiled once per evaluating process (``compile_expr`` is cached). `check` starts
that process before the stack renders (``start``): it compiles the rule set's expressions meanwhile,
and receives the objects before the other rules run (``send``), so that its work overlaps theirs.
"""
from __future__ import annotations

import functools
import json
import os
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, Iterator

from modules.core.selectors import selector_matches
from modules.core.wire import plain
from modules.semantics.shapes import as_dict, labels, meta

from . import cost, limits, worker
from .reads import variables_in, common_path, fields_read
from .jsonpatch import EvalError, apply_patch, rewrite_jsonpatch
from .loader import Index

# Standard CEL functions the `cel` package implements itself (macros and operators are `_x_`/`@x`).
BUILTINS = frozenset({
    "size", "contains", "startsWith", "endsWith", "matches", "int", "uint", "double", "string", "bytes", "bool",
    "type", "dyn", "duration", "timestamp", "has", "all", "exists", "exists_one", "map", "filter",
    "hasValue", "orValue", "value", "or", "of", "none", "ofNonZeroValue",
    "getFullYear", "getMonth", "getDayOfYear", "getDayOfMonth", "getDate", "getDayOfWeek", "getHours",
    "getMinutes", "getSeconds", "getMilliseconds",
})
MEMO_SIZE = 4096
ISOLATE = True    # evaluate in a forked child under a CPU and memory budget (worker.py)
_WORKER: tuple[Any, worker.Worker] | None = None
NO_VARIABLES: dict = {}


def _isolating() -> bool:
    return ISOLATE and hasattr(os, "fork")


@functools.lru_cache(maxsize=None)
def runtime() -> SimpleNamespace:
    """The CEL library and our Kubernetes functions, loaded by the process that first compiles an
    expression. In `check` that is the evaluating child, forked before the stack renders: the
    command's own process never loads them (the extension, the logging it brings and the function
    table cost about 4 ms of every run)."""
    import logging

    from modules.upstream.cel import library as kf
    from .celrt import cel

    # The library logs each failing Python function at WARNING before raising; the error itself
    # reaches us as an exception, so the log line is noise in reports.
    for name in ("cel", "cel.cel", "cel_expr_python"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    functions = kf.functions(cel.OptionalValue)
    return SimpleNamespace(cel=cel, functions=functions, known=BUILTINS | set(functions), namespaces=kf.NAMESPACES,
                           no_old_self=cel.OptionalValue.none())   # what an optionalOldSelf rule sees on create


@dataclass(frozen=True)
class Compiled:
    """A CEL expression compiled once, or why it is not evaluated."""
    source: str
    program: Any            # cel.Program, or None when not evaluable
    problem: str = ""       # why it is not evaluated (compile error, unimplemented function)
    reads_old: bool = False
    reads: frozenset[str] = frozenset()   # the variables it names


class NotEvaluable(Exception):
    """The expression needs something this evaluator lacks (a function, a variable)."""


def _native_panic(exc: BaseException) -> bool:
    """A Rust panic surfacing through pyo3 (a BaseException, so ``except Exception`` misses it)."""
    return type(exc).__name__ == "PanicException"


@functools.lru_cache(maxsize=None)
def compile_expr(source: str) -> Compiled:
    if (why := worker.over_budget.get("C:" + source)) is not None:
        return Compiled(source, None, f"does not compile: it {why}")
    if (wrong := limits.problem(source)) is not None:   # the loader refuses these; composed rules too
        return Compiled(source, None, f"does not compile: it {wrong}")
    worker.note(worker.COMPILE, source)
    try:
        program = runtime().cel.compile(source)
    except BaseException as exc:   # parse errors are ValueError; a panic is a BaseException
        if not isinstance(exc, Exception) and not _native_panic(exc):
            raise
        return Compiled(source, None, f"does not compile: {' '.join(str(exc).split())[:200]}")
    names = set(program.variables())
    if "authorizer" in names:
        return Compiled(source, None, "reads `authorizer` (the requester's permissions), unknown before apply")
    known = runtime().known
    unknown = sorted(f for f in program.functions() if f.isidentifier() and not f.startswith("_") and f not in known)
    if unknown:
        return Compiled(source, None, f"calls {', '.join(unknown)}, which trainstack does not implement")
    return Compiled(source, program, reads_old="oldSelf" in names, reads=frozenset(names))


class Scope:
    """One CEL context: the functions once, the variables as set."""

    # Converted when an expression first names it: the request is our own small map, read by few
    # expressions. Every other variable is converted where it is bound, so that a value the library
    # cannot convert, or one over the child's budget, fails there, outside any expression, as always.
    ON_FIRST_READ = frozenset({"request"})

    def __init__(self) -> None:
        rt = runtime()
        self.context = rt.cel.Context(variables=dict(rt.namespaces), functions=rt.functions)
        self.bound: dict[str, Any] = {}
        self.pending: dict[str, Any] = {}   # set, but not yet given to the context
        self.costs = cost.Calls()           # the per-call cost limit by cel-go's model (cost.py)

    def bind(self, values: dict[str, Any]) -> None:
        """Set variables; each binding converts the value to CEL, so one already bound to the same
        value is skipped."""
        for name, value in values.items():
            if name in self.bound and self.bound[name] is value:
                self.pending.pop(name, None)
            elif name in self.ON_FIRST_READ:
                self.pending[name] = value
            else:
                self.pending.pop(name, None)
                self.context.add_variable(name, value)
                self.bound[name] = value

    def _give(self, names: frozenset[str]) -> None:
        for name in names & self.pending.keys():
            value = self.pending[name]
            self.context.add_variable(name, value)   # a value it cannot convert stays pending: never a stale one
            del self.pending[name]
            self.bound[name] = value

    def run(self, compiled: Compiled) -> Any:
        if compiled.program is None:
            raise NotEvaluable(compiled.problem)
        if (why := worker.over_budget.get(compiled.source)) is not None:
            raise EvalError(f"the expression {why}")
        if self.pending:
            self._give(compiled.reads)
        if (over := self.costs.over_limit(compiled.source, self.bound)) is not None:
            raise EvalError(over)
        worker.note(worker.RUN, compiled.source)
        if not worker.start_call():
            raise EvalError(f"the runtime budget of the object ({limits.OBJECT_CPU_SECONDS:g} s of CPU time, the "
                            "API server's per-object CEL cost limit) is spent")
        try:
            return compiled.program.execute(self.context)
        except KeyError as exc:
            raise EvalError(f"no such key: {exc.args[0] if exc.args else exc}") from None
        except BaseException as exc:
            if not isinstance(exc, Exception) and not _native_panic(exc):
                raise
            text = " ".join(str(exc).split())
            if "Undefined variable or function" in text:
                raise NotEvaluable(text.split(". Check")[0]) from None
            text = re.sub(r"^Function '(\w+)' error: Python function call failed: \w+: ", r"\1: ", text)
            raise EvalError(text.split(". Check function arguments")[0]) from None
        finally:
            worker.end_call()


def failed_variable(source: str, errors: dict[str, Exception]) -> EvalError | NotEvaluable | None:
    """The error of the first failed variable ``source`` reads, of the same kind, naming the
    variable that failed: a variable that could not be evaluated here makes the expression not
    evaluable, not denied. A variable that reads a failed one carries that one's error (its
    ``variable``), not nested."""
    for name in variables_in(source) if errors else ():
        if name in errors:
            failed = errors[name]
            origin = getattr(failed, "variable", None)
            said = type(failed)(str(failed) if origin is not None else f"variable {name!r}: {failed}")
            said.variable = origin if origin is not None else name
            return said
    return None


# --- matching ---------------------------------------------------------------------------------

def _rule_hits(rule: dict, group: str, version: str, resource: str, operation: str) -> bool:
    """A resource rule against a request on the main resource (no subresource): ``*`` and
    ``<resource>/*`` and ``*/*`` match it, ``<resource>/status`` does not (the API server splits
    each entry at its first ``/``)."""
    def has(values, item):
        return values is None or "*" in values or item in values

    def resource_hits(entry: object) -> bool:
        name, _, sub = str(entry).partition("/")
        return name in ("*", resource) and sub in ("*", "")
    resources = rule.get("resources")
    return (has(rule.get("operations"), operation) and has(rule.get("apiGroups"), group)
            and has(rule.get("apiVersions"), version)
            and (resources is None or any(resource_hits(r) for r in resources)))


def _matches(match: dict, target: "Target", default: bool) -> bool:
    """``matchConstraints`` (``default`` False: no resourceRules, no match) or a binding's
    ``matchResources`` (``default`` True: no resourceRules constrains nothing, its selectors and
    excludeResourceRules still apply)."""
    rules = match.get("resourceRules")
    if not rules and not default:
        return False
    if rules and not any(_rule_hits(r, target.group, target.version, target.resource, "CREATE") for r in rules):
        return False
    if any(_rule_hits(r, target.group, target.version, target.resource, "CREATE")
           for r in match.get("excludeResourceRules") or []):
        return False
    return selector_matches(match.get("objectSelector"), labels(target.obj)) and \
        (not meta(target.obj).get("namespace")
         or selector_matches(match.get("namespaceSelector"), labels(as_dict(target.namespace))))


def _resource_hits(policy: dict, target: "Target") -> bool:
    rules = policy["matchConstraints"].get("resourceRules") or []
    return any(_rule_hits(r, target.group, target.version, target.resource, "CREATE") for r in rules)


@dataclass
class Target:
    """An object to judge, with what its API request names (group, version, kind, resource) and its Namespace."""
    obj: dict
    group: str
    version: str
    kind: str
    resource: str
    namespace: dict | None
    # Whether the chart's MutatingAdmissionPolicies run (``custom.map_enable``; the chart installs
    # them only then): without them the VAPs and CRD rules meet the object as the webhooks left it.
    mutating: bool = True


# --- results ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Denial:
    """Upstream would refuse the object: who (policy or CRD rule), where and upstream's words."""

    source: str        # "Volcano ValidatingAdmissionPolicy 'x' (release, file)" / "CRD x (release) rule ..."
    path: str          # field path in the object
    message: str       # upstream's message (or the run-time error it would report)
    rule: str          # the expression, whitespace collapsed
    reads: tuple[str, ...] = ()   # object fields the expression reads (VAPs have no fieldPath)


@dataclass(frozen=True)
class SkippedRule:
    """An upstream rule that matched but could not be evaluated, and why."""

    source: str
    rule: str
    reason: str


def _squash(text: str, limit: int = 240) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


# --- the rule set -------------------------------------------------------------------------------

_CORE_PLURALS = {"Endpoints": "endpoints", "NetworkPolicy": "networkpolicies", "PriorityClass": "priorityclasses",
                 "StorageClass": "storageclasses", "Ingress": "ingresses", "IngressClass": "ingressclasses"}


def _memo_key(target: Target) -> str | None:
    try:
        return json.dumps([target.obj, target.namespace, target.mutating], sort_keys=True, default=str)
    except (TypeError, ValueError):
        return None


def _for_all(rule: dict, compiled: Compiled) -> Compiled | None:
    """A CRD rule as one expression over every value of its schema node (``__values``, bound to
    them all), where it can be one: it compiles and reads no ``oldSelf``."""
    if compiled.program is None or compiled.reads_old:
        return None
    return compile_expr(f"__values.all(self, ({rule['rule']}))")


def _plural(kind: str) -> str:
    if kind in _CORE_PLURALS:
        return _CORE_PLURALS[kind]
    lower = kind.lower()
    if lower.endswith("y") and lower[-2:-1] not in "aeiou":
        return lower[:-1] + "ies"
    return lower + ("es" if lower.endswith(("s", "x", "ch", "sh")) else "s")


class RuleSet:
    """Upstream's rules, ready to evaluate (expressions compiled lazily, each once)."""

    def __init__(self, index: Index):
        self.index = index
        # A policy without a binding has no effect in the API server.
        self.policies = [p for p in index.policies if p.get("bound")]
        self.crds = {(c["group"], c["version"], c["kind"]): c for c in index.crds}
        self.plurals = {(c["group"], c["kind"]): c["plural"] for c in index.crds}
        self._scopes: dict[str, Scope] = {}
        self._memo: OrderedDict[str, list] = OrderedDict()
        self._by_resource: dict[tuple[str, str, str], list[dict]] = {}
        self._lock = threading.RLock()
        self._ahead: tuple[list[str], list[Target]] | None = None   # sent with `send`, answer unread
        self._sent: tuple[list[dict], Any, list, bool] | None = None   # what `send` keyed, for `evaluate_all`

    @property
    def missing(self) -> list[str]:
        return self.index.missing

    def policy_sources(self) -> frozenset[str]:
        """The ``source`` of every outcome an admission policy (not a CRD rule) gives: a caller drops
        these where the chart does not install the policies (``vap_enable: false``)."""
        return frozenset(self._label(p) for p in self.policies)

    def scope(self, name: str = "policy") -> Scope:
        """Policies and CRD rules bind different variables: separate contexts keep a rebind of
        `self` from converting the whole object again."""
        if name not in self._scopes:
            self._scopes[name] = Scope()
        return self._scopes[name]

    def target(self, obj: dict, namespaces: dict[str, dict], mutating: bool = True) -> Target | None:
        api, kind = obj.get("apiVersion"), obj.get("kind")
        if not isinstance(api, str) or not isinstance(kind, str):
            return None
        group, _, version = api.rpartition("/")
        resource = self.plurals.get((group, kind)) or _plural(kind)
        ns = meta(obj).get("namespace")
        ns = ns if isinstance(ns, str) else None
        return Target(obj, group, version, kind, resource, namespaces.get(ns) if ns else None, mutating)

    def applicable(self, target: Target) -> list[dict]:
        key = (target.group, target.version, target.resource)
        if key not in self._by_resource:   # the resource rules alone, once per resource
            self._by_resource[key] = [p for p in self.policies if _resource_hits(p, target)]
        return [p for p in self._by_resource[key]
                if _matches(p["matchConstraints"], target, False) and _matches(p["bindingMatch"], target, True)]

    def evaluate(self, obj: dict, namespaces: dict[str, dict] | None = None, mutating: bool = True
                 ) -> list[Denial | SkippedRule]:
        """What upstream says about ``obj``. Results are remembered by content: the pack and the
        test suite judge the same rendered objects again and again. ``mutating`` false: the
        MutatingAdmissionPolicies are not installed (the chart's ``map_enable`` off)."""
        target = self.target(plain(obj), namespaces or {}, mutating)
        if target is None or not self._may_apply(target):
            return []
        with self._lock:    # one CEL context per rule set; the pack's gRPC server has threads
            self._collect()
            return self._answer(_memo_key(target), target)

    def evaluate_all(self, objects: list[dict], namespaces: dict[str, dict] | None = None, mutating: bool = True
                     ) -> list[list[Denial | SkippedRule]]:
        """``evaluate`` of each object, those not remembered in one round trip to the evaluating
        child (one per check, not one per object), the objects handed over with ``send`` read back
        first."""
        with self._lock:
            if self._sent is None:
                self._new_round()
            # before the wait: the child works meanwhile
            targets = (self._keyed_before(objects, namespaces, mutating)
                       or self._targets(objects, namespaces, mutating))
            self._collect()
            todo = self._todo(targets)
            if todo:
                for key, out in zip(todo, self._isolated(list(todo.values()))):
                    self._remember(key, out)
            return [[] if item is None else self._answer(*item) for item in targets]

    def _new_round(self) -> None:
        """A new evaluation round (a `check`): run-time budget verdicts of the last one are forgotten
        with the outcomes decided under them (``worker.forget_run_verdicts``)."""
        if worker.forget_run_verdicts():
            self._memo.clear()

    def _answer(self, key: str | None, target: Target) -> list[Denial | SkippedRule]:
        """The remembered outcome for ``target``, or its evaluation now."""
        if key is not None and key in self._memo:
            self._memo.move_to_end(key)
            return self._memo[key]
        out = self._isolated([target])[0]
        self._remember(key, out)
        return out

    def _keyed_before(self, objects: list[dict], namespaces: dict[str, dict] | None, mutating: bool = True
                      ) -> list[tuple[str | None, Target] | None] | None:
        """The keys and targets ``send`` made for these very objects (the same dicts in the same
        order: `check` hands the stack over before its rules run and judges it after; no rule
        changes an object, tests/policies/rules/test_robustness.py), else None."""
        sent, self._sent = self._sent, None
        if sent is None or len(sent[0]) != len(objects) or any(a is not b for a, b in zip(sent[0], objects)) \
                or sent[1] != namespaces or sent[3] != mutating:
            return None
        return sent[2]

    def _targets(self, objects: list[dict], namespaces: dict[str, dict] | None, mutating: bool = True
                 ) -> list[tuple[str | None, Target] | None]:
        """Each object's memo key and target (None where no rule applies)."""
        targets: list[tuple[str | None, Target] | None] = []
        for obj in objects:
            target = self.target(plain(obj), namespaces or {}, mutating)
            targets.append(None if target is None or not self._may_apply(target) else (_memo_key(target), target))
        return targets

    def _todo(self, targets: list[tuple[str | None, Target] | None]) -> dict[str, Target]:
        """The targets whose outcome is not remembered, by key."""
        todo: dict[str, Target] = {}
        for item in targets:
            if item is not None and item[0] is not None and item[0] not in self._memo and len(todo) < MEMO_SIZE:
                todo.setdefault(*item)
        return todo

    def start(self) -> None:
        """Start the evaluating child now: it compiles the rule set's expressions while the caller
        goes on (`check` forks it before the stack renders; the other rules run meanwhile)."""
        if _isolating():
            with self._lock:
                self._worker(prime=True).start()

    def send(self, objects: list[dict], namespaces: dict[str, dict] | None = None, mutating: bool = True) -> None:
        """``evaluate_all`` without waiting: the child evaluates ``objects`` while the caller goes on;
        the next ``evaluate_all`` or ``evaluate`` reads the outcomes (first, whatever it asks)."""
        if not _isolating():
            return
        with self._lock:
            self._collect()
            self._new_round()
            keyed = self._targets(objects, namespaces, mutating)
            self._sent = (list(objects), namespaces, keyed, mutating)
            todo = self._todo(keyed)
            if todo:
                targets = list(todo.values())
                self._worker().send(targets)
                self._ahead = (list(todo), targets)

    def _collect(self) -> None:
        """Remember the outcomes of the objects handed over with ``send`` (waiting for them)."""
        if self._ahead is not None:
            keys, targets = self._ahead
            self._ahead = None
            for key, out in zip(keys, self._isolated(targets)):
                self._remember(key, out)

    def _worker(self, prime: bool = False) -> worker.Worker:
        """This rule set's evaluating child (one at a time in a process: another rule set's stops)."""
        global _WORKER
        if _WORKER is None or _WORKER[0] is not self:
            if _WORKER is not None:
                _WORKER[1].stop()
            _WORKER = (self, worker.Worker(self._child_evaluate, self.index, self._prime if prime else None))
        return _WORKER[1]

    def _prime(self) -> Iterator[None]:
        """Compile the expressions an evaluation of any object compiles first (not the messages, which
        only a failing rule needs), one per step; in the child, before its first request."""
        for policy in self.policies:
            if policy.get("paramKind"):
                continue
            for item in (*policy["matchConditions"], *policy["variables"],
                         *(policy["validations"] if "Deny" in (policy.get("validationActions") or ()) else ())):
                compile_expr(item["expression"])
                yield
            for mutation in policy["mutations"]:
                if mutation.get("patchType") == "JSONPatch":
                    try:
                        compile_expr(rewrite_jsonpatch((mutation.get("jsonPatch") or {}).get("expression", "")))
                    except ValueError:
                        pass
                    yield
        for crd in self.crds.values():
            for rule in crd["rules"]:
                compiled = compile_expr(rule["rule"])
                yield
                if any(not isinstance(step, str) for step in rule["path"]) and _for_all(rule, compiled):
                    yield

    def _remember(self, key: str | None, out: list) -> None:
        if key is not None:
            self._memo[key] = out
            if len(self._memo) > MEMO_SIZE:
                self._memo.popitem(last=False)

    def _isolated(self, targets: list[Target]) -> list[list[Denial | SkippedRule]]:
        """``_evaluate`` of each target in the rule set's child process, under the CPU and memory
        budget."""
        if not _isolating():
            return [list(self._evaluate(target)) for target in targets]
        out = self._worker().evaluate(targets)
        if out is None:
            return [[SkippedRule("upstream admission rules", "(every rule of this object)", "the evaluation stopped "
                                 "the CEL library outside any one expression (over the memory budget or a crash)")]
                    for _ in targets]
        return out

    def _child_evaluate(self, targets: list[Target]) -> list[list[Denial | SkippedRule]]:
        out = []
        for target in targets:
            worker.start_object()
            out.append(list(self._evaluate(target)))
        worker.end_object()
        return out

    def _may_apply(self, target: Target) -> bool:
        crd = self.crds.get((target.group, target.version, target.kind))
        return bool(crd and crd["rules"]) or bool(self.applicable(target))

    def _evaluate(self, target: Target) -> Iterator[Denial | SkippedRule]:
        policies = self.applicable(target)
        crd = self.crds.get((target.group, target.version, target.kind))
        if not policies and not (crd and crd["rules"]):
            return
        scope = self.scope()
        request = {"operation": "CREATE", "kind": {"group": target.group, "version": target.version,
                                                     "kind": target.kind},
                   "resource": {"group": target.group, "version": target.version, "resource": target.resource},
                   "name": meta(target.obj).get("name", ""),
                   "namespace": meta(target.obj).get("namespace", ""),
                   "dryRun": True, "userInfo": {"username": "trainstack"}}
        current = target.obj
        for policy in (p for p in policies if target.mutating and p["kind"] == "MutatingAdmissionPolicy"):
            scope.costs.new_budget()
            current, outcomes = self._mutate(policy, current, request, target, scope)
            yield from outcomes
        if crd and crd["rules"]:
            crd_scope = self.scope("crd")
            crd_scope.costs.new_budget()
            yield from self._crd_rules(crd, current, crd_scope)
        for policy in (p for p in policies if p["kind"] == "ValidatingAdmissionPolicy"):
            scope.costs.new_budget()   # the runtime cost budget is each policy's, on each object
            yield from self._validate(policy, current, request, target, scope)

    # -- admission policies --

    def _label(self, policy: dict) -> str:
        return f"Volcano {policy['kind']} '{policy['name']}' ({policy['release']}, {policy['source']})"

    def _prepare(self, policy: dict, obj: dict, request: dict, target: Target,
                 scope: Scope) -> tuple[bool, dict[str, Exception], list[Denial | SkippedRule]]:
        """Bind the policy's inputs; run matchConditions and variables. Returns (applies, variable
        errors by name, outcomes so far)."""
        label = self._label(policy)
        if policy.get("paramKind"):
            return False, {}, [SkippedRule(label, "",
                                           "needs parameter objects (paramKind), which a stack does not carry")]
        scope.bind({"object": obj, "oldObject": None, "request": request, "params": None,
                    "namespaceObject": target.namespace, "variables": NO_VARIABLES})
        for cond in policy["matchConditions"]:
            try:
                if scope.run(compile_expr(cond["expression"])) is not True:
                    return False, {}, []
            except NotEvaluable as exc:
                return False, {}, [SkippedRule(label, _squash(cond["expression"]),
                                           f"matchCondition {cond.get('name')}: {exc}")]
            except EvalError as exc:
                if policy["failurePolicy"] == "Fail":
                    return False, {}, [Denial(label, "",
                                              f"matchCondition {cond.get('name')!r} resulted in error: {exc}",
                                              _squash(cond["expression"]))]
                return False, {}, []
        values: dict[str, Any] = {}
        errors: dict[str, Exception] = {}
        stale = False   # `variables` is rebound only when a later variable reads an earlier one
        for var in policy["variables"]:
            if stale and variables_in(var["expression"]):
                scope.bind({"variables": dict(values)})
                stale = False
            try:
                if failed_var := failed_variable(var["expression"], errors):
                    raise failed_var
                values[var["name"]] = scope.run(compile_expr(var["expression"]))
                stale = True
            except (EvalError, NotEvaluable) as exc:
                errors[var["name"]] = exc
        if stale:
            scope.bind({"variables": dict(values)})
        return True, errors, []

    def _validate(self, policy: dict, obj: dict, request: dict, target: Target, scope: Scope
                  ) -> Iterator[Denial | SkippedRule]:
        if "Deny" not in policy["validationActions"]:
            return
        applies, errors, outcomes = self._prepare(policy, obj, request, target, scope)
        yield from outcomes
        if not applies:
            return
        label = self._label(policy)
        variables = {v["name"]: v["expression"] for v in policy["variables"]}
        for validation in policy["validations"]:
            source = validation["expression"]
            compiled = compile_expr(source)
            reads = fields_read(source, variables)
            failed_var = failed_variable(source, errors)
            try:
                if compiled.program is None:
                    raise NotEvaluable(compiled.problem)
                if failed_var:
                    raise failed_var
                result = scope.run(compiled)
            except NotEvaluable as exc:
                yield SkippedRule(label, _squash(source), str(exc))
                continue
            except EvalError as exc:
                if policy["failurePolicy"] == "Fail":
                    yield Denial(label, common_path(reads), f"expression resulted in error: {exc} "
                                 f"(failurePolicy Fail: the request is denied; upstream's message for this rule "
                                 f"is \"{validation.get('message', '')}\")", _squash(source), reads)
                continue
            if result is True:
                continue
            message = self._message(validation, scope) or f"failed expression: {_squash(source)}"
            yield Denial(label, common_path(reads), message, _squash(source), reads)

    def _message(self, validation: dict, scope: Scope) -> str:
        if validation.get("messageExpression"):
            try:
                text = scope.run(compile_expr(validation["messageExpression"]))
                if _usable_message(text):
                    return " ".join(text.split())
            except (EvalError, NotEvaluable):
                pass
        return " ".join(str(validation.get("message", "")).split())

    def _mutate(self, policy: dict, obj: dict, request: dict, target: Target, scope: Scope
                ) -> tuple[dict, list[Denial | SkippedRule]]:
        applies, errors, outcomes = self._prepare(policy, obj, request, target, scope)
        if not applies:
            return obj, outcomes
        label = self._label(policy)
        current = obj
        for mutation in policy["mutations"]:
            if mutation.get("patchType") != "JSONPatch":
                outcomes.append(SkippedRule(label, "", f"{mutation.get('patchType')} mutations are not applied"))
                continue
            source = (mutation.get("jsonPatch") or {}).get("expression", "")
            try:
                compiled = compile_expr(rewrite_jsonpatch(source))
            except ValueError as exc:
                outcomes.append(SkippedRule(label, _squash(source), f"does not compile: {exc}"))
                continue
            try:
                failed_var = failed_variable(source, errors)
                if failed_var:
                    raise failed_var
                scope.bind({"object": current})
                current = apply_patch(current, scope.run(compiled))
            except NotEvaluable as exc:
                outcomes.append(SkippedRule(label, _squash(source), str(exc)))
            except (EvalError, KeyError, IndexError, ValueError, TypeError):
                # Installed (map_enable): the chart's mutating webhooks set the same defaults
                # without failing, so an error here only means this default is not applied.
                # Validation then judges the object as sent.
                continue
        return current, outcomes

    # -- CRD rules --

    def _crd_rules(self, crd: dict, obj: dict, scope: Scope) -> Iterator[Denial | SkippedRule]:
        """Rules grouped by schema node: `self` is bound once per value, for all its rules."""
        label = f"the {crd['kind']} CRD {crd['crd']} ({crd['release']})"
        groups: dict[str, list[tuple[dict, Compiled]]] = {}
        paths: dict[str, list] = {}
        for rule in crd["rules"]:
            compiled = compile_expr(rule["rule"])
            if compiled.reads_old and not rule.get("optionalOldSelf"):
                continue    # a transition rule: the API server runs it on update only
            key = json.dumps(rule["path"])
            groups.setdefault(key, []).append((rule, compiled))
            paths[key] = rule["path"]
        broken: set[int] = set()
        for key, rules in groups.items():
            nodes = list(_nodes(obj, paths[key], ""))
            if len(nodes) > 1:
                # Many values (list items, map entries): one pass over all of them per rule first;
                # only a rule that fails somewhere is run value by value to say where.
                scope.bind({"__values": [value for value, _ in nodes]})
                rules = [(rule, compiled) for rule, compiled in rules if not self._holds_for_all(rule, compiled, scope)]
            for value, path in nodes if rules else ():
                scope.bind({"self": value, "oldSelf": runtime().no_old_self})
                for rule, compiled in rules:
                    if id(rule) in broken:
                        continue
                    try:
                        result, error = scope.run(compiled), ""
                    except NotEvaluable as exc:
                        broken.add(id(rule))
                        yield SkippedRule(label, _squash(rule["rule"]), str(exc))
                        continue
                    except EvalError as exc:
                        result, error = None, str(exc)
                    if result is True:
                        continue
                    yield self._crd_denial(label, rule, value, path, error, scope)

    @staticmethod
    def _holds_for_all(rule: dict, compiled: Compiled, scope: Scope) -> bool:
        whole = _for_all(rule, compiled)
        if whole is None:
            return False
        try:
            return scope.run(whole) is True
        except (EvalError, NotEvaluable):
            return False

    def _crd_denial(self, label: str, rule: dict, value: Any, path: str, error: str, scope: Scope) -> Denial:
        message = error and f"rule resulted in error: {error}"
        if not message and rule.get("messageExpression"):
            try:
                text = scope.run(compile_expr(rule["messageExpression"]))
                message = " ".join(text.split()) if _usable_message(text) else ""
            except (EvalError, NotEvaluable):
                message = ""
        message = message or " ".join(str(rule.get("message", "")).split()) or f"failed rule: {_squash(rule['rule'])}"
        where = (path + (rule.get("fieldPath") or "")).lstrip(".")
        return Denial(label, where, f"{where or '<root>'}: Invalid value: {_kind_word(value)}: {message}",
                      _squash(rule["rule"]))


def _usable_message(text: Any) -> bool:
    """A messageExpression result the API server shows: a non-blank string within 5 KiB (a longer one
    is an error, and the static message is used)."""
    return isinstance(text, str) and bool(text.strip()) and len(text.encode("utf-8", "replace")) \
        <= limits.MAX_MESSAGE_BYTES


def _kind_word(value: Any) -> str:
    if isinstance(value, dict):
        return '"object"'
    if isinstance(value, list):
        return '"array"'
    if isinstance(value, str):
        return f'"{value}"'
    return str(value).lower() if isinstance(value, bool) else str(value)


def _nodes(value: Any, steps: list, path: str) -> Iterator[tuple[Any, str]]:
    """Every value a schema node's rule applies to (absent fields get no rule run)."""
    if not steps:
        yield value, path
        return
    step, rest = steps[0], steps[1:]
    if isinstance(step, str):
        if isinstance(value, dict) and step in value and value[step] is not None:
            yield from _nodes(value[step], rest, f"{path}.{step}")
    elif step == ["items"] and isinstance(value, list):
        for i, item in enumerate(value):
            yield from _nodes(item, rest, f"{path}[{i}]")
    elif step == ["additionalProperties"] and isinstance(value, dict):
        for key, item in value.items():
            yield from _nodes(item, rest, f"{path}[{key}]")
