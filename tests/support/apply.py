"""A small in-memory API server with server-side apply's field ownership, and the three appliers
trainstack ships for (``pulumi up``, Argo CD, Flux), each honouring its ignore mechanism as its
documentation and code describe. Just enough to prove a reconcile loop stable; not a Kubernetes.

Server-side apply, as modelled (Kubernetes "Server-Side Apply": merge strategy, conflicts):
- every leaf field has one manager; an apply sets the manifest's leaves and takes them over (with
  ``force``; without it a leaf another manager holds with another value is a ``Conflict``);
- a leaf the applier set before and leaves out now is removed, unless another manager holds it;
- a leaf absent from the manifest keeps its value; lists are atomic leaves;
- ``status`` of a kind with the status subresource is never written by an apply;
- on CREATE the object goes through the mutating webhooks (``modules.upstream.chain.mutate``,
  their leaves held by the webhook) and the API server's defaults (an absent ``spec.replicas`` of a
  Deployment, StatefulSet or ReplicaSet is 1, held by nobody).
A controller's write (the HPA through the scale subresource) is an update: it sets the leaf and
takes it over.
"""
from __future__ import annotations

import copy
from typing import Any, Iterable

from modules.semantics.created import STATUS_SUBRESOURCE
from modules.upstream.chain import mutate
from modules.semantics.owned import ARGOCD_RESPECT, FLUX_SSA
from modules.semantics.shapes import api_group, as_dict, as_list, meta

Path = tuple[str, ...]
WEBHOOK = "volcano-admission"
HPA = "horizontal-pod-autoscaler"
DEFAULTED_REPLICAS = {("apps", "Deployment"), ("apps", "StatefulSet"), ("apps", "ReplicaSet")}


class Conflict(Exception):
    """A non-forced apply that would change a field another manager holds."""


def leaves(value: Any, prefix: Path = ()) -> dict[Path, Any]:
    if isinstance(value, dict) and value:
        out: dict[Path, Any] = {}
        for key, sub in value.items():
            out.update(leaves(sub, prefix + (str(key),)))
        return out
    return {prefix: copy.deepcopy(value)}


_MISSING = object()


def _lookup(obj: dict, path: Path) -> Any:
    node: Any = obj
    for part in path:
        if not isinstance(node, dict) or part not in node:
            return _MISSING
        node = node[part]
    return node


def get(obj: dict, path: Path) -> Any:
    value = _lookup(obj, path)
    return None if value is _MISSING else value


def has(obj: dict, path: Path) -> bool:
    return _lookup(obj, path) is not _MISSING


def put(obj: dict, path: Path, value: Any) -> None:
    node = obj
    for part in path[:-1]:
        if not isinstance(node.get(part), dict):
            node[part] = {}
        node = node[part]
    node[path[-1]] = copy.deepcopy(value)


def remove(obj: dict, path: Path) -> None:
    parents = [obj]
    for part in path[:-1]:
        nxt = parents[-1].get(part) if isinstance(parents[-1], dict) else None
        if not isinstance(nxt, dict):
            return
        parents.append(nxt)
    parents[-1].pop(path[-1], None)
    for depth in range(len(path) - 1, 0, -1):   # drop maps emptied by the removal
        if parents[depth] == {}:
            parents[depth - 1].pop(path[depth - 1], None)


def key_of(obj: dict) -> tuple:
    return api_group(obj), obj.get("kind"), meta(obj).get("namespace"), meta(obj).get("name")


def _without_status(obj: dict) -> dict:
    if "status" in obj and (api_group(obj), obj.get("kind")) in STATUS_SUBRESOURCE:
        return {k: v for k, v in obj.items() if k != "status"}
    return obj


