"""The one reader of a cluster's objects, for everything the simulator and ``drift`` model of a
live cluster: the one cluster model (``model.read_model``), from which placement
(``snapshot.snapshot_from_model``), the eviction what-if (``eviction.cluster_of``) and ``drift``
(``snapshot.load_cluster``) derive, reads the objects here.

* ``read_objects``: the manifests ``kubectl get ... -o yaml|json`` prints (List objects or plain
  documents, one file or a directory of them) as ``(where, object)`` pairs, bounded: at most
  ``MAX_BYTES`` per file and in all, ``MAX_OBJECTS`` objects and ``MAX_FILES`` files; JSON holding
  a lone UTF-16 surrogate is refused (a one-line error, exit 2).
* ``by_kind``: the objects by kind, each with the ``Reader`` its mistakes are reported through
  (``where (Kind name)``); a ``Job`` that is not Volcano's is ``batch/Job``.
* ``read_nodes``: every Node once, as ``NodeObject``: name, labels, what it can allocate
  (``status.allocatable``, else ``capacity``), the taints that keep pods off (NoSchedule,
  NoExecute) and whether it is cordoned. A node named twice is an input error.
* ``created_at``: an object's ``metadata.creationTimestamp`` (Volcano's job order reads a
  PodGroup's), Go's zero time when absent, an error when it is no RFC 3339 time.
* ``read_pod``: a Pod as ``PodObject``: its metadata, spec, phase, node, whether it is being
  deleted (Volcano's Releasing), its PodGroup (``scheduling.k8s.io/group-name``) and its requests
  as node fit counts them (``modules.semantics.podspec``), computed once per pod.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Any, Iterable

from modules.core import yamlio
from modules.core.errors import InputError, show
from modules.semantics.podspec import Reader, amounts, pod_requests
from modules.semantics.session import GROUP_ANNOTATION, creation_time

from .workloads import VOLCANO_GROUP

MAX_BYTES = 256 * 2**20          # per file and in all
MAX_OBJECTS = 500_000
MAX_FILES = 1_000
SUFFIXES = (".yaml", ".yml", ".json")
TAINT_EFFECTS = ("NoSchedule", "NoExecute")     # PreferNoSchedule only scores


def read_objects(path: Path, shown: str) -> list[tuple[str, dict]]:
    """(where, object) for every object in a file or a directory's YAML/JSON files, Lists expanded."""
    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in SUFFIXES)
        if not files:
            raise InputError(shown, "", f"no {'/'.join(SUFFIXES)} files in the directory")
    elif path.exists():
        files = [path]
    else:
        raise InputError(shown, "", "file not found")
    if len(files) > MAX_FILES:
        raise InputError(shown, "", f"{len(files)} files; a snapshot may have at most {MAX_FILES}")
    total = 0
    out: list[tuple[str, dict]] = []
    for file in files:
        name = str(file) if file != path else shown
        # in a directory, each object's place names its file
        at = f"{file.relative_to(path).as_posix()}: " if file != path else ""
        size = file.stat().st_size
        total += size
        if size > MAX_BYTES or total > MAX_BYTES:
            raise InputError(name, "", f"the snapshot is larger than {MAX_BYTES // 2**20} MiB")
        for i, doc in enumerate(_documents(file, name), start=1):
            items = doc.get("items") if isinstance(doc, dict) and str(doc.get("kind", "")).endswith("List") else None
            if items is not None:
                if not isinstance(items, list):
                    raise InputError(name, f"document {i}: items", f"expected a list of objects, got {show(items)}")
                out.extend((f"{at}document {i}: items[{k}]", item) for k, item in enumerate(items))
            else:
                out.append((f"{at}document {i}", doc))
            if len(out) > MAX_OBJECTS:
                raise InputError(name, "", f"more than {MAX_OBJECTS} objects in the snapshot")
    for where, obj in out:
        if isinstance(obj, yamlio.KeylessItem):
            got = "a mapping without apiVersion or kind" if obj.value is None else show(obj.value)
            raise InputError(shown, f"{where} (line {obj.line}, column {obj.column})",
                             f"expected a Kubernetes object with a kind, got {got}")
        if not isinstance(obj, dict) or not isinstance(obj.get("kind"), str):
            raise InputError(shown, where, f"expected a Kubernetes object with a kind, got {show(obj)}")
    return out


