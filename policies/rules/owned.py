"""No tug-of-war with the cluster: a manifest must not set a field that a controller owns after apply."""
from __future__ import annotations

from typing import Iterator

from modules.semantics.owned import delivered_without_fight, ident, scaled_targets

from ..framework import ADVISORY, CheckContext, Finding, Rule, as_dict, where

RULE = "controller-owned-fields"


def _engine(ctx: CheckContext) -> str | None:
    """The stack's GitOps engine (``none``: `pulumi up`); None without a stack."""
    stack = ctx.stack
    if stack is None or not isinstance(getattr(stack, "values", None), dict):
        return None
    return as_dict(stack.values.get("gitops")).get("engine", "none")


def _fix(path: str, required: bool, kind: str) -> str:
    if not required:
        return (f"Remove {path} from the {kind} manifest: the API server defaults it and the HPA raises it to "
                "minReplicas at once (with server-side apply an absent field keeps the HPA's value).")
    return (f"The {kind}'s scale subresource needs {path}, so keep it and leave it to the HPA: Argo CD "
            f"spec.ignoreDifferences with jsonPointers [/{path.replace('.', '/')}] plus the sync option "
            "RespectIgnoreDifferences=true, Flux the annotation kustomize.toolkit.fluxcd.io/ssa: IfNotPresent, "
            f"Pulumi ignoreChanges [{path}] (trainstack renders these itself when the HPA is in the stack).")


def _controller_owned_fields(objects: list[dict], ctx: CheckContext) -> Iterator[Finding]:
    every = list(ctx.manifests or objects)
    judged = {id(o) for o in objects}
    engine = _engine(ctx)
    for scaled in scaled_targets(every):
        if id(scaled.hpa) not in judged and id(scaled.target) not in judged:
            continue
        if not scaled.sets_field or delivered_without_fight(scaled.target, scaled.field, every, engine):
            continue
        field, target, hpa = scaled.field, scaled.target, scaled.hpa
        on_target = id(target) in judged
        obj, path = (target, field.path) if on_target else (hpa, "spec.scaleTargetRef")
        applier = {"flux": "Flux", "argocd": "Argo CD", "none": "`pulumi up`"}.get(engine or "", "the applier")
        yield Finding(path, f"{where(obj, path)}: {ident(target)} sets {field.path}, which "
                      f"{ident(hpa)} scales ({field.writer} writes it after apply); {applier} "
                      "re-applies the manifest's value over the HPA's on every sync, scaling the target back. "
                      + _fix(field.path, field.required, str(target.get("kind"))), obj=obj)


RULES = (
    Rule(
        id=RULE,
        description="A manifest does not set a field that a controller owns after apply: an HPA in the same set "
                    "of objects scales its target's replicas (spec.replicas, a PyTorchJob's Worker replicas), "
                    "unless the engine's ignore mechanism leaves the field to the HPA.",
        why="Whoever applies a manifest owns the fields it sets and writes them back: Flux re-applies with "
            "server-side apply every interval, Argo CD with self-heal resets drift, `pulumi up` force-applies. "
            "Each reset of an HPA's replica count is a scale-down; for an elastic job it tears down the added "
            "workers and restarts the rendezvous.",
        fix="Leave spec.replicas out of an HPA target's manifest; where the kind needs the field (a CRD's scale "
            "subresource errors without it) keep it with the engine's mechanism: Argo CD ignoreDifferences plus "
            "RespectIgnoreDifferences=true, Flux kustomize.toolkit.fluxcd.io/ssa: IfNotPresent, Pulumi "
            "ignoreChanges.",
        severity="medium", enforcement=ADVISORY, check_stack=_controller_owned_fields),
)