class Store:
    def __init__(self) -> None:
        self.objects: dict[tuple, dict] = {}
        self.managers: dict[tuple, dict[Path, str]] = {}

    def get(self, obj_or_key) -> dict | None:
        key = obj_or_key if isinstance(obj_or_key, tuple) else key_of(obj_or_key)
        return self.objects.get(key)

    def apply(self, manifest: dict, manager: str, force: bool = True) -> bool:
        """Server-side apply; returns whether the stored object changed."""
        manifest = _without_status(copy.deepcopy(manifest))
        key = key_of(manifest)
        wanted = leaves(manifest)
        if key not in self.objects:
            created = mutate(manifest)
            owners = {path: WEBHOOK for path, value in leaves(created).items() if wanted.get(path, ...) != value}
            owners.update({path: manager for path in wanted if path not in owners})
            defaulted = (api_group(created), created.get("kind")) in DEFAULTED_REPLICAS
            if defaulted and not has(created, ("spec", "replicas")):
                put(created, ("spec", "replicas"), 1)   # the API server's default, held by nobody
            self.objects[key], self.managers[key] = created, owners
            return True
        live, owners = self.objects[key], self.managers[key]
        before = copy.deepcopy(live)
        if not force:
            taken = [p for p, v in wanted.items() if owners.get(p, manager) != manager and get(live, p) != v]
            if taken:
                raise Conflict(f"{key}: {['.'.join(p) for p in taken]} held by {[owners[p] for p in taken]}")
        for path, value in wanted.items():
            put(live, path, value)
            owners[path] = manager
        for path in [p for p, m in owners.items() if m == manager and p not in wanted]:
            remove(live, path)
            del owners[path]
        return live != before

    def update(self, key: tuple, path: Path, value: Any, manager: str = HPA) -> None:
        """A controller's write (the HPA through the scale subresource)."""
        put(self.objects[key], path, value)
        self.managers[key][path] = manager


# --- the appliers -------------------------------------------------------------------------------

def pulumi_up(store: Store, manifest: dict, ignore_changes: Iterable[str] = (),
              manager: str = "pulumi-kubernetes") -> bool:
    """pulumi-kubernetes with server-side apply (no force unless pulumi.com/patchForce): an ignored
    path another manager holds (and this one does not) is dropped from the applied object, otherwise
    it takes the live value (provider/pkg/await/await.go handleSSAIgnoreFields)."""
    manifest = copy.deepcopy(manifest)
    live = store.get(manifest)
    if live is not None:
        owners = store.managers[key_of(manifest)]
        for dotted in ignore_changes:
            path = tuple(dotted.split("."))
            if owners.get(path, manager) != manager:
                remove(manifest, path)
            elif has(live, path):
                put(manifest, path, get(live, path))
    return store.apply(manifest, manager, force=False)


def _pointer(pointer: str) -> Path:
    return tuple(p.replace("~1", "/").replace("~0", "~") for p in pointer.lstrip("/").split("/"))


def argocd_sync(store: Store, manifest: dict, application: dict, manager: str = "argocd-controller") -> bool:
    """Argo CD with ServerSideApply=true (--force-conflicts): with RespectIgnoreDifferences=true the
    ignored fields of an object that exists take their live values before the apply (sync options:
    "Respect ignore difference configs"; a new object is created as it is)."""
    manifest = copy.deepcopy(manifest)
    spec = as_dict(application.get("spec"))
    live = store.get(manifest)
    if live is not None and ARGOCD_RESPECT in as_list(as_dict(spec.get("syncPolicy")).get("syncOptions")):
        m = meta(manifest)
        for entry in map(as_dict, as_list(spec.get("ignoreDifferences"))):
            if (entry.get("group") or "") != api_group(manifest) or entry.get("kind") != manifest.get("kind") \
                    or entry.get("name") not in (None, m.get("name")) \
                    or entry.get("namespace") not in (None, m.get("namespace")):
                continue
            for pointer in as_list(entry.get("jsonPointers")):
                path = _pointer(pointer)
                if has(live, path):
                    put(manifest, path, get(live, path))
                else:
                    remove(manifest, path)
    return store.apply(manifest, manager, force=True)


def flux_reconcile(store: Store, manifest: dict, manager: str = "kustomize-controller") -> bool:
    """Flux kustomize-controller (server-side apply, forced): the object's ssa annotation decides:
    Override (default) and Merge apply the manifest's fields, IfNotPresent applies only to create,
    Ignore never applies."""
    policy = as_dict(meta(manifest).get("annotations")).get(FLUX_SSA, "Override")
    if policy == "Ignore" or (policy == "IfNotPresent" and store.get(manifest) is not None):
        return False
    return store.apply(manifest, manager, force=True)
