"""What becomes of a custom resource's unknown fields, by the engine that sends it.

The API server decides by the request (apiextensions-apiserver v0.35.0
``customresource_handler.go`` ``schemaCoercingDecoder``; apiserver ``handlers/rest.go``
``fieldValidation``): with ``fieldValidation=Strict`` a create is refused with
``strict decoding error: unknown field "<path>"``; with ``Warn`` (the server's default when a
client sends none) the fields are pruned and a warning ``unknown field "<path>"`` is returned;
``Ignore`` prunes silently. A server-side apply (PATCH ``application/apply-patch+yaml``) first
converts the patch into a typed object from the schema (``managedfields`` type converter; kube-openapi
``pkg/schemaconv/openapi.go`` ``parseObject``): an object schema that declares ``properties``
admits no other field, so the apply is refused with ``.spec.bogusTop: field not declared in schema``
whatever ``fieldValidation`` says; an object schema without properties is free-form there, and its
unknown fields are pruned afterwards as above.

What each engine sends (read from its source; README: versions and files):

- ``kubectl`` apply (kubernetes/kubectl v0.35.0): ``--validate`` defaults to ``strict``, sent as
  ``fieldValidation=Strict`` on the create (``pkg/cmd/util/helpers.go`` ``AddValidateFlags``,
  ``GetValidationDirective``; ``pkg/cmd/apply/apply.go`` ``WithFieldValidation``).
- Argo CD: its kubectl apply leaves ``ValidationDirective`` empty (only the client-side validator
  gets Strict, and that one stands aside when the server supports ``fieldValidation``), so the server
  applies Warn; trainstack renders every Application with ``ServerSideApply=true``, so the sync is a
  server-side apply (``pkg/utils/kube/resource_ops.go`` ``newApplyOptions``).
- Flux kustomize-controller: server-side apply (a dry run, then the apply) with a field owner and
  ``ForceOwnership``, no ``fieldValidation`` (fluxcd/pkg ``ssa`` ``dryRunApply``/``apply``).
- pulumi-kubernetes (9497796): with server-side apply on (the default), a create is still a POST with
  only a field manager (no ``fieldValidation``: Warn) unless ``upsertExistingObjects`` is set; updates
  are server-side applies (``provider/pkg/await/await.go`` ``Creation``/``ssaUpdate``).
"""
from __future__ import annotations

from dataclasses import dataclass

REFUSED, PRUNED = "refused", "pruned"


@dataclass(frozen=True)
class Engine:
    """One apply engine: what its create request carries and what the API server does with an unknown field."""

    key: str
    name: str
    sends: str            # what the create request carries
    server_side: bool     # a server-side apply (typed conversion first)
    strict: bool          # fieldValidation=Strict


ENGINES = {
    "kubectl": Engine("kubectl", "kubectl apply (kubectl v1.35, `--validate=strict` by default)",
                      "fieldValidation=Strict", server_side=False, strict=True),
    "argocd": Engine("argocd", "Argo CD (the Applications trainstack renders sync with ServerSideApply=true)",
                     "a server-side apply without fieldValidation", server_side=True, strict=False),
    "flux": Engine("flux", "Flux kustomize-controller (server-side apply)",
                   "a server-side apply without fieldValidation", server_side=True, strict=False),
    "pulumi": Engine("pulumi", "pulumi-kubernetes (a create is a POST without fieldValidation: the server's Warn)",
                     "a create without fieldValidation", server_side=False, strict=False),
}


def engine_for(gitops_engine: str | None, in_stack: bool) -> Engine:
    """The engine that creates the objects: the stack's GitOps engine (``none``: Pulumi); outside a
    stack (``check --manifests``), kubectl apply."""
    if not in_stack:
        return ENGINES["kubectl"]
    return ENGINES.get(gitops_engine or "none", ENGINES["pulumi"])


def outcome(engine: Engine, path: str, in_struct: bool, namespace: str, name: str, gvk: str,
            apply_path: str = "") -> tuple[str, str]:
    """(REFUSED or PRUNED, the API server's words) for one unknown field (``apply_path``: the path as
    a server-side apply names it; ``.<path>`` when not given)."""
    if engine.server_side and in_struct:
        # managedfields' objectGVKNN: "<namespace>/<name>; <group/version>, Kind=<kind>" (an empty
        # namespace for a cluster-scoped object)
        return REFUSED, (f"failed to create typed patch object ({namespace}/{name}; {gvk}): "
                         f"{apply_path or '.' + path}: field not declared in schema")
    if engine.strict:
        return REFUSED, f'strict decoding error: unknown field "{path}"'
    return PRUNED, f'unknown field "{path}"'
