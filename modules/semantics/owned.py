"""Fields that a controller owns once an object is applied, and how each applier leaves them alone.

The fields an HPA writes through its target's scale subresource, each with its upstream source
(``scale_fields``): built-in kinds keep it at ``spec.replicas``; a custom resource at its CRD's
``subresources.scale.specReplicasPath`` (``scale_subresources.yaml``, extracted from the pinned CRDs,
never listed by hand). What webhooks default on CREATE is modelled in ``modules/upstream/volcano/mutation.py``.

An applier that re-applies a manifest setting such a field resets it on every sync (Flux and Argo CD
with self-heal reconcile continuously; ``pulumi up`` force-applies). A field nobody else needs in
the manifest is best left out (server-side apply keeps an absent field's value); where the object
cannot do without it (a CRD's scale subresource answers GET with an error while its
``specReplicasPath`` is empty), each engine's documented mechanism keeps it out of the fight:

- Pulumi: ``ignoreChanges`` on the path. With server-side apply pulumi-kubernetes drops an ignored
  field that another manager owns from the applied object and otherwise sends the live value
  (``handleSSAIgnoreFields``), so the HPA's value stays.
- Argo CD: ``spec.ignoreDifferences`` on the Application (JSON pointer) plus the sync option
  ``RespectIgnoreDifferences=true``, which replaces ignored fields with the live values when it
  syncs an existing object (without it ignoreDifferences only hides the diff).
- Flux: the object's ``kustomize.toolkit.fluxcd.io/ssa`` annotation. ``Merge`` keeps only fields the
  manifest does not set; ``IfNotPresent`` creates the object and never re-applies it; ``Ignore``
  never applies it. Flux has no per-field mechanism, so a kept field needs ``IfNotPresent``.

trainstack's renderers record a kept field in the object's ``trainstack.io/controller-owned``
annotation (``modules.core.bundle.OWNED_ANNOTATION``); the Pulumi adapter, the GitOps output and the
rule ``controller-owned-fields`` read it there.
"""
from __future__ import annotations

import fnmatch
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Iterator

from modules.core import yamlio
from modules.core.bundle import MANAGED_LABEL, OWNED_ANNOTATION, owned_paths

from .shapes import api_group, as_dict, as_list, meta

K8S = "kubernetes/kubernetes v1.35.3"
TRAINING_OPERATOR = "kubeflow/trainer v1.9.4"
HPA_WRITER = "the HorizontalPodAutoscaler controller (kube-controller-manager, through the scale subresource)"
FLUX_SSA = "kustomize.toolkit.fluxcd.io/ssa"
FLUX_KEEPS = ("IfNotPresent", "Ignore")    # policies under which Flux never re-applies a field it set
ARGOCD_RESPECT = "RespectIgnoreDifferences=true"
ENGINES = ("none", "argocd", "flux")       # trainstack:gitops.engine; none = `pulumi up`


@dataclass(frozen=True)
class OwnedField:
    """One field a controller writes after apply (the HPA, through the scale subresource)."""

    group: str
    kind: str
    path: str            # dotted, as Pulumi's ignoreChanges takes it; ``[]`` marks every list item
    writer: str          # who writes it
    source: str          # upstream repository, tag and path
    required: bool = False   # the object cannot do without it in the manifest

    @property
    def pointer(self) -> str:
        """The RFC 6901 JSON pointer (Argo CD's ``jsonPointers``)."""
        return "/" + "/".join(p.replace("~", "~0").replace("/", "~1") for p in _parts(self.path))


# --- scale: built-in kinds and the CRDs' scale subresources -------------------------------------

_BUILTIN_SCALE = (
    ("apps", "Deployment", f"{K8S} pkg/registry/apps/deployment/storage/storage.go (ScaleREST); "
                           "pkg/apis/apps/v1/defaults.go defaults an absent spec.replicas to 1"),
    ("apps", "StatefulSet", f"{K8S} pkg/registry/apps/statefulset/storage/storage.go (ScaleREST); "
                            "pkg/apis/apps/v1/defaults.go defaults an absent spec.replicas to 1"),
    ("apps", "ReplicaSet", f"{K8S} pkg/registry/apps/replicaset/storage/storage.go (ScaleREST); "
                           "pkg/apis/apps/v1/defaults.go defaults an absent spec.replicas to 1"),
    ("", "ReplicationController", f"{K8S} pkg/registry/core/replicationcontroller/storage/storage.go "
                                  "(ScaleREST); pkg/apis/core/v1/defaults.go defaults spec.replicas to 1"),
)
SCALE_DATA = Path(__file__).with_name("scale_subresources.yaml")
CRD_SOURCES = {"kubeflow/kubeflow.org_": f"{TRAINING_OPERATOR} manifests/base/crds/"}


