"""Resources, chart releases and the Bundle that orders them.

A Bundle is plain data: what ``trainstack render`` writes, what the Pulumi program registers and
what the policies check. Its order is a topological sort of the dependencies with a fixed
tie-break, so the same stack always yields the same sequence (CRDs and Namespaces first).
"""
from __future__ import annotations

import functools
import heapq
from dataclasses import dataclass, field
from typing import Any, Iterable, Union

from .errors import InputError
from .wire import object_key  # noqa: F401 (re-exported: renderers name their dependencies with it)

# Apply order before dependencies are considered: definitions, then places, then cluster-wide
# settings, then charts (which bring their own CRDs and webhooks), then everything else.
_RANK = {"CustomResourceDefinition": 0, "Namespace": 1, "StorageClass": 2, "PriorityClass": 2,
         "ClusterRole": 2, "ClusterRoleBinding": 2, "ServiceAccount": 2, "Role": 2, "RoleBinding": 2,
         "ConfigMap": 3, "Secret": 3, "PersistentVolumeClaim": 3}
_RELEASE_RANK = 4
_DEFAULT_RANK = 5


def release_key(namespace: str, name: str) -> str:
    return f"release/{namespace}/{name}"


def namespace_key(namespace: str) -> str:
    return f"Namespace/{namespace}"


@dataclass(frozen=True)
class Resource:
    """One rendered Kubernetes object and what the Pulumi adapter needs to register it."""

    module: str
    obj: dict
    depends_on: tuple[str, ...] = ()   # keys of resources or releases
    retain: bool = False               # never deleted by `pulumi destroy` (PVCs, CRDs)

    @functools.cached_property
    def key(self) -> str:   # asked for a dozen times per object (order, phases, files): worked out once
        return object_key(self.obj)

    @property
    def kind(self) -> str:
        return self.obj["kind"]

    @property
    def name(self) -> str:
        return self.obj["metadata"]["name"]

    @property
    def namespace(self) -> str | None:
        return self.obj["metadata"].get("namespace")

    @property
    def api_version(self) -> str:
        return self.obj["apiVersion"]


@dataclass(frozen=True)
class ChartRelease:
    """A Helm chart installed as a release (its hooks run), pinned to an exact version."""

    module: str
    name: str
    chart: str
    repository: str           # https://... or oci://...
    version: str
    namespace: str
    values: dict = field(default_factory=dict)
    depends_on: tuple[str, ...] = ()
    serves: tuple[str, ...] = ()   # API groups whose CRDs and webhooks the chart installs

    @property
    def key(self) -> str:
        return release_key(self.namespace, self.name)

    @property
    def chart_ref(self) -> str:
        """What `helm install` takes: ``oci://registry/path/chart`` or the bare chart name."""
        if self.repository.startswith("oci://"):
            return f"{self.repository.rstrip('/')}/{self.chart}"
        return self.chart


@dataclass(frozen=True)
class Overlay:
    """A pinned upstream kustomize overlay plus our patches (for example Training Operator v1).

    ``kustomization`` is the Kustomization written to ``overlays/<name>/kustomization.yaml``; its
    remote ``resources`` must pin a ref. Pulumi applies it with ``kustomize.v2.Directory``.
    """

    module: str
    name: str
    kustomization: dict
    namespace: str | None = None   # the namespace the overlay creates its objects in (it brings its own)
    depends_on: tuple[str, ...] = ()
    serves: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        return f"overlay/{self.name}"


@dataclass(frozen=True)
class Prerequisite:
    """A CRD the cluster must already serve, installed by something outside this bundle (for
    example kube-prometheus-stack serves monitoring.coreos.com). It is not applied: the Pulumi
    program reads it, so a missing prerequisite fails `pulumi preview` instead of the end of
    `pulumi up`, and custom resources of its group depend on it like on a chart's CRDs."""

    module: str
    crd: str                 # the CRD's name, e.g. prometheusrules.monitoring.coreos.com
    installed_by: str        # who installs it, for reviewers and error messages
    serves: tuple[str, ...] = ()
    namespace: None = None
    depends_on: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        return f"CustomResourceDefinition/{self.crd}"


