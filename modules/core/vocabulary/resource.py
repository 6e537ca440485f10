"""Volcano's scheduler resource (volcano-sh/volcano v1.15.1 ``pkg/scheduler/api/resource_info.go``
``Resource``): the one arithmetic the queue webhook, the what-if session and the share plugins use.

A resource is a mapping: ``cpu`` holds ``MilliCPU`` (millicores), ``memory`` holds ``Memory``
(bytes), every other name is one of ``ScalarResources`` in the units ``NewResource`` stores:
``pods`` as a count, ``ephemeral-storage`` and the scalar names (extended resources such as
``nvidia.com/gpu``, ``hugepages-*``, ``kubernetes.io/``-prefixed, ``attachable-volumes-*``) in
thousandths. ``cpu`` and ``memory`` are never absent (a missing one reads 0); a scalar name that
is absent differs from one that is 0, as a Go map key does: ``ZERO`` and ``INFINITY`` say how a
comparison treats a dimension one side lacks.

Comparisons keep upstream's tolerance: two amounts closer than ``MIN_RESOURCE`` (0.1) are equal,
and an amount below it is empty. Functions return new mappings; their arguments are not changed.
"""
from __future__ import annotations

from decimal import ROUND_CEILING, Decimal
from typing import Mapping

from modules.core.vocabulary.resource_names import scheduler_view

CPU, MEMORY, PODS, EPHEMERAL_STORAGE = "cpu", "memory", "pods", "ephemeral-storage"
MIN_RESOURCE = 0.1                 # minResource
ZERO, INFINITY = "Zero", "Infinity"   # DimensionDefaultValue
IGNORED = frozenset({PODS})        # ignoredScalarResources: every pod asks one, never compared

Resource = dict   # resource name -> float, in the units above


def scale(name: str) -> int:
    """How many of Volcano's units one of the quantity's units is: memory and pods as they are
    (``Value``), everything else in thousandths (``MilliValue``)."""
    return 1 if name in (MEMORY, PODS) else 1000


def _ceil(amount: Decimal) -> float:
    # resource.Quantity's Value and MilliValue round up to a whole number
    return float(amount.to_integral_value(rounding=ROUND_CEILING))


def new_resource(resource_list: Mapping[str, Decimal] | None) -> Resource:
    """``NewResource``: the names the scheduler reads (``count/*``, ``requests.*``, ``limits.*`` and
    other non-scalar names dropped), each in its unit."""
    out: Resource = {}
    for name, amount in scheduler_view(resource_list or {}).items():
        out[name] = out.get(name, 0.0) + _ceil(Decimal(amount) * scale(name))
    return out


def get(r: Mapping[str, float], name: str) -> float:
    return r.get(name, 0.0)


def _scalars(r: Mapping[str, float]) -> dict[str, float]:
    return {n: v for n, v in r.items() if n not in (CPU, MEMORY)}


def resource_names(r: Mapping[str, float]) -> list[str]:
    """``ResourceNames``: the dimensions holding at least ``MIN_RESOURCE``."""
    return [n for n in (CPU, MEMORY) if get(r, n) >= MIN_RESOURCE] + \
        [n for n, v in _scalars(r).items() if v >= MIN_RESOURCE]


def is_empty(r: Mapping[str, float]) -> bool:
    """``IsEmpty``: nothing but ignored scalars (pods) at or above ``MIN_RESOURCE``."""
    return all(v < MIN_RESOURCE for n, v in r.items() if n not in IGNORED) and \
        get(r, CPU) < MIN_RESOURCE and get(r, MEMORY) < MIN_RESOURCE


def is_zero(r: Mapping[str, float], name: str) -> bool:
    """``IsZero`` for one dimension (an absent scalar is zero)."""
    return get(r, name) < MIN_RESOURCE


def add(a: Mapping[str, float], b: Mapping[str, float]) -> Resource:
    """``Add``."""
    out = dict(a)
    for name, amount in b.items():
        out[name] = out.get(name, 0.0) + amount
    return out


