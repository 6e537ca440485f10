"""What a check may look up in the cluster: a small typed view of the objects the cluster holds
(queues, namespaces, runtimes, PriorityClasses...), whether that list is complete, and the webhook
servers' settings that upstream's tables vary.

A stack's view is complete for what the stack declares (its Queues besides Volcano's own ``root`` and
``default``, the runtimes it renders); a bare manifest set is not (``known=False``), so a check that
would refuse a missing object skips instead.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from modules.semantics.shapes import as_dict


def _meta(obj: dict) -> dict:
    return as_dict(obj.get("metadata"))


@dataclass(frozen=True)
class Cluster:
    """The objects a webhook looks up, and whether they are all there is."""

    objects: tuple[dict, ...] = ()
    known: bool = True
    settings: Mapping[str, Any] = field(default_factory=dict)

    def find(self, kind: str, name: object, namespace: str | None = None) -> dict | None:
        """The object of ``kind`` named ``name`` (in ``namespace``, when given), or None."""
        for obj in self.objects:
            md = _meta(obj)
            if obj.get("kind") == kind and md.get("name") == name and \
                    (namespace is None or md.get("namespace", "default") == namespace):
                return obj
        return None

    def of_kind(self, kind: str) -> list[dict]:
        return [o for o in self.objects if o.get("kind") == kind]

    def names(self, kind: str) -> set[str]:
        return {str(_meta(o).get("name")) for o in self.of_kind(kind)}

    def namespaces(self) -> dict[str, dict]:
        return {_meta(o).get("name"): o for o in self.of_kind("Namespace")}

    def setting(self, name: str, default: Any) -> Any:
        return self.settings.get(name, default)


EMPTY = Cluster((), known=False)