def crd_scale_entries(folder: Path) -> list[dict]:
    """Every scale subresource declared by the CRDs under ``folder``, in file order (the data of
    ``scale_subresources.yaml``)."""
    import hashlib   # a maintenance step; OpenSSL's load costs every command 3 ms

    out: list[dict] = []
    for file in sorted(folder.rglob("*.yaml")):
        text = file.read_bytes()
        for doc in yamlio.load_all(text.decode("utf-8"), str(file)):
            if not isinstance(doc, dict) or doc.get("kind") != "CustomResourceDefinition":
                continue
            spec = as_dict(doc.get("spec"))
            for version in as_list(spec.get("versions")):
                scale = as_dict(as_dict(as_dict(version).get("subresources")).get("scale"))
                if scale:
                    out.append({"group": spec.get("group"), "kind": as_dict(spec.get("names")).get("kind"),
                                "version": version.get("name"), "specReplicasPath": scale.get("specReplicasPath"),
                                "statusReplicasPath": scale.get("statusReplicasPath"),
                                "file": file.relative_to(folder).as_posix(),
                                "sha256": hashlib.sha256(text).hexdigest()})
    return out


def _crd_source(file: str) -> str:
    for prefix, upstream in CRD_SOURCES.items():
        if file.startswith(prefix):
            return f"{upstream}{file.rpartition('/')[2]} (subresources.scale.specReplicasPath)"
    return f"{file} (subresources.scale.specReplicasPath)"


@lru_cache(maxsize=1)
def scale_fields() -> dict[tuple[str, str], OwnedField]:
    """(API group, kind) -> the field an HPA scales."""
    out = {(group, kind): OwnedField(group, kind, "spec.replicas", HPA_WRITER, source)
           for group, kind, source in _BUILTIN_SCALE}
    for entry in yamlio.load_file(SCALE_DATA, "modules/semantics/scale_subresources.yaml"):
        path = entry["specReplicasPath"].lstrip(".")
        # The scale subresource answers GET with an error while the path is empty: the field stays.
        out[(entry["group"], entry["kind"])] = OwnedField(entry["group"], entry["kind"], path, HPA_WRITER,
                                                          _crd_source(entry["file"]), required=True)
    return out


# --- paths -------------------------------------------------------------------------------------

def _parts(path: str) -> list[str]:
    """``metadata.annotations.volcano.sh/hierarchy`` -> the annotation key kept whole."""
    parts = path.split(".")
    if parts[:2] == ["metadata", "annotations"] or parts[:2] == ["metadata", "labels"]:
        return parts[:2] + [".".join(parts[2:])]
    return parts


def has_path(obj: dict, path: str) -> bool:
    node = obj
    for part in _parts(path):
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True


def drop_path(obj: dict, path: str) -> None:
    """Remove the field (in place); an emptied parent stays."""
    *parents, last = _parts(path)
    node = obj
    for part in parents:
        node = node.get(part) if isinstance(node, dict) else None
    if isinstance(node, dict):
        node.pop(last, None)


# --- HPAs and their targets ---------------------------------------------------------------------

@dataclass(frozen=True)
class Scaled:
    """An HPA and the object among the same set that it scales."""

    hpa: dict
    target: dict
    field: OwnedField

    @property
    def sets_field(self) -> bool:
        return has_path(self.target, self.field.path)


def ident(obj: dict) -> str:
    """``Kind namespace/name`` for messages."""
    m = meta(obj)
    return f"{obj.get('kind')} {m.get('namespace')}/{m.get('name')}" if m.get("namespace") else \
        f"{obj.get('kind')} {m.get('name')}"


def scaled_targets(objects: Iterable[dict]) -> Iterator[Scaled]:
    """Each HPA whose scaleTargetRef names an object in ``objects`` (same namespace, API group, kind
    and name) of a kind with a scale subresource, with the field it scales."""
    def key(*parts) -> tuple | None:   # manifests may hold anything where a name belongs
        return parts if all(isinstance(p, str) or p is None for p in parts) else None

    objects = [o for o in objects if isinstance(o, dict)]
    index = {k: o for o in objects
             if (k := key(api_group(o), o.get("kind"), meta(o).get("namespace"), meta(o).get("name")))}
    fields = scale_fields()
    for hpa in objects:
        if hpa.get("kind") != "HorizontalPodAutoscaler" or api_group(hpa) != "autoscaling":
            continue
        ref = as_dict(as_dict(hpa.get("spec")).get("scaleTargetRef"))
        group = str(ref.get("apiVersion", "")).rpartition("/")[0]
        wanted = key(group, ref.get("kind"), meta(hpa).get("namespace"), ref.get("name"))
        if wanted is None:
            continue
        field = fields.get(wanted[:2])
        target = index.get(wanted)
        if field is not None and target is not None:
            yield Scaled(hpa, target, field)


# --- each engine's mechanism --------------------------------------------------------------------

