"""The `cel` package's compiled extension, without its command-line front end.

``import cel`` also imports ``cel.cli`` (typer, rich, prompt_toolkit): about a second on every
`trainstack check`. The extension module alone loads in a few milliseconds.
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path


def _load():
    if "cel" in sys.modules and hasattr(sys.modules["cel"], "compile"):
        return sys.modules["cel"]
    try:
        spec = importlib.util.find_spec("cel")
        folder = Path(next(iter(spec.submodule_search_locations)))
        binary = next(p for p in sorted(folder.iterdir()) if p.name.startswith("cel.") and p.suffix in (".so", ".pyd"))
        ext = importlib.util.spec_from_file_location("cel.cel", binary)
        module = importlib.util.module_from_spec(ext)
        ext.loader.exec_module(module)
        return module
    except (ImportError, StopIteration, AttributeError, TypeError, OSError):
        import cel
        return cel


cel = _load()
