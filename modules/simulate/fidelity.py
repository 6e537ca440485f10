"""Fidelity against Volcano's own scheduler tests: run the upstream cases ported to
``tests/modules/simulate/upstream/<TestFunction>.yaml`` through the topology-aware model and compare with
upstream's assertions (reference: volcano-sh/volcano v1.15.1, pkg/scheduler/uthelper CheckBind and
CheckBindInHyperNode).

* ``count`` (upstream's MinimalBindCheck): the number of pods bound in the session.
* ``exact`` (ExpectBindMap): every bound pod's node, and nothing else bound.
* ``per-hypernode`` (ExpectBindNumsInHyperNode): the sorted bind counts per lowest-tier HyperNode
  holding the bound nodes (upstream's own check does not fix which HyperNode, because the Go
  map order picks among equal ones).
* ``hypernode-scores`` (HyperNodeOrderFn): the plugin's score of every HyperNode for a SubJob.
* ``node-scores`` (batchNodeOrderFn): the plugin's score of the listed nodes for the task
  upstream's ``parseTask`` picks (``nodescore.py``).
* ``gradient-prefilter`` (hyperNodeGradientFn): whether a HyperNode whose idle and futureIdle
  upstream sets by hand is in the gradient, for allocation or eviction.

Cases upstream's model and ours disagree on are listed, with the reason, in
``tests/modules/simulate/upstream/divergent.yaml``; the test suite requires every other case to reproduce.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from modules.core import yamlio
from modules.core.selectors import selector_matches
from modules.semantics.podspec import Reader
from modules.semantics.session import GROUP_ANNOTATION
from modules.semantics.workloads import pod_group

from . import fidelity_actions
from .cluster import LOOSE_NAME
from .engine import build_cluster, resource_names
from .nodescore import node_scores
from .scheduler import TopologyAware, prepare, sparse, total
from .snapshot import ALLOCATED_ANNOTATION, snapshot_from_objects

FIXTURES = Path(__file__).resolve().parents[2] / "tests" / "modules" / "simulate" / "upstream"
OURS = FIXTURES.parent / "ours"       # our own cases, traced to upstream source, counted apart
DIVERGENT = "divergent.yaml"
# Checks that run code only this harness has: reported apart, not simulator fidelity. (None now:
# PickDomainsFromGradients runs whatif_topology.pick_domains, which the what-if's gang eviction
# calls to pick its HyperNode domains.)
HARNESS_ONLY: dict[str, str] = {}


@dataclass
class Case:
    """One of upstream's scheduler test cases, ported as data."""
    test: str
    name: str                 # upstream's name, verbatim (upstream repeats one name in one table)
    source: dict
    conf: str
    objects: list[dict]
    expect: dict
    index: int = 0            # position in upstream's table (upstream's "case %d")
    fields: dict = field(default_factory=dict)   # the case's other fields (gradient-prefilter's states)
    setup: dict = field(default_factory=dict)    # the table's shared input (gradient-prefilter's topology)


@dataclass
class CaseResult:
    """A case's outcome here, and whether it is upstream's."""
    case: Case
    got: dict
    reproduced: bool


def load_cases(folder: Path = FIXTURES, pattern: str = "Test*.yaml") -> list[Case]:
    cases = []
    for path in sorted(folder.glob(pattern)):
        data = yamlio.load_file(path, str(path))
        for index, raw in enumerate(data["cases"]):
            # a file of one upstream test file's unit tests names each case's test function
            source = {**data["source"], "test": raw.get("test") or data["source"]["test"]}
            conf = raw.get("schedulerConf") or data["schedulerConf"]
            rest = {k: v for k, v in raw.items() if k not in ("name", "schedulerConf", "objects", "expect")}
            cases.append(Case(source["test"], raw["name"], source, conf, raw.get("objects") or [], raw["expect"],
                              index, rest, data.get("topology") or {}))
    return cases


def load_divergent(folder: Path = FIXTURES) -> dict[tuple[str, str], str]:
    path = folder / DIVERGENT
    if not path.exists():
        return {}
    data = yamlio.load_file(path, str(path)) or {}
    return {(d["test"], d["case"]): d["reason"] for d in data.get("divergent") or []}


