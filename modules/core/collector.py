"""The cyclic garbage collector around big acyclic data: start-up's imports, a render, its files, a
fabric. Every collection would walk all the objects built so far, again and again (a fifth of a
65,536-node render went there), and none of them is garbage yet; reference counting frees them as
before. Imports nothing of trainstack's: the CLI pauses the collector before its own imports."""
from __future__ import annotations

import contextlib
import gc
from typing import Iterator


def settle() -> None:
    """Hand every object to the collector's oldest generation (``freeze`` then ``unfreeze``: two
    list splices), or the next young collection walks all of it at once. Not while a caller holds
    objects frozen (a process about to fork): that would unfreeze them."""
    if not gc.get_freeze_count():
        gc.freeze()
        gc.unfreeze()


@contextlib.contextmanager
def paused(settled: bool = True) -> Iterator[None]:
    """The collector off while the block builds; afterwards on again as it was, what was built
    ``settle``d first (``settled=False``: a caller's objects left where they are)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            if settled:
                settle()
            gc.enable()
