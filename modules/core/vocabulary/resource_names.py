"""Kubernetes resource names as the API server and Volcano's scheduler classify them
(k8s ``pkg/apis/core/v1/helper``, ``pkg/scheduler/util``; Volcano's ``NewResource``): native or
extended, scalar, and the names of a resource list the scheduler reads."""
from __future__ import annotations

from decimal import Decimal
from typing import Mapping

from .go import is_ascii_digits
from .names import is_qualified_name

REQUESTS = "requests."      # v1.DefaultResourceRequestsPrefix
LIMITS = "limits."
NATIVE_PREFIX = "kubernetes.io/"   # v1.ResourceDefaultNamespacePrefix
HUGEPAGES = "hugepages-"
ATTACHABLE = "attachable-volumes-"
COMPUTE = ("cpu", "memory", "ephemeral-storage")   # podComputeUsageHelper's named resources
def is_native(name: str) -> bool:
    """``helper.IsNativeResource``: no domain, or a ``kubernetes.io/`` one."""
    return "/" not in name or NATIVE_PREFIX in name


def is_extended(name: str) -> bool:
    """``helper.IsExtendedResourceName``: e.g. ``nvidia.com/gpu``; never a ``requests.`` name."""
    return not is_native(name) and not name.startswith(REQUESTS) and is_qualified_name(REQUESTS + name)


def is_scalar(name: str) -> bool:
    """k8s ``pkg/scheduler/util`` ``IsScalarResourceName``."""
    return (is_extended(name) or name.startswith(HUGEPAGES) or NATIVE_PREFIX in name
            or name.startswith(ATTACHABLE))


def scheduler_view(min_resources: Mapping[str, Decimal]) -> dict[str, Decimal]:
    """The names of a minResources that Volcano's scheduler reads (``NewResource``), with their amounts."""
    return {name: amount for name, amount in min_resources.items()
            if name in COMPUTE or name == "pods" or (not name.startswith("count/") and is_scalar(name))}


def is_device_count(amount: object) -> bool:
    """An extended resource's amount as a whole number of devices: ``8`` or ``"8"``, never a unit
    suffix, a fraction or a boolean (``100Gi`` GPUs would be 107374182400 of them)."""
    if isinstance(amount, bool):
        return False
    return amount >= 0 if isinstance(amount, int) else isinstance(amount, str) and is_ascii_digits(amount)
