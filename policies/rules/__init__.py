"""Every rule of the pack, in the order reports list them."""
from __future__ import annotations

from ..framework import Rule
from . import nccl, storage

RULES: tuple[Rule, ...] = (
    *storage.RULES,
    *nccl.RULES,
)