def flux_keeps(obj: dict) -> bool:
    """Flux never re-applies the object (``IfNotPresent`` or ``Ignore``), so no field it sets is reset."""
    return as_dict(meta(obj).get("annotations")).get(FLUX_SSA) in FLUX_KEEPS


def argocd_ignores(obj: dict, field: OwnedField, objects: Iterable[dict]) -> bool:
    """An Argo CD Application among ``objects`` ignores the field on this object and respects that
    when syncing (``RespectIgnoreDifferences=true``)."""
    m = meta(obj)
    for app in objects:
        if not isinstance(app, dict) or app.get("kind") != "Application" or api_group(app) != "argoproj.io":
            continue
        spec = as_dict(app.get("spec"))
        if ARGOCD_RESPECT not in as_list(as_dict(spec.get("syncPolicy")).get("syncOptions")):
            continue
        for entry in map(as_dict, as_list(spec.get("ignoreDifferences"))):
            # Argo CD's ignore normalizer: group and kind are globs, an empty name or namespace is any
            if not (_glob(entry.get("kind"), obj.get("kind")) and _glob(entry.get("group") or "", api_group(obj))):
                continue
            if entry.get("name") not in (None, "", m.get("name")) or \
                    entry.get("namespace") not in (None, "", m.get("namespace")):
                continue
            if any(field.pointer == p or field.pointer.startswith(str(p).rstrip("/") + "/")
                   for p in as_list(entry.get("jsonPointers"))):
                return True
            # a jq path expression deletes what it selects: a plain path (.spec.replicas) or a parent
            dotted = "." + field.path
            jq = ["".join(e.split()) for e in as_list(entry.get("jqPathExpressions")) if isinstance(e, str)]
            if any(dotted == e or dotted.startswith(e + ".") for e in jq):
                return True
    return False


def _glob(pattern: object, value: object) -> bool:
    return isinstance(pattern, str) and isinstance(value, str) and fnmatch.fnmatchcase(value, pattern)


def delivered_without_fight(obj: dict, field: OwnedField, objects: Iterable[dict], engine: str | None = None) -> bool:
    """Whether whoever applies ``obj`` leaves ``field`` to its controller: trainstack's own render
    records the field (``OWNED_ANNOTATION`` on an object it manages; the Pulumi program, Argo CD and
    Flux output derive their mechanism from it), or the mechanism of the engine in use is there:
    Flux's ssa annotation keeps the object (``flux``), an Argo CD Application among the objects ignores
    the field and respects that when syncing (``argocd``); either one when the engine is not known."""
    if field.path in owned_paths(obj) and as_dict(meta(obj).get("labels")).get(MANAGED_LABEL) == "trainstack":
        return True
    if engine == "flux":
        return flux_keeps(obj)
    if engine == "argocd":
        return argocd_ignores(obj, field, objects)
    return flux_keeps(obj) or argocd_ignores(obj, field, objects)


# --- rendering without fighting -----------------------------------------------------------------

@dataclass(frozen=True)
class Settled:
    """What ``settle_scaled`` did to one target: dropped the field or kept it (recorded)."""

    scaled: Scaled
    kept: bool


def settle_scaled(objects: list[dict]) -> list[Settled]:
    """For each HPA in ``objects`` and its target among them: drop the scaled field (the HPA's
    minReplicas decides the start: the API server defaults an absent replicas and the HPA raises it
    to minReplicas), or, where the object needs it, keep it and record it in ``OWNED_ANNOTATION``.
    Changes the objects in place."""
    out: list[Settled] = []
    for scaled in scaled_targets(objects):
        if not scaled.sets_field:
            continue
        if not scaled.field.required:
            drop_path(scaled.target, scaled.field.path)
            out.append(Settled(scaled, kept=False))
            continue
        m = scaled.target.setdefault("metadata", {})
        paths = owned_paths(scaled.target)
        if scaled.field.path not in paths:
            m["annotations"] = {**(m.get("annotations") or {}),
                                OWNED_ANNOTATION: ",".join([*paths, scaled.field.path])}
        out.append(Settled(scaled, kept=True))
    return out


def owned_fields_of(obj: dict) -> list[OwnedField]:
    """The kept fields an object records, as table entries (for the engines' output)."""
    paths = owned_paths(obj)
    if not paths:   # nearly every object: no table to look at
        return []
    fields = {f.path: f for f in scale_fields().values() if (f.group, f.kind) == (api_group(obj), obj.get("kind"))}
    return [fields.get(p) or OwnedField(api_group(obj), str(obj.get("kind")), p, "a controller", "")
            for p in paths]


def main(argv: list[str]) -> int:
    """``python -m modules.semantics.owned CRD_DIR``: print scale_subresources.yaml's entries."""
    if len(argv) != 1 or not Path(argv[0]).is_dir():
        print("usage: python -m modules.semantics.owned CRD_DIR", file=sys.stderr)
        return 2
    sys.stdout.write(yamlio.dump(crd_scale_entries(Path(argv[0]))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
