"""The per-user cache: what is costly to recompute and safe to reuse across processes.

Every entry is keyed by a hash of the content it was made from (plus a format version), so a
changed input is a new entry and a stale one is never read. The folder is ``$TRAINSTACK_CACHE_DIR``,
else ``$XDG_CACHE_HOME/trainstack``, else ``~/.cache/trainstack``. A missing, read-only or corrupt
cache costs time only: reads that fail return None and writes that fail are dropped.
"""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

ENV_CACHE = "TRAINSTACK_CACHE_DIR"


def cache_root() -> Path:
    configured = os.environ.get(ENV_CACHE)
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME")
    return (Path(base) if base else Path.home() / ".cache") / "trainstack"


def content_key(*parts: bytes | str) -> str:
    """A hex key for these contents (parts are length-prefixed, so ("ab", "c") != ("a", "bc"))."""
    digest = hashlib.sha256()
    for part in parts:
        data = part.encode("utf-8") if isinstance(part, str) else part
        digest.update(len(data).to_bytes(8, "little"))
        digest.update(data)
    return digest.hexdigest()[:40]


def entry(kind: str, key: str) -> Path:
    return cache_root() / kind / f"{key}.json"


def load_json(kind: str, key: str) -> Any | None:
    try:
        return json.loads(entry(kind, key).read_bytes())
    except (OSError, ValueError):
        return None


def store_json(kind: str, key: str, data: Any) -> None:
    """Write atomically (temporary file, then rename), so a reader never sees half an entry."""
    path = entry(kind, key)
    try:
        text = json.dumps(data, separators=(",", ":"))
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
    except (OSError, TypeError, ValueError):   # read-only home, or data JSON cannot hold
        pass
