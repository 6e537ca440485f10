"""Volcano v1.15.1's queue validating webhook (volcano-sh/volcano ``pkg/webhooks/admission/queues/validate``
``validate_queue.go``), our own code: ``validate_queue(obj, operation, old, cluster)`` returns coded
refusals worded as upstream's messages.

``AdmitQueues`` on CREATE/UPDATE: the spec checks (``validateQueue``: quantities, state, hierarchy
annotations; one aggregate message), then the parent rules, then the hierarchy's resources (the
first failing stage). DELETE (``validateQueueDeleting``) is the chart policy's business here.
"""
from __future__ import annotations

import math
from decimal import Decimal
from typing import Any, Iterable, Iterator

from modules.core.vocabulary import resource as vres
from modules.core.vocabulary.resource_names import is_extended
from modules.semantics.shapes import annotations, as_dict, meta
from modules.upstream.cluster import Cluster
from modules.upstream.field import FieldError, invalid
from modules.upstream.kubernetes.values import quantity as _quantity
from modules.upstream.volcano.common import key
from modules.upstream.webhook_error import WebhookError, refuse

# The webhook server's --max-queue-depth default (config.MaxQueueDepth).
MAX_QUEUE_DEPTH = 5
# k8s.io/kubernetes pkg/apis/core/helper integerResources: quota counts that must be whole numbers.
INTEGER_RESOURCES = frozenset({"pods", "resourcequotas", "services", "replicationcontrollers", "secrets", "configmaps",
                               "persistentvolumeclaims", "services.nodeports", "services.loadbalancers"})
