"""Kubernetes facts the rules share: container resources, pod requests, images.

Everything works on plain dicts and tolerates odd shapes (a rule never crashes on a user's YAML).
"""
from __future__ import annotations

from decimal import Decimal
from typing import Any, Iterable, Mapping

from modules.core.quantity import parse_quantity

from modules.semantics.podspec import Reader, container_requests
from modules.semantics.podspec import pod_requests as semantic_pod_requests

from .framework import as_dict, as_list

CORE_RESOURCES = ("cpu", "memory")


def is_extended(resource: str) -> bool:
    """Extended resources (GPUs, RDMA devices, ...) and hugepages cannot be overcommitted: the API
    server requires their request to equal their limit. ``kubernetes.io/`` names are native."""
    if resource.startswith("hugepages-"):
        return True
    domain, slash, _ = resource.partition("/")
    return bool(slash) and not (domain == "kubernetes.io" or domain.endswith(".kubernetes.io"))


def resources_of(container: Mapping) -> tuple[dict, dict]:
    """``(requests, limits)`` of a container, as written (empty dicts when absent)."""
    res = as_dict(container.get("resources"))
    return as_dict(res.get("requests")), as_dict(res.get("limits"))


def quantity(value: Any) -> Decimal | None:
    try:
        return parse_quantity(value)
    except (ValueError, ArithmeticError):
        return None


def effective_requests(container: Mapping) -> dict[str, Decimal]:
    """What node fit counts for a container: requests, with limits standing in for missing requests
    (the API server copies a limit into an absent request). Unparsable values are left out."""
    return container_requests(Reader(strict=False), container.get("resources"), "resources").fit


def pod_requests(pod_spec: Mapping) -> dict[str, Decimal]:
    """A pod's requests as node fit sees them (``modules.semantics.podspec``, lenient)."""
    return semantic_pod_requests(Reader(strict=False), pod_spec, "spec", require_containers=False).fit


def add(a: Mapping[str, Decimal], b: Mapping[str, Decimal], times: int = 1) -> dict[str, Decimal]:
    out = dict(a)
    for name, amount in b.items():
        out[name] = out.get(name, Decimal(0)) + amount * times
    return out


_BINARY = (("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10))


def show_amount(resource: str, amount: Decimal) -> str:
    if resource == "memory" or resource.startswith("hugepages-") or resource == "ephemeral-storage":
        whole = int(amount) if amount == amount.to_integral_value() else None   # exact, however large
        for suffix, size in _BINARY:
            if whole is not None and whole >= size and whole % size == 0:
                return f"{whole // size}{suffix}"
    if resource == "cpu" and amount != amount.to_integral_value():
        return f"{int(amount * 1000)}m"
    normal = amount.normalize()
    return f"{normal:f}" if normal == normal.to_integral_value() else str(normal)


def show_resources(resources: Mapping[str, Decimal]) -> str:
    """``8 nvidia.com/gpu, 96 cpu, 1Ti memory`` (extended resources first: they are the scarce ones)."""
    names = sorted(resources, key=lambda n: (not is_extended(n), n))
    return ", ".join(f"{show_amount(n, resources[n])} {n}" for n in names if resources[n] > 0) or "nothing"


# --- images -----------------------------------------------------------------------------------

def image_reference(image: str) -> tuple[str | None, str | None]:
    """``(tag, digest)`` of an image reference; either may be None.

    ``registry:5000/team/img`` has no tag: a colon before the last slash belongs to the registry.
    """
    name, _, digest = image.partition("@")
    last = name.rsplit("/", 1)[-1]
    tag = last.rpartition(":")[2] if ":" in last else None
    return tag, (digest or None)


def images_of(obj: dict, templates: Iterable[tuple[str, dict]]) -> list[tuple[str, str]]:
    """``(path, image)`` for every container image of the object's pod templates, and a TrainJob's
    ``spec.trainer.image``."""
    out = []
    for template_path, template in templates:
        pod_spec = as_dict(template.get("spec"))
        base = f"{template_path}.spec" if template_path else "spec"
        for field_name in ("initContainers", "containers", "ephemeralContainers"):
            for i, container in enumerate(as_list(pod_spec.get(field_name))):
                image = as_dict(container).get("image")
                if isinstance(image, str):
                    out.append((f"{base}.{field_name}[{i}].image", image))
    if obj.get("kind") == "TrainJob":
        image = as_dict(as_dict(obj.get("spec")).get("trainer")).get("image")
        if isinstance(image, str):
            out.append(("spec.trainer.image", image))
    return out
