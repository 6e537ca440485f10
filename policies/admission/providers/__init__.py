"""How to fix each coded refusal of upstream's Go-only admission checks (the registry is
``modules/upstream/registry.py``): one module per upstream source, each holding ``FIXES``, a map from
the error's code (``FieldError.origin``) to the fix a finding names."""
from __future__ import annotations

from modules.upstream.field import FieldError

from . import training_operator, volcano

_FIXES: dict[str, str] = {**volcano.FIXES, **training_operator.FIXES}


def fix_for(error: FieldError, **facts: str) -> str | None:
    """The fix for ``error``'s code, its ``{placeholders}`` filled from ``facts``; None when the code
    has none (the finding then says to make upstream's check hold)."""
    fix = _FIXES.get(error.origin)
    return fix.format(**facts) if fix is not None else None
