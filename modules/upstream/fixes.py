"""How to fix each coded refusal of the ported checks: one map per upstream source
(``volcano/fixes.py``, ``training_operator/fixes.py``), from the error's code (``FieldError.origin``)
to the fix, read by every caller that reports a refusal (the rules, ``simulate``)."""
from __future__ import annotations

from modules.semantics.training_kinds import TABLE as TRAINING_KINDS
from modules.upstream.field import FieldError
from modules.upstream.training_operator import fixes as training_operator
from modules.upstream.volcano import fixes as volcano

_FIXES: dict[str, str] = {**volcano.FIXES, **training_operator.FIXES}


def fix_for(error: FieldError, obj: dict | None = None) -> str | None:
    """The fix for ``error``'s code, its ``{container}`` (the training container a Training Operator
    kind must hold) taken from ``obj``'s kind; None when the code has none (the caller then says to
    make upstream's check hold)."""
    fix = _FIXES.get(error.origin)
    if fix is None:
        return None
    kind = TRAINING_KINDS.get(str((obj or {}).get("kind")))
    return fix.format(container=kind.container if kind is not None else "the training container")
