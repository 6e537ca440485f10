"""One model of what a cluster holds, read once from its objects, from which placement
(``snapshot.snapshot_from_model``), the eviction what-if's session (``eviction.cluster_of``) and
``drift`` (``snapshot.load_cluster``) all derive.

``read_model(objects, shown)`` sorts the objects by kind (``objects.by_kind``) and reads every Node
(``NodeObject``); the rest is read the first time a use asks for it, and then only once:

* ``pods``: every core Pod, in input order (``PodObject``: phase, node, Releasing, its PodGroup,
  its requests as node fit counts them, computed once);
* ``group_list`` / ``groups``: every Volcano PodGroup (``GroupObject``: the semantic spec of
  ``modules.semantics.workloads.pod_group``, the phase, creation time, ``minTaskMember`` and
  ownerReferences), in input order and by ``namespace/name`` (the last of a name wins, as in
  Volcano's cache); ``group_of(pod)`` is the PodGroup a pod names, None when it names none or one
  not in the snapshot (Volcano ignores such a pod: ``modules.semantics.session.unscheduled_reason``);
* ``classes``: the PriorityClasses as Volcano's cache resolves a job's priority
  (``modules.semantics.session.priority_classes``), ``priority_of(group)``; ``class_list``: each
  class's value and preemption policy as the session reads them (a value that is no integer is an
  input error there);
* ``queue_list``: every Volcano Queue (``QueueObject``: weight, capability, deserved, guarantee,
  priority, state, reclaimable);
* ``hypernodes`` and the remaining objects by kind (``kinds``: runtimes, Volcano Jobs and TrainJobs
  without a PodGroup, ConfigMaps with the scheduler conf), which the use that needs them reads.

Reading lazily keeps each use's errors what they were: placement never reads Queues, ``drift``
never reads Pods. The model is one; each algorithm builds the index it needs from it, by one
function each: placement's integer resource vectors over a fabric (``snapshot.py`` then
``cluster.py``, built for 16,384-node fabrics) and the session's ``api.Resource`` maps
(``eviction.cluster_of``). They are not merged: placement counts in integer units per pool and
updates per-HyperNode aggregates, the session compares Volcano's float resources with its
tolerances and keeps task states; each is the other's wrong shape.

``plus`` joins two models read from different files (the what-if's cluster and its submission, each
object's mistakes naming its own file) without reading either again; ``topology_view`` is the
what-if's view for the topology-aware allocate (pending PodGroups other than the submitted ones
left out, the submitted ones Inqueue).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from functools import cached_property
from typing import Any, Iterable

from modules.core.errors import InputError
from modules.semantics.podspec import Reader, amounts
from modules.semantics.session import PriorityClasses, priority_classes
from modules.semantics.shapes import api_group, as_dict, meta
from modules.semantics.workloads import Workload, pod_group

from .objects import NodeObject, PodObject, by_kind, created_at, object_meta, read_nodes, read_pod

INT32_MIN = -(2**31)
PENDING_PHASES = (None, "", "Pending")


@dataclass(eq=False)
class GroupObject:
    """A PodGroup as every use reads it; what may fail to read is read on first use, once."""
    name: str
    namespace: str
    doc: Reader
    obj: dict
    phase: str | None                             # status.phase as written (the what-if's view: Inqueue)
    memo: dict = field(default_factory=dict, repr=False)   # shared by the copies topology_view makes

    @property
    def uid(self) -> str:
        return f"{self.namespace}/{self.name}"

    def spec(self) -> Workload:
        """The PodGroup as Volcano reads it (``modules.semantics.workloads.pod_group``)."""
        if "spec" not in self.memo:
            self.memo["spec"] = pod_group(self.doc, self.obj)
        return self.memo["spec"]

    def created(self) -> datetime:
        """``metadata.creationTimestamp`` (Go's zero time when absent)."""
        if "created" not in self.memo:
            self.memo["created"] = created_at(self.doc, self.obj)
        return self.memo["created"]

    def task_min(self) -> dict[str, int]:
        """``spec.minTaskMember``: task name -> its minimum."""
        if "task_min" not in self.memo:
            task_min = as_dict(as_dict(self.obj.get("spec")).get("minTaskMember"))
            self.memo["task_min"] = {str(k): self.doc.integer(task_min, k, "spec.minTaskMember", 0, "an integer >= 0")
                                     for k in task_min}
        return self.memo["task_min"]

    @property
    def owners(self) -> list[tuple[str, str]]:
        """``(kind, name)`` of each ownerReference (a Volcano Job or TrainJob that made it)."""
        refs = meta(self.obj).get("ownerReferences") or []
        return [(str(r.get("kind")), str(r.get("name"))) for r in refs if isinstance(r, dict)]


@dataclass
class QueueObject:
    """A Volcano Queue as the session's share plugins read it (amounts in the model's units)."""
    name: str
    weight: int
    capability: dict[str, Decimal] | None           # None: no spec.capability
    deserved: dict[str, Decimal]
    guarantee: dict[str, Decimal]
    priority: int
    state: str
    reclaimable: bool


def read_queue(doc: Reader, obj: dict) -> QueueObject:
    spec = as_dict(obj.get("spec"))
    cap = spec.get("capability")
    return QueueObject(str(meta(obj).get("name", "")), doc.integer(spec, "weight", "spec", 1, "an integer >= 1", 1),
                       amounts(doc, cap, "spec.capability") if cap else None,
                       amounts(doc, spec.get("deserved"), "spec.deserved"),
                       amounts(doc, as_dict(spec.get("guarantee")).get("resource"), "spec.guarantee.resource"),
                       doc.integer(spec, "priority", "spec", INT32_MIN, "an integer", 0),
                       str(as_dict(obj.get("status")).get("state") or "Open"), spec.get("reclaimable") is not False)


def read_group(doc: Reader, obj: dict) -> GroupObject:
    name, namespace, _, _ = object_meta(doc, obj)
    status = obj.get("status") if isinstance(obj.get("status"), dict) else {}
    return GroupObject(name, namespace or "default", doc, obj, status.get("phase"))


@dataclass(eq=False)
class ClusterModel:
    """What a cluster holds (see the module doc)."""
    shown: str
    kinds: dict[str, list[tuple[Reader, dict]]]
    nodes: list[NodeObject]
    parts: tuple["ClusterModel", ...] = ()         # the models ``plus`` joined, read already

    def of(self, kind: str, group: str | None = None) -> list[tuple[Reader, dict]]:
        """The objects of a kind (and API group, when given), in input order."""
        found = self.kinds.get(kind, [])
        return found if group is None else [(d, o) for d, o in found if api_group(o) == group]

    @property
    def hypernodes(self) -> list[tuple[Reader, dict]]:
        return self.kinds.get("HyperNode", [])

    def require_nodes(self) -> list[NodeObject]:
        if not self.nodes:
            raise InputError(self.shown, "", "no Node in the snapshot (kubectl get nodes -o yaml)")
        return self.nodes

    # --- read on first use
    @cached_property
    def pod_pairs(self) -> list[tuple[Reader, dict]]:
        if self.parts:
            return [pair for part in self.parts for pair in part.pod_pairs]
        return self.of("Pod", "")

    @cached_property
    def pods(self) -> list[PodObject]:
        if self.parts:
            return [pod for part in self.parts for pod in part.pods]
        return [read_pod(doc, obj) for doc, obj in self.pod_pairs]

    @cached_property
    def group_list(self) -> list[GroupObject]:
        if self.parts:
            return [g for part in self.parts for g in part.group_list]
        return [read_group(doc, obj) for doc, obj in self.of("PodGroup", "scheduling.volcano.sh")]

    @cached_property
    def groups(self) -> dict[str, GroupObject]:
        return {g.uid: g for g in self.group_list}

    @cached_property
    def queue_list(self) -> list[QueueObject]:
        if self.parts:
            return [q for part in self.parts for q in part.queue_list]
        return [read_queue(doc, obj) for doc, obj in self.of("Queue", "scheduling.volcano.sh")]

    @cached_property
    def classes(self) -> PriorityClasses:
        return priority_classes(obj for _, obj in self.of("PriorityClass"))

    @cached_property
    def class_list(self) -> list[tuple[str, int, Any]]:
        """``(name, value, preemptionPolicy)`` of every PriorityClass, the value read as an integer."""
        if self.parts:
            return [c for part in self.parts for c in part.class_list]
        return [(str(meta(obj).get("name", "")), doc.integer(obj, "value", "", INT32_MIN, "an integer", 0),
                 obj.get("preemptionPolicy")) for doc, obj in self.of("PriorityClass", "scheduling.k8s.io")]

    def group_of(self, pod: PodObject) -> GroupObject | None:
        """The PodGroup a pod names; None when it names none or one the snapshot lacks."""
        return self.groups.get(f"{pod.namespace or 'default'}/{pod.group}") if pod.group else None

    def priority_of(self, group: GroupObject) -> int:
        """A job's priority as Volcano's cache sets it: its PodGroup's PriorityClass (unnamed or
        unknown: the ``globalDefault`` class's, else 0)."""
        return self.classes.of(group.spec().priority_class)

    def read_all(self) -> None:
        """Read everything the session reads (pods and their requests, PodGroups, Queues,
        PriorityClasses) now, so that a mistake is raised here, naming this model's file."""
        for pod in self.pods:
            pod.requests(require_containers=False)
        for group in self.group_list:
            group.spec()
            group.created()
            group.task_min()
        _ = (self.queue_list, self.class_list)      # cached properties: read now, kept

    # --- models derived from models
    def plus(self, other: "ClusterModel") -> "ClusterModel":
        """Both models as one cluster, neither read again (a node named twice is an error)."""
        names = {node.name for node in self.nodes}
        for node in other.nodes:
            if node.name in names:
                raise node.doc.error("metadata.name", f"node {node.name!r} appears twice")
        kinds = {kind: list(found) for kind, found in self.kinds.items()}
        for kind, found in other.kinds.items():
            kinds.setdefault(kind, []).extend(found)
        return ClusterModel(self.shown, kinds, self.nodes + other.nodes, (self, other))

    def topology_view(self, submitted: Iterable[str]) -> "ClusterModel":
        """The what-if's view for the topology-aware allocate: the submitted PodGroups Inqueue
        (enqueue admitted them), other pending PodGroups left out (only the submitted gang is
        placed; their pods are then pods of no PodGroup)."""
        submitted = set(submitted)
        view = ClusterModel(self.shown, self.kinds, self.nodes, (self,))
        view.__dict__["classes"] = self.classes
        view.__dict__["group_list"] = [
            dataclasses.replace(g, phase="Inqueue") if g.uid in submitted else g
            for g in self.group_list if g.uid in submitted or g.phase not in PENDING_PHASES]
        return view


def read_model(objects: Iterable[tuple[str, Any]], shown: str) -> ClusterModel:
    """The model of ``(where, object)`` pairs (``objects.read_objects``); ``shown`` names the file
    their mistakes are reported against."""
    kinds = by_kind(objects, shown)
    return ClusterModel(shown, kinds, read_nodes((d, o) for d, o in kinds.get("Node", []) if api_group(o) == ""))
