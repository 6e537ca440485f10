"""Simulator throughput: jobs per second on a 16,384-node fabric.

    python benchmarks/simulate_throughput.py [--nodes-per-leaf 32 --leaves-per-pod 32 --pods 16] [--jobs 1000]

The fabric is a generated three-tier fat-tree (16 spines x 32 leaves x 32 nodes by default, 8 GPUs
per node), rendered through the normal stack path. The jobs are a seeded mix of sizes (1 to 256
nodes) and constraints (hard tier 1 or 2, soft, none) whose demand exceeds the fabric, so the
later jobs exercise the Pending path (every tier searched). Each strategy is timed on its own
over the same job sequence, the strategies taking turns (round by round, so a busy machine slows
them alike); ``simulate`` times the whole run (three strategies and the costs). The last line is
the ratio that holds on a busy machine: topology-aware jobs/s over oblivious jobs/s.
"""
from __future__ import annotations

import argparse
import platform
import random
import statistics
import sys
import time
from decimal import Decimal
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from modules.core.config import build_stack, load_project  # noqa: E402
from modules.core.render import render  # noqa: E402
from modules.simulate.engine import build_cluster, resource_names, simulate  # noqa: E402
from modules.simulate.jobs import Job, Pod, Topology  # noqa: E402
from modules.simulate.scheduler import Oblivious, SchedulerSettings, TopologyAware, prepare  # noqa: E402
from traces import pick  # noqa: E402

SIZES = [(0.30, [1]), (0.25, [2, 4]), (0.25, [8, 16]), (0.15, [32, 64]), (0.05, [128, 256])]
MODES = [(0.35, Topology("hard", 1)), (0.25, Topology("hard", 2)), (0.25, Topology("soft")), (0.10, None),
         (0.05, Topology("hard", tier_name="spine"))]


def workload(seed: int, count: int, nodes_per_leaf: int) -> list[Job]:
    rng = random.Random(seed)
    jobs = []
    for j in range(count):
        nodes = rng.choice(pick(rng, SIZES))
        topology = pick(rng, MODES)
        if topology is not None and topology.tier == 1 and nodes > nodes_per_leaf:
            topology = Topology("hard", 2)
        gpus = 8 if nodes > 1 or rng.random() < 0.6 else rng.choice([1, 2, 4])
        requests = {"nvidia.com/gpu": Decimal(gpus), "cpu": Decimal(gpus * 12), "memory": Decimal(gpus * 120 * 2**30)}
        pods = [Pod(f"job-{j}-worker-{i}", requests, gpus) for i in range(nodes)]
        jobs.append(Job(f"job-{j}", "Job", pods, nodes, topology))
    return jobs


def fabric_of(pods: int, leaves: int, nodes: int):
    project = load_project(ROOT)
    section = {"source": "generated", "generated": {"topology": "fat-tree", "pods": pods, "leavesPerPod": leaves,
                                                    "nodesPerLeaf": nodes, "nodeName": "gpu-{n:05d}"}}
    stack = build_stack(project, "bench", {"trainstack:fabric": section}, "benchmark stack")
    start = time.perf_counter()
    bundle = render(stack)
    return bundle.fabric, time.perf_counter() - start


def time_strategy(make, jobs: list[Job], clock=time.perf_counter) -> tuple[float, int]:
    """(seconds by ``clock``, jobs placed); ``benchmarks/ratios.py`` passes CPU time."""
    strategy, cluster = make()
    start = clock()
    placed = 0
    for job in jobs:
        placed += strategy.place(job, prepare(job, cluster)).placed
    return clock() - start, placed


def makers(fabric, resources, settings: SchedulerSettings):
    """Each strategy on a fresh cluster state: topology-aware, oblivious, lower bound."""
    def aware():
        c = build_cluster(fabric, resources, settings)
        return TopologyAware(c, settings), c

    def oblivious():
        c = build_cluster(fabric, resources, settings)
        return Oblivious(c), c

    def bound():
        c = build_cluster(fabric, resources, settings)
        return TopologyAware(c, settings, lower_bound=True), c

    return aware, oblivious, bound


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pods", type=int, default=16, help="tier-2 switches")
    parser.add_argument("--leaves-per-pod", type=int, default=32)
    parser.add_argument("--nodes-per-leaf", type=int, default=32)
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    fabric, render_s = fabric_of(args.pods, args.leaves_per_pod, args.nodes_per_leaf)
    jobs = workload(args.seed, args.jobs, args.nodes_per_leaf)
    demand = sum(len(j.pods) * j.pods[0].gpus for j in jobs)
    settings = SchedulerSettings()
    resources = resource_names(fabric, jobs, {})
    start = time.perf_counter()
    build_cluster(fabric, resources, settings)
    cluster_s = time.perf_counter() - start

    aware, oblivious, bound = makers(fabric, resources, settings)
    print(f"fabric: {len(fabric.nodes):,} nodes, {len(fabric.switches):,} switches, {fabric.total_gpus:,} GPUs "
          f"(rendered in {render_s:.2f} s); cluster state built in {cluster_s:.2f} s")
    print(f"jobs: {len(jobs):,} (seed {args.seed}) asking {demand:,} GPUs; best of {args.repeat} runs")
    print(f"machine: {platform.machine()} python {platform.python_version()}")
    print()
    print("| strategy | jobs placed | seconds | jobs/s |")
    print("|---|---|---|---|")
    strategies = (("topology-aware", aware), ("oblivious", oblivious), ("lower-bound", bound))
    runs: dict[str, list[tuple[float, int]]] = {name: [] for name, _ in strategies}
    for _ in range(args.repeat):
        for name, make in strategies:
            runs[name].append(time_strategy(make, jobs))
    fastest = {name: min(s for s, _ in runs[name]) for name in runs}
    for name, _ in strategies:
        seconds = fastest[name]
        print(f"| {name} | {runs[name][0][1]:,}/{len(jobs):,} | {seconds:.2f} | {len(jobs) / seconds:,.0f} |")
    times = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        simulate(fabric, jobs, settings=settings)
        times.append(time.perf_counter() - start)
    best = min(times)
    print(f"| simulate (all three + costs) | - | {best:.2f} | {len(jobs) / best:,.0f} |")
    print(f"\nsimulate median {statistics.median(times):.2f} s")
    print(f"topology-aware / oblivious jobs/s: {fastest['oblivious'] / fastest['topology-aware']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
