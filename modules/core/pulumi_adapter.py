"""Register a Bundle with Pulumi: one pulumi_kubernetes resource per object, one Release per chart.

Typed classes are used where pulumi_kubernetes has one (their nested inputs take the manifest's
camelCase dicts as they are); custom resources use ``apiextensions.CustomResource``. Every object
goes through one explicit Provider, so the target cluster is part of the stack's config.
"""
from __future__ import annotations

import functools
import importlib
import inspect
import re
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from .bundle import Bundle, ChartRelease, Overlay, Prerequisite, Resource
from . import yamlio

# API group -> pulumi_kubernetes sub-package holding its typed classes.
_GROUP_PACKAGES = {
    "": "core", "apps": "apps", "batch": "batch", "autoscaling": "autoscaling", "policy": "policy",
    "rbac.authorization.k8s.io": "rbac", "storage.k8s.io": "storage", "scheduling.k8s.io": "scheduling",
    "networking.k8s.io": "networking", "apiextensions.k8s.io": "apiextensions",
    "admissionregistration.k8s.io": "admissionregistration", "coordination.k8s.io": "coordination",
    "node.k8s.io": "node",
}


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


@functools.lru_cache(maxsize=None)
def typed_class(api_version: str, kind: str) -> Any:
    """The typed pulumi_kubernetes class for apiVersion/kind, or None for custom resources."""
    group, _, version = api_version.rpartition("/")
    package = _GROUP_PACKAGES.get(group)
    if package is None:
        return None
    try:
        module = importlib.import_module(f"pulumi_kubernetes.{package}.{version}")
    except ImportError:
        return None
    cls = getattr(module, kind, None)
    return cls if inspect.isclass(cls) and issubclass(cls, pulumi.CustomResource) else None


def register_resource(resource: Resource, opts: pulumi.ResourceOptions) -> pulumi.CustomResource:
    obj = resource.obj
    cls = typed_class(obj["apiVersion"], obj["kind"])
    if cls is not None:
        kwargs = {_snake(k): v for k, v in obj.items() if k not in ("apiVersion", "kind")}
        return cls(resource.key, opts=opts, **kwargs)
    extra = set(obj) - {"apiVersion", "kind", "metadata", "spec"}
    if extra:  # CustomResource would drop them silently
        raise RuntimeError(f"{resource.key}: custom resource with top-level fields {sorted(extra)}")
    return k8s.apiextensions.CustomResource(resource.key, api_version=obj["apiVersion"], kind=obj["kind"],
                                            metadata=obj.get("metadata"), spec=obj.get("spec"), opts=opts)


def register_release(release: ChartRelease, opts: pulumi.ResourceOptions) -> pulumi.CustomResource:
    # helm.v3.Release runs the chart's hooks (Volcano's webhook certificate comes from one).
    repository = None if release.repository.startswith("oci://") else \
        k8s.helm.v3.RepositoryOptsArgs(repo=release.repository)
    return k8s.helm.v3.Release(
        release.key, name=release.name, chart=release.chart_ref, version=release.version,
        repository_opts=repository, namespace=release.namespace, values=release.values,
        create_namespace=False, opts=opts)


def register_overlay(overlay: Overlay, opts: pulumi.ResourceOptions) -> pulumi.Resource:
    # kustomize.v2.Directory reads a local folder; write the overlay's kustomization to one.
    import tempfile
    from pathlib import Path

    folder = Path(tempfile.mkdtemp(prefix=f"trainstack-{overlay.name}-"))
    (folder / "kustomization.yaml").write_text(yamlio.dump(overlay.kustomization))
    return k8s.kustomize.v2.Directory(overlay.key, directory=str(folder), opts=opts)


def register(bundle: Bundle, kube_context: str | None) -> dict[str, pulumi.CustomResource]:
    """Register every item of the bundle in order; returns them by bundle key."""
    provider = k8s.Provider("kubernetes", context=kube_context, enable_server_side_apply=True)
    done: dict[str, pulumi.CustomResource] = {}
    for item in bundle.items:
        needs = bundle.dependencies.get(item.key, item.depends_on)   # explicit and implicit (Namespace, CRD)
        opts = pulumi.ResourceOptions(provider=provider, depends_on=[done[d] for d in needs])
        if isinstance(item, Prerequisite):   # read, never created or deleted by this stack
            done[item.key] = k8s.apiextensions.v1.CustomResourceDefinition.get(
                item.key, item.crd, opts=pulumi.ResourceOptions(provider=provider))
        elif isinstance(item, ChartRelease):
            done[item.key] = register_release(item, opts)
        elif isinstance(item, Overlay):
            done[item.key] = register_overlay(item, opts)
        else:
            if item.retain:
                opts = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(retain_on_delete=True))
            done[item.key] = register_resource(item, opts)
    return done