def run_case(case: Case) -> CaseResult:
    if case.expect["check"] == "gradient-prefilter":
        return _prefilter(case)
    if case.expect["check"] in fidelity_actions.CHECKS:   # enqueue and eviction actions
        got, ok = fidelity_actions.run(case)
        return CaseResult(case, got, ok)
    snap = snapshot_from_objects([(f"objects[{i}]", o) for i, o in enumerate(case.objects)],
                                 f"{case.test}: {case.name}", case.conf)
    resources = resource_names(snap.fabric, snap.jobs, snap.usage)
    cluster = build_cluster(snap.fabric, resources, snap.settings, snap.usage, snap.releasing)
    if case.expect["check"] == "hypernode-scores":
        return _scores(case, snap, cluster)
    if case.expect["check"] == "node-scores":
        return _node_scores(case, snap, cluster)
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


def _node_scores(case: Case, snap, cluster) -> CaseResult:
    """batchNodeOrderFn for the task upstream's parseTask picks: the job's pending pod, its job's
    allocated HyperNode read from the PodGroup's annotation, its SubJob's tasks."""
    expect = case.expect
    namespace, name = expect["task"].split("/", 1)
    pods = [o for o in case.objects if o["kind"] == "Pod" and o["metadata"].get("namespace") == namespace]
    task = next(o for o in pods if o["metadata"]["name"] == name)
    group_name = task["metadata"]["annotations"][GROUP_ANNOTATION]
    group = next(o for o in case.objects if o["kind"] == "PodGroup" and o["metadata"]["name"] == group_name
                 and o["metadata"].get("namespace") == namespace)
    workload = pod_group(Reader(case.test, case.name), group)
    members = [o for o in pods if o["metadata"].get("annotations", {}).get(GROUP_ANNOTATION) == group_name]
    labels = task["metadata"].get("labels") or {}
    topology = workload.topology
    for policy in workload.sub_groups:            # the SubJob the task belongs to
        values = tuple(labels.get(k) for k in policy.match_label_keys)
        if all(values) and (policy.label_selector is None or selector_matches(policy.label_selector, labels)):
            topology = policy.topology if policy.topology is not None else workload.topology
            members = [o for o in members if tuple((o["metadata"].get("labels") or {}).get(k)
                                                   for k in policy.match_label_keys) == values]
            break
    job = next(j for j in snap.jobs if any(p.name == expect["task"] for p in j.pods))
    need = prepare(job, cluster).needs[next(i for i, p in enumerate(job.pods) if p.name == expect["task"])]
    nodes = range(len(cluster.node_names)) if expect["nodes"] == "all" else \
        [cluster.node_index[n] for n in expect["nodes"]]
    settings = snap.settings
    scores = node_scores(cluster, need, nodes, plugin_weight=settings.plugin_weight, topology=topology is not None,
                         allocated=(group["metadata"].get("annotations") or {}).get(ALLOCATED_ANNOTATION),
                         task_nodes=[o["spec"].get("nodeName") or None for o in members],
                         normal_binpack=settings.normal_pod_binpack, fading=settings.normal_pod_fading)
    got = {cluster.node_names[n]: round(v, 3) for n, v in sorted(scores.items())}
    tolerance = expect.get("tolerance", 0)
    ok = all(abs(got.get(n, 0.0) - v) <= tolerance for n, v in expect["scores"].items())
    if expect.get("sameCount"):
        ok = ok and len(got) == len(expect["scores"])
    return CaseResult(case, {"scores": got}, ok)


_PREFILTER_CLUSTERS: dict[str, tuple] = {}


def _prefilter_cluster(setup: dict):
    """The topology upstream's pre-filter test builds, as manifests through the snapshot reader
    (built once per topology: every case of the table shares it)."""
    key = repr(sorted(setup.items()))
    if key not in _PREFILTER_CLUSTERS:
        per, count = setup["nodesPerTier1HN"], setup["tier1HNCount"]
        alloc = {"cpu": f"{setup['nodeCPU']}m", "memory": str(setup["nodeMemory"])}
        names = [f"{setup['nodePrefix']}{i}" for i in range(setup["nodeCount"])]
        objects = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": n}, "status": {"allocatable": alloc}}
                   for n in names]
        leaves = [f"{setup['tier1Prefix']}{i}" for i in range(count)]
        objects += [_hypernode(leaf, 1, "Node", names[i * per:(i + 1) * per]) for i, leaf in enumerate(leaves)]
        objects.append(_hypernode(setup["tier2HyperNode"], 2, "HyperNode", leaves))
        snap = snapshot_from_objects([(f"objects[{i}]", o) for i, o in enumerate(objects)], "prefilter",
                                     "actions: allocate\ntiers:\n- plugins:\n  - name: network-topology-aware\n")
        cluster = build_cluster(snap.fabric, resource_names(snap.fabric, [], {}), snap.settings)
        _PREFILTER_CLUSTERS[key] = (snap, cluster)
    return _PREFILTER_CLUSTERS[key]


