"""Compute resources (``pkg/apis/core/validation/validation.go`` ``validateResourceRequirements``,
``validatePodResources``): a container's and a pod's requests and limits, hugepages, extended
resources."""
from __future__ import annotations

from decimal import Decimal
from typing import Any

from modules.semantics.shapes import as_dict, as_list
from modules.upstream.field import FieldError, forbidden, invalid, not_supported, required
from modules.core.vocabulary.names import qualified_name
from modules.core.vocabulary.resource_names import HUGEPAGES, is_extended, is_native

from .pod_options import PodValidationOptions
from .values import key_path, quantity

CONTAINER_RESOURCES = ("cpu", "memory", "ephemeral-storage")
POD_LEVEL_RESOURCES = ("cpu", "memory")   # supportedPodLevelResources; hugepages too


def container_resource_name(name: str) -> list[str]:
    """validateContainerResourceName: a qualified name; without a domain, a standard container
    resource (cpu, memory, ephemeral-storage, hugepages-<size>)."""
    out = qualified_name(name)
    if "/" not in name and name not in CONTAINER_RESOURCES and not name.startswith(HUGEPAGES):
        out += ["must be a standard resource type or fully qualified", "must be a standard resource for containers"]
    return out


def _overcommit_allowed(name: str) -> bool:
    """helper.IsOvercommitAllowed: native resources (no domain, or kubernetes.io/) but hugepages."""
    return is_native(name) and not name.startswith(HUGEPAGES)


def _hugepage_error(name: str, amount: Any, value: Decimal) -> str | None:
    """validateResourceQuantityHugePageValue: an amount that is a whole multiple of the page size."""
    page = quantity(name[len(HUGEPAGES):])
    if page is None or page <= 0 or value % page == 0 and value > 0:
        return None
    return f"{amount} is not positive integer multiple of {name}"


def _amounts(part: str, amounts: dict, path: str, name_check, options: PodValidationOptions) -> list[FieldError]:
    """Each resource name and quantity of ``requests`` or ``limits``."""
    out: list[FieldError] = []
    for name, amount in amounts.items():
        at = key_path(f"{path}.{part}", name)
        out += [invalid(at, str(name), m) for m in name_check(str(name))]
        value = quantity(amount)
        if value is not None and value < 0:
            out.append(invalid(at, str(amount), "must be greater than or equal to 0"))
        elif value is not None and is_extended(str(name)) and value != value.to_integral_value():
            out.append(invalid(at, str(amount), "must be an integer"))
        if str(name).startswith(HUGEPAGES) and value is not None and not options.allow_indivisible_huge_pages_values:
            error = _hugepage_error(str(name), amount, value)
            if error:
                out.append(invalid(at, str(amount), error))
    return out


def validate_resources(resources: Any, path: str, options: PodValidationOptions,
                       name_check=container_resource_name) -> list[FieldError]:
    """validateResourceRequirements: names and quantities; requests not above limits, and equal to them
    for resources that cannot be overcommitted (extended resources such as nvidia.com/gpu); hugepages
    only beside cpu or memory."""
    resources = as_dict(resources)
    limits, requests = as_dict(resources.get("limits")), as_dict(resources.get("requests"))
    out = _amounts("limits", limits, path, name_check, options)
    out += _amounts("requests", requests, path, name_check, options)
    for name, amount in requests.items():
        request, overcommit = quantity(amount), _overcommit_allowed(str(name))
        if name in limits:
            limit = quantity(limits[name])
            if request is None or limit is None:
                continue
            if request != limit and not overcommit:
                out.append(invalid(f"{path}.requests", str(amount),
                                   f"must be equal to {name} limit of {limits[name]}"))
            elif request > limit:
                out.append(invalid(f"{path}.requests", str(amount),
                                   f"must be less than or equal to {name} limit of {limits[name]}"))
        elif not overcommit:
            out.append(required(f"{path}.limits", "Limit must be set for non overcommitable resources"))
    names = {str(n) for n in (*limits, *requests)}
    if any(n.startswith(HUGEPAGES) for n in names) and not names & {"cpu", "memory"}:
        out.append(forbidden(path, "HugePages require cpu or memory"))
    return out


