"""Fidelity against Kubernetes' own podautoscaler tests: the cases ported as data under
``tests/modules/upstream/autoscaling/upstream/<test file>.yaml`` run through this port.

Each harness below rebuilds what upstream's test builds (its fake pods, metrics clients, scale
events and recommendations) from the case's data, in our own code, then calls the port and
compares with upstream's expectation. Times are relative: upstream's ``time.Now()`` is ``NOW`` and
the zero ``metav1.Time`` is ``ZERO``. ``report()`` is what ``benchmarks/upstream_autoscaling.py``
prints; cases that disagree with upstream are listed with what the port returned.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from modules.core import yamlio

from . import behavior as bh
from .controller import History, Observation, Options, milli, sync
from .replicas import (HPAError, Container, Pod, PodMetric, Tolerances, calculate_requests, external_replicas,
                       group_pods, object_replicas, per_pod_replicas, plain_replicas, resource_replicas)

FIXTURES = Path(__file__).resolve().parents[3] / "tests" / "modules" / "upstream" / "autoscaling" / "upstream"
NOW = 1_000_000_000.0
ZERO = -62_135_596_800.0          # 0001-01-01T00:00:00Z, Go's zero time, in Unix seconds
TESTING_TOLERANCE = 0.1           # upstream's defaultTestingTolerance
TESTING_TIMING = (120.0, 10.0)    # defaultTestingCPUInitializationPeriod, ...DelayOfInitialReadinessStatus
TESTING_SCALE_UP_FACTOR = 8.0     # horizontal_test.go's init() sets scaleUpLimitFactor = 8
START = {"hot": NOW, "cool": NOW - 180.0}


@dataclass
class Case:
    """One upstream test case, ported as data: its source, test function, case name and fields."""

    source: dict
    test: str
    name: str
    data: dict


@dataclass
class Result:
    """A case's outcome here, and whether it is upstream's."""

    case: Case
    got: Any
    reproduced: bool


def load_cases(folder: Path = FIXTURES) -> list[Case]:
    cases = []
    for path in sorted(folder.glob("*_test.yaml")):
        doc = yamlio.load_file(path, str(path))
        cases += [Case(doc["source"], raw["test"], str(raw["name"]), raw) for raw in doc["cases"]]
    return cases


# --- replica_calculator_test.go -------------------------------------------------------------------

def _calc_pods(d: dict) -> list[Pod]:
    count = d["currentReplicas"]
    phases = d.get("podPhase") or []
    count = max(count, len(phases))
    requests = (d.get("resource") or {}).get("requests") or []
    pods = []
    for i in range(count):
        readiness = d.get("podReadiness") or []
        starts = d.get("podStartTime") or []
        request = milli(requests[i]) if i < len(requests) else None
        pods.append(Pod(f"test-pod-{i}", phase=phases[i] if phases else "Running",
                        ready=readiness[i] if i < len(readiness) else True, ready_changed=ZERO,
                        started=START[starts[i]] if starts else ZERO,
                        deleting=bool((d.get("podDeletionTimestamp") or [False] * count)[i]),
                        containers=(Container("container1", request), Container("container2", request))))
    return pods


def _resource_samples(resource: dict, container: str) -> dict[str, PodMetric]:
    """The resource metrics client: one entry per pod named by the test, summed over its containers
    (a container without a value hides the pod) or the one container named."""
    levels = resource.get("levels")
    if levels is None:
        levels = [[level, level] for level in resource.get("podLevels", [])]
    if not levels:
        raise HPAError("unable to get metrics for resource cpu: no metrics returned from resource metrics API")
    names = resource.get("podNames") or []
    out = {}
    for i, values in enumerate(levels):
        name = names[i] if i < len(names) else f"test-pod-{i}"
        present = {f"container{j + 1}": v for j, v in enumerate(values)}
        if container:
            if container in present:
                out[name] = PodMetric(present[container], ZERO, 60.0)
        elif len(present) == 2:   # upstream's fake always reports two containers; an empty one has no usage
            out[name] = PodMetric(sum(present.values()), ZERO, 60.0)
    return out


def _calc(case: Case) -> tuple[Any, bool]:
    d = case.data
    expect = d["expect"]
    tolerances = Tolerances(*d["tolerances"]) if d.get("tolerances") else Tolerances(TESTING_TOLERANCE,
                                                                                       TESTING_TOLERANCE)
    pods = _calc_pods(d)
    try:
        if d.get("resource"):
            resource = d["resource"]
            samples = _resource_samples(resource, d.get("container", ""))
            p = resource_replicas(d["currentReplicas"], resource["targetUtilization"], "cpu", tolerances, pods,
                                  samples, d.get("container", ""), NOW, TESTING_TIMING)
            got = {"replicas": p.replicas, "utilization": p.utilization, "rawValue": p.usage}
        else:
            got = _metric(d, tolerances, pods)
    except HPAError as err:
        return {"error": str(err)}, "error" in expect and expect["error"] in str(err)
    return got, "error" not in expect and got == expect


def _metric(d: dict, tolerances: Tolerances, pods: list[Pod]) -> dict:
    m, current = d["metric"], d["currentReplicas"]
    levels = m["levels"]
    if m["type"] == "pods":
        samples = {f"test-pod-{i}": PodMetric(v, ZERO, 60.0) for i, v in enumerate(levels)}
        p = plain_replicas(current, m["targetUsage"], tolerances, pods, samples, "", NOW, TESTING_TIMING)
    elif m["type"] == "object":
        p = object_replicas(current, levels[0], m["targetUsage"], tolerances, pods)
    elif m["type"] == "objectPerPod":
        p = per_pod_replicas(current, levels[0], m["perPodTargetUsage"], tolerances)
    elif m["type"] == "external":
        p = external_replicas(current, levels, m["targetUsage"], tolerances, pods)
    else:
        p = per_pod_replicas(current, sum(levels), m["perPodTargetUsage"], tolerances)
    return {"replicas": p.replicas, "usage": p.usage}


def _group(case: Case) -> tuple[Any, bool]:
    d = case.data
    pods, samples = [], {}
    for raw in d["pods"]:
        pods.append(Pod(raw["name"], phase=raw.get("phase", "Running"), ready=raw.get("ready"),
                        ready_changed=NOW - raw.get("readyChanged", NOW - ZERO),
                        started=NOW - raw["started"] if "started" in raw else None,
                        deleting=raw.get("deleting", False)))
        if "metric" in raw:
            metric = raw["metric"]
            samples[raw["name"]] = PodMetric(1, NOW - metric["age"] if "age" in metric else ZERO,
                                             float(metric.get("window", 0)))
    g = group_pods(pods, samples, d["resource"], NOW, *TESTING_TIMING)
    got = {"ready": g.ready, "unready": sorted(g.unready), "missing": sorted(g.missing), "ignored": sorted(g.ignored)}
    return got, got == d["expect"]


def _requests(case: Case) -> tuple[Any, bool]:
    d = case.data
    pods = [Pod(raw["name"], containers=tuple(Container(n, r) for n, r in raw.get("containers", [])) +
                tuple(Container(n, r, init=True, restartable=s) for n, r, s in raw.get("init", [])))
            for raw in d["pods"]]
    try:
        got = {"requests": calculate_requests(pods, d.get("container", ""), "cpu")}
    except HPAError as err:
        return {"error": str(err)}, d["expect"].get("error") == str(err)
    return got, got == d["expect"]


# --- horizontal_test.go ---------------------------------------------------------------------------

def scaling_rules(args: list[int] | None) -> dict | None:
    """upstream's generateScalingRules(pods, podsPeriod, percent, percentPeriod, window)."""
    if args is None:
        return None
    pods, pods_period, percent, percent_period, window = args
    policies = ([{"type": "Pods", "value": pods, "periodSeconds": pods_period}] if pods else []) + \
        ([{"type": "Percent", "value": percent, "periodSeconds": percent_period}] if percent else [])
    return {"stabilizationWindowSeconds": window, "selectPolicy": "Max", "policies": policies}