Item = Union[Resource, ChartRelease, Overlay, Prerequisite]


@dataclass
class Bundle:
    """Everything one stack renders, in dependency order."""

    stack: str
    items: list[Item]
    warnings: list[str] = field(default_factory=list)
    dependencies: dict[str, tuple[str, ...]] = field(default_factory=dict)  # key -> every key it needs
    fabric: Any = field(default=None, compare=False, repr=False)   # the model it was rendered from
    gitops: dict = field(default_factory=dict, compare=False, repr=False)   # trainstack:gitops (output layout)

    @property
    def resources(self) -> list[Resource]:
        return [i for i in self.items if isinstance(i, Resource)]

    @property
    def releases(self) -> list[ChartRelease]:
        return [i for i in self.items if isinstance(i, ChartRelease)]

    @property
    def overlays(self) -> list[Overlay]:
        return [i for i in self.items if isinstance(i, Overlay)]

    @property
    def prerequisites(self) -> list[Prerequisite]:
        return [i for i in self.items if isinstance(i, Prerequisite)]

    def manifests(self) -> list[dict]:
        return [r.obj for r in self.resources]

    def objects_text(self) -> str:
        """What `validate`, `render` and `check` call the stack's objects: each rendered manifest
        and each chart release (the policy rules judge a release as an object). Overlays are not
        counted: their objects come from a pinned upstream base built at apply time."""
        manifests, releases = len(self.resources), len(self.releases)
        return f"{manifests + releases} objects ({manifests} manifests, {releases} chart releases)"

    def get(self, key: str) -> Item | None:
        return self._index().get(key)

    def _index(self) -> dict[str, Item]:
        return {i.key: i for i in self.items}

    @classmethod
    def build(cls, stack: str, items: Iterable[Item], modules: tuple[str, ...], stack_file: str,
              warnings: Iterable[str] = ()) -> "Bundle":
        items = list(items)
        index: dict[str, Item] = {}
        for item in items:
            key = item.key   # a Resource's key is worked out from its object: once here
            other = index.setdefault(key, item)
            if other is not item:
                raise InputError(stack_file, "(bundle)", f"two objects are both {key} (from "
                                  f"modules {other.module} and {item.module}); give one another name")
        releases: dict[str, ChartRelease] = {}
        for item in items:   # one values file per release name (charts/<name>.values.yaml)
            if isinstance(item, ChartRelease):
                other = releases.setdefault(item.name, item)
                if other is not item:
                    raise InputError(stack_file, "(bundle)", f"two chart releases are both named {item.name!r} "
                                      f"(from modules {other.module} and {item.module}); give one another name")
        served = {group: i.key for i in items if isinstance(i, (ChartRelease, Overlay, Prerequisite))
                  for group in i.serves}
        deps = {key: {*_implicit_deps(item, key, index, served), *item.depends_on} for key, item in index.items()}
        known = index.keys()
        for key, wanted in deps.items():
            if not known >= wanted:  # a renderer bug, not a user mistake
                missing = sorted(d for d in wanted if d not in index)
                raise RuntimeError(f"{key} depends on {missing}, which the bundle does not contain")
        ordered = _toposort(index, deps, modules)
        return cls(stack=stack, items=[index[key] for key in ordered], warnings=list(warnings),
                   dependencies={key: tuple(sorted(deps[key])) for key in ordered})


def _implicit_deps(item: Item, key: str, index: dict[str, Item], served: dict[str, str]) -> list[str]:
    """A namespaced item needs its Namespace; a custom resource needs the CRD or release serving it."""
    out = []
    namespace = item.namespace
    if namespace:
        needed = namespace_key(namespace)
        if needed in index and key != needed and not isinstance(item, Overlay):
            out.append(needed)
    if isinstance(item, Resource):
        kind, api_version = item.kind, item.api_version
        group = api_version.split("/")[0] if "/" in api_version else ""
        if group:
            crd = _crd_key(kind, group)
            if crd in index:
                out.append(crd)
        if group in served:
            out.append(served[group])
        # A HyperNode's spec holds only its tier and member selectors (thousands of them at fabric
        # scale) and names no queue: only its metadata is read.
        obj = item.obj
        queues = queues_named(obj.get("metadata") if kind == "HyperNode" and group == "topology.volcano.sh" else obj)
        for queue in sorted(queues) if queues else ():   # a Queue must exist (and be Open) before its users
            needed = f"Queue/{queue}"
            if needed in index and key != needed:
                out.append(needed)
    return out


