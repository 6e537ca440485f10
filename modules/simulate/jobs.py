"""Jobs as the simulator sees them: gangs of pods with requests and a network-topology constraint,
and how Volcano v1.15 turns a ``networkTopology`` spec into an effective constraint
(``Session.adjustNetworkTopologySpec`` in Volcano v1.15.1).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Mapping

from modules.semantics.workloads import Topology  # noqa: F401  (the spec as written, shared)

TOP_NAME = "<cluster-top>"   # Volcano's virtual HyperNode above every root; it holds every node


@dataclass(frozen=True)
class Pod:
    """One pod of a job to place: its requests and GPUs."""
    name: str
    requests: Mapping[str, Decimal]   # effective pod requests (containers summed, limits as defaults)
    gpus: int = 0                     # GPUs the pod asks for (any pool's GPU resource)


@dataclass(frozen=True)
class Partition:
    """A SubJob gang: ``pods`` (indices into the job's pods) placed together in one HyperNode."""

    name: str
    pods: tuple[int, ...]
    topology: Topology | None          # None: the job's own constraint
    min_available: int | None = None   # the SubJob's gang (subGroupSize); None: every pod of it
    running: int = 0                   # its tasks already bound (a snapshot's partly running job)
    allocated_hypernode: str | None = None   # where its running tasks are (Volcano recovers it)
    policy: str | None = None          # the subGroupPolicy it comes from (minSubGroups counts per policy)

    @property
    def size(self) -> int:
        """Pods it needs to count as ready (running ones included)."""
        return len(self.pods) if self.min_available is None else self.min_available

    @property
    def gang(self) -> int:
        return max(self.size - self.running, 1)


@dataclass
class Job:
    """A job to place: its pods, its gang and its network topology."""
    name: str
    kind: str                          # Job (Volcano) or TrainJob
    pods: list[Pod]
    min_available: int                 # the gang: this many pods or none
    topology: Topology | None          # None: no networkTopology at all
    partitions: list[Partition] = field(default_factory=list)
    where: str = ""                    # where it was declared, for messages
    running: int = 0                   # tasks already bound (a snapshot's partly running job): they
                                       # count towards min_available
    allocated_hypernode: str | None = None   # volcano.sh/job-allocated-hypernode of a partly running job
    running_nodes: tuple[str, ...] = ()      # where its running tasks are (the plugin's taskNum node score)
    min_resources: Mapping[str, Decimal] | None = None   # a PodGroup's minResources (HyperNode eligibility);
                                       # None: the first min_available pods' requests
    min_partitions: dict[str, int] = field(default_factory=dict)   # subGroupPolicy -> minSubGroups
    ready_partitions: dict[str, int] = field(default_factory=dict)  # ready SubJobs with no pod to place
    unscheduled: str | None = None     # why Volcano's scheduler does not take it (no PodGroup, a Pending
                                       # PodGroup under enqueue): every strategy leaves it Pending, saying so

    @property
    def gpus(self) -> int:
        return sum(p.gpus for p in self.pods)

    @property
    def gang(self) -> int:
        """Pods that must be placed at once: minAvailable less the running tasks, at least one."""
        return max(self.min_available - self.running, 1)

    def gpus_for(self, count: int) -> int:
        """GPUs of the first ``count`` pods (the gang Volcano must place at once)."""
        return sum(p.gpus for p in self.pods[:count])


@dataclass(frozen=True)
class Enforced:
    """What the scheduler enforces.

    kind ``domain``: every pod in one HyperNode of tier <= ``tier`` (the cluster-top's tier for soft);
    ``any``: no placement constraint (scoring only); ``never``: nothing is eligible, Pending forever.
    """

    kind: str
    tier: int | None
    note: str


def tier_label(tier: int, tier_names: Mapping[int, str], top: int) -> str:
    if tier >= top:
        return f"{top} ({TOP_NAME})"
    name = tier_names.get(tier)
    return f"{tier} ({name})" if name else str(tier)


def effective(topology: Topology | None, tiers: list[int], tier_names: Mapping[int, str],
              bound: int | None = None) -> Enforced:
    """The constraint Volcano enforces for ``topology`` on a fabric whose real tiers are ``tiers``.

    ``bound`` is the enclosing job's tier when ``topology`` belongs to a SubJob (a partition): a
    soft SubJob becomes hard up to the job's tier.
    """
    top = (max(tiers) + 1) if tiers else 1
    lowest = min(tiers) if tiers else 1
    if topology is None:
        return Enforced("any", None, "no networkTopology: no placement constraint")
    if topology.mode == "soft":
        limit = top if bound is None else bound
        return Enforced("domain", limit, f"soft: smallest domain up to tier {tier_label(limit, tier_names, top)}")
    if topology.tier_name is not None:
        for tier, name in sorted(tier_names.items()):
            if name == topology.tier_name:
                return _hard(tier, lowest, top, tier_names, f"hard, highestTierName {topology.tier_name}")
        return Enforced("any", None, f"hard, highestTierName {topology.tier_name!r} matches no tierName "
                          f"({', '.join(tier_names[t] for t in sorted(tier_names))}): Volcano ignores the "
                          "constraint (scoring only)")
    if topology.tier is None:
        return Enforced("any", None, "hard without highestTierAllowed/highestTierName: no constraint in "
                          "Volcano (scoring only)")
    return _hard(topology.tier, lowest, top, tier_names, "hard")


def _hard(tier: int, lowest: int, top: int, tier_names: Mapping[int, str], what: str) -> Enforced:
    if tier < lowest:
        return Enforced("never", tier, f"{what}, tier <= {tier}: below the lowest tier ({lowest}), no "
                          "HyperNode is ever eligible")
    if tier >= top:
        return Enforced("domain", top, f"{what}, tier <= {tier}: at or above the cluster-top, like soft")
    return Enforced("domain", tier, f"{what}, tier <= {tier_label(tier, tier_names, top)}")
