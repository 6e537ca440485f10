"""Fidelity against Volcano's own scheduler tests: run the upstream cases ported to
``tests/modules/simulate/upstream/<TestFunction>.yaml`` through the topology-aware model and compare with
upstream's assertions (reference: volcano-sh/volcano v1.15.1, pkg/scheduler/uthelper CheckBind and
CheckBindInHyperNode).

* ``count`` (upstream's MinimalBindCheck): the number of pods bound in the session.
* ``exact`` (ExpectBindMap): every bound pod's node, and nothing else bound.
* ``per-hypernode`` (ExpectBindNumsInHyperNode): the sorted bind counts per lowest-tier HyperNode
  holding the bound nodes (upstream's own check does not fix which HyperNode, because the Go
  map order picks among equal ones).

Cases upstream's model and ours disagree on are listed, with the reason, in
``tests/modules/simulate/upstream/divergent.yaml``; the test suite requires every other case to reproduce.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from modules.core import yamlio

from . import fidelity_actions
from .cluster import LOOSE_NAME
from .engine import build_cluster, resource_names
from .scheduler import TopologyAware, prepare, sparse, total
from .snapshot import snapshot_from_objects

FIXTURES = Path(__file__).resolve().parents[2] / "tests" / "modules" / "simulate" / "upstream"
DIVERGENT = "divergent.yaml"


@dataclass
class Case:
    test: str
    name: str                 # upstream's name, verbatim (upstream repeats one name in one table)
    source: dict
    conf: str
    objects: list[dict]
    expect: dict
    index: int = 0            # position in upstream's table (upstream's "case %d")


@dataclass
class CaseResult:
    case: Case
    got: dict
    reproduced: bool


def load_cases(folder: Path = FIXTURES) -> list[Case]:
    cases = []
    for path in sorted(folder.glob("Test*.yaml")):
        data = yamlio.load_file(path, str(path))
        for index, raw in enumerate(data["cases"]):
            # a file of one upstream test file's unit tests names each case's test function
            source = {**data["source"], "test": raw.get("test") or data["source"]["test"]}
            conf = raw.get("schedulerConf") or data["schedulerConf"]
            cases.append(Case(source["test"], raw["name"], source, conf, raw["objects"], raw["expect"], index))
    return cases


def load_divergent(folder: Path = FIXTURES) -> dict[tuple[str, str], str]:
    path = folder / DIVERGENT
    if not path.exists():
        return {}
    data = yamlio.load_file(path, str(path)) or {}
    return {(d["test"], d["case"]): d["reason"] for d in data.get("divergent") or []}


def run_case(case: Case) -> CaseResult:
    if case.expect["check"] in fidelity_actions.CHECKS:   # enqueue and eviction actions
        got, ok = fidelity_actions.run(case)
        return CaseResult(case, got, ok)
    snap = snapshot_from_objects([(f"objects[{i}]", o) for i, o in enumerate(case.objects)],
                                 f"{case.test}: {case.name}", case.conf)
    resources = resource_names(snap.fabric, snap.jobs, snap.usage)
    cluster = build_cluster(snap.fabric, resources, snap.settings, snap.usage)
    if case.expect["check"] == "hypernode-scores":
        return _scores(case, snap, cluster)
    aware = TopologyAware(cluster, snap.settings)
    binds: dict[str, str] = {}
    for job in snap.jobs:
        outcome = aware.place(job, prepare(job, cluster))
        if outcome.placed:
            binds.update((pod, cluster.node_names[node]) for pod, node in outcome.pods)
    expect = case.expect
    got: dict[str, Any] = {"binds": len(binds)}
    ok = len(binds) == expect["binds"]
    if expect["check"] == "exact":
        got["bindMap"] = dict(sorted(binds.items()))
        ok = ok and got["bindMap"] == expect["bindMap"]
    elif expect["check"] == "per-hypernode":
        counts: dict[str, int] = {}
        for node in binds.values():
            leaf = snap.fabric.nodes[node].leaf
            counts[leaf] = counts.get(leaf, 0) + 1
        got["bindNumsInHyperNode"] = sorted(counts.values())
        ok = ok and got["bindNumsInHyperNode"] == expect["bindNumsInHyperNode"]
    return CaseResult(case, got, ok)


def _scores(case: Case, snap, cluster) -> CaseResult:
    """The plugin's HyperNodeOrderFn for one SubJob: 100 x weight x binpack score per HyperNode
    (its task-count tie-break adds nothing: the SubJob has no task placed)."""
    expect = case.expect
    job_name, part_name = expect["subJob"].rsplit("/", 1)
    job = next(j for j in snap.jobs if j.name == job_name)
    part = next(p for p in job.partitions if p.name == part_name)
    prep = prepare(job, cluster)
    need = sparse(total([prep.needs[i] for i in part.pods], len(cluster.resources)))
    scale = 100 * snap.settings.plugin_weight
    got = {cluster.g_name[g]: round(scale * cluster.binpack(g, need), 1)
           for g in range(len(cluster.g_name)) if cluster.g_name[g] != LOOSE_NAME}
    tolerance = expect.get("tolerance", 0)
    ok = set(got) == set(expect["scores"]) and all(abs(got[h] - v) <= tolerance for h, v in expect["scores"].items())
    return CaseResult(case, {"scores": got}, ok)


def report(cases: list[Case] | None = None, divergent: dict | None = None) -> tuple[dict, list[CaseResult]]:
    cases = load_cases() if cases is None else cases
    divergent = load_divergent() if divergent is None else divergent
    results = [run_case(c) for c in cases]
    out = {
        "cases": len(results),
        "reproduced": sum(r.reproduced for r in results),
        "case_names": [r.case.name for r in results],
        "divergent": [{"test": r.case.test, "case": r.case.name, "index": r.case.index,
                       "expected": {k: v for k, v in r.case.expect.items() if k != "check"},
                       "got": r.got, "reason": divergent.get((r.case.test, r.case.name), "not explained")}
                      for r in results if not r.reproduced],
    }
    return out, results
