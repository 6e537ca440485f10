"""Upstream's webhook test tables, ported as data under tests/policies/admission/upstream/<source>/,
run against our own checks through the registry (modules/upstream/registry.py).

A fixture file: ``provenance: {repo, tag, path, test}``, ``cases: [{name, operation, object,
old_object?, cluster?, check?, expect: {allowed, message?, fields?, types?, errors?} | {patched}}]``,
``divergent: [{case, reason}]``, ``not_ported: [{case, why}]``. A refusal must carry upstream's field
paths (``fields``, Go notation), error types (``types``), error list (``errors``: field and message,
where upstream's test compares the list) and message (``message``, looked for in the joined messages
as upstream's test does), each where the table gives it. ``check`` narrows a case to the one upstream
function its test calls (``dag``, ``task-topology-policy``, ``name``; ``tasks`` for a mutation
compares ``spec.tasks`` only). ``settings`` are the webhook server's settings the test sets
(``MaxQueueDepth``). ``expect.patched`` is upstream's JSON patch (applied to the input) or the
expected object fields.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from modules.semantics.shapes import api_group
from modules.upstream.cluster import Cluster
from modules.upstream.registry import MUTATE, SOURCES, VALIDATE, checks

from . import kubernetes_tables
from .jsonpatch import apply_patch

ROOT = Path(__file__).resolve().parents[2] / "tests" / "policies" / "admission" / "upstream"

# A case's ``check``: which of the webhook's errors its upstream test function looks at, by code.
CHECKS = {
    "dag": lambda error: error.origin == "job.tasks-not-dag",
    "task-topology-policy": lambda error: error.origin == "job.task-topology-cpu",
    "name": lambda error: error.field == "metadata.name",
    "queue-depth": lambda error: error.origin == "queue.depth",
    "ancestor-capability": lambda error: error.origin == "queue.capability-above-ancestor",
    "children-capability": lambda error: error.origin == "queue.capability-below-descendants",
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


def run_case(source: str, case: dict) -> tuple[bool, str]:
    """(reproduced, what our code said)."""
    if source == "kubernetes":   # the API server port's tables: fields, types and messages compared
        return kubernetes_tables.run_case(case)
    obj = case["object"]
    expect = case.get("expect") or {}
    operation, old = case.get("operation", "CREATE"), case.get("old_object")
    # cluster_known false: the case's cluster may hold more than it lists (upstream passed the check no
    # lookup result), so a missing object is not a refusal.
    cluster = Cluster(tuple(case.get("cluster") or ()), case.get("cluster_known", True),
                      dict(case.get("settings") or {}, feature_gates=dict(case.get("feature_gates") or {})))
    if "patched" in expect:
        return _run_mutation(source, case, obj, operation, old, cluster)
    hooks = checks(api_group(obj), obj.get("kind"), VALIDATE, operation, sources=(source,))
    if not hooks:
        return False, "no validating check registered"
    errors = [e for hook in hooks for e in hook.fn(obj, operation, old, cluster)]
    keep = CHECKS.get(case.get("check"))
    if keep:
        errors = [e for e in errors if keep(e)]
    said = "; ".join(f"{e.field}: {e.message()}" for e in errors)
    if expect.get("allowed", True):
        return not errors, said or "allowed"
    return bool(errors) and _as_upstream_says(expect, errors), said or "allowed"


def go_path(path: str) -> str:
    """Our field path in Go's notation for a map key (``ReplicaSpecs.Worker`` -> ``ReplicaSpecs[Worker]``)."""
    return re.sub(r"(ReplicaSpecs)\.([A-Za-z]+)", r"\1[\2]", path)


def _as_upstream_says(expect: dict, errors: list) -> bool:
    """A refusal as upstream's test checks it, as strictly as its table allows: where the table gives
    its error list (Trainer compares ``field.ErrorList`` by type, field and value), one error of ours
    per listed error, on its field, its message holding the listed words; where it gives field paths,
    exactly those; where it gives error types (the Training Operator compares type and field),
    exactly those; and its message, which upstream's test looks for in the webhook's joined message
    (``strings.Contains``; upstream joins with ";", a separator)."""
    if "errors" in expect:
        unmatched = list(errors)
        for want in expect["errors"]:
            hit = next((e for e in unmatched if e.field == want["field"] and want["message"] in e.message()), None)
            if hit is None:
                return False
            unmatched.remove(hit)
        if unmatched:
            return False
    if "fields" in expect:
        got = [go_path(e.field) for e in errors]
        # one field per error: upstream compares the ErrorList (Kubernetes' tables have their own runner)
        if sorted(got) != sorted(expect["fields"]):
            return False
    # upstream's ErrorType strings, one per error (its test compares them; we compare the codes'
    # renderings, so TYPE_INVALID counts as "Invalid value" as upstream prints it)
    if "types" in expect and sorted(e.type.text for e in errors) != sorted(expect["types"]):
        return False
    fragment = (expect.get("message") or "").strip().rstrip(";").strip()
    return fragment in "; ".join(e.message() for e in errors)


def _run_mutation(source: str, case: dict, obj: dict, operation: str, old: dict | None,
                  cluster: Cluster) -> tuple[bool, str]:
    hooks = checks(api_group(obj), obj.get("kind"), MUTATE, operation, sources=(source,))
    if not hooks:
        return False, "no mutating check registered"
    got = obj
    for hook in hooks:
        got = hook.fn(got, operation, old, cluster)
    want = case["expect"]["patched"]
    if isinstance(want, list):
        want = apply_patch(obj, want)
    if case.get("check") == "tasks":
        ok = (got.get("spec") or {}).get("tasks") == (want.get("spec") or {}).get("tasks")
    else:
        ok = got == want
    return ok, yaml.safe_dump(got, sort_keys=True, width=200)[:2000]


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


def compared() -> dict[str, dict[str, int]]:
    """Per source, how many refusal cases the runner compares by field paths, error types, error list
    and message (a case may have several), and how many have none of them to compare."""
    out = {s: {"fields": 0, "types": 0, "errors": 0, "message": 0, "outcome_only": 0} for s in SOURCES}
    for source, path in fixture_files():
        for case in load_fixture(path).get("cases") or ():
            expect = case.get("expect") or {}
            if expect.get("allowed", True) or "patched" in expect:
                continue
            kinds = [k for k in ("fields", "types", "errors", "message") if expect.get(k)]
            for kind in kinds or ["outcome_only"]:
                out[source][kind] += 1
    return out


def report() -> tuple[dict, list[Result]]:
    rs = results()
    by_source = {s: {"cases": sum(r.source == s for r in rs), "reproduced": sum(r.source == s and r.reproduced
                                                                                for r in rs)} for s in SOURCES}
    for source, counts in compared().items():
        by_source[source]["refusals_compared"] = counts
    return {
        "cases": len(rs),
        "reproduced": sum(r.reproduced for r in rs),
        "case_names": [r.name for r in rs],
        "by_source": by_source,
        "divergent": [{"source": r.source, "file": r.file, "case": r.name,
                       "reason": r.divergent_reason or "not reproduced (no reason recorded)", "got": r.got}
                      for r in rs if not r.reproduced],
    }, rs
