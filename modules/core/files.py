"""The one bounded read of a regular file.

Every file trainstack reads that someone else may have put there (a user's stack, manifests or
snapshot, a cache entry, a cached upstream file, an output folder's marker) goes through
``read_regular``: opened without blocking (a FIFO would never answer), optionally without following
a link, read only when ``fstat`` says it is a regular file (not a folder, device or pipe: /dev/zero
never ends) of at most ``limit`` bytes, and read in pieces (a large limit is never allocated up
front). A file that grew past the limit while it was read is refused too. What went wrong is an
``Unreadable`` with a reason; each caller words it (an error naming the file, a cache miss, a
refusal to replace a folder).

Its counterpart for writing into such a folder is ``replace``: a fresh temporary file beside the
target, never written through a link planted there, renamed over the target in one step.
"""
from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

MISSING = "missing"          # no such file
LINK = "link"                # a symbolic link, when links are not followed
NOT_REGULAR = "not-regular"  # a folder, device, pipe or socket
TOO_LARGE = "too-large"      # its size (``Unreadable.size``) is over the limit
GREW = "grew"                # it grew past the limit while it was read
OS_ERROR = "os-error"        # the system refused (``Unreadable.detail``: its words, e.g. "Permission denied")

_PIECE = 1 << 20


class Unreadable(Exception):
    """Why ``read_regular`` read nothing: ``reason`` (one of the constants above), ``size`` (the
    file's size, for TOO_LARGE) and ``detail`` (the system's words, for OS_ERROR)."""

    def __init__(self, reason: str, size: int = 0, detail: str = ""):
        super().__init__(reason)
        self.reason, self.size, self.detail = reason, size, detail


def read_regular(path: Path | str, limit: int, follow_links: bool = False) -> bytes:
    """The bytes of the regular file at ``path``, at most ``limit`` of them, or Unreadable."""
    flags = os.O_RDONLY | os.O_NONBLOCK | (0 if follow_links else os.O_NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise Unreadable(MISSING) from None
    except OSError as exc:   # ELOOP under O_NOFOLLOW: the last part of the path is a link
        if exc.errno == errno.ELOOP and not follow_links:
            raise Unreadable(LINK) from None
        raise _os_error(exc) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise Unreadable(NOT_REGULAR)
        if info.st_size > limit:
            raise Unreadable(TOO_LARGE, size=info.st_size)
        data = _read_up_to(fd, limit + 1)
    except OSError as exc:
        raise _os_error(exc) from None
    finally:
        os.close(fd)
    if len(data) > limit:
        raise Unreadable(GREW)
    return data


def _read_up_to(fd: int, most: int) -> bytes:
    """At most ``most`` bytes, in pieces (one read of ``most`` would allocate it all up front)."""
    chunks, total = [], 0
    while total < most:
        chunk = os.read(fd, min(_PIECE, most - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    return b"".join(chunks)


def _os_error(exc: OSError) -> Unreadable:
    return Unreadable(OS_ERROR, detail=exc.strerror or exc.__class__.__name__)


def replace(path: Path, data: bytes, tmp: Path) -> None:
    """Write ``data`` to ``path`` atomically: first to ``tmp`` (a leftover there, or a link planted
    in a shared folder, is removed, never written through), then renamed over ``path`` (which
    replaces a link at ``path`` itself, not what it points to). The folder is made when missing;
    OSError when the system refuses."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.unlink(tmp)
    except FileNotFoundError:
        pass
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "wb") as out:
        out.write(data)
    tmp.replace(path)
