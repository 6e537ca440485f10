"""Run a sequence of jobs through the three strategies and cost every placement.

Totals: ``total_allreduce_s`` of a strategy sums the modeled all-reduce time over the jobs that
*every* strategy placed, so the three totals always cover the same jobs and compare like with
like. A job Pending under any strategy adds to no total (its per-strategy times are still listed).
Summing each strategy's own placed jobs instead would reward a strategy for leaving the hardest
jobs Pending (an oblivious first-fit that cannot fit a big gang looks cheaper, not worse).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Mapping

from modules.fabric.model import Fabric, Link

from .cluster import Cluster
from .cost import allreduce_seconds
from .jobs import TOP_NAME, Job
from .scheduler import Oblivious, JobOutcome, SchedulerSettings, TopologyAware, prepare

STRATEGIES = ("topology-aware", "oblivious", "lower-bound")
GIB = 2**30


@dataclass
class SimulationResult:
    """What a simulation found: each strategy's outcome for each job, and the totals."""
    fabric: Fabric
    cluster: Cluster                      # the topology-aware cluster, after every job
    jobs: list[Job]
    outcomes: dict[str, list[JobOutcome]]    # strategy -> one outcome per job, in job order
    common: list[str]                     # jobs every strategy placed (what the totals cover)
    totals: dict[str, float]
    settings: SchedulerSettings
    links: dict[int, Link]
    gradient_bytes: int
    usage: dict[str, dict[str, Decimal]] = field(default_factory=dict)


def gpu_resource_of(fabric: Fabric) -> str | None:
    """The GPU resource most nodes offer (the one the free-GPU histograms track)."""
    counts = Counter(n.pool.gpu_resource for n in fabric.nodes.values() if n.pool.gpus)
    return min(counts, key=lambda r: (-counts[r], r)) if counts else None


def resource_names(fabric: Fabric, jobs: list[Job], usage: Mapping[str, Mapping[str, Decimal]]) -> list[str]:
    names = set()
    for pool in fabric.pools.values():
        names.update(pool.allocatable())
    for job in jobs:
        for pod in job.pods:
            names.update(pod.requests)
    for used in usage.values():
        names.update(used)
    return ["cpu", "memory"] + sorted(names - {"cpu", "memory"})


def build_cluster(fabric: Fabric, resources: list[str], settings: SchedulerSettings,
                  usage: Mapping[str, Mapping[str, Decimal]] | None = None,
                  releasing: Mapping[str, Mapping[str, Decimal]] | None = None) -> Cluster:
    """``releasing``: requests of terminating pods (part of ``usage``), which count in futureIdle."""
    cluster = Cluster(fabric, resources, settings.weights, gpu_resource_of(fabric))
    for node, used in (usage or {}).items():
        cluster.apply(cluster.node_index[node], cluster.need(used))
    for node, going in (releasing or {}).items():
        cluster.add_future(cluster.node_index[node], cluster.need({r: a for r, a in going.items()
                                                                   if r in cluster.rindex}))
    return cluster


def simulate(fabric: Fabric, jobs: list[Job], *, usage: Mapping[str, Mapping[str, Decimal]] | None = None,
             settings: SchedulerSettings | None = None, links: Mapping[int, Link] | None = None,
             gradient_bytes: int = GIB, releasing: Mapping[str, Mapping[str, Decimal]] | None = None
             ) -> SimulationResult:
    """Place ``jobs`` in order under each strategy; existing ``usage`` applies to all but the lower
    bound (``releasing``, terminating pods' part of it, to the topology-aware pre-filter)."""
    settings = settings or SchedulerSettings()
    usage = dict(usage or {})
    resources = resource_names(fabric, jobs, usage)
    aware_cluster = build_cluster(fabric, resources, settings, usage, releasing)
    aware = TopologyAware(aware_cluster, settings)
    oblivious = Oblivious(build_cluster(fabric, resources, settings, usage))
    table = dict(links or fabric.links)
    span = Spans(fabric, aware_cluster)           # node indices are the same in the three clusters

    def cost(job: Job, outcome: JobOutcome) -> float:
        span.describe(job, outcome, table, gradient_bytes)
        return outcome.allreduce_s

    bound = TopologyAware(build_cluster(fabric, resources, settings), settings, lower_bound=True, cost=cost)

    outcomes: dict[str, list[JobOutcome]] = {name: [] for name in STRATEGIES}
    for job in jobs:
        prep = prepare(job, aware_cluster)
        best = bound.place(job, prep)
        placed = aware.place(job, prep)
        if not placed.placed:
            placed.reason = _pending_reason(placed, best)
        outcomes["topology-aware"].append(placed)
        outcomes["oblivious"].append(oblivious.place(job, prep))
        outcomes["lower-bound"].append(best)

    for name in STRATEGIES:
        for job, outcome in zip(jobs, outcomes[name]):
            if outcome.placed and outcome.allreduce_s is None:     # the lower bound's are costed already
                span.describe(job, outcome, table, gradient_bytes)
    common = [job.name for i, job in enumerate(jobs) if all(outcomes[s][i].placed for s in STRATEGIES)]
    in_common = set(common)
    totals = {name: round(sum(o.allreduce_s for o in outcomes[name] if o.job in in_common), 9)
              for name in STRATEGIES}
    return SimulationResult(fabric, aware_cluster, jobs, outcomes, common, totals, settings, table, gradient_bytes,
                            usage)