def _documents(file: Path, name: str) -> list[Any]:
    """A file's documents: JSON (``kubectl ... -o json``, parsed much faster) or multi-document YAML."""
    text = yamlio.read_text(file, name, MAX_BYTES)   # the snapshot bound, not the 4 MiB default for stack files
    if file.suffix == ".json":
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(name, f"line {exc.lineno}, column {exc.colno}", f"invalid JSON: {exc.msg}") from None
        except (ValueError, RecursionError) as exc:   # a number past Python's 4300 digits, deep nesting
            raise InputError(name, "(document)", f"invalid JSON: {str(exc).split(';')[0] or 'nested too deep'}") \
                from None
        if _SURROGATE_ESCAPE.search(text):
            _refuse_lone_surrogates(doc, name)
        return [doc]
    # One item of a List at a time: the whole snapshot as one node graph would cost about 33 MiB of
    # memory per MiB of YAML; held to the snapshot's bound, not the 16 MiB of a fabric file
    # (a YAML snapshot with anchors, which kubectl never writes, keeps that cap).
    return yamlio.load_manifests(text, name, limit=MAX_BYTES)


# JSON may escape half of a UTF-16 pair alone ("\ud800"); Python decodes it to a lone surrogate, which
# is no Unicode text: it could not be printed, matched by a pattern or written back. YAML's reader
# refuses the escape itself. Only text holding such an escape is walked.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _refuse_lone_surrogates(doc: Any, name: str) -> None:
    """An InputError at the first key or string holding a lone surrogate (valid pairs were joined)."""
    todo: list[tuple[str, Any]] = [("", doc)]
    while todo:
        path, value = todo.pop()
        if isinstance(value, dict):
            children = []
            for key, item in value.items():
                shown = key.encode("utf-8", "backslashreplace").decode("ascii", "backslashreplace")
                if _SURROGATE.search(key):
                    raise InputError(name, yamlio.join_path(path, shown) or "(document)",
                                     "a key holds a lone UTF-16 surrogate escape: not Unicode text")
                children.append((yamlio.join_path(path, shown), item))
            todo.extend(reversed(children))      # the first in the file is reported first
        elif isinstance(value, list):
            todo.extend(reversed([(f"{path}[{i}]", item) for i, item in enumerate(value)]))
        elif isinstance(value, str) and _SURROGATE.search(value):
            raise InputError(name, path or "(document)", "a lone UTF-16 surrogate escape (such as \\ud800 without "
                             "its pair): not Unicode text")


# --- the objects by kind --------------------------------------------------------------------------

def by_kind(objects: Iterable[tuple[str, Any]], shown: str) -> dict[str, list[tuple[Reader, dict]]]:
    """Objects by kind, in input order, each with its ``Reader`` (objects without a kind are
    skipped: ``read_objects`` has refused them already)."""
    out: dict[str, list[tuple[Reader, dict]]] = {}
    for where, obj in objects:
        if not isinstance(obj, dict) or not isinstance(obj.get("kind"), str):
            continue
        meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
        label = meta.get("name")
        doc = Reader(shown, f"{where} ({obj['kind']} {label})" if label else where)
        kind = obj["kind"]
        if kind == "Job" and not str(obj.get("apiVersion", "")).startswith(VOLCANO_GROUP + "/"):
            kind = "batch/Job"
        out.setdefault(kind, []).append((doc, obj))
    return out


# --- nodes ----------------------------------------------------------------------------------------

@dataclass(slots=True)
class NodeObject:
    """A Node as every model of the cluster reads it."""
    name: str
    labels: dict
    allocatable: dict[str, Decimal]                 # status.allocatable, else status.capacity
    taints: tuple[tuple[str, str, str], ...]        # (key, value, effect), NoSchedule and NoExecute
    unschedulable: bool                             # spec.unschedulable: cordoned
    doc: Reader


