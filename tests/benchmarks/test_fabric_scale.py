"""benchmarks/fabric_scale.py keeps running: each of its three fabric sources renders the same
1,024-node fat-tree (its own checks: one HyperNode per non-empty switch, every node placed, the
output equal to the floor's dumps). Nothing about time is asserted."""
from __future__ import annotations

import sys

from tests.support.cli import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
import fabric_scale  # noqa: E402


def test_every_source_renders_the_same_fat_tree(tmp_path):
    rows = [fabric_scale.measure(1024, 1, fabric_scale.stack_for(1024)),
            fabric_scale.measure(1024, 1, fabric_scale.topograph_stack(1024, tmp_path, explicit=False)),
            fabric_scale.measure(1024, 1, fabric_scale.topograph_stack(1024, tmp_path, explicit=True))]
    assert [(r["nodes"], r["hypernodes"]) for r in rows] == [(1024, 35)] * 3
