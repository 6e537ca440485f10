"""apiextensions-apiserver's checks of a custom resource on create (Kubernetes v1.35), in the port
layer: decoding (unknown fields pruned, schema defaults, non-nullable nulls dropped), the mutating
webhooks, then the structural schema (kube-openapi's validator on ``jsonschema``:
``openapi.py``), ``x-kubernetes-embedded-resource`` objects (``embedded.py``) and
``x-kubernetes-list-type`` uniqueness (``listtype.py``). README.md holds the facts relied on.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from modules.upstream.field import ErrorType, FieldError

from . import defaulting, embedded, listtype, openapi, pruning
from .openapi import is_type_error
from .structural import LimitError, as_decoded, check_object, prepare

__all__ = ["Admission", "LimitError", "Unknown", "admit", "blocking", "is_type_error", "prepare", "schema_errors",
           "validate_schema"]


@dataclass(frozen=True)
class Unknown:
    """A field the schema does not declare."""

    path: str          # as the pruning reports it (``spec.tasks[0].bogus``)
    in_struct: bool    # its object's schema declares properties (a server-side apply refuses it)
    apply_path: str    # as a server-side apply names it (``.spec.tasks[0].bogus``, ``[name="a"]`` items)


@dataclass
class Admission:
    """What the API server makes of one custom resource on create."""

    errors: list[FieldError] = field(default_factory=list)   # validation refusals (after mutation)
    unknown: list[Unknown] = field(default_factory=list)
    stored: Any = None                                        # the object as validated


def schema_errors(schema: dict | None, obj: Any) -> list[FieldError]:
    """``customResourceStrategy.Validate``'s schema part on a decoded object: the OpenAPI schema
    (``ValidateCustomResource``), embedded resources, then list-type uniqueness."""
    if not schema:
        return []
    errors = openapi.validate(schema, obj)
    errors += embedded.validate(schema, obj)
    errors += listtype.validate(schema, obj)
    return errors


def validate_schema(schema: dict, obj: Any) -> list[FieldError]:
    """kube-openapi's validation alone (``ValidateCustomResource`` with a nil path), as
    apiextensions' own tests call it."""
    return openapi.validate(schema, obj)


def admit(obj: dict, schema: dict | None, mutate: Callable[[dict], dict] | None = None) -> Admission:
    """Decode ``obj`` as the API server does (bounded: :class:`LimitError`), mutate it, validate it."""
    check_object(obj)
    decoded = as_decoded(obj)
    unknown = [Unknown(text, pruning.declared_parent(schema, parts), pruning.apply_path(decoded, schema, parts))
               for text, parts in pruning.unknown_paths(decoded, schema)]
    pruning.prune(decoded, schema)
    defaulting.apply_defaults(decoded, schema)
    defaulting.prune_nulls(decoded, schema)
    mutated = mutate(decoded) if mutate is not None else decoded
    if mutated != decoded:
        # The mutating webhooks decode the object into their Go types: a value of the wrong type is
        # never defaulted by them (trainstack's ports would default it as if absent), and the
        # refusal the API server gives is the schema's type error.
        before = schema_errors(schema, decoded)
        if any(is_type_error(e) for e in before):
            return Admission(errors=before, unknown=unknown, stored=decoded)
    return Admission(errors=schema_errors(schema, mutated), unknown=unknown, stored=mutated)


def blocking(errors: list[FieldError]) -> bool:
    """``hasBlockingErr``: errors after which the API server skips the CRD's CEL rules (enum,
    required, too long, too many, a type error)."""
    kinds = {ErrorType.NOT_SUPPORTED, ErrorType.REQUIRED, ErrorType.TOO_LONG, ErrorType.TOO_MANY}
    return any(e.type in kinds or is_type_error(e) for e in errors)
