"""How `make test` shares the suite among pytest-xdist workers (``-n auto --dist loadfile``).

A work unit is a whole test module, as with pytest-xdist's own ``loadfile``, so that a module's
fixtures (the hostile corpus's one runner process, the policy table's pack process and its `check`
of every case) run once, in one worker. Beyond ``loadfile``: modules with slow subprocesses (those
that define or import a ``start_early``, see tests/conftest.py) are handed out first, so that no
worker is left with a slow process at the end while the other idles, and modules sharing one
``start_early`` (the probe's two test modules share one probe run, a session fixture) form one unit,
so that the run happens once, not once per worker.

(pytest-xdist's ``xdist_group`` mark would say the same per test, but its ``loadgroup`` renames the
test ids through an attribute pytest 9 no longer reads, so the scheduler reads the modules itself.)
"""
from __future__ import annotations

import ast
import functools
from pathlib import Path

from xdist.scheduler import LoadScopeScheduling

EARLY = "early:"   # unit names of modules with early processes: EARLY + where their start_early lives


@functools.lru_cache(maxsize=None)
def early_unit(path: Path) -> str | None:
    """Where a test module's ``start_early`` comes from (its own path, or the module it imports it
    from), or None when it has none."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return None
    if "start_early" not in text:
        return None
    for node in ast.parse(text).body:
        if isinstance(node, ast.FunctionDef) and node.name == "start_early":
            return EARLY + str(path)
        if isinstance(node, ast.ImportFrom) and any(alias.name == "start_early" for alias in node.names):
            return EARLY + (node.module or "")
    return None


class ByModule(LoadScopeScheduling):
    """``--dist loadfile``, with modules that share early processes as one unit, handed out first."""

    def _split_scope(self, nodeid: str) -> str:
        module = nodeid.split("::", 1)[0]
        return early_unit(self.config.rootpath / module) or module

    def _assign_work_unit(self, node) -> None:
        unit = next((scope for scope in self.workqueue if scope.startswith(EARLY)), None)
        if unit is not None:
            self.workqueue.move_to_end(unit, last=False)   # next out
        super()._assign_work_unit(node)
