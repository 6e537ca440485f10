"""Placement quality on the prod fabric: topology-aware (Volcano model) vs oblivious first-fit vs the
lower bound, on a workload trace (benchmarks/workloads/prod-trace.yaml by default).

    python benchmarks/placement_quality.py                       # the committed trace
    python benchmarks/placement_quality.py --write-trace          # regenerate the trace (seeded)
    python benchmarks/placement_quality.py --random 200          # 200 random traces: how often is
                                                                 # topology-aware worse than oblivious?

Reports, per strategy: jobs placed, share of all jobs inside one leaf, mean modeled all-reduce
time over the jobs every strategy placed (the simulator's totals), and over each strategy's own
placed jobs.
"""
from __future__ import annotations

import argparse
import platform
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import yaml  # noqa: E402

from modules.core.config import load_project, load_stack  # noqa: E402
from modules.core.render import render  # noqa: E402
from modules.simulate.engine import STRATEGIES, simulate  # noqa: E402
from modules.simulate.scheduler import settings_from_bundle  # noqa: E402
from modules.simulate.workloads import load_workloads, runtimes_in  # noqa: E402
from traces import pick  # noqa: E402

TRACE = ROOT / "benchmarks" / "workloads" / "prod-trace.yaml"

# (share of jobs, node counts) and the constraint a team would pick for that size.
SIZES = [(0.25, [1]), (0.30, [2, 3, 4]), (0.28, [8, 12, 16]), (0.13, [24, 32, 48, 64]), (0.04, [96, 128])]
MODES = [(0.45, {"mode": "hard", "highestTierAllowed": 1}), (0.2, {"mode": "hard", "highestTierAllowed": 2}),
         (0.2, {"mode": "soft"}), (0.1, None), (0.05, {"mode": "hard", "highestTierName": "spine"})]


def trace(seed: int, jobs: int, fractional: bool = False) -> list[dict]:
    """A seeded trace of Volcano Jobs for a 1,024-node, 32-nodes-per-leaf fabric.

    ``fractional``: multi-node gangs may use pods of 1, 2 or 4 GPUs too (as many pods as whole
    nodes' worth of GPUs), the case where binpack can leave a node with a sliver of a job's ranks.
    """
    rng = random.Random(seed)
    out = []
    for j in range(jobs):
        nodes = rng.choice(pick(rng, SIZES))
        topology = pick(rng, MODES)
        if nodes > 32 and topology and topology.get("highestTierAllowed") == 1:
            topology = {"mode": "hard", "highestTierAllowed": 2}      # a team would not ask for the impossible
        gpus = 8 if (nodes > 1 and not fractional) or rng.random() < 0.6 else rng.choice([1, 2, 4])
        replicas = nodes * 8 // gpus if nodes > 1 else nodes
        spec = {"minAvailable": replicas, "queue": "default",
                "tasks": [{"name": "worker", "replicas": replicas, "template": {"spec": {"containers": [
                    {"name": "trainer", "image": "registry.example.com/trainer:1",
                     "resources": {"limits": {"nvidia.com/gpu": gpus},
                                   "requests": {"cpu": str(gpus * 12), "memory": f"{gpus * 120}Gi"}}}]}}}]}
        if topology:
            spec["networkTopology"] = topology
        out.append({"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
                    "metadata": {"name": f"job-{j:03d}", "namespace": "training"}, "spec": spec})
    return out


def load(stack_name: str):
    stack = load_stack(load_project(ROOT), stack_name)
    bundle = render(stack)
    return stack, bundle


def summary(result) -> dict[str, dict]:
    out = {}
    common = set(result.common)
    for name in STRATEGIES:
        outcomes = result.outcomes[name]
        placed = [o for o in outcomes if o.placed]
        out[name] = {
            "placed": len(placed),
            "one_leaf": sum(1 for o in placed if o.leaves == 1) / len(outcomes),
            "mean_common": result.totals[name] / len(common) if common else 0.0,
            "mean_own": sum(o.allreduce_s for o in placed) / len(placed) if placed else 0.0,
        }
    return out


