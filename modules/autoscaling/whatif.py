"""`trainstack autoscaling`: replay a metric series through an HPA (the model in
modules/upstream/autoscaling) and print the replica timeline.

The HPA comes from a stack (rendered; ``--hpa NAME`` picks one when it has several) or from a
manifest file (``--hpa-file``). The series is a Prometheus range query's JSON (``query_range``:
``{"status": "success", "data": {"resultType": "matrix", "result": [...]}}``; the series' values
are added up at each timestamp, as the HPA adds up an External metric's series) or one or more
fabric probe results files (``trainstack probe --json``: each file one sample ``--every`` seconds
apart, the peak all_reduce busbw of the tier the HPA's metric selects, as the adapter serves
``fabric_busbw_gbps``).

The HPA syncs every ``--sync-period`` seconds and reads the latest sample, until ``--hold`` seconds
after the last one. For a per-pod metric
(Resource, ContainerResource, Pods) the series is the pods' total, spread evenly over the current
replicas (the load the pods share); an Object or External metric is read as it is.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path

from modules.core import yamlio
from modules.core.config import Project, load_stack
from modules.core.errors import InputError, show
from modules.core.quantity import parse_quantity
from modules.probe import results
from modules.upstream.autoscaling.controller import (SOURCE_KEY, SOURCES, History, Observation, Options, metric_name,
                                                     sync)
from modules.upstream.autoscaling.replicas import Container, Pod, PodMetric

MAX_SAMPLES = 100_000
MAX_SYNCS = 200_000
MAX_SERIES_FILES = 1_000
MAX_REPLICAS = 100_000
PROBE_EVERY = 6 * 3600      # the probe CronJob's default schedule: every 6 hours
LONG_AGO = -1e12


@dataclass(frozen=True)
class Step:
    """One line of the timeline: a sync that changed the replica count (or the first one)."""

    time: float
    value: float
    replicas: int
    reason: str


# --- inputs ---------------------------------------------------------------------------------------

def hpa_from_file(path: str) -> dict:
    docs = [d for d in yamlio.load_manifests(yamlio.read_text(Path(path), path), path) if isinstance(d, dict)]
    found = [d for d in docs if d.get("kind") == "HorizontalPodAutoscaler"]
    if len(found) != 1:
        raise InputError(path, "", f"expected exactly one HorizontalPodAutoscaler, found {len(found)}")
    return found[0]


def hpa_from_stack(project: Project, stack: str, name: str | None) -> dict:
    from modules.core.render import render   # only a stack needs the renderer
    bundle = render(load_stack(project, stack))
    found = [r.obj for r in bundle.resources if r.obj.get("kind") == "HorizontalPodAutoscaler"]
    names = [f"{o['metadata'].get('namespace')}/{o['metadata']['name']}" for o in found]
    if name:
        found = [o for o, full in zip(found, names) if name in (full, o["metadata"]["name"])]
    if len(found) != 1:
        what = f"an HPA named {name!r}" if name else "exactly one HPA (pick one with --hpa NAME)"
        raise InputError(f"stack {stack}", "trainstack:autoscaling.hpas",
                         f"expected {what}; the stack renders: {', '.join(names) or 'none'}")
    return found[0]


def check_hpa(hpa: dict, shown: str, metric: str | None) -> tuple[dict, int]:
    """The spec replayed (only the metric fed by the series) and the index of that metric."""
    spec = hpa.get("spec")
    if hpa.get("apiVersion") != "autoscaling/v2" or not isinstance(spec, dict):
        raise InputError(shown, "apiVersion", f"expected an autoscaling/v2 HorizontalPodAutoscaler, got "
                         f"{show(hpa.get('apiVersion'))}")
    minimum, maximum = spec.get("minReplicas", 1), spec.get("maxReplicas")
    for key, value in (("minReplicas", minimum), ("maxReplicas", maximum)):
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_REPLICAS:
            raise InputError(shown, f"spec.{key}", f"expected a whole number 0-{MAX_REPLICAS}, got {show(value)}")
    if minimum > maximum:
        raise InputError(shown, "spec.minReplicas", f"expected at most maxReplicas ({maximum}), got {minimum}")
    metrics = spec.get("metrics")
    if not isinstance(metrics, list) or not metrics:
        raise InputError(shown, "spec.metrics", "expected a list of metrics the series can feed")
    names = [metric_name(m) or "?" for m in metrics]
    if metric is None and len(metrics) > 1:
        raise InputError(shown, "spec.metrics", f"expected --metric NAME: the HPA has {len(metrics)} metrics "
                         f"({', '.join(names)}) and the series feeds one")
    index = 0 if metric is None else next((i for i, n in enumerate(names) if n == metric), -1)
    if index < 0:
        raise InputError(shown, "spec.metrics", f"no metric named {metric!r}; the HPA's are {', '.join(names)}")
    chosen = metrics[index]
    if not isinstance(chosen, dict) or chosen.get("type") not in SOURCES or \
            not isinstance(chosen.get(SOURCE_KEY[chosen["type"]]), dict):
        raise InputError(shown, f"spec.metrics[{index}]", f"expected a metric of type {', '.join(SOURCES)}")
    _check_target(chosen, shown, f"spec.metrics[{index}].{SOURCE_KEY[chosen['type']]}.target")
    return {**spec, "metrics": [chosen]}, index


TARGET_FIELDS = {"Utilization": "averageUtilization", "AverageValue": "averageValue", "Value": "value"}
ALLOWED_TARGETS = {"Resource": ("Utilization", "AverageValue"), "ContainerResource": ("Utilization", "AverageValue"),
                   "Pods": ("AverageValue",), "Object": ("Value", "AverageValue"),
                   "External": ("Value", "AverageValue")}


def _check_target(metric: dict, shown: str, where: str) -> None:
    """The target the API server would accept for the metric's type: a positive quantity (a whole
    percentage for Utilization) in the field its type names."""
    target = metric[SOURCE_KEY[metric["type"]]].get("target")
    allowed = ALLOWED_TARGETS[metric["type"]]
    kind = target.get("type") if isinstance(target, dict) else None
    if kind not in allowed:
        raise InputError(shown, f"{where}.type", f"expected {' or '.join(allowed)} for a {metric['type']} metric, "
                         f"got {show(kind)}")
    field, value = TARGET_FIELDS[kind], target.get(TARGET_FIELDS[kind])
    if kind == "Utilization":
        good = isinstance(value, int) and not isinstance(value, bool) and 0 < value <= 10**6
    else:
        try:
            good = 0 < parse_quantity(value) <= 10**15
        except ValueError:
            good = False
    if not good:
        what = "whole percentage" if kind == "Utilization" else "quantity"
        raise InputError(shown, f"{where}.{field}", f"expected a positive {what}, got {show(value)}")


def read_series(paths: list[str], tier: str | None, every: float) -> list[tuple[float, float]]:
    """(time, value) samples, oldest first."""
    if not paths:
        raise InputError("trainstack autoscaling", "--series", "expected a series: a Prometheus range query's "
                         "JSON or probe results files")
    if len(paths) > MAX_SERIES_FILES:
        raise InputError("trainstack autoscaling", "--series", f"expected at most {MAX_SERIES_FILES} files")
    first = yamlio.read_text(Path(paths[0]), paths[0])
    doc = yamlio.loads_json(first, paths[0], "expected JSON") if first.lstrip().startswith("{") else None
    if isinstance(doc, dict) and ("status" in doc or "data" in doc):   # a Prometheus API response
        if len(paths) > 1:
            raise InputError(paths[1], "", "expected one Prometheus range query file (its series are added up)")
        samples = prometheus_series(doc, paths[0])
    else:
        samples = [(i * every, probe_busbw(path, tier)) for i, path in enumerate(paths)]
    if not samples:
        raise InputError(paths[0], "", "no samples in the series")
    if len(samples) > MAX_SAMPLES:
        raise InputError(paths[0], "", f"expected at most {MAX_SAMPLES} samples, got {len(samples)}")
    return samples


def prometheus_series(doc: object, shown: str) -> list[tuple[float, float]]:
    if not isinstance(doc, dict) or doc.get("status") != "success":
        got = doc.get("status") if isinstance(doc, dict) else doc
        raise InputError(shown, "status", f"expected \"success\", got {show(got)}")
    data = doc.get("data")
    if not isinstance(data, dict) or data.get("resultType") != "matrix" or not isinstance(data.get("result"), list):
        raise InputError(shown, "data", "expected {\"resultType\": \"matrix\", \"result\": [...]} (a range query)")
    totals: dict[float, float] = {}
    count = 0
    for i, series in enumerate(data["result"]):
        values = series.get("values") if isinstance(series, dict) else None
        if not isinstance(values, list):
            raise InputError(shown, f"data.result[{i}].values", f"expected a list of [time, value], got {show(values)}")
        for j, pair in enumerate(values):
            count += 1
            if count > MAX_SAMPLES:
                raise InputError(shown, "data.result", f"expected at most {MAX_SAMPLES} samples")
            at, value = _sample(pair, shown, f"data.result[{i}].values[{j}]")
            totals[at] = totals.get(at, 0.0) + value
    return sorted(totals.items())


def _sample(pair: object, shown: str, where: str) -> tuple[float, float]:
    if not isinstance(pair, list) or len(pair) != 2:
        raise InputError(shown, where, f"expected [unix time, \"value\"], got {show(pair)}")
    at, text = pair
    try:
        value = float(text) if isinstance(text, str) else math.nan
    except ValueError:
        value = math.nan
    if isinstance(at, bool) or not isinstance(at, (int, float)) or not math.isfinite(at) or \
            not math.isfinite(value) or value < 0:
        raise InputError(shown, where, f"expected [unix time, \"value\"] with a finite value >= 0, got {show(pair)}")
    return float(at), value


def probe_busbw(path: str, tier: str | None) -> float:
    """The adapter's fabric_busbw_gbps: the peak all_reduce busbw of the tier (max over sizes)."""
    records = [r for r in results.read(path) if r["collective"] == "all_reduce" and
               (tier is None or str(r["tier"]) == tier)]
    if not records:
        raise InputError(path, "results", f"expected all_reduce results{f' of tier {tier}' if tier else ''}")
    return max(results.busbw_gbps(r) for r in records)