def sub(a: Mapping[str, float], b: Mapping[str, float]) -> Resource:
    """``sub`` (``Sub`` without its assertion): cpu and memory always; scalars only when ``a``
    holds any (a nil map stays nil)."""
    out = dict(a)
    has_scalars = bool(_scalars(a))
    for name, amount in b.items():
        if name in (CPU, MEMORY) or has_scalars:
            out[name] = out.get(name, 0.0) - amount
    return out


def multi(r: Mapping[str, float], ratio: float) -> Resource:
    """``Multi``."""
    return {name: amount * ratio for name, amount in r.items()}


def set_max(a: Mapping[str, float], b: Mapping[str, float]) -> Resource:
    """``SetMaxResource``: per dimension the larger (cpu and memory read 0 when absent; a scalar
    only one side has is taken as it is)."""
    out = dict(a)
    for name in (CPU, MEMORY):
        if name in a or name in b:
            out[name] = max(get(a, name), get(b, name))
    for name, amount in _scalars(b).items():
        if name not in out or amount > out[name]:
            out[name] = amount
    return out


def fit_delta(available: Mapping[str, float], request: Mapping[str, float]) -> Resource:
    """``FitDelta``: what is left of ``available`` after ``request`` and a ``MIN_RESOURCE`` margin
    on each requested dimension; a negative dimension is one that does not fit."""
    out = dict(available)
    for name, amount in request.items():
        if amount > 0:
            out[name] = out.get(name, 0.0) - (amount + MIN_RESOURCE)
    return out


def le_tolerant(left: float, right: float) -> bool:
    """One amount within another as ``LessEqual`` compares each dimension: below it, or closer
    than ``MIN_RESOURCE``."""
    return left < right or abs(left - right) < MIN_RESOURCE


def less_equal(left: Mapping[str, float], right: Mapping[str, float], default: str = ZERO) -> bool:
    """``LessEqual``: every dimension of ``left`` within ``right``'s (within ``MIN_RESOURCE``). A
    scalar ``right`` lacks is 0 (``ZERO``) or unbounded (``INFINITY``; then a scalar ``right`` has
    and ``left`` lacks fails, as upstream has it)."""
    return not less_equal_names(left, right, default) and not (
        default == INFINITY and any(n not in left for n in _scalars(right)))


def less_equal_names(left: Mapping[str, float], right: Mapping[str, float], default: str = ZERO) -> list[str]:
    """``LessEqualWithResourcesName``: the dimensions of ``left`` above ``right``'s."""
    over = [n for n in (CPU, MEMORY) if not le_tolerant(get(left, n), get(right, n))]
    for name, amount in _scalars(left).items():
        if name not in right and default == INFINITY:
            continue
        if not le_tolerant(amount, get(right, name)):
            over.append(name)
    return over


def less(left: Mapping[str, float], right: Mapping[str, float], default: str = ZERO) -> bool:
    """``Less``: every dimension of ``left`` strictly below ``right``'s."""
    if not (get(left, CPU) < get(right, CPU) and get(left, MEMORY) < get(right, MEMORY)):
        return False
    if default == INFINITY and any(n not in left for n in _scalars(right)):
        return False
    return all(amount < get(right, name) for name, amount in _scalars(left).items()
               if not (name not in right and default == INFINITY))


def less_partly(left: Mapping[str, float], right: Mapping[str, float], default: str = ZERO) -> bool:
    """``LessPartly``: some dimension of ``left`` strictly below ``right``'s (with ``ZERO``, a
    scalar only ``right`` has counts; with ``INFINITY``, one only ``left`` has)."""
    if get(left, CPU) < get(right, CPU) or get(left, MEMORY) < get(right, MEMORY):
        return True
    if default == ZERO and any(n not in left for n in _scalars(right)):
        return True
    for name, amount in _scalars(left).items():
        if name not in right and default == INFINITY:
            return True
        if amount < get(right, name):
            return True
    return False


