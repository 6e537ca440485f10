"""Volcano's task states as its scheduler's ``api`` package has them (v1.15.1 ``types.go``), the
proportion plugin's share, and resources written for a message. The resource arithmetic itself
(units, comparisons with Volcano's 0.1 tolerance, ``Zero``/``Infinity`` defaults) is Volcano's
``api.Resource``, written once in ``modules/core/vocabulary/resource.py``; the eviction session
(``eviction.py``) and the share plugins (``shares.py``) use it from there."""
from __future__ import annotations

import math
from typing import Iterable

from modules.core.vocabulary.resource import CPU, MEMORY, MIN_RESOURCE, PODS, Resource

MIN = MIN_RESOURCE
INF = math.inf                                  # an unbounded dimension (Volcano's MaxFloat64)
RUNNING, PENDING, PIPELINED, RELEASING, BOUND, SUCCEEDED, FAILED = (
    "Running", "Pending", "Pipelined", "Releasing", "Bound", "Succeeded", "Failed")
ALLOCATED = (BOUND, "Binding", RUNNING, "Allocated")

Res = Resource   # resource name -> float, Volcano's units


def r_share(allocated: Res, deserved: Res) -> float:
    """The proportion plugin's share: the largest allocated/deserved ratio over the deserved names."""
    share = 0.0
    for name, d in deserved.items():
        if name == PODS:
            continue
        a = allocated.get(name, 0.0)
        share = max(share, (a / d) if d > 0 else (1.0 if a > 0 else 0.0))
    return share


def show_res(r: Res, only: Iterable[str] | None = None) -> str:
    """``r`` for a message (``only``: just these resources)."""
    parts = []
    keep = None if only is None else set(only)
    for name in sorted(r):
        v = r[name]
        if abs(v) < MIN or v == INF or (keep is not None and name not in keep):
            continue
        if name == CPU:
            parts.append(f"cpu {v / 1000:g}")
        elif name == MEMORY:
            parts.append(f"memory {v / 2**30:g}Gi")
        elif name == "ephemeral-storage" or name.startswith("hugepages-"):   # bytes, in thousandths
            parts.append(f"{name} {v / 1000 / 2**30:g}Gi")
        elif name != PODS:
            parts.append(f"{name} {v / 1000:g}")
    return ", ".join(parts) or "nothing"