def run_trace(path: Path, stack_name: str) -> None:
    stack, bundle = load(stack_name)
    jobs = load_workloads(path, str(path.relative_to(ROOT)), bundle.fabric,
                          runtimes_in(r.obj for r in bundle.resources), stack.name)
    start = time.perf_counter()
    result = simulate(bundle.fabric, jobs, settings=settings_from_bundle(bundle))
    elapsed = time.perf_counter() - start
    demand = sum(len(j.pods) * max(p.gpus for p in j.pods) for j in jobs)
    print(f"trace {path.relative_to(ROOT)}: {len(jobs)} jobs asking {demand:,} GPUs on {len(bundle.fabric.nodes):,} "
          f"nodes ({bundle.fabric.total_gpus:,} GPUs); {len(result.common)} placed by every strategy; "
          f"simulated in {elapsed:.2f} s")
    print(f"machine: {platform.machine()} {platform.processor() or ''} python {platform.python_version()}".strip())
    print()
    print("| strategy | jobs placed | jobs inside one leaf | mean all-reduce, jobs all placed (ms) | "
          "mean all-reduce, own placed (ms) |")
    print("|---|---|---|---|---|")
    for name, row in summary(result).items():
        print(f"| {name} | {row['placed']}/{len(jobs)} | {row['one_leaf']:.0%} | {row['mean_common'] * 1e3:.3f} | "
              f"{row['mean_own'] * 1e3:.3f} |")


def run_random(count: int, stack_name: str, jobs: int, fractional: bool, fragment: int) -> None:
    """How often, on random traces, is the topology-aware total worse than the oblivious one?

    ``fragment``: that many random nodes start with 2, 4 or 6 GPUs already in use.
    """
    from decimal import Decimal

    stack, bundle = load(stack_name)
    worse, worst = [], (0.0, None)
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder) / "trace.yaml"
        for seed in range(count):
            tmp.write_text(yaml.safe_dump_all(trace(seed, jobs, fractional), sort_keys=False))
            loaded = load_workloads(tmp, "random", bundle.fabric, {}, stack.name)
            rng = random.Random(seed)
            usage = {n: {"nvidia.com/gpu": Decimal(rng.choice([2, 4, 6]))}
                     for n in rng.sample(sorted(bundle.fabric.nodes), fragment)}
            result = simulate(bundle.fabric, loaded, usage=usage, settings=settings_from_bundle(bundle))
            aware, oblivious = result.totals["topology-aware"], result.totals["oblivious"]
            if aware > oblivious:
                worse.append(seed)
                worst = max(worst, (aware / oblivious - 1, seed))
    kind = "fractional-GPU " if fractional else ""
    start = f", {fragment} nodes partly used at the start" if fragment else ""
    print(f"{count} random {kind}traces of {jobs} jobs on {stack_name}{start}: "
          f"topology-aware total worse than oblivious in {len(worse)} ({len(worse) / count:.1%}); "
          f"worst by {worst[0]:.2%} (seed {worst[1]})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stack", default="prod")
    parser.add_argument("--trace", type=Path, default=TRACE)
    parser.add_argument("--write-trace", action="store_true", help="regenerate the trace file and exit")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--jobs", type=int, default=80)
    parser.add_argument("--random", type=int, metavar="N", help="run N random traces instead")
    parser.add_argument("--fractional", action="store_true", help="random traces with 1-4 GPU pods in multi-node gangs")
    parser.add_argument("--fragment", type=int, default=0, metavar="N",
                        help="random traces start with N random nodes partly used")
    args = parser.parse_args()
    if args.write_trace:
        args.trace.parent.mkdir(parents=True, exist_ok=True)
        header = (f"# Workload trace for the prod fabric (1,024 nodes, 32 per leaf): {args.jobs} Volcano Jobs,\n"
                  f"# generated by `python benchmarks/placement_quality.py --write-trace --seed {args.seed} "
                  f"--jobs {args.jobs}`.\n")
        args.trace.write_text(header + yaml.safe_dump_all(trace(args.seed, args.jobs), sort_keys=False))
        print(f"wrote {args.trace.relative_to(ROOT)}")
        return 0
    if args.random:
        run_random(args.random, args.stack, args.jobs, args.fractional, args.fragment)
        return 0
    run_trace(args.trace.resolve(), args.stack)
    return 0


if __name__ == "__main__":
    sys.exit(main())
