"""Shared data must survive: ReadWriteMany and retained claims."""
from __future__ import annotations

from typing import Iterator

from modules.core.context import KEEP_ANNOTATIONS
from modules.storage.render import SHARED_LABEL

from ..framework import MANDATORY, CheckContext, Finding, Rule, as_dict, as_list, labels, meta, where


def _labelled_shared(obj: dict) -> bool:
    return str(labels(obj).get(SHARED_LABEL, "")).lower() == "true"


def _stack_shared_names(ctx: CheckContext) -> set[str]:
    """Claims the stack declares shared (storage.claims[].shared): a user's claim of the same name
    replaces one of them, label or not."""
    values = getattr(ctx.stack, "values", None)
    claims = as_list(as_dict(as_dict(values).get("storage")).get("claims")) if isinstance(values, dict) else []
    return {c.get("name") for c in map(as_dict, claims) if c.get("shared", True) and c.get("name")}


def _is_shared(obj: dict, ctx: CheckContext) -> bool:
    if _labelled_shared(obj):
        return True
    key = (meta(obj).get("name"), meta(obj).get("namespace"))
    if any(_labelled_shared(o) and (meta(o).get("name"), meta(o).get("namespace")) == key and o is not obj
           for o in ctx.manifests if o.get("kind") == "PersistentVolumeClaim"):
        return True
    name = meta(obj).get("name")
    return isinstance(name, str) and name in _stack_shared_names(ctx)


def _shared_claims_rwx_retained(obj: dict, ctx: CheckContext) -> Iterator[Finding]:
    if not _is_shared(obj, ctx):
        return
    meta_ = as_dict(obj.get("metadata"))
    modes = as_list(as_dict(obj.get("spec")).get("accessModes"))
    if "ReadWriteMany" not in modes:
        yield Finding("spec.accessModes",
                      f"{where(obj, 'spec.accessModes')}: shared-data claim has access modes {modes}; pods of one job "
                      "run on many nodes and a ReadWriteOnce volume attaches to one node only, so the others "
                      "stay Pending. Use accessModes [ReadWriteMany] on a NAS StorageClass.")
    annotations = as_dict(meta_.get("annotations"))
    missing = [k for k, v in KEEP_ANNOTATIONS.items() if annotations.get(k) != v]
    if missing:
        yield Finding("metadata.annotations",
                      f"{where(obj, 'metadata.annotations')}: shared-data claim is not retained; deleting the stack "
                      "or a GitOps prune would delete the claim and, with a Delete reclaim policy, the data. Set "
                      + ", ".join(f"{k}: {KEEP_ANNOTATIONS[k]}" for k in missing)
                      + " (trainstack does this with storage.claims[].retain: true).")


RULES = (
    Rule(
        id="shared-claims-rwx-retained",
        description="Shared-data claims (labelled trainstack.io/shared-data=true, or named like a claim the stack "
                    "declares shared) are ReadWriteMany and carry the keep annotations.",
        why="A ReadWriteOnce volume attaches to one node, so a multi-node job's other pods stay Pending; an unretained "
            "claim is deleted with the stack or by a GitOps prune, and with a Delete reclaim policy the data goes too.",
        fix="Set accessModes [ReadWriteMany] on a NAS StorageClass and keep storage.claims[].retain true.",
        severity="high", enforcement=MANDATORY, check=_shared_claims_rwx_retained,
        kinds=frozenset({"PersistentVolumeClaim"})),
)
