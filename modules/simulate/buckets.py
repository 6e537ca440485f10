"""HyperNodes of one gradient grouped by state, kept up to date as allocations change them.

A gradient at fabric scale holds hundreds of HyperNodes (512 leaves at 16,384 nodes) but only a
handful of distinct states: every empty leaf is alike, and so is every full one. Whether a
HyperNode is eligible for a gang and its binpack score depend on its state alone (allocatable,
used, the free-GPU histogram, futureIdle: ``Cluster.state_key``), so the allocate action's choice
among a gradient's HyperNodes needs one judgement per state, not one per HyperNode.

``StateBuckets`` files each HyperNode of a candidate list under its state key. A bucket holds the
HyperNodes' ranks in the order Volcano breaks ties in (name, then the group index) and the
judgements already made for it, one per request shape (jobs of the same shape reuse them while
the state lasts). The cluster marks the groups an allocation touches (``Cluster.g_dirty``); the
buckets re-file only those before each use, so keeping them true costs what the allocations
changed, never a scan of the gradient.
"""
from __future__ import annotations

from bisect import bisect_left, insort
from typing import Callable


class Bucket:
    """HyperNodes in one state: their ranks (ascending) and the judgements of that state."""

    __slots__ = ("ranks", "judged")

    def __init__(self) -> None:
        self.ranks: list[int] = []
        self.judged: dict[tuple, tuple[bool, float]] = {}


class StateBuckets:
    """The groups of ``cands`` filed by ``state_key``; ``by_rank`` lists them by (name, group)."""

    def __init__(self, cands: list[int], names: list[str], state_key: Callable[[int], tuple]):
        self.state_key = state_key
        self.by_rank = sorted(cands, key=lambda g: (names[g], g))
        self.rank = {g: r for r, g in enumerate(self.by_rank)}
        self.filed: dict[int, tuple] = {}
        self.buckets: dict[tuple, Bucket] = {}
        for r, g in enumerate(self.by_rank):           # ranks ascend: each bucket is born sorted
            key = self.filed[g] = state_key(g)
            bucket = self.buckets.get(key)
            if bucket is None:
                bucket = self.buckets[key] = Bucket()
            bucket.ranks.append(r)

    def refile(self, g: int) -> None:
        """Move ``g`` to the bucket of its present state (a group not in the list: nothing)."""
        r = self.rank.get(g)
        if r is None:
            return
        old = self.filed[g]
        new = self.state_key(g)
        if new == old:
            return
        bucket = self.buckets[old]
        del bucket.ranks[bisect_left(bucket.ranks, r)]
        if not bucket.ranks:
            del self.buckets[old]
        target = self.buckets.get(new)
        if target is None:
            target = self.buckets[new] = Bucket()
        insort(target.ranks, r)
        self.filed[g] = new
