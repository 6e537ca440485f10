"""What a check may look up in the cluster: a small typed view of the objects the cluster holds
(queues, namespaces, runtimes, PriorityClasses...), whether that list is complete, and the webhook
servers' settings that upstream's tables vary.

A stack's view is complete for what the stack declares (its Queues besides Volcano's own ``root`` and
``default``, the runtimes it renders); a bare manifest set is not (``known=False``), so a check that
would refuse a missing object skips instead.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable, Mapping

from modules.semantics.created import as_created
from modules.semantics.shapes import api_group, as_dict, meta


class _Index:
    """Lookups over a cluster's objects, built on first use and shared by every view of the same
    objects (``Cluster.creating_queue``): by kind, by ``(kind, name)``, each Queue's parents and
    depth, and what a port memoises (``Cluster.memo``). The objects never change once read."""

    def __init__(self) -> None:
        self.built = False
        self.memos: dict[str, Any] = {}

    def build(self, objects: tuple[dict, ...]) -> "_Index":
        if self.built:
            return self
        self.by_kind: dict[object, list[dict]] = {}
        self.by_name: dict[tuple[object, str], list[dict]] = {}
        self.parents: dict[str, list[object]] = {}   # a Queue's name -> the parents its objects name
        for obj in objects:
            kind, name = obj.get("kind"), meta(obj).get("name")
            self.by_kind.setdefault(kind, []).append(obj)
            if isinstance(name, str):
                self.by_name.setdefault((kind, name), []).append(obj)
                if kind == "Queue":
                    self.parents.setdefault(name, []).append(as_dict(obj.get("spec")).get("parent"))
        self.depth = self._depths()
        self.built = True
        return self

    def _depths(self) -> dict[str, int]:
        """Each Queue's distance from a queue without a queue parent, where it has one well-defined
        place (one object of its name; no parent cycle above it). Others are left out. Each name is
        walked through once: a chain's names get their depths, or are known to have none."""
        depth: dict[str, int] = {}
        none: set[str] = set()
        for start in self.parents:
            chain: list[str] = []
            current: object = start
            while isinstance(current, str) and current not in depth and current in self.parents:
                ups = self.parents[current]
                if len(ups) != 1 or current in none or current in chain:   # held twice, or a cycle
                    none.update(chain)
                    none.add(current)
                    chain = []
                    break
                chain.append(current)
                current = ups[0]
            base = depth.get(current, -1) if isinstance(current, str) else -1
            for offset, name in enumerate(reversed(chain), start=1):
                depth[name] = base + offset
        return depth

    def below(self, name: object, ancestor: str) -> bool:
        """Whether Queue ``name`` descends from ``ancestor`` by ``spec.parent`` (``ancestor`` itself
        only through a cycle). A queue at or above the ancestor's depth answers at once; otherwise a
        walk up its parents, each name once."""
        if not isinstance(name, str):
            return False
        mine, theirs = self.depth.get(name), self.depth.get(ancestor)
        if mine is not None and theirs is not None and mine <= theirs:
            return False
        seen, todo = {name}, [name]
        while todo:
            for parent in self.parents.get(todo.pop(), ()):
                if parent == ancestor:
                    return True
                if isinstance(parent, str) and parent not in seen:
                    seen.add(parent)
                    todo.append(parent)
        return False


@dataclass(frozen=True)
class Cluster:
    """The objects a webhook looks up, and whether they are all there is. ``unborn``: a Queue at its
    own CREATE, whose descendants (queues naming it as parent, directly or not) cannot exist yet."""

    objects: tuple[dict, ...] = ()
    known: bool = True
    settings: Mapping[str, Any] = field(default_factory=dict)
    unborn: str | None = None
    _index: _Index = field(default_factory=_Index, compare=False, repr=False)

    @property
    def index(self) -> _Index:
        return self._index.build(self.objects)

    def hidden(self, obj: dict) -> bool:
        """Whether ``obj`` is a queue below the ``unborn`` one (not there yet)."""
        return self.unborn is not None and obj.get("kind") == "Queue" and \
            self.index.below(meta(obj).get("name"), self.unborn)

    def creating_queue(self, name: object) -> "Cluster":
        """This cluster as a Queue named ``name`` meets it at its own CREATE (same objects, same
        index: nothing is copied)."""
        return replace(self, unborn=name) if isinstance(name, str) else self

    def find(self, kind: str, name: object, namespace: str | None = None) -> dict | None:
        """The object of ``kind`` named ``name`` (in ``namespace``, when given), or None."""
        if not isinstance(name, str):
            return None
        for obj in self.index.by_name.get((kind, name), ()):
            if (namespace is None or meta(obj).get("namespace", "default") == namespace) and not self.hidden(obj):
                return obj
        return None

    def of_kind(self, kind: str) -> list[dict]:
        found = self.index.by_kind.get(kind, [])
        return [o for o in found if not self.hidden(o)] if self.unborn is not None and kind == "Queue" else found

    def memo(self, name: str, build: Callable[[tuple[dict, ...]], Any]) -> Any:
        """``build(objects)`` once for these objects, whatever the view (a port's own index)."""
        memos = self.index.memos
        if name not in memos:
            memos[name] = build(self.objects)
        return memos[name]

    def names(self, kind: str) -> set[str]:
        return {str(meta(o).get("name")) for o in self.of_kind(kind)}

    def namespaces(self) -> dict[str, dict]:
        return {meta(o).get("name"): o for o in self.of_kind("Namespace")}

    def setting(self, name: str, default: Any) -> Any:
        return self.settings.get(name, default)


EMPTY = Cluster((), known=False)
VOLCANO_QUEUES = ("root", "default")   # Volcano's controllers create both


def as_applied(objects: Iterable[dict], live: bool = False) -> tuple[dict, ...]:
    """``objects`` as the cluster holds them once applied: each Volcano Queue as created and
    ``Open`` (the queue controller opens a new queue), plus Volcano's own ``root`` and ``default``
    when absent. ``live``: the objects are read from a cluster, so a Queue that states its
    ``status.state`` keeps it (a Closed queue stays closed), and its Queues are the ones it lists
    (Volcano's own are among them when they exist; none is added, as the scheduler's session adds
    none)."""
    out: list[dict] = []
    names = set()
    for obj in objects:
        if obj.get("kind") == "Queue" and api_group(obj) == "scheduling.volcano.sh":
            name = meta(obj).get("name")
            if isinstance(name, str):   # a name of another type is the schema's finding, not a lookup
                names.add(name)
            if not (live and as_dict(obj.get("status")).get("state")):
                obj = dict(as_created(obj))
                obj["status"] = {"state": "Open"}
        out.append(obj)
    for name in () if live else VOLCANO_QUEUES:
        if name not in names:
            out.append({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": name},
                        "spec": {"weight": 1, "reclaimable": True}, "status": {"state": "Open"}})
    return tuple(out)
