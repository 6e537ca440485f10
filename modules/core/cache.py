"""The per-user cache: what is costly to recompute and safe to reuse across processes.

Every entry holds the key it was made for, and a read that finds another key misses: a key names
all that the entry was made from (the content itself, or the files' names, sizes and modification
times, plus a format version), so a changed input is a new entry and a stale one is never read.
The entry's file name is a checksum of its key (``zlib``'s: the cryptographic hashes load OpenSSL,
some 3 ms of every command, and a name two keys share only costs a miss). The folder is
``$TRAINSTACK_CACHE_DIR``, else ``$XDG_CACHE_HOME/trainstack``, else ``~/.cache/trainstack``.

A missing, read-only, corrupt or hostile cache costs time only (a CI cache shared between jobs is
the realistic attacker): an entry is read by ``files.read_regular`` (without following a link or
blocking, only a regular file of at most MAX_ENTRY_BYTES), and used only when it holds its own key,
its data carries this user's keyed checksum (BLAKE2b keyed with a random secret kept outside the
cache, in ``$XDG_CONFIG_HOME/trainstack/cache-key``, so an entry written by anyone else, a poisoned
one included, is foreign) and passes the reader's check (``valid``). A bad entry (a FIFO, a link to
/dev/zero, a wrong shape) is discarded with one note on standard error; a foreign one (made for
another key, by another user or job, or by an older trainstack) is a miss, replaced when stored.
Writes that fail are dropped.

An entry is two lines: ``{"key": ..., "mac": ...}`` and the data's JSON, the checksum taken over
the key and the data's bytes as stored.
"""
from __future__ import annotations

import json
import os
import sys
import zlib
from pathlib import Path
from typing import Any, Callable

from . import files

ENV_CACHE = "TRAINSTACK_CACHE_DIR"
MAX_ENTRY_BYTES = 32 * 2**20   # the largest entry, the admission index, is about 50 KiB
_SECRET_BYTES = 32


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


def load_json(kind: str, key: str, valid: Callable[[Any], bool] | None = None) -> Any | None:
    """The data stored for ``key``, or None: no entry, a foreign one, or a bad one (which is
    discarded with a note). ``valid``: the reader's check of the data's shape; data it refuses is
    never returned."""
    path = entry(kind, key)
    raw, why = _read_entry(path)
    if raw is None:
        return _discard(path, why) if why else None
    head, newline, body = raw.partition(b"\n")
    try:
        stored = json.loads(head)
    except (ValueError, RecursionError):
        return _discard(path, "not JSON")
    if not isinstance(stored, dict) or not isinstance(stored.get("key"), str):
        return _discard(path, "not a cache entry")
    secret = _secret()
    if stored["key"] != key or not newline or secret is None or stored.get("mac") != _mac(secret, key, body):
        return None   # another key's, user's, job's or version's: a miss, replaced when stored
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        return _discard(path, "not JSON")
    try:
        ok = valid is None or bool(valid(data))
    except (TypeError, ValueError, KeyError, AttributeError, RecursionError):
        ok = False
    return data if ok else _discard(path, "not the shape this entry must have")


def _read_entry(path: Path) -> tuple[bytes | None, str]:
    """The entry's bytes, or None and why it is bad ("" when there is simply none)."""
    try:
        return files.read_regular(path, MAX_ENTRY_BYTES), ""
    except files.Unreadable as why:
        return None, _BAD_ENTRY.get(why.reason, "")   # missing, or not ours to read: a miss


_BAD_ENTRY = {files.LINK: "a link", files.NOT_REGULAR: "not a regular file",
              files.TOO_LARGE: f"larger than {MAX_ENTRY_BYTES // 2**20} MiB", files.GREW: "growing"}


def _mac(secret: bytes, key: str, body: bytes) -> str:
    try:
        from _blake2 import blake2b   # CPython's built-in BLAKE2: hashlib would load OpenSSL (3 ms)
    except ImportError:   # pragma: no cover - another interpreter
        from hashlib import blake2b
    digest = blake2b(key=secret, digest_size=32)
    digest.update(key.encode("utf-8", "surrogatepass") + b"\0" + body)
    return digest.hexdigest()


def secret_file() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME")
    return (Path(base) if base else Path.home() / ".config") / "trainstack" / "cache-key"


_SECRETS: dict[str, bytes | None] = {}


def _secret() -> bytes | None:
    """This user's random cache secret (made on first use, readable by the user alone), or None
    when it can be neither read nor made: then nothing is read from the cache or written to it."""
    path = secret_file()
    if str(path) not in _SECRETS:
        _SECRETS[str(path)] = _read_secret(path)
    return _SECRETS[str(path)]


def _read_secret(path: Path) -> bytes | None:
    for _ in range(2):
        try:
            data = files.read_regular(path, _SECRET_BYTES)
        except files.Unreadable as why:
            if why.reason != files.MISSING:   # a link, a FIFO, a longer file: not a secret we made
                return None
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            except FileExistsError:   # another process made it meanwhile: read that one
                continue
            except OSError:
                return None
            with os.fdopen(fd, "wb") as out:
                out.write(os.urandom(_SECRET_BYTES))
            continue
        return data if len(data) == _SECRET_BYTES else None
    return None


def _discard(path: Path, why: str) -> None:
    """Remove a bad entry (it is rebuilt) and say so once; a cache we cannot change is left as is."""
    try:
        os.unlink(path)
    except OSError:
        pass
    print(f"note: ignored the cache entry {path} ({why}); it is rebuilt", file=sys.stderr)
    return None


def store_json(kind: str, key: str, data: Any) -> None:
    """Write atomically (temporary file, then rename), so a reader never sees half an entry."""
    path = entry(kind, key)
    secret = _secret()
    if secret is None:   # no place for this user's secret: nothing cached
        return
    try:
        body = json.dumps(data, separators=(",", ":"))
        text = json.dumps({"key": key, "mac": _mac(secret, key, body.encode("utf-8"))}) + "\n" + body
        files.replace(path, text.encode("utf-8"), path.with_suffix(f".{os.getpid()}.tmp"))
    except (OSError, TypeError, ValueError):   # read-only home, or data JSON cannot hold
        pass