# --- the replay -----------------------------------------------------------------------------------

def observation(metric: dict, total: float, replicas: int, request: float | None) -> Observation:
    kind = metric["type"]
    value = int(math.ceil(total * 1000))
    pods = tuple(Pod(f"pod-{i}", started=LONG_AGO, ready_changed=LONG_AGO,   # ready, past CPU initialisation
                     containers=(Container("main", int(round((request or 0) * 1000))),)) for i in range(replicas))
    if kind == "Object":
        return Observation(pods=pods, value=value)
    if kind == "External":
        return Observation(pods=pods, values=(value,))
    each = value // max(1, replicas)
    return Observation(pods=pods, samples={p.name: PodMetric(each, 0.0, 60.0) for p in pods})


def replay(spec: dict, samples: list[tuple[float, float]], start: int, period: float,
           request: float | None, hold: float = 0.0) -> list[Step]:
    """The syncs from the first sample to ``hold`` seconds after the last (which keeps its value):
    the first step and every change of the replica count."""
    metric = spec["metrics"][0]
    target = metric[SOURCE_KEY[metric["type"]]].get("target") or {}
    if metric["type"] in ("Resource", "ContainerResource") and target.get("averageUtilization") is not None \
            and not request:
        raise InputError("trainstack autoscaling", "--request", "expected each pod's request (a Utilization "
                         "target is a percentage of it)")
    t0, end = samples[0][0], samples[-1][0] + hold
    if (end - t0) / period > MAX_SYNCS:
        raise InputError("trainstack autoscaling", "--sync-period", f"the series spans {end - t0:g} s: more than "
                         f"{MAX_SYNCS} syncs of {period:g} s; pass a longer --sync-period")
    history, replicas, steps, k = History(), start, [], 0
    t = t0
    while True:
        while k + 1 < len(samples) and samples[k + 1][0] <= t:
            k += 1
        decision = sync(spec, replicas, [observation(metric, samples[k][1], replicas, request)], history, t, Options())
        if decision.replicas != replicas or not steps:
            reason = decision.reason if decision.replicas != replicas else f"start ({decision.reason})"
            steps.append(Step(t - t0, samples[k][1], decision.replicas, reason))
        history, replicas = decision.history, decision.replicas
        if t >= end:
            break
        t = min(end, t + period)
    return steps