def _pod_resource_name(name: str) -> list[str]:
    """validatePodResourceName's format part (its support check is a NotSupported error)."""
    return qualified_name(name)


def _aggregate_requests(spec: dict) -> dict[str, Decimal]:
    """resourcehelper.AggregateContainerRequests: per resource the larger of the containers' sum and
    each init container's request (restartable sidecars started before it added)."""
    total: dict[str, Decimal] = {}
    for c in as_list(spec.get("containers")):
        for name, amount in as_dict(as_dict(as_dict(c).get("resources")).get("requests")).items():
            value = quantity(amount)
            if value is not None:
                total[str(name)] = total.get(str(name), Decimal(0)) + value
    sidecars: dict[str, Decimal] = {}
    for c in as_list(spec.get("initContainers")):
        c = as_dict(c)
        for name, amount in as_dict(as_dict(c.get("resources")).get("requests")).items():
            value = quantity(amount)
            if value is None:
                continue
            if c.get("restartPolicy") == "Always":
                sidecars[str(name)] = sidecars.get(str(name), Decimal(0)) + value
                total[str(name)] = total.get(str(name), Decimal(0)) + value
            else:
                total[str(name)] = max(total.get(str(name), Decimal(0)), value + sidecars.get(str(name), 0))
    return total


def validate_pod_resources(spec: dict, path: str, options: PodValidationOptions) -> list[FieldError]:
    """validatePodResources (with the PodLevelResources gate): pod-level ``spec.resources`` holds only
    cpu, memory and hugepages, no claims, requests at least the containers' aggregate and limits at
    least each container's."""
    resources = spec.get("resources")
    if not isinstance(resources, dict):
        return []
    out: list[FieldError] = []
    if resources.get("claims") is not None:
        out.append(forbidden(f"{path}.claims", "claims cannot be set for Resources at pod-level"))
    for part in ("limits", "requests"):
        for name in as_dict(resources.get(part)):
            if str(name) not in POD_LEVEL_RESOURCES and not str(name).startswith(HUGEPAGES):
                out.append(not_supported(key_path(f"{path}.{part}", name), str(name), POD_LEVEL_RESOURCES))
    out += validate_resources(resources, path, options, _pod_resource_name)
    requests, limits = as_dict(resources.get("requests")), as_dict(resources.get("limits"))
    for name, aggregate in sorted(_aggregate_requests(spec).items()):
        own = quantity(requests.get(name, "0")) or Decimal(0)
        if aggregate > own:
            out.append(invalid(key_path(f"{path}.requests", name), str(requests.get(name, "0")),
                               f"must be greater than or equal to aggregate container requests of "
                               f"{_canonical(aggregate)}"))
    for i, c in enumerate(as_list(spec.get("containers"))):
        for name, amount in as_dict(as_dict(as_dict(c).get("resources")).get("limits")).items():
            value, pod_limit = quantity(amount), quantity(limits.get(name))
            if value is not None and pod_limit is not None and value > pod_limit:
                out.append(invalid(f"{path}.containers[{i}][{name}].limits", str(amount),
                                   f"must be less than or equal to pod limits of {limits[name]}"))
    return out


_SI = ((18, "E"), (15, "P"), (12, "T"), (9, "G"), (6, "M"), (3, "k"), (0, ""), (-3, "m"), (-6, "u"), (-9, "n"))


def _canonical(value: Decimal) -> str:
    """A sum as Quantity.String prints it in decimal SI (``4``, ``1500m``, ``2k``); amounts written
    with binary suffixes are shown as decimal numbers (a simplification: trainstack's messages only)."""
    if value == 0:
        return "0"
    for exponent, suffix in _SI:
        scaled = value.scaleb(-exponent)
        if scaled == scaled.to_integral_value() and (abs(scaled) < 1000 or exponent == 18 or
                                                     scaled % 1000 != 0):
            return f"{int(scaled)}{suffix}"
    return str(value)
