"""Register a Bundle with Pulumi: one pulumi_kubernetes resource per object, one Release per chart.

Typed classes are used where pulumi_kubernetes has one (their nested inputs take the manifest's
camelCase dicts as they are); custom resources are ``CustomObject``s, registered exactly as
``apiextensions.CustomResource`` registers them. Every object goes through one explicit Provider,
so the target cluster is part of the stack's config.

Each module is one ``ComponentResource`` (``trainstack:index:Volcano``, ...) and every object,
release, overlay and prerequisite of the module is its child, so ``pulumi preview`` shows a tree of
modules instead of hundreds of siblings. The children carry an alias to their old place (directly
under the Stack), so stacks created before the components existed keep their resources: Pulumi
moves them under the component instead of replacing them.
"""
from __future__ import annotations

import atexit
import functools
import importlib
import inspect
import re
import shutil
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from .bundle import Bundle, ChartRelease, Overlay, Prerequisite, Resource, owned_paths
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


def load_classes(bundle: Bundle) -> None:
    """Import the typed classes ``register`` will use for ``bundle`` (``typed_class`` remembers
    them), and the provider's and Helm's: what a first program in a process would import while it
    registers (0.4-0.5 s of pulumi_kubernetes at fabric scale) is imported before it runs."""
    for resource in bundle.resources:
        typed_class(resource.obj["apiVersion"], resource.obj["kind"])
    if bundle.releases:
        k8s.helm.v3.Release   # noqa: B018 - a lazily imported package, imported now
    if any(isinstance(item, Prerequisite) for item in bundle.items):
        k8s.apiextensions.v1.CustomResourceDefinition   # noqa: B018 - likewise


class CustomObject(pulumi.CustomResource):
    """A Kubernetes object of a kind pulumi_kubernetes has no typed class for (a custom resource):
    registered as ``k8s.apiextensions.CustomResource`` registers it (type token
    ``kubernetes:<apiVersion>:<kind>``, the object's apiVersion, kind, metadata and spec as its
    inputs, the provider package's version in its options), the same request byte for byte, without
    that class's typed input and output machinery (a tenth of the program's time at fabric scale,
    where HyperNodes are most of the objects). tests/modules/core/test_preview_engine.py compares
    the requests of both classes."""

    def __init__(self, resource_name: str, api_version: str, kind: str, metadata: Any = None, spec: Any = None,
                 opts: pulumi.ResourceOptions | None = None) -> None:
        from pulumi_kubernetes import _utilities

        opts = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(version=_utilities.get_version()))
        super().__init__(f"kubernetes:{api_version}:{kind}", resource_name,
                         {"apiVersion": api_version, "kind": kind, "metadata": metadata, "spec": spec}, opts)


def register_resource(resource: Resource, opts: pulumi.ResourceOptions) -> pulumi.CustomResource:
    obj = resource.obj
    cls = typed_class(obj["apiVersion"], obj["kind"])
    if cls is not None:
        kwargs = {_snake(k): v for k, v in obj.items() if k not in ("apiVersion", "kind")}
        return cls(resource.key, opts=opts, **kwargs)
    extra = set(obj) - {"apiVersion", "kind", "metadata", "spec"}
    if extra:  # CustomResource would drop them silently
        raise RuntimeError(f"{resource.key}: custom resource with top-level fields {sorted(extra)}")
    return CustomObject(resource.key, api_version=obj["apiVersion"], kind=obj["kind"],
                        metadata=obj.get("metadata"), spec=obj.get("spec"), opts=opts)


def register_release(release: ChartRelease, opts: pulumi.ResourceOptions) -> pulumi.CustomResource:
    # helm.v3.Release runs the chart's hooks (Volcano's webhook certificate comes from one).
    repository = None if release.repository.startswith("oci://") else \
        k8s.helm.v3.RepositoryOptsArgs(repo=release.repository)
    return k8s.helm.v3.Release(
        release.key, name=release.name, chart=release.chart_ref, version=release.version,
        repository_opts=repository, namespace=release.namespace, values=release.values,
        create_namespace=False, opts=opts)


_OVERLAY_FOLDERS: list[str] = []   # removed when the process ends (the program's, or preview's)


@atexit.register
def remove_overlay_folders() -> None:
    while _OVERLAY_FOLDERS:
        shutil.rmtree(_OVERLAY_FOLDERS.pop(), ignore_errors=True)


def register_overlay(overlay: Overlay, opts: pulumi.ResourceOptions) -> pulumi.Resource:
    # kustomize.v2.Directory reads a local folder while the program runs (the provider reads it
    # when the resource registers); write the overlay's kustomization to one, removed at exit.
    import tempfile
    from pathlib import Path

    folder = Path(tempfile.mkdtemp(prefix=f"trainstack-{overlay.name}-"))
    _OVERLAY_FOLDERS.append(str(folder))
    (folder / "kustomization.yaml").write_text(yamlio.dump(overlay.kustomization))
    return k8s.kustomize.v2.Directory(overlay.key, directory=str(folder), opts=opts)