def _hypernode(name: str, tier: int, kind: str, members: list[str]) -> dict:
    return {"apiVersion": "topology.volcano.sh/v1alpha1", "kind": "HyperNode", "metadata": {"name": name},
            "spec": {"tier": tier, "members": [{"type": kind, "selector": {"exactMatch": {"name": m}}}
                                               for m in members]}}


def _prefilter(case: Case) -> CaseResult:
    """hyperNodeGradientFn with the HyperNode's idle and futureIdle set as upstream sets them."""
    snap, cluster = _prefilter_cluster(case.setup)
    f, expect = case.fields, case.expect

    def vector(res: dict) -> list[int]:          # milliCPU and bytes, the cluster's units
        out = [0] * len(cluster.resources)
        out[cluster.rindex["cpu"]], out[cluster.rindex["memory"]] = res["milliCPU"], res["memory"]
        return out

    g = cluster.g_index[expect["hyperNode"]]
    saved_used, saved_future = list(cluster.g_used[g]), cluster.g_future
    idle, future = vector(f["idleResource"]), vector(f["futureIdleResource"])
    cluster.g_used[g] = [a - i for a, i in zip(cluster.g_alloc[g], idle)]
    cluster.g_future = [[0] * len(cluster.resources) for _ in cluster.g_name]
    cluster.g_future[g] = [fu - i for fu, i in zip(future, idle)]
    cluster.touch(g)
    try:
        need = sparse(vector(f["minResource"]))
        aware = TopologyAware(cluster, snap.settings)
        root = cluster.g_index[case.setup["tier2HyperNode"]]
        chosen = [h for tier in aware.gradients(root, f["highestAllowedTier"]) for h in tier
                  if cluster.eligible(h, need, evict=f["purpose"] == "Evict")]
    finally:
        cluster.g_used[g], cluster.g_future = saved_used, saved_future
        cluster.touch(g)
    got = g in chosen
    return CaseResult(case, {"tier1Selected": got, "gradient": len(chosen)}, got == expect["tier1Selected"])


def report(cases: list[Case] | None = None, divergent: dict | None = None) -> tuple[dict, list[CaseResult]]:
    cases = load_cases() if cases is None else cases
    divergent = load_divergent() if divergent is None else divergent
    results = [run_case(c) for c in cases]
    by_test: dict[str, dict[str, int]] = {}
    for r in results:
        row = by_test.setdefault(r.case.test, {"cases": 0, "reproduced": 0})
        row["cases"] += 1
        row["reproduced"] += r.reproduced
    out = {
        "cases": len(results),
        "reproduced": sum(r.reproduced for r in results),
        "case_names": [r.case.name for r in results],
        "by_upstream_test": by_test,
        "divergent": [{"test": r.case.test, "case": r.case.name, "index": r.case.index,
                       "expected": {k: v for k, v in r.case.expect.items() if k != "check"},
                       "got": r.got, "reason": divergent.get((r.case.test, r.case.name), "not explained")}
                      for r in results if not r.reproduced],
    }
    harness = [r for r in results if r.case.expect["check"] in HARNESS_ONLY]
    out["simulator"] = {"cases": len(results) - len(harness),
                        "reproduced": sum(r.reproduced for r in results if r not in harness)}
    out["harness_only"] = {"cases": len(harness), "reproduced": sum(r.reproduced for r in harness),
                           "case_names": [r.case.name for r in harness],
                           "why": sorted({HARNESS_ONLY[r.case.expect["check"]] for r in harness})}
    ours = [run_case(c) for c in load_cases(OURS, "*.yaml")]
    out["ours"] = {"cases": len(ours), "reproduced": sum(r.reproduced for r in ours),
                   "failed": [r.case.name for r in ours if not r.reproduced]}
    return out, results