def read_node(doc: Reader, obj: dict) -> NodeObject:
    meta = doc.get(obj, "metadata", "", dict, "a mapping with name")
    name = doc.get(meta, "name", "metadata", str, "a node name")
    labels = doc.get(meta, "labels", "metadata", dict, "a mapping of labels", {})
    status = doc.get(obj, "status", "", dict, "a node status with allocatable", {})
    allocatable = amounts(doc, status.get("allocatable", status.get("capacity")), "status.allocatable")
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    taints = []
    for taint in spec.get("taints") or []:
        if isinstance(taint, dict) and taint.get("effect") in TAINT_EFFECTS:
            taints.append((str(taint.get("key") or ""), str(taint.get("value") or ""), taint["effect"]))
    return NodeObject(name, dict(labels), allocatable, tuple(taints), spec.get("unschedulable") is True, doc)


def read_nodes(nodes: Iterable[tuple[Reader, dict]]) -> list[NodeObject]:
    """Every Node once, in input order."""
    out: dict[str, NodeObject] = {}
    for doc, obj in nodes:
        node = read_node(doc, obj)
        if node.name in out:
            raise doc.error("metadata.name", f"node {node.name!r} appears twice")
        out[node.name] = node
    return list(out.values())


# --- pods -----------------------------------------------------------------------------------------

def object_meta(doc: Reader, obj: dict) -> tuple[str, str, dict, dict]:
    """Name, namespace (``default`` when unset), labels and annotations, each of its type."""
    meta = obj.get("metadata")
    if type(meta) is dict and type(meta.get("name")) is str:      # the usual case, without Reader's checks
        namespace = meta.get("namespace", "default")
        labels = meta.get("labels") or {}
        annotations = meta.get("annotations") or {}
        if type(namespace) is str and type(labels) is dict and type(annotations) is dict:
            return meta["name"], namespace, labels, annotations
    meta = doc.get(obj, "metadata", "", dict, "a mapping with name")
    name = doc.get(meta, "name", "metadata", str, "a name")
    namespace = doc.get(meta, "namespace", "metadata", str, "a namespace", "default")
    labels = doc.get(meta, "labels", "metadata", dict, "a mapping of labels", {})
    annotations = doc.get(meta, "annotations", "metadata", dict, "a mapping of annotations", {})
    return name, namespace, labels, annotations


@dataclass(slots=True)
class PodObject:
    """A Pod as every model of the cluster reads it."""
    name: str
    namespace: str
    labels: dict
    annotations: dict
    spec: dict
    phase: str | None              # status.phase as written
    node: str | None               # spec.nodeName
    deleting: bool                 # metadata.deletionTimestamp set: Volcano's Releasing while it runs
    group: str | None              # the PodGroup it names
    doc: Reader
    fit: dict | None = field(default=None, repr=False)    # require_containers -> its requests, computed once

    @property
    def uid(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def finished(self) -> bool:
        return self.phase in ("Succeeded", "Failed")

    def requests(self, require_containers: bool = True) -> dict[str, Decimal]:
        """Its requests as node fit counts them (limits for missing requests, init containers' peak), a
        copy the caller may change. Read once: with ``require_containers`` a pod without containers
        is an error, otherwise the same requests."""
        if self.fit is None:
            self.fit = {}
        found = self.fit.get(require_containers)
        if found is None and require_containers and self.spec.get("containers"):
            found = self.fit.get(False)
        if found is None:
            found = self.fit[require_containers] = pod_requests(self.doc, self.spec, "spec",
                                                                require_containers=require_containers).fit
        return dict(found)


def read_pod(doc: Reader, obj: dict) -> PodObject:
    name, namespace, labels, annotations = object_meta(doc, obj)
    spec = doc.get(obj, "spec", "", dict, "a pod spec")
    status = obj.get("status") if isinstance(obj.get("status"), dict) else {}
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    return PodObject(name, namespace, labels, annotations, spec, status.get("phase"), spec.get("nodeName") or None,
                     bool(meta.get("deletionTimestamp")), annotations.get(GROUP_ANNOTATION) or None, doc)


def created_at(doc: Reader, obj: dict) -> datetime:
    """``metadata.creationTimestamp``: Go's zero time when absent; not an RFC 3339 time: an error."""
    created = creation_time(obj)
    if created is None:
        meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
        raise doc.expected("metadata.creationTimestamp", "an RFC 3339 time", meta.get("creationTimestamp"))
    return created