def component_type(module: str) -> str:
    """``volcano`` -> ``trainstack:index:Volcano``."""
    return f"trainstack:index:{module[:1].upper()}{module[1:]}"


class ModuleComponent(pulumi.ComponentResource):
    """One trainstack module (capability): the parent of everything it renders."""

    def __init__(self, module: str) -> None:
        super().__init__(component_type(module), module, None, None)
        self.module = module


# Where children lived before the components existed: directly under the Stack.
_OLD_PLACE = [pulumi.Alias(parent=pulumi.ROOT_STACK_RESOURCE)]


def module_outputs(bundle: Bundle) -> dict[str, dict]:
    """Per module: objects by kind, namespaces, chart versions (and the HyperNode count of the
    fabric). The stack exports them and each component registers them as its outputs."""
    out: dict[str, dict] = {}
    for item in bundle.items:
        entry = out.setdefault(item.module, {"objects": 0, "kinds": {}, "namespaces": [], "charts": {}})
        if isinstance(item, Resource):
            entry["objects"] += 1
            entry["kinds"][item.kind] = entry["kinds"].get(item.kind, 0) + 1
        elif isinstance(item, ChartRelease):
            entry["charts"][item.name] = f"{item.chart}@{item.version}"
        namespace = item.namespace if not isinstance(item, Resource) or item.kind != "Namespace" else item.name
        if namespace and namespace not in entry["namespaces"]:
            entry["namespaces"].append(namespace)
    for entry in out.values():
        entry["namespaces"].sort()
        entry["kinds"] = dict(sorted(entry["kinds"].items()))
    if "fabric" in out:
        out["fabric"]["hyperNodes"] = out["fabric"]["kinds"].get("HyperNode", 0)
    return out


def register_secret(secret: dict, opts: pulumi.ResourceOptions) -> pulumi.CustomResource:
    """A Secret from ``trainstack:secrets``: values the Pulumi CLI decrypted, kept secret in state.
    Under trainstack's own mocks (no CLI, nothing decrypted) the values are empty placeholders."""
    from .errors import SecretText

    data = {k: v.value if isinstance(v, SecretText) else "" for k, v in secret["data"].items()}
    metadata = {"name": secret["name"], "namespace": secret["namespace"],
                "labels": {"app.kubernetes.io/managed-by": "trainstack", "app.kubernetes.io/part-of": "trainstack",
                           "app.kubernetes.io/component": "core"}}
    return k8s.core.v1.Secret(f"Secret/{secret['namespace']}/{secret['name']}", metadata=metadata,
                              type=secret["type"], string_data=pulumi.Output.secret(data),
                              opts=pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(
                                  additional_secret_outputs=["data", "stringData"])))


def register(bundle: Bundle, kube_context: str | None,
             secrets: list[dict] = ()) -> dict[str, pulumi.Resource]:
    """Register every item of the bundle in order, each under its module's component; returns
    them by bundle key, and the components as ``component/<module>``."""
    provider = k8s.Provider("kubernetes", context=kube_context, enable_server_side_apply=True)
    done: dict[str, pulumi.Resource] = {}
    components: dict[str, ModuleComponent] = {}

    def component(module: str) -> ModuleComponent:
        if module not in components:
            components[module] = done[f"component/{module}"] = ModuleComponent(module)
        return components[module]

    for item in bundle.items:
        needs = bundle.dependencies.get(item.key, item.depends_on)   # explicit and implicit (Namespace, CRD, Queue)
        place = pulumi.ResourceOptions(parent=component(item.module), aliases=_OLD_PLACE)
        opts = pulumi.ResourceOptions.merge(place, pulumi.ResourceOptions(
            provider=provider, depends_on=[done[d] for d in needs]))
        if isinstance(item, Prerequisite):   # read, never created or deleted by this stack
            done[item.key] = k8s.apiextensions.v1.CustomResourceDefinition.get(
                item.key, item.crd, opts=pulumi.ResourceOptions.merge(place, pulumi.ResourceOptions(provider=provider)))
        elif isinstance(item, ChartRelease):
            done[item.key] = register_release(item, opts)
        elif isinstance(item, Overlay):
            done[item.key] = register_overlay(item, opts)
        else:
            if item.retain:
                opts = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(retain_on_delete=True))
            owned = owned_paths(item.obj)   # fields a controller owns after apply (an HPA's scale path)
            if owned:
                opts = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(ignore_changes=owned))
            done[item.key] = register_resource(item, opts)
    for secret in secrets:
        ns = f"Namespace/{secret['namespace']}"
        opts = pulumi.ResourceOptions(parent=component("core"), provider=provider,
                                      depends_on=[done[ns]] if ns in done else [])
        done[f"Secret/{secret['namespace']}/{secret['name']}"] = register_secret(secret, opts)
    outputs = module_outputs(bundle)
    for module, comp in components.items():
        comp.register_outputs(outputs.get(module, {}))
    return done
