"""NAS claims (and optionally their StorageClass). Claims are never deleted by `pulumi destroy`,
and carry the annotations that stop Argo CD and Flux from pruning them."""
from __future__ import annotations

from modules.core.bundle import Resource
from modules.core.context import KEEP_ANNOTATIONS, RenderContext

MODULE = "storage"
SHARED_LABEL = "trainstack.io/shared-data"


def render(ctx: RenderContext) -> list[Resource]:
    cfg = ctx.section(MODULE)
    sc = cfg["storageClass"]
    out: list[Resource] = []
    if sc["create"]:
        obj = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
               "metadata": ctx.metadata(MODULE, sc["name"]), "provisioner": sc["provisioner"],
               "reclaimPolicy": sc["reclaimPolicy"], "volumeBindingMode": sc["volumeBindingMode"],
               "allowVolumeExpansion": sc["allowVolumeExpansion"]}
        if sc["parameters"]:
            obj["parameters"] = dict(sc["parameters"])
        if sc["mountOptions"]:
            obj["mountOptions"] = list(sc["mountOptions"])
        out.append(Resource(module=MODULE, obj=obj))
    seen: dict[tuple[str, str], int] = {}
    for i, claim in enumerate(cfg["claims"]):
        namespace = claim.get("namespace") or ctx.stack.values["trainingNamespaces"][0]
        if (namespace, claim["name"]) in seen:
            raise ctx.error(f"storage.claims[{i}].name", f"claim {claim['name']!r} in namespace "
                            f"{namespace!r} is already defined at storage.claims[{seen[namespace, claim['name']]}]")
        seen[namespace, claim["name"]] = i
        labels = {SHARED_LABEL: "true"} if claim["shared"] else {}
        annotations = KEEP_ANNOTATIONS if claim["retain"] else None
        spec = {"accessModes": [claim["accessMode"]],
                "storageClassName": claim.get("storageClass") or sc["name"],
                "resources": {"requests": {"storage": claim["size"]}}}
        obj = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
               "metadata": ctx.metadata(MODULE, claim["name"], namespace, labels=labels, annotations=annotations),
               "spec": spec}
        depends = (f"StorageClass/{sc['name']}",) if sc["create"] and spec["storageClassName"] == sc["name"] else ()
        out.append(Resource(module=MODULE, obj=obj, depends_on=depends, retain=claim["retain"]))
    return out