_SUFFIXES = {-9: "n", -6: "u", -3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E"}


def _spec_invalid(path: str, code: str, value: object, detail: str, at: str | None = None) -> WebhookError:
    """``field.Invalid`` under the webhook's ``requestBody`` root, as ``AdmitQueues`` words it."""
    text = invalid(f"requestBody.{path}", str(value), detail).error()
    return refuse(at or path, code, text, value)


def is_integer_resource(name: str) -> bool:
    """``helper.IsIntegerResourceName``: a quota count, or an extended resource (a domain-prefixed
    name outside ``kubernetes.io/`` whose ``requests.<name>`` is a qualified name)."""
    return name in INTEGER_RESOURCES or is_extended(name)


def canonical(q: Decimal) -> str:
    """A decimal quantity as ``resource.Quantity.String()`` writes it: the largest SI suffix that
    keeps the number whole (``1.5`` -> ``1500m``)."""
    for exponent in sorted(_SUFFIXES, reverse=True):
        mantissa = q / (Decimal(10) ** exponent)
        if mantissa == mantissa.to_integral_value():
            return f"{int(mantissa)}{_SUFFIXES[exponent]}"
    return f"{math.ceil(q * 10 ** 9)}n"


def _quantity_errors(name: str, value: object, path: str) -> list[WebhookError]:
    """``ValidateResourceQuantityValue``: not negative; a whole number for an integer resource
    (its milli-value, rounded up, a multiple of 1000)."""
    q = _quantity(value)
    if q is None:
        return []
    out = []
    if q < 0:
        out.append(_spec_invalid(path, "queue.quantity-negative", value, "must be greater than or equal to 0"))
    if is_integer_resource(name) and math.ceil(q * 1000) % 1000:
        out.append(_spec_invalid(path, "queue.quantity-not-integer", canonical(q), "must be an integer"))
    return out


def _guarantee_errors(name: object, value: object, deserved: dict) -> list[WebhookError]:
    """One guaranteed resource: its quantity, and a deserved amount at least as large."""
    out = _quantity_errors(str(name), value, f"spec.guarantee.resource.{name}")
    at = f"spec.deserved.{name}"
    if name not in deserved:
        return out + [_spec_invalid(at, "queue.deserved-below-guarantee", "<nil>",
                                    f"deserved[{name}] must be >= guarantee[{name}]={value}")]
    d, q = _quantity(deserved[name]), _quantity(value)
    if d is not None and q is not None and d < q:
        out.append(_spec_invalid(at, "queue.deserved-below-guarantee", deserved[name],
                                 f"deserved[{name}]={deserved[name]} must be >= guarantee[{name}]={value}"))
    return out


def _spec_errors(queue: dict) -> list[WebhookError]:
    """``validateQueue``: quantities not negative (whole for integer resources), deserved >= guarantee
    and <= capability, the state Open or Closed, the hierarchy annotations well formed."""
    spec = as_dict(queue.get("spec"))
    capability, deserved = as_dict(spec.get("capability")), as_dict(spec.get("deserved"))
    guarantee = as_dict(as_dict(spec.get("guarantee")).get("resource"))
    out: list[WebhookError] = []
    for where, values in (("spec.capability", capability), ("spec.deserved", deserved)):
        for name, value in values.items():
            out += _quantity_errors(str(name), value, f"{where}.{name}")
    for name, value in guarantee.items():
        out += _guarantee_errors(name, value, deserved)
    for name, value in deserved.items():
        if name in capability:
            d, c = _quantity(value), _quantity(capability[name])
            if d is not None and c is not None and d > c:
                out.append(_spec_invalid(f"spec.deserved.{name}", "queue.deserved-above-capability", value,
                                         f"deserved[{name}]={value} must be <= capability[{name}]={capability[name]}"))
    state = as_dict(queue.get("status")).get("state")
    if state and state not in ("Open", "Closed"):
        out.append(_spec_invalid("spec.state", "queue.state", state, "queue state must be in [Open Closed]",
                                 at="status.state"))
    out.extend(_hierarchy_annotation_errors(queue))
    return out


def _hierarchy_annotation_errors(queue: dict, others: Iterable[dict] = ()) -> list[WebhookError]:
    notes = annotations(queue)
    hierarchy, weights = notes.get("volcano.sh/hierarchy") or "", notes.get("volcano.sh/hierarchy-weights") or ""
    if not hierarchy and not weights or not isinstance(hierarchy, str) or not isinstance(weights, str):
        return []   # annotations are strings: another type never decodes, so no webhook meets it
    at = "metadata.annotations"
    if len(hierarchy.split("/")) != len(weights.split("/")):
        return [_spec_invalid(at, "queue.hierarchy-length", hierarchy, "volcano.sh/hierarchy must have the same "
                                                                       "length with volcano.sh/hierarchy-weights")]
    for weight in weights.split("/"):
        try:
            if "_" in weight or weight != weight.strip():   # Go's ParseFloat takes neither
                raise ValueError(weight)
            value = float(weight)
        except ValueError:
            return [_spec_invalid(at, "queue.hierarchy-weight", weights,
                                  f"{weight} in the {weights} is invalid number: strconv.ParseFloat: parsing "
                                  f"\"{weight}\": invalid syntax")]
        if value <= 0:
            return [_spec_invalid(at, "queue.hierarchy-weight", weights, f"{weight} in the {weights} must be larger "
                                                                         "than 0")]
    for other in others:
        theirs = annotations(other).get("volcano.sh/hierarchy") or ""
        if theirs and meta(other).get("name") != meta(queue).get("name") and theirs.startswith(hierarchy + "/"):
            return [_spec_invalid(at, "queue.hierarchy-sub-path", hierarchy,
                                  f"{hierarchy} is not allowed to be in the sub path of {theirs} of queue "
                                  f"{meta(other).get('name')}")]
    return []


def _res(values: object) -> dict:
    """``api.NewResource`` of a ResourceList as written (quantities that do not parse are skipped)."""
    given = {name: _quantity(value) for name, value in as_dict(values).items()}
    return vres.new_resource({name: q for name, q in given.items() if q is not None})


def _shown(name: str, value: float) -> str:
    if name == "cpu":
        return f"{int(value)}m" if int(value) % 1000 else str(int(value) // 1000)
    if name == "memory":
        v = int(value)
        for suffix, size in (("Ei", 2 ** 60), ("Pi", 2 ** 50), ("Ti", 2 ** 40), ("Gi", 2 ** 30), ("Mi", 2 ** 20),
                             ("Ki", 2 ** 10)):
            if v and v % size == 0:
                return f"{v // size}{suffix}"
        return str(v)
    return f"{value:.2f}"


def _aggregate(errors: list[WebhookError]) -> list[FieldError]:
    """``ErrorList.ToAggregate()``: one message, several errors in brackets (the first one's code)."""
    if len(errors) <= 1:
        return list(errors)
    first = errors[0]
    return [refuse(first.field, first.origin, "[" + ", ".join(e.detail for e in errors) + "]")]


def _children_by_parent(objects: tuple[dict, ...]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for q in objects:
        if q.get("kind") == "Queue":
            out.setdefault(key(as_dict(q.get("spec")).get("parent") or ""), []).append(q)
    return out


def _others(queue: dict, cluster: Cluster) -> Iterator[dict]:
    """The other queues there are, read only when asked (only a queue with hierarchy annotations asks)."""
    name = meta(queue).get("name")
    yield from (q for q in cluster.of_kind("Queue") if meta(q).get("name") != name)


class _Children:
    """Each queue's child queues in the cluster as the checked queue meets it: indexed once per
    cluster, the queues not there yet (``Cluster.unborn``'s descendants) left out on each lookup."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.all = cluster.memo("volcano.queue-children", _children_by_parent)

    def get(self, parent: str, default: Any = ()) -> list[dict]:
        if not isinstance(parent, str):    # a name of another type never decodes: no queue is its child
            return default
        found = self.all.get(parent)
        if found is None:
            return default
        return [q for q in found if not self.cluster.hidden(q)] if self.cluster.unborn is not None else found


def validate_queue(queue: dict, operation: str, old: dict | None, cluster: Cluster) -> list[FieldError]:
    """``AdmitQueues`` on CREATE/UPDATE: the spec checks, then the parent rules, then the hierarchy's
    resources (capability within the nearest ancestor's, children's guarantee/deserved sums within
    the parent's, the parent's capability not below any descendant's). The first failing stage."""
    if operation not in ("CREATE", "UPDATE"):
        return []
    children_of = _Children(cluster)
    errors = _spec_errors(queue) or _hierarchy_annotation_errors(queue, _others(queue, cluster))
    if errors:
        return _aggregate(errors)
    name, spec = meta(queue).get("name"), as_dict(queue.get("spec"))
    parent = spec.get("parent") or ""
    old_parent = as_dict(as_dict(old).get("spec")).get("parent") or "" if old else None
    if operation == "CREATE" or old_parent != parent:
        error = _parent_error(queue, cluster, children_of)
        if error:
            return [error]
    if name == "root":
        return []
    if operation == "UPDATE" and old is not None:
        old_spec = as_dict(old.get("spec"))
        if parent == old_parent and all(spec.get(k) == old_spec.get(k) for k in ("capability", "deserved")) and \
                as_dict(spec.get("guarantee")).get("resource") == as_dict(old_spec.get("guarantee")).get("resource"):
            return []
    error = _hierarchy_resources_error(queue, cluster, children_of)
    return [error] if error else []


def _parent_error(queue: dict, cluster: Cluster, children_of: _Children) -> FieldError | None:
    name, parent = meta(queue).get("name"), as_dict(queue.get("spec")).get("parent") or ""
    if parent in ("", "root"):
        return None
    if parent == name:
        return refuse("spec.parent", "queue.parent-itself", f"queue {name} cannot use itself as parent")
    max_depth = cluster.setting("MaxQueueDepth", MAX_QUEUE_DEPTH)
    depth, current = 1, parent
    while current not in ("", "root"):
        depth += 1
        if depth > max_depth:
            return refuse("spec.parent", "queue.depth",
                          f"queue {name} exceeds the maximum allowed depth of {max_depth}")
        found = cluster.find("Queue", current)
        if found is None:
            return refuse("spec.parent", "queue.parent-not-found",
                          f"failed to get parent queue {current} of queue {name}: queue.scheduling.volcano.sh "
                          f"\"{current}\" not found") if cluster.known else None
        current = as_dict(found.get("spec")).get("parent") or ""
    parent_queue = cluster.find("Queue", parent)
    if parent_queue is None:
        return None
    if not children_of.get(parent):
        pods = _quantity(as_dict(as_dict(parent_queue.get("status")).get("allocated")).get("pods"))
        if pods:
            return refuse("spec.parent", "queue.parent-has-pods", f"queue {parent} cannot be the parent queue of "
                                                                  f"queue {name} because it has allocated Pods: "
                                                                  f"{int(pods)}")
    return None


def _nearest_ancestor_capability(queue: dict, resource: str, cluster: Cluster) -> float | None:
    parent, seen = as_dict(queue.get("spec")).get("parent") or "", set()
    while parent not in ("", "root") and parent not in seen:
        seen.add(parent)
        found = cluster.find("Queue", parent)
        if found is None:
            return None
        value = vres.get(_res(as_dict(found.get("spec")).get("capability")), resource)
        if value > 0:
            return value
        parent = as_dict(found.get("spec")).get("parent") or ""
    return None


def _subtree_max_capability(queue: dict, resource: str, children_of: _Children) -> float:
    """``findSubtreeMaxCapability``: the queue's own capability when set, else the largest of its
    children's subtrees (walked without recursion; a queue is visited once)."""
    best, stack, seen = 0.0, [queue], set()
    while stack:
        current = stack.pop()
        own = vres.get(_res(as_dict(current.get("spec")).get("capability")), resource)
        if own > 0:
            best = max(best, own)
            continue
        name = meta(current).get("name")
        if name in seen:
            continue
        seen.add(name)
        stack.extend(children_of.get(name, ()))
    return best


def _against_parent(queue: dict, parent_name: str, cluster: Cluster, children_of: _Children) -> FieldError | None:
    """The queue's capability within its nearest ancestor's; the siblings' sums within the parent's."""
    name, spec = meta(queue).get("name"), as_dict(queue.get("spec"))
    parent = cluster.find("Queue", parent_name)
    if parent is None:
        return refuse("spec.parent", "queue.parent-not-found",
                      f"parent queue {parent_name} not found") if cluster.known else None
    own = _res(spec.get("capability"))
    for resource in vres.resource_names(own):
        limit = _nearest_ancestor_capability(queue, resource, cluster)
        mine = vres.get(own, resource)
        if limit is not None and mine > limit:
            return refuse(f"spec.capability.{resource}", "queue.capability-above-ancestor",
                          f"queue {name} capability[{resource}]={_shown(resource, mine)} exceeds its "
                          f"ancestor's capability={_shown(resource, limit)}")
    siblings = [q for q in children_of.get(parent_name, ()) if meta(q).get("name") != name] + [queue]
    return _sums_error(f"parent queue {parent_name}", parent, siblings)


def _hierarchy_resources_error(queue: dict, cluster: Cluster, children_of: _Children) -> FieldError | None:
    name, spec = meta(queue).get("name"), as_dict(queue.get("spec"))
    parent_name = spec.get("parent") or ""
    if parent_name not in ("", "root"):
        error = _against_parent(queue, parent_name, cluster, children_of)
        if error:
            return error
    children = children_of.get(name, [])
    if not children:
        return None
    capability = _res(spec.get("capability"))
    for resource in vres.resource_names(capability):
        child_max = max(_subtree_max_capability(c, resource, children_of) for c in children)
        if vres.get(capability, resource) < child_max:
            return refuse(f"spec.capability.{resource}", "queue.capability-below-descendants",
                          f"queue {name} capability[{resource}]={_shown(resource, vres.get(capability, resource))} is "
                          f"smaller than its descendants' max capability={_shown(resource, child_max)}")
    return _sums_error(f"queue {name}", queue, children)


def _sums_error(who: str, parent: dict, children: list[dict]) -> FieldError | None:
    spec = as_dict(parent.get("spec"))
    limit_g, limit_d = _res(as_dict(spec.get("guarantee")).get("resource")), _res(spec.get("deserved"))
    total_g, total_d = {}, {}
    for child in children:
        child_spec = as_dict(child.get("spec"))
        total_g = vres.add(total_g, _res(as_dict(child_spec.get("guarantee")).get("resource")))
        if vres.less_partly(limit_g, total_g):
            return refuse("spec.guarantee", "queue.children-guarantee",
                          f"{who} validation failed: sum of children's guarantee ({vres.to_string(total_g)}) exceeds "
                          f"parent's guarantee limit ({vres.to_string(limit_g)})")
        total_d = vres.add(total_d, _res(child_spec.get("deserved")))
        if vres.less_partly(limit_d, total_d):
            return refuse("spec.deserved", "queue.children-deserved",
                          f"{who} validation failed: sum of children's deserved ({vres.to_string(total_d)}) exceeds "
                          f"parent's deserved limit ({vres.to_string(limit_d)})")
    return None