def less_equal_with_dimension(left: Mapping[str, float] | None, right: Mapping[str, float] | None,
                              req: Mapping[str, float] | None) -> tuple[bool, list[str]]:
    """``LessEqualWithDimensionAndResourcesName``: only the dimensions ``req`` asks for (above 0);
    the names where ``left`` is above ``right`` (no tolerance)."""
    if left is None:
        return True, []
    if right is None:
        return False, resource_names(left)
    if req is None:
        over = less_equal_names(left, right, ZERO)
        return not over, over
    over = [n for n in (CPU, MEMORY) if get(req, n) > 0 and get(left, n) > get(right, n)]
    if _scalars(left):
        over += [n for n, q in _scalars(req).items()
                 if n not in IGNORED and q > 0 and get(left, n) > get(right, n)]
    return not over, over


def greater_partly_with_dimension(left: Mapping[str, float], right: Mapping[str, float] | None,
                                  req: Mapping[str, float] | None) -> tuple[bool, list[str]]:
    """``GreaterPartlyWithDimension``: the dimensions ``req`` asks for where ``left`` is above."""
    if req is None:
        return False, []
    right = right or {}
    over = [n for n in (CPU, MEMORY) if get(req, n) > 0 and get(left, n) > get(right, n)]
    over += [n for n, q in _scalars(req).items() if n not in IGNORED and q > 0 and get(left, n) > get(right, n)]
    return bool(over), over


def greater_partly_with_relevant_dimensions(left: Mapping[str, float], right: Mapping[str, float] | None,
                                            req: Mapping[str, float] | None) -> tuple[bool, list[str]]:
    """``GreaterPartlyWithRelevantDimensions``: as ``greater_partly_with_dimension``, on the
    dimensions ``right`` has (cpu and memory at least ``MIN_RESOURCE``; a scalar it holds, even 0)."""
    if req is None:
        return False, []
    right = right or {}
    relevant = {n: get(req, n) for n in (CPU, MEMORY) if get(req, n) > 0 and get(right, n) >= MIN_RESOURCE}
    relevant.update({n: q for n, q in _scalars(req).items() if q > 0 and n in right})
    return greater_partly_with_dimension(left, right, relevant)


def min_dimension(r: Mapping[str, float], cap: Mapping[str, float], default: str = ZERO) -> Resource:
    """``MinDimensionResource``: each dimension of ``r`` capped by ``cap``'s; a scalar ``cap`` lacks
    becomes 0 (``ZERO``) or stays (``INFINITY``)."""
    out = dict(r)
    for name in (CPU, MEMORY):
        if get(cap, name) < get(out, name):
            out[name] = get(cap, name)
    for name, amount in _scalars(r).items():
        if name in cap:
            out[name] = min(amount, cap[name])
        elif default == ZERO:
            out[name] = 0.0
    return out


def exceeded_part(left: Mapping[str, float], right: Mapping[str, float]) -> Resource:
    """``ExceededPart``: how much of ``left`` is above ``right``, per dimension (``Diff`` with
    absent scalars as 0)."""
    out: Resource = {n: max(get(left, n) - get(right, n), 0.0) for n in (CPU, MEMORY)}
    for name in set(_scalars(left)) | set(_scalars(right)):
        if get(left, name) > get(right, name):
            out[name] = get(left, name) - get(right, name)
    return out


def to_string(r: Mapping[str, float]) -> str:
    """``String``: ``cpu 1000.00, memory 0.00, nvidia.com/gpu 8000.00`` (scalars by name)."""
    def shown(value: float) -> str:
        if value == 1.7976931348623157e308:
            return "maxFloat"
        if value == float(2**63 - 1):
            return "maxInt"
        return f"{value:.2f}"
    parts = [f"cpu {shown(get(r, CPU))}", f"memory {shown(get(r, MEMORY))}"]
    parts += [f"{name} {shown(r[name])}" for name in sorted(_scalars(r))]
    return ", ".join(parts)