QUEUE_ANNOTATION = "scheduling.volcano.sh/queue-name"
# A field of this object that a controller owns after apply (an HPA's scale path the object cannot
# leave out), comma-separated dotted paths: the Pulumi adapter registers them as ignoreChanges and
# the GitOps output gives each engine its own mechanism (modules/semantics/owned.py decides them).
OWNED_ANNOTATION = "trainstack.io/controller-owned"
MANAGED_LABEL = "app.kubernetes.io/managed-by"


def owned_paths(obj: dict) -> list[str]:
    """The paths ``OWNED_ANNOTATION`` records on ``obj`` (none when absent or not a string)."""
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    notes = meta.get("annotations") if isinstance(meta, dict) else None
    value = notes.get(OWNED_ANNOTATION) if isinstance(notes, dict) else None
    return [p.strip() for p in value.split(",") if p.strip()] if isinstance(value, str) else []


def queues_named(value: Any) -> set[str]:
    """The Volcano queues an object names: ``queue`` fields (Job, PodGroup, a v1 job's
    schedulingPolicy) and the queue-name annotation (TrainJobs, runtimes, pod templates)."""
    found: set[str] = set()
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key, sub in node.items():
                if isinstance(sub, str):   # most values: one test
                    if sub and key in _QUEUE_KEYS:
                        found.add(sub)
                elif isinstance(sub, (dict, list)):
                    stack.append(sub)
        elif isinstance(node, list):
            stack.extend(n for n in node if isinstance(n, (dict, list)))
    return found


_QUEUE_KEYS = frozenset(("queue", QUEUE_ANNOTATION))


def _plural_guess(kind: str) -> str:
    lower = kind.lower()
    return lower + ("es" if lower.endswith("s") else "s")


@functools.lru_cache(maxsize=256)   # a bundle has a few dozen kinds, asked once per object
def _crd_key(kind: str, group: str) -> str:
    """The key of the CRD that would define ``kind`` in ``group``."""
    return f"CustomResourceDefinition/{_plural_guess(kind)}.{group}"


def _sort_key(item: Item, key: str, modules: dict[str, int]) -> tuple:
    if isinstance(item, Prerequisite):
        rank, kind = -1, "~prerequisite"   # checked before anything is applied
    elif isinstance(item, (ChartRelease, Overlay)):
        rank = _RELEASE_RANK
        kind = "~release" if isinstance(item, ChartRelease) else "~overlay"
    else:
        rank = _RANK.get(item.kind, _DEFAULT_RANK)
        kind = item.kind
    module_rank = modules.get(item.module, len(modules))
    return (rank, module_rank, kind, item.namespace or "", key)


def _toposort(index: dict[str, Item], deps: dict[str, set[str]], modules: tuple[str, ...]) -> list[str]:
    """The keys in Kahn's order, with a heap: among ready items the lowest sort key goes first."""
    rank: dict[str, int] = {}   # a module's first place in ``modules``, looked up per item
    for i, module in enumerate(modules):
        rank.setdefault(module, i)
    waiting = {key: len(d) for key, d in deps.items()}
    users: dict[str, list[str]] = {key: [] for key in index}
    for key, d in deps.items():
        for dep in d:
            users[dep].append(key)
    heap = [(_sort_key(index[k], k, rank), k) for k, n in waiting.items() if n == 0]
    heapq.heapify(heap)
    out: list[str] = []
    while heap:
        _, key = heapq.heappop(heap)
        out.append(key)
        for user in users[key]:
            waiting[user] -= 1
            if waiting[user] == 0:
                heapq.heappush(heap, (_sort_key(index[user], user, rank), user))
    if len(out) != len(index):
        stuck = sorted(k for k, n in waiting.items() if n > 0)
        raise RuntimeError(f"dependency cycle among {stuck[:5]}")
    return out
