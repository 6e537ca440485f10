"""``render(stack) -> Bundle``: the pure heart of trainstack.

It reads files and returns data; it never talks to a cluster, the Pulumi engine or the network.
Core imports no capability: it finds them by name in ``registry.MODULES``. A capability whose
``render`` module has ``prepare(ctx)`` runs it before any capability renders (the fabric module
builds the shared fabric model there), and ``finish(ctx, bundle)`` once the Bundle is built (Volcano
puts Queue users in later sync waves there), so dependencies run one way (tests/modules/core/test_imports.py).
"""
from __future__ import annotations

import importlib

from .bundle import Bundle, ChartRelease, Item, Overlay, Resource, namespace_key
from .config import StackConfig
from .errors import InputError
from .context import KEEP_ANNOTATIONS, RenderContext
from .registry import MODULES

ORDER = ("core",) + MODULES


def render(stack: StackConfig) -> Bundle:
    ctx = RenderContext(stack)
    modules = [importlib.import_module(f"modules.{name}.render") for name in MODULES]
    for module in modules:
        if hasattr(module, "prepare"):
            module.prepare(ctx)
    items: list[Item] = []
    for module in modules:
        items.extend(module.render(ctx))
    items.extend(_namespaces(ctx, items))
    for secret in stack.secrets:   # created by the Pulumi program only: never decrypted, never written here
        ctx.warn(f"{stack.file}: trainstack:secrets: Secret {secret['namespace']}/{secret['name']} holds secure "
                 "values: `pulumi up` creates it; deploy/ does not contain it, so with GitOps provide it in "
                 "the cluster yourself (Sealed Secrets, External Secrets, SOPS)")
    bundle = Bundle.build(stack.name, items, ORDER, stack.file, ctx.warnings)
    for module in modules:   # e.g. Volcano puts Queue users in later sync waves, from every dependency
        if hasattr(module, "finish"):
            module.finish(ctx, bundle)
    bundle.fabric = ctx.fabric
    bundle.gitops = stack.section("gitops")
    _refuse_credentials(bundle, stack.file)
    return bundle


def _refuse_credentials(bundle: Bundle, file: str) -> None:
    """No credential is ever rendered (deploy/ is committed; the program registers the same
    objects): a value that looks like one is refused before anything is written."""
    from .secrets import find_credentials

    for item in bundle.items:
        if isinstance(item, Resource):
            found, name = next(find_credentials(item.obj), None), item.key
        elif isinstance(item, ChartRelease):
            found, name = next(find_credentials(item.values, "values"), None), f"chart release {item.name}"
        else:
            continue
        if found is not None:
            path, what = found
            raise InputError(file, f"{name}: {path}", f"looks like a credential ({what}); trainstack never writes "
                              "one: keep it in a Kubernetes Secret and reference the Secret by name",
                              rule="no-secrets-in-configmaps")


def _namespaces(ctx: RenderContext, items: list[Item]) -> list[Resource]:
    """A Namespace for every namespace the bundle uses, unless a module rendered it already.

    They are retained: deleting a namespace deletes everything in it, retained claims included, and
    some (monitoring, inference) are shared with other teams. `pulumi destroy` and GitOps pruning
    leave them; removing one is a deliberate, manual step.
    """
    present = {i.key for i in items}
    used = sorted({i.namespace for i in items if i.namespace and not isinstance(i, Overlay)}  # overlays bring theirs
                  | {s["namespace"] for s in ctx.stack.secrets})   # a provided Secret needs its namespace
    return [Resource(module="core", obj={"apiVersion": "v1", "kind": "Namespace",
                                         "metadata": ctx.metadata("core", ns, annotations=KEEP_ANNOTATIONS)},
                     retain=True)
            for ns in used if namespace_key(ns) not in present]


__all__ = ["render", "Bundle", "Resource", "ChartRelease", "ORDER"]