# --- output ---------------------------------------------------------------------------------------

def report_text(title: str, steps: list[Step], span: float) -> str:
    lines = [title, f"{'time':>10}  {'metric':>12}  {'replicas':>8}  reason"]
    for s in steps:
        lines.append(f"{_clock(s.time):>10}  {s.value:>12.6g}  {s.replicas:>8}  {s.reason}")
    lines.append(f"after {_clock(span)}: {steps[-1].replicas} replicas ({len(steps) - 1} change(s))")
    return "\n".join(lines) + "\n"


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m{secs:02d}s" if hours else f"{minutes}m{secs:02d}s"


def cmd_autoscaling(args: argparse.Namespace, project: Project | None) -> int:
    if args.hpa_file:
        hpa, shown = hpa_from_file(args.hpa_file), args.hpa_file
    elif args.stack and project is not None:
        hpa = hpa_from_stack(project, args.stack, args.hpa)
        meta = hpa["metadata"]
        shown = f"stack {args.stack}: HorizontalPodAutoscaler {meta.get('namespace')}/{meta['name']}"
    else:
        raise InputError("trainstack autoscaling", "", "expected a stack or --hpa-file FILE")
    spec, index = check_hpa(hpa, shown, args.metric)
    for key, value, low in (("--sync-period", args.sync_period, 1), ("--every", args.every, 1),
                            ("--hold", args.hold, 0)):
        if not math.isfinite(value) or not low <= value <= 86400 * 7:
            raise InputError("trainstack autoscaling", key, f"expected seconds between {low} and 604800, got {value:g}")
    request = float(parse_quantity(args.request)) if args.request else None
    selector = ((spec["metrics"][0].get("external") or {}).get("metric") or {}).get("selector") or {}
    tier = (selector.get("matchLabels") or {}).get("tier")
    samples = read_series(args.series or [], tier, args.every)
    start = spec.get("minReplicas", 1) if args.replicas is None else args.replicas
    if not 0 <= start <= MAX_REPLICAS:
        raise InputError("trainstack autoscaling", "--replicas", f"expected 0-{MAX_REPLICAS}, got {start}")
    steps = replay(spec, samples, start, args.sync_period, request, args.hold)
    span = samples[-1][0] - samples[0][0] + args.hold
    name = metric_name(spec["metrics"][0]) or "?"
    if args.format == "json":
        out = {"hpa": shown, "metric": name, "metricIndex": index, "samples": len(samples), "seconds": span,
               "syncPeriod": args.sync_period, "start": start, "final": steps[-1].replicas,
               "timeline": [s.__dict__ for s in steps]}
        sys.stdout.write(json.dumps(out, indent=2) + "\n")
    else:
        sys.stdout.write(report_text(f"{shown}: {name} replayed over {len(samples)} sample(s)", steps, span))
    return 0


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("autoscaling", parents=[common],
                       help="replay a metric series through an HPA (Kubernetes' replica calculation and "
                            "behaviour) and print the replica timeline",
                       description="Replay a Prometheus range query (JSON) or fabric probe results through a "
                                   "stack's HPA (or --hpa-file) with Kubernetes' HPA model: tolerance, targets, "
                                   "stabilisation windows and scaling policies. Exit 2 on bad input.")
    p.add_argument("stack", nargs="?", help="stack name (stacks/Pulumi.<stack>.yaml) or the path of its file")
    p.add_argument("--hpa", metavar="NAME", help="the stack's HPA (name or namespace/name) when it has several")
    p.add_argument("--hpa-file", metavar="FILE", help="an autoscaling/v2 HorizontalPodAutoscaler manifest "
                   "instead of a stack")
    p.add_argument("--series", metavar="FILE", action="append",
                   help="a Prometheus range query's JSON, or probe results files (repeat; one sample each)")
    p.add_argument("--metric", metavar="NAME", help="the HPA metric the series feeds (when it has several)")
    p.add_argument("--replicas", type=int, help="replicas at the start (default: minReplicas)")
    p.add_argument("--sync-period", type=float, default=15.0, help="seconds between syncs (default 15)")
    p.add_argument("--every", type=float, default=float(PROBE_EVERY),
                   help="seconds between probe results files (default 21600, the probe's schedule)")
    p.add_argument("--hold", type=float, default=900.0,
                   help="seconds to keep syncing after the last sample, with its value (default 900: past the "
                        "default 5-minute scale-down window)")
    p.add_argument("--request", metavar="QUANTITY", help="each pod's request, for a Utilization target")
    p.add_argument("--format", default="text", choices=("text", "json"), help="output format")
    p.set_defaults(run=cmd_autoscaling, needs_project=lambda a: not a.hpa_file)
