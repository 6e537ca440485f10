"""Shared data must survive: ReadWriteMany and retained claims."""
from __future__ import annotations

from typing import Iterator

from modules.storage.render import KEEP_ANNOTATIONS, SHARED_LABEL

from ..framework import MANDATORY, CheckContext, Finding, Rule, where


def _shared_claims_rwx_retained(obj: dict, ctx: CheckContext) -> Iterator[Finding]:
    meta = obj.get("metadata") or {}
    labels = meta.get("labels") or {}
    if str(labels.get(SHARED_LABEL, "")).lower() != "true":
        return
    modes = (obj.get("spec") or {}).get("accessModes") or []
    if "ReadWriteMany" not in modes:
        yield Finding("spec.accessModes",
                      f"{where(obj, 'spec.accessModes')}: shared-data claim has access modes {modes}; pods of one job "
                      "run on many nodes and a ReadWriteOnce volume attaches to one node only, so the others "
                      "stay Pending. Use accessModes [ReadWriteMany] on a NAS StorageClass.")
    annotations = meta.get("annotations") or {}
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
        description="Claims labelled trainstack.io/shared-data=true are ReadWriteMany and carry the keep annotations.",
        why="A ReadWriteOnce volume attaches to one node, so a multi-node job's other pods stay Pending; an unretained "
            "claim is deleted with the stack or by a GitOps prune, and with a Delete reclaim policy the data goes too.",
        fix="Set accessModes [ReadWriteMany] on a NAS StorageClass and keep storage.claims[].retain true.",
        severity="high", enforcement=MANDATORY, check=_shared_claims_rwx_retained,
        kinds=frozenset({"PersistentVolumeClaim"})),
)
