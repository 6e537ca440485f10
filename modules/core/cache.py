"""The per-user cache: what is costly to recompute and safe to reuse across processes.

Every entry holds the key it was made for, and a read that finds another key misses: a key names
all that the entry was made from (the content itself, or the files' names, sizes and modification
times, plus a format version), so a changed input is a new entry and a stale one is never read.
The entry's file name is a checksum of its key (``zlib``'s: the cryptographic hashes load OpenSSL,
some 3 ms of every command, and a name two keys share only costs a miss). The folder is
``$TRAINSTACK_CACHE_DIR``, else ``$XDG_CACHE_HOME/trainstack``, else ``~/.cache/trainstack``. A
missing, read-only or corrupt cache costs time only: reads that fail return None and writes that
fail are dropped.
"""
from __future__ import annotations

import json
import os
import zlib
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
    """A key that is these contents (parts length-prefixed, so ("ab", "c") != ("a", "bc"); bytes
    read as Latin-1, which keeps every byte)."""
    texts = [part.decode("latin-1") if isinstance(part, bytes) else part for part in parts]
    return "".join(f"{len(text)}:{text};" for text in texts)


def files_key(version: str, paths: list[Path]) -> str:
    """A key for files as they are now: each one's resolved name, size and modification time (as
    Python's own bytecode cache keys a source), after a format version."""
    out = [version]
    for path in paths:
        try:
            st = path.stat()
            out.append(f"{path.resolve()}:{st.st_size}:{st.st_mtime_ns}")
        except OSError:   # a broken link: whoever reads the file names it
            out.append(f"{path}:unreadable")
    return ";".join(out)


def entry(kind: str, key: str) -> Path:
    data = key.encode("utf-8", "surrogatepass")
    return cache_root() / kind / f"{zlib.crc32(data):08x}{zlib.adler32(data):08x}{len(data):x}.json"


def load_json(kind: str, key: str) -> Any | None:
    try:
        stored = json.loads(entry(kind, key).read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(stored, dict) or stored.get("key") != key:
        return None
    return stored.get("data")


def store_json(kind: str, key: str, data: Any) -> None:
    """Write atomically (temporary file, then rename), so a reader never sees half an entry."""
    path = entry(kind, key)
    try:
        text = json.dumps({"key": key, "data": data}, separators=(",", ":"))
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
    except (OSError, TypeError, ValueError):   # read-only home, or data JSON cannot hold
        pass
