"""Volcano's resources and task states as its scheduler's ``api`` package has them (v1.15.1
``pkg/scheduler/api/resource_info.go``, ``types.go``): cpu in millicores, memory in bytes, other
resources in thousandths, every pod one ``pods``; comparisons with its 0.1 tolerance, a missing
dimension as zero (``Zero``) or unbounded (``Infinity``). Shared by the eviction session
(``eviction.py``) and the share plugins (``shares.py``)."""
from __future__ import annotations

import math
from decimal import Decimal
from typing import Iterable, Mapping

CPU, MEMORY, PODS = "cpu", "memory", "pods"
MIN = 0.1                                       # Volcano's minResource
INF = math.inf
RUNNING, PENDING, PIPELINED, RELEASING, BOUND, SUCCEEDED, FAILED = (
    "Running", "Pending", "Pipelined", "Releasing", "Bound", "Succeeded", "Failed")
ALLOCATED = (BOUND, "Binding", RUNNING, "Allocated")

Res = dict   # resource name -> float, Volcano's units


def res_of(given: Mapping[str, Decimal] | None) -> Res:
    out: Res = {}
    for name, amount in (given or {}).items():
        if name.startswith(("requests.", "limits.", "count/")):
            continue
        value = float(amount)
        out[name] = value * 1000 if name != MEMORY and name != PODS else value
    return out


def r_add(a: Res, b: Res) -> Res:
    out = dict(a)
    for k, v in b.items():
        out[k] = out.get(k, 0.0) + v
    return out


def r_sub(a: Res, b: Res) -> Res:
    out = dict(a)
    for k, v in b.items():
        out[k] = out.get(k, 0.0) - v
    return out


def _le(x: float, y: float) -> bool:
    return x < y or abs(x - y) < MIN


def r_le(left: Res, right: Res, infinity: bool = False) -> bool:
    """``Resource.LessEqual``: every dimension of ``left`` within ``right``; a dimension ``right``
    lacks is 0, or unbounded with ``infinity``."""
    for name in set(left) | {CPU, MEMORY}:
        if name not in right and infinity and name not in (CPU, MEMORY):
            continue
        if not _le(left.get(name, 0.0), right.get(name, 0.0)):
            return False
    return True


def r_le_dims(left: Res, right: Res, req: Res) -> tuple[bool, list[str]]:
    """``LessEqualWithDimensionAndResourcesName``: only the dimensions ``req`` asks for; the names
    that do not fit."""
    over = [n for n, q in sorted(req.items()) if n != PODS and q > 0 and left.get(n, 0.0) > right.get(n, 0.0)]
    return not over, over


def r_empty(r: Res) -> bool:
    return all(v < MIN for n, v in r.items() if n != PODS)


def r_names(r: Res) -> set[str]:
    return {n for n, v in r.items() if v >= MIN}


def r_min(r: Res, cap: Res, infinity: bool) -> Res:
    """``MinDimensionResource``."""
    out = dict(r)
    for name in list(out):
        if name in cap:
            out[name] = min(out[name], cap[name])
        elif name in (CPU, MEMORY):
            out[name] = min(out[name], 0.0)
        elif not infinity:
            out[name] = 0.0
    return out


def r_max(a: Res, b: Res) -> Res:
    return {n: max(a.get(n, 0.0), b.get(n, 0.0)) for n in set(a) | set(b)}


def r_exceeded(a: Res, b: Res) -> Res:
    """``ExceededPart``: how much of ``a`` is above ``b``, per dimension."""
    return {n: max(v - b.get(n, 0.0), 0.0) for n, v in a.items()}


def r_greater_partly(left: Res, right: Res, req: Res) -> bool:
    """``GreaterPartlyWithRelevantDimensions``: ``left`` above ``right`` on a dimension ``req``
    asks for and ``right`` sets."""
    for name, q in req.items():
        if q <= 0 or name == PODS:
            continue
        if name in (CPU, MEMORY):
            if right.get(name, 0.0) < MIN:
                continue
        elif name not in right:
            continue
        if left.get(name, 0.0) - right.get(name, 0.0) >= MIN:
            return True
    return False


def r_share(allocated: Res, deserved: Res) -> float:
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
