"""A pod spec's requests, in the two views Volcano and Kubernetes use, read strictly or leniently.

- ``fit``: what kube-scheduler and Volcano's node fit count. The API server defaults a created Pod's
  requests from its limits (a limit stands in for a missing request), containers add up, an init
  container counts where it asks for more than what runs beside it (restartable "sidecar" init
  containers run beside the others and add up), and ``spec.overhead`` is added.
- ``quota``: what Volcano's job controller writes into a PodGroup's ``minResources``. It computes it
  from the task *template* (``pkg/controllers/util/util.go`` ``CalTaskRequests`` -> the quota
  ``PodUsageFunc``), which no API server has defaulted: a container with limits and no requests
  adds nothing, so enqueue and gang admission do not see that cpu or memory.

One ``Reader`` for both callers: strict (the simulator: the first mistake is a ``InputError`` that
names the file, the document and the path) or lenient (rules over hand-written manifests: the
mistake is recorded in ``problems`` and the field is skipped; nothing raises).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from functools import lru_cache
from typing import Any, Mapping

from modules.core import yamlio
from modules.core.errors import InputError, show
from modules.core.quantity import parse_quantity

_MISSING = object()
# Manifests repeat the same few quantities ("8", "64Gi") on every pod: parse each once (Decimals are
# immutable, so sharing them is safe).
_quantity = lru_cache(maxsize=4096, typed=True)(parse_quantity)   # typed: True is not 1


@dataclass
class Reader:
    """Typed access to one document, with errors that say where."""

    file: str = ""
    where: str = ""
    strict: bool = True
    problems: list[tuple[str, str]] = field(default_factory=list)   # (path, message), lenient mode

    def error(self, path: str, message: str) -> InputError:
        return InputError(self.file, f"{self.where}: {path}" if path else self.where, message)

    def problem(self, path: str, message: str) -> None:
        """Raise in strict mode; record and go on in lenient mode."""
        if self.strict:
            raise self.error(path, message)
        self.problems.append((path, message))

    def expected(self, path: str, what: str, got: object) -> InputError:
        return self.error(path, f"expected {what}, got {show(got)}")

    def wrong(self, path: str, what: str, got: object) -> None:
        self.problem(path, f"expected {what}, got {show(got)}")

    def get(self, obj: Any, key: str, path: str, kind: type | tuple, what: str, default: Any = _MISSING) -> Any:
        full = yamlio.join_path(path, key)
        if not isinstance(obj, dict):
            self.wrong(path, "a mapping", obj)
            return None if default is _MISSING else default
        if key not in obj or obj[key] is None:
            if default is _MISSING:
                self.problem(full, f"missing; expected {what}")
                return None
            return default
        value = obj[key]
        kinds = kind if isinstance(kind, tuple) else (kind,)
        if (isinstance(value, bool) and bool not in kinds) or not isinstance(value, kind):
            self.wrong(full, what, value)
            return None if default is _MISSING else default
        return value

    def integer(self, obj: Any, key: str, path: str, minimum: int, what: str, default: Any = _MISSING) -> Any:
        value = obj.get(key) if isinstance(obj, dict) else None
        if isinstance(value, float) and value.is_integer() and not self.strict:
            value = int(value)    # the Pulumi engine sends every number as a float
            obj = {**obj, key: value}
        value = self.get(obj, key, path, int, what, default)
        if isinstance(value, int) and value is not default and value < minimum:
            self.wrong(yamlio.join_path(path, key), what, value)
            return None if default is _MISSING else default
        return value


@dataclass(frozen=True)
class PodRequests:
    """One pod's resource amounts as node fit, PodGroup quota and limits each count them."""
    fit: dict[str, Decimal]      # node fit: requests after the API server's limits->requests defaulting
    quota: dict[str, Decimal]    # PodGroup minResources: requests as written in the template
    # PodLimits (component-helpers): limits summed by the same init-container rules, overhead added
    # only to resources already limited; the quota usage's limits.* names (see minresources.py)
    limits: dict[str, Decimal] = field(default_factory=dict)


