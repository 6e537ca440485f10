"""Every gang the shipped stacks render reads back through modules.semantics as the renderer checked it.

The renderers size each hard gang against the fabric with ``modules.volcano.topology.check_fits``
(modules/runtimes/render.py: a runtime's numNodes; modules/workloads/render.py: a TrainJob's numNodes,
a Volcano Job's minAvailable, a gang Deployment's replicas). This test records the values each call
receives while the stack renders (pod count, one pod's requests, the hard tier) and reads the rendered
object back with the rules' entry (``gang_of``, ``workload_of``) and ``constraints``: the gang size, every
gang pod's node-fit requests and the hard tier must be the ones the renderer checked. A renderer and the
model it shares with the rules and the simulator therefore cannot drift apart.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal

import pytest

from modules.core.config import load_project, load_stack
from modules.core.render import render
from modules.semantics.volcano import constraints, tiers_of
from modules.semantics.workloads import find_runtime, gang_of, workload_of
from modules.volcano import topology
from tests.support.cli import ROOT

STACKS = ("dev", "staging", "prod", "legacy")
LABEL = re.compile(r"^(runtime|TrainJob|Volcano Job|Deployment) (\S+)")
KIND = {"runtime": "ClusterTrainingRuntime", "TrainJob": "TrainJob", "Volcano Job": "Job", "Deployment": "Deployment"}


@dataclass(frozen=True)
class Checked:
    """One check_fits call: what the renderer sized."""
    kind: str
    name: str
    path: str
    pods: int
    per_pod: dict
    tier: int | None


@dataclass
class Rendered:
    checked: list[Checked]
    objects: list[dict]
    fabric: object
    ours: list[dict]           # what the runtimes and workloads modules rendered
    partitions: dict           # check_partitions_fit calls: path -> (partitions, size, per_pod, tier)


@pytest.fixture(scope="module")
def rendered() -> dict[str, Rendered]:
    """Each shipped stack rendered once, with the renderer's check_fits calls recorded."""
    project = load_project(ROOT)
    out: dict[str, Rendered] = {}
    real, real_partitions = topology.check_fits, topology.check_partitions_fit
    for stack in STACKS:
        calls: list[Checked] = []
        parts: dict = {}

        def record_partitions(ctx, path, needed, size, per_pod, partition_tier, job_tier, parts=parts):
            parts[path] = (needed, size, _clean(per_pod), partition_tier)
            return real_partitions(ctx, path, needed, size, per_pod, partition_tier, job_tier)

        def record(ctx, path, pods, per_pod, tier, what, one_per_node=False, calls=calls):
            found = LABEL.match(what)
            assert found, f"check_fits label not understood: {what!r}"
            calls.append(Checked(KIND[found[1]], found[2], path, pods, _clean(per_pod), tier))
            return real(ctx, path, pods, per_pod, tier, what, one_per_node)

        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(topology, "check_fits", record)
            patch.setattr(topology, "check_partitions_fit", record_partitions)
            bundle = render(load_stack(project, stack))
        out[stack] = Rendered(calls, [r.obj for r in bundle.resources], bundle.fabric,
                              [r.obj for r in bundle.resources if r.module in ("runtimes", "workloads")], parts)
    return out


def _clean(requests) -> dict:
    return {k: Decimal(v) for k, v in requests.items() if Decimal(v)}


def _object(objects: list[dict], kind: str, name: str) -> dict:
    found = [o for o in objects if o.get("kind") == kind and o["metadata"]["name"] == name]
    assert len(found) == 1, f"{kind} {name}: rendered {len(found)} times"
    return found[0]


def _hard_tier(obj: dict, objects: list[dict], fabric) -> int | None:
    """The hard job-level tier as the rules read it (a TrainJob's comes from its runtime)."""
    target = find_runtime(obj, objects) if obj.get("kind") == "TrainJob" else obj
    job = [c for c in constraints(target) if c.scope in ("job", "runtime", "pod annotations")]
    if not job or not job[0].hard:
        return None
    c = job[0]
    if c.tier is not None:
        return c.as_stored()[1]
    return tiers_of(objects, fabric).tier_of(c.tier_name)


def _gang_source(obj: dict, objects: list[dict]) -> dict:
    """A gang Deployment with a named tier is bound to a PodGroup of its name, which holds the gang."""
    if obj.get("kind") == "Deployment":
        name = obj["metadata"]["name"]
        groups = [o for o in objects if o.get("kind") == "PodGroup" and o["metadata"]["name"] == name]
        if groups:
            return groups[0]
    return obj


@pytest.mark.parametrize("stack", STACKS)
def test_rendered_gangs_read_back_as_checked(rendered, stack):
    got = rendered[stack]
    assert got.checked or stack == "legacy", f"{stack}: the renderers checked no gang"
    for c in got.checked:
        obj = _object(got.objects, c.kind, c.name)
        source = _gang_source(obj, got.objects)
        gang = gang_of(source, got.objects)
        label = f"{stack}: {c.kind} {c.name} ({c.path})"
        assert gang is not None, label
        assert gang.pods == c.pods, f"{label}: gang {gang.pods} pods, renderer checked {c.pods}"
        assert workload_of(source, got.objects).min_member == c.pods, label
        for pod_set in gang.sets:
            assert _clean(pod_set.requests) == c.per_pod, f"{label}: {pod_set.what} requests"
        assert _hard_tier(source, got.objects, got.fabric) == c.tier, label


def test_rendered_partitions_read_back_as_checked(rendered):
    """A Volcano Job's partitions: how many must fit (minAvailable / partitionSize), their size, one
    pod's requests and the partition's hard tier, as ``check_partitions_fit`` received them."""
    checked = 0
    for stack, got in rendered.items():
        for path, (needed, size, per_pod, tier) in got.partitions.items():
            name = next(c.name for c in got.checked if c.kind == "Job" and c.path.startswith(path + "."))
            workload = workload_of(_object(got.objects, "Job", name), got.objects)
            (part,) = workload.partitions
            label = f"{stack}: Volcano Job {name}"
            assert (workload.min_member // part.size, part.size) == (needed, size), label
            assert _clean(workload.sets[part.index].requests) == per_pod, label
            t = part.topology
            hard = t is not None and t.mode == "hard"
            mine = (t.tier if t.tier is not None else tiers_of(got.objects, got.fabric).tier_of(t.tier_name)) \
                if hard else None
            assert mine == tier, label
            checked += 1
    assert checked, "no shipped stack renders a partitioned Volcano Job"


def test_every_rendered_gang_was_checked(rendered):
    """Each runtime, TrainJob, Volcano Job and Deployment the runtimes and workloads modules render
    was sized by the renderer, so the comparison above covers all of them."""
    for stack, got in rendered.items():
        seen = {(c.kind, c.name) for c in got.checked}
        gangs = [o for o in got.ours if o.get("kind") in ("ClusterTrainingRuntime", "TrainJob", "Job", "Deployment")]
        for obj in gangs:
            assert (obj["kind"], obj["metadata"]["name"]) in seen, f"{stack}: {obj['kind']} {obj['metadata']['name']}"
        # a runtime is sized each time a module builds it (the workloads module builds the stack's
        # runtimes again to place TrainJobs on them): always with the same values
        values = {(c.kind, c.name, c.pods, c.tier, tuple(sorted(c.per_pod.items()))) for c in got.checked}
        assert len(seen) == len(values), f"{stack}: one gang checked with different values"
