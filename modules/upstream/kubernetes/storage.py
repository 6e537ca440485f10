"""StorageClasses (``pkg/apis/storage/validation/validation.go``)."""
from __future__ import annotations

from modules.core.vocabulary.names import qualified_name
from modules.upstream.field import FieldError, invalid, not_supported, required
from .values import as_str


RECLAIM_POLICIES = ("Delete", "Recycle", "Retain")
BINDING_MODES = ("Immediate", "WaitForFirstConsumer")


def validate_storage_class(obj: dict) -> list[FieldError]:
    """storage validation.go ``ValidateStorageClass``: a provisioner (a qualified name), a known
    reclaim policy (Recycle only for the old in-tree kinds, not judged here) and binding mode."""
    out: list[FieldError] = []
    provisioner = as_str(obj.get("provisioner")) or ""
    if not provisioner:
        out.append(required("provisioner"))
    else:
        out += [invalid("provisioner", provisioner, m) for m in qualified_name(provisioner.lower())]
    policy = obj.get("reclaimPolicy")
    if policy is not None and policy not in RECLAIM_POLICIES:
        out.append(not_supported("reclaimPolicy", policy, RECLAIM_POLICIES))
    mode = obj.get("volumeBindingMode")
    if mode is not None and mode not in BINDING_MODES:
        out.append(not_supported("volumeBindingMode", mode, BINDING_MODES))
    return out
