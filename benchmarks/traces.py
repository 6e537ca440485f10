"""Shared by the simulator benchmarks: drawing from a table of (share, value) rows."""
from __future__ import annotations

import random


def pick(rng: random.Random, table):
    """A value from ``[(share, value), ...]``, each row with probability ``share``."""
    x, acc = rng.random(), 0.0
    for share, value in table:
        acc += share
        if x < acc:
            return value
    return table[-1][1]
