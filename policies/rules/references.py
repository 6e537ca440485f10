"""References between objects that must resolve: pods load only ConfigMaps of their own namespace
(a stack-managed ConfigMap must exist there), and a TrainJob checked with a stack names a
ClusterTrainingRuntime that exists."""
from __future__ import annotations

from typing import Iterator

from ..framework import MANDATORY, CheckContext, Finding, Rule, as_dict, as_list, containers, meta, pod_templates, where
from modules.semantics.workloads import find_runtime
from modules.core.vocabulary.scope import is_cluster_scoped


def _configmaps(manifests) -> dict[str, set[str]]:
    """ConfigMap name -> the namespaces the checked objects put it in."""
    out: dict[str, set[str]] = {}
    for obj in manifests:
        if obj.get("kind") == "ConfigMap" and meta(obj).get("namespace"):
            out.setdefault(str(meta(obj).get("name")), set()).add(str(meta(obj)["namespace"]))
    return out


def _references(template: dict, path: str) -> Iterator[tuple[str, str]]:
    """``(field path, ConfigMap name)`` for every ConfigMap a pod template needs (optional ones skipped)."""
    for cpath, container in containers(template, path):
        for i, source in enumerate(as_list(container.get("envFrom"))):
            ref = as_dict(as_dict(source).get("configMapRef"))
            if ref.get("name") and not ref.get("optional"):
                yield f"{cpath}.envFrom[{i}].configMapRef.name", str(ref["name"])
        for i, var in enumerate(as_list(container.get("env"))):
            ref = as_dict(as_dict(as_dict(var).get("valueFrom")).get("configMapKeyRef"))
            if ref.get("name") and not ref.get("optional"):
                yield f"{cpath}.env[{i}].valueFrom.configMapKeyRef.name", str(ref["name"])
    base = f"{path}.spec" if path else "spec"
    for i, volume in enumerate(as_list(as_dict(template.get("spec")).get("volumes"))):
        ref = as_dict(as_dict(volume).get("configMap"))
        if ref.get("name") and not ref.get("optional"):
            yield f"{base}.volumes[{i}].configMap.name", str(ref["name"])


def _configmap_refs_exist(obj: dict, ctx: CheckContext) -> Iterator[Finding]:
    namespace = meta(obj).get("namespace")
    if not isinstance(namespace, str) or not namespace or is_cluster_scoped(obj):
        # no namespace known (a ClusterTrainingRuntime's pods run in each TrainJob's namespace): the
        # pods' namespace is decided at apply time
        return
    templates = list(pod_templates(obj))
    via = ""
    if obj.get("kind") == "TrainJob":   # its pods come from the runtime, in the TrainJob's namespace
        runtime = find_runtime(obj, ctx.manifests)
        if runtime is None:
            return
        templates = list(pod_templates(runtime))
        via = f" (from {runtime.get('kind')} {meta(runtime).get('name')!r})"
    if not templates:
        return
    known = ctx.remember("configmaps", lambda: _configmaps(ctx.manifests))
    for template_path, template in templates:
        for path, name in _references(template, template_path):
            homes = known.get(name)
            if homes and namespace not in homes:   # one the stack renders, but not where these pods run
                shown = path if not via else "spec.runtimeRef"
                yield Finding(shown, f"{where(obj, shown)}: its pods{via} load ConfigMap {name!r} at {path}, which "
                              f"exists only in namespace(s) {', '.join(sorted(homes))}, not in {namespace!r}; pods "
                              "can only read ConfigMaps of their own namespace, so they fail with "
                              "CreateContainerConfigError. Run it in one of those namespaces, or add "
                              f"{namespace!r} to trainstack:trainingNamespaces.")


RULES = (
    Rule(
        id="configmap-refs-exist",
        description="Pods that load a ConfigMap the stack renders run in a namespace where it exists.",
        why="ConfigMaps are namespaced and envFrom/configMapKeyRef/volumes resolve only in the pod's namespace: "
            "a TrainJob outside the training namespaces gets no NCCL ConfigMap, and its pods never start "
            "(CreateContainerConfigError). The runtimes are cluster-scoped, so nothing upstream catches this "
            "before the pods are created.",
        fix="Run the job in a training namespace, or add its namespace to trainstack:trainingNamespaces.",
        severity="high", enforcement=MANDATORY, check=_configmap_refs_exist),
)