def amounts(reader: Reader, given: Any, path: str) -> dict[str, Decimal]:
    """A mapping of resource name to quantity (requests, limits, minResources, overhead), parsed."""
    if not isinstance(given, dict):
        if given is not None:
            reader.wrong(path, "a mapping of resource name to quantity", given)
        return {}
    out: dict[str, Decimal] = {}
    for name, value in given.items():
        try:
            amount = _quantity(value) if isinstance(value, (str, int)) else parse_quantity(value)
        except (ValueError, ArithmeticError):
            reader.wrong(f"{path}.{name}", "a Kubernetes quantity such as 8 or 64Gi", value)
            continue
        if amount < 0:
            reader.wrong(f"{path}.{name}", "a quantity >= 0", value)
            continue
        out[str(name)] = amount
    return out


def merge_resources(base: Any, override: Mapping | None) -> Any:
    """Trainer v2.3 merges ``resourcesPerNode`` into a container's resources key by key (a strategic
    merge patch of ResourceRequirements: ``pkg/util/trainingruntime`` ``MergeResourceRequirements``);
    the TrainJob's values win."""
    if not override:
        return base
    base = base if isinstance(base, dict) else {}
    out = dict(base)
    for part in ("requests", "limits"):
        extra = override.get(part)
        if isinstance(extra, dict) and extra:
            mine = base.get(part)
            out[part] = {**(mine if isinstance(mine, dict) else {}), **extra}
    return out


def container_requests(reader: Reader, resources: Any, path: str) -> PodRequests:
    """One container's ``(fit, quota)`` requests."""
    if resources is None:
        resources = {}
    if not isinstance(resources, dict):
        reader.wrong(path, "a mapping with requests and limits", resources)
        return PodRequests({}, {})
    limits = amounts(reader, resources.get("limits"), f"{path}.limits")
    requests = amounts(reader, resources.get("requests"), f"{path}.requests")
    return PodRequests({**limits, **requests}, dict(requests), limits)


def _add(into: dict[str, Decimal], more: Mapping[str, Decimal]) -> None:
    for name, amount in more.items():
        into[name] = into.get(name, Decimal(0)) + amount


def _max(into: dict[str, Decimal], more: Mapping[str, Decimal]) -> None:
    for name, amount in more.items():
        into[name] = max(into.get(name, Decimal(0)), amount)


def pod_requests(reader: Reader, spec: Any, path: str, overrides: Mapping[int, Mapping] | None = None,
                 require_containers: bool = True) -> PodRequests:
    """A pod's requests in both views. ``overrides``: container index -> resources merged into it
    (Trainer's ``resourcesPerNode``)."""
    if not isinstance(spec, dict):
        reader.wrong(path, "a pod spec with containers", spec)
        return PodRequests({}, {})
    items = spec.get("containers")
    if not isinstance(items, list) or (require_containers and not items):
        reader.wrong(f"{path}.containers", "a non-empty list of containers", items)
        items = items if isinstance(items, list) else []
    views = ({}, {}, {})                   # fit, quota, limits: running containers and sidecars
    for i, container in enumerate(items):
        where = f"{path}.containers[{i}]"
        if not isinstance(container, dict):
            reader.wrong(where, "a container", container)
            continue
        resources = merge_resources(container.get("resources"), (overrides or {}).get(i))
        got = container_requests(reader, resources, f"{where}.resources")
        _add(views[0], got.fit)
        _add(views[1], got.quota)
        _add(views[2], got.limits)
    inits = spec.get("initContainers") or []
    if not isinstance(inits, list):
        reader.wrong(f"{path}.initContainers", "a list of containers", inits)
        inits = []
    peaks: tuple[dict, dict, dict] = ({}, {}, {})
    sidecars: tuple[dict, dict, dict] = ({}, {}, {})
    for i, container in enumerate(inits):
        where = f"{path}.initContainers[{i}]"
        if not isinstance(container, dict):
            reader.wrong(where, "a container", container)
            continue
        got = container_requests(reader, container.get("resources"), f"{where}.resources")
        for view, asked in enumerate((got.fit, got.quota, got.limits)):
            if container.get("restartPolicy") == "Always":   # a sidecar: runs beside what follows
                _add(sidecars[view], asked)
                _add(views[view], asked)
            else:                                          # runs alone, beside the sidecars started before it
                step = dict(sidecars[view])
                _add(step, asked)
                _max(peaks[view], step)
    overhead = amounts(reader, spec.get("overhead"), f"{path}.overhead")
    for view in (0, 1, 2):
        _max(views[view], peaks[view])
        _add(views[view], overhead if view < 2 else {k: v for k, v in overhead.items() if k in views[2]})
    return PodRequests(views[0], views[1], views[2])
