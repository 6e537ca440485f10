"""Upstream's webhook test tables, ported as data under tests/policies/admission/upstream/<source>/,
run against our own checks through the webhook registry (policies/admission/webhooks.py).

A fixture file: ``provenance: {repo, tag, path, test}``, ``cases: [{name, operation, object,
old_object?, cluster?, check?, expect: {allowed, message?} | {patched}}]``, ``divergent: [{case,
reason}]``, ``not_ported: [{case, why}]``. ``check`` narrows a case to the one upstream function its
test calls (``dag``, ``task-topology-policy``, ``name``; ``tasks`` for a mutation compares
``spec.tasks`` only). ``settings`` are the webhook server's settings the test sets (``MaxQueueDepth``).
``expect.patched`` is upstream's JSON patch (applied to the input) or the
expected object fields.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from . import kubernetes_tables
from .engine import apply_patch
from .webhooks import MUTATE, SOURCES, VALIDATE, Request, webhooks

ROOT = Path(__file__).resolve().parents[2] / "tests" / "policies" / "admission" / "upstream"

# A case's ``check``: which of the webhook's problems its upstream test function looks at.
CHECKS = {
    "dag": lambda path, message: "acyclic" in message,
    "task-topology-policy": lambda path, message: "cpu request" in message,
    "name": lambda path, message: path == "metadata.name",
    "queue-depth": lambda path, message: "maximum allowed depth" in message,
    "ancestor-capability": lambda path, message: "exceeds its ancestor's capability" in message,
    "children-capability": lambda path, message: "descendants' max capability" in message,
}


@dataclass(frozen=True)
class Result:
    """One upstream admission test case's outcome here."""
    source: str
    file: str
    name: str
    reproduced: bool
    got: str
    divergent_reason: str | None


def _group(obj: dict) -> str:
    return str(obj.get("apiVersion", "")).rpartition("/")[0]


def run_case(source: str, case: dict) -> tuple[bool, str]:
    """(reproduced, what our code said)."""
    if source == "kubernetes":   # the API server port's tables: fields, types and messages compared
        return kubernetes_tables.run_case(case)
    obj = case["object"]
    expect = case.get("expect") or {}
    # cluster_known false: the case's cluster may hold more than it lists (upstream passed the check no
    # lookup result), so a missing object is not a refusal.
    request = Request(case.get("operation", "CREATE"), obj, case.get("old_object"), tuple(case.get("cluster") or ()),
                      case.get("cluster_known", True), settings=dict(case.get("settings") or {}))
    if "patched" in expect:
        hooks = webhooks(_group(obj), obj.get("kind"), MUTATE, source, request_operation=request.operation)
        if not hooks:
            return False, "no mutating check registered"
        got = obj
        for hook in hooks:
            got = hook.check(Request(request.operation, got, request.old_object, request.cluster))
        want = expect["patched"]
        if isinstance(want, list):
            want = apply_patch(obj, want)
        if case.get("check") == "tasks":
            ok = (got.get("spec") or {}).get("tasks") == (want.get("spec") or {}).get("tasks")
        else:
            ok = got == want
        return ok, yaml.safe_dump(got, sort_keys=True, width=200)[:2000]
    hooks = webhooks(_group(obj), obj.get("kind"), VALIDATE, source, request_operation=request.operation)
    if not hooks:
        return False, "no validating check registered"
    problems = [p for hook in hooks for p in hook.check(request)]
    keep = CHECKS.get(case.get("check"))
    if keep:
        problems = [(p, m) for p, m in problems if keep(p, m)]
    said = "; ".join(m for _, m in problems)
    if expect.get("allowed", True):
        return not problems, said or "allowed"
    # Upstream joins its messages with ";" (a separator, not part of any message).
    fragment = (expect.get("message") or "").strip().rstrip(";").strip()
    return bool(problems) and fragment in said, said or "allowed"


def fixture_files(sources=SOURCES) -> list[tuple[str, Path]]:
    return [(source, path) for source in sources for path in sorted((ROOT / source).glob("*.yaml"))]


def load_fixture(path: Path) -> dict:
    with path.open(encoding="utf-8") as handle:   # our own data: the C loader, as fast as parsing gets
        return yaml.load(handle, Loader=yaml.CSafeLoader) or {}


def results() -> list[Result]:
    out = []
    for source, path in fixture_files():
        doc = load_fixture(path)
        divergent = {d["case"]: d["reason"] for d in doc.get("divergent") or ()}
        for case in doc.get("cases") or ():
            try:
                ok, got = run_case(source, case)
            except Exception as exc:   # a crash is a finding of the runner, never a pass
                ok, got = False, f"{type(exc).__name__}: {exc}"
            out.append(Result(source, path.name, case["name"], ok, got, divergent.get(case["name"])))
    return out


def report() -> tuple[dict, list[Result]]:
    rs = results()
    by_source = {s: {"cases": sum(r.source == s for r in rs), "reproduced": sum(r.source == s and r.reproduced
                                                                                for r in rs)} for s in SOURCES}
    return {
        "cases": len(rs),
        "reproduced": sum(r.reproduced for r in rs),
        "case_names": [r.name for r in rs],
        "by_source": by_source,
        "divergent": [{"source": r.source, "file": r.file, "case": r.name,
                       "reason": r.divergent_reason or "not reproduced (no reason recorded)", "got": r.got}
                      for r in rs if not r.reproduced],
    }, rs