def uniform_events(spec: list | None) -> list[bh.Event]:
    """upstream's generateEventsUniformDistribution(changes, period): each event in the middle of
    its share of the last ``period`` seconds, the first the oldest."""
    if not spec:
        return []
    changes, period = spec
    segment = period / len(changes)
    return [bh.Event(change, NOW - (period - segment * (i + 1) + segment / 2)) for i, change in enumerate(changes)]


def _recommendations(raw: list) -> list[bh.Recommendation]:
    return [bh.Recommendation(r, NOW - age) for r, age in raw]


def _rules_limit(case: Case) -> tuple[Any, bool]:
    d = case.data
    replicas, condition = bh.limited_without_behavior(d["current"], d["desired"], d["min"], d["max"],
                                                      TESTING_SCALE_UP_FACTOR)
    got = {"replicas": replicas, "condition": condition}
    return got, got == d["expect"]


def _scale_limit(case: Case) -> tuple[Any, bool]:
    d = case.data
    rules = bh.Rules(d["window"], d["select"], tuple(bh.Policy(t, v, p) for t, v, p in d["policies"]))
    limit = (bh.scale_up_limit if d["direction"] == "up" else bh.scale_down_limit)(d["current"], [], [], rules, NOW)
    return {"limit": limit}, limit == d["expect"]["limit"]


def _stabilize(case: Case) -> tuple[Any, bool]:
    d = case.data
    replicas, log = bh.stabilize(_recommendations(d["recommendations"]), d["desired"], 300, NOW)
    got = {"replicas": replicas, "logLength": len(log)}
    return got, got == d["expect"]