def _pending_reason(aware: JobOutcome, best: JobOutcome) -> str:
    if not best.placed:
        return best.reason or aware.reason or "Pending"
    return f"{aware.reason} (alone on the empty fabric it fits in {best.hypernode}, tier {best.tier})"


class Spans:
    """Where a placement sits in the switch tree, and what its all-reduce costs."""

    def __init__(self, fabric: Fabric, cluster: Cluster):
        self.fabric = fabric
        self.cluster = cluster
        self.chains: dict[str, list[str]] = {}

    def chain(self, leaf: str) -> list[str]:
        if leaf not in self.chains:
            self.chains[leaf] = [s.name for s in self.fabric.ancestors(leaf)]
        return self.chains[leaf]

    def lca(self, leaves: list[str]) -> str | None:
        """The lowest switch above every leaf, or None when they hang off different roots (or a
        node is in no HyperNode)."""
        if None in leaves:
            return None
        first = self.chain(leaves[0])
        position = {name: i for i, name in enumerate(first)}
        highest = 0
        for leaf in leaves[1:]:
            for name in self.chain(leaf):
                if name in position:
                    highest = max(highest, position[name])
                    break
            else:
                return None
        return first[highest]

    def describe(self, job: Job, outcome: JobOutcome, links: Mapping[int, Link], nbytes: int) -> None:
        c = self.cluster
        names = c.node_names
        leaves = list(dict.fromkeys(self.fabric.nodes[names[n]].leaf for _, n in outcome.pods))
        outcome.leaves = len(leaves)
        if outcome.hypernode is None:              # where it landed: the smallest HyperNode holding it
            holder = self.lca(leaves) if leaves else None
            if holder is None:
                outcome.hypernode, outcome.tier = TOP_NAME, c.top_tier
            else:
                sw = self.fabric.switches[holder]
                outcome.hypernode, outcome.tier = sw.hypernode or sw.name, sw.tier
        gpus = {pod.name: pod.gpus for pod in job.pods}
        uses_gpus = any(gpus[p] for p, _ in outcome.pods)
        ranks: dict[int, int] = {}
        for pod, node in outcome.pods:
            count = gpus[pod] if uses_gpus else 1
            if count:
                ranks[node] = ranks.get(node, 0) + count
        nodes = list(ranks)
        outcome.span_tier = self.span_tier(nodes)
        node_gpus = [c.node_gpus(n) if uses_gpus else 0 for n in nodes]
        outcome.allreduce_s = round(allreduce_seconds(links, outcome.span_tier, [ranks[n] for n in nodes], node_gpus,
                                                      nbytes, self.partitions(job, outcome, gpus, uses_gpus)), 9)

    def span_tier(self, nodes: list[int]) -> int:
        """The tier of the lowest switch above ``nodes`` (0 for one node, the top when none is)."""
        if len(set(nodes)) <= 1:
            return 0
        names = self.cluster.node_names
        holder = self.lca(list(dict.fromkeys(self.fabric.nodes[names[n]].leaf for n in nodes)))
        return self.fabric.switches[holder].tier if holder else self.cluster.top_tier

    def partitions(self, job: Job, outcome: JobOutcome, gpus: dict[str, int], uses_gpus: bool) -> list[tuple[int, int]]:
        """(span tier, node count) per partition that runs ranks, when every rank sits in one: the
        cost model reduces inside partitions first (cost.py). Otherwise none (a flat ring)."""
        if len(job.partitions) < 2:
            return []
        part_of = {job.pods[i].name: k for k, part in enumerate(job.partitions) for i in part.pods}
        members: dict[int, list[int]] = {}
        for pod, node in outcome.pods:
            if gpus[pod] or not uses_gpus:
                if pod not in part_of:
                    return []
                members.setdefault(part_of[pod], []).append(node)
        if len(members) < 2:
            return []
        return [(self.span_tier(nodes), len(set(nodes))) for _, nodes in sorted(members.items())]