def _scaling_rules(case: Case) -> tuple[Any, bool]:
    d = case.data
    behavior = bh.behavior_of({"scaleUp": scaling_rules(d.get("upRules")),
                               "scaleDown": scaling_rules(d.get("downRules"))}, 0)
    replicas, condition = bh.rate_limited(d["desired"], d["current"], d["min"], d["max"],
                                          uniform_events(d.get("upEvents")), uniform_events(d.get("downEvents")),
                                          behavior, NOW)
    got = {"replicas": replicas, "condition": condition}
    return got, got == d["expect"]


def _store_events(case: Case) -> tuple[Any, bool]:
    d = case.data
    events = [bh.Event(change, NOW - age) for change, age in d["events"]]
    rules = scaling_rules(d.get("rules"))
    change = bh.changes_in_period(60, events, NOW)
    ok, got = True, {"change": change}
    for direction, new in (("scaleUp", 10 + d["replicaChange"]), ("scaleDown", 10 - d["replicaChange"])):
        behavior = bh.behavior_of({direction: rules}) if rules else None
        stored = bh.store_event(behavior, events, 10, new, NOW)
        got[direction] = [[e.change, e.outdated] for e in stored]
        ok = ok and got[direction] == d["expect"]["events"]
    return got, ok and change == d["expect"]["change"]


def _stabilize_behavior(case: Case) -> tuple[Any, bool]:
    d = case.data
    behavior = bh.Behavior(bh.Rules(d.get("upWindow", 0), "Max", ()), bh.Rules(d.get("downWindow", 0), "Max", ()))
    replicas, _, log = bh.stabilize_with_behavior(_recommendations(d["recommendations"]), d["desired"], d["current"],
                                                  behavior, NOW)
    got = {"replicas": replicas, "recommendations": [r.replicas for r in log]}
    expect = d["expect"]
    return got, replicas == expect["replicas"] and ("recommendations" not in expect or
                                                    got["recommendations"] == expect["recommendations"])


def _reconcile(case: Case) -> tuple[Any, bool]:
    d = case.data
    metrics = [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization",
                                                                            "averageUtilization": d["cpuTarget"]}}}]
    pods = tuple(Pod(f"test-pod-{i}", started=ZERO, ready_changed=ZERO,
                     containers=(Container("container1", milli(r) // 2), Container("container2", milli(r) // 2)))
                 for i, r in enumerate(d["reportedCPURequests"]))
    samples = {f"test-pod-{i}": PodMetric(level, NOW, 60.0) for i, level in enumerate(d["reportedLevels"])}
    observations = [Observation(pods=pods, samples=samples)]
    observations += [Observation(error=error or "invalid metric source") for error in d.get("fail", [])]
    spec = {"minReplicas": d["min"], "maxReplicas": d["max"], "metrics": metrics + d.get("metrics", [])}
    options = Options(tolerance=TESTING_TOLERANCE, cpu_initialization=TESTING_TIMING[0],
                      readiness_delay=TESTING_TIMING[1], scale_up_limit_factor=TESTING_SCALE_UP_FACTOR)
    decision = sync(spec, d["specReplicas"], observations, History(), NOW, options)
    return {"replicas": decision.replicas, "reason": decision.reason}, decision.replicas == d["expect"]["replicas"]


HARNESS: dict[str, Callable[[Case], tuple[Any, bool]]] = {
    "calc": _calc, "group-pods": _group, "pod-requests": _requests, "rules-limit": _rules_limit,
    "scale-limit": _scale_limit, "stabilize": _stabilize, "scaling-rules": _scaling_rules,
    "store-events": _store_events, "stabilize-behavior": _stabilize_behavior, "reconcile": _reconcile,
}


def run_case(case: Case) -> Result:
    got, ok = HARNESS[case.data["harness"]](case)
    return Result(case, got, ok)


def report(folder: Path = FIXTURES) -> tuple[dict, list[Result]]:
    results = [run_case(c) for c in load_cases(folder)]
    by_test: dict[str, dict[str, int]] = {}
    for r in results:
        row = by_test.setdefault(r.case.test, {"cases": 0, "reproduced": 0})
        row["cases"] += 1
        row["reproduced"] += r.reproduced
    out = {
        "source": {"repo": "kubernetes/kubernetes", "tag": results[0].case.source["tag"] if results else "",
                   "paths": sorted({r.case.source["path"] for r in results})},
        "cases": len(results), "reproduced": sum(r.reproduced for r in results),
        "case_names": [f"{r.case.test}/{r.case.name}" for r in results],
        "by_upstream_test": by_test,
        "divergent": [{"test": r.case.test, "case": r.case.name, "expected": r.case.data["expect"], "got": r.got}
                      for r in results if not r.reproduced],
    }
    return out, results
