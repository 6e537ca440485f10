"""Fill the cache from the pinned sources (``sources.yaml``), verifying each sha256.

A source lists plain files (``url``, ``path`` in the cache, ``sha256``) and/or archives
(``archive: {url, sha256, extract: [{glob, to}]}``: a chart ``.tgz`` whose matching members are
written under ``to``). A download whose sha256 differs from the pin is refused and nothing of it is
written. ``file://`` URLs work too (mirrors, air-gapped copies).
"""
from __future__ import annotations

import fnmatch
import hashlib
import io
import os
import tarfile
import urllib.request
from pathlib import Path

import yaml

from modules.core.errors import InputError
from modules.core.files import Unreadable, read_regular, replace

from .loader import SOURCES, cache_dir

TIMEOUT_S = 60


def _download(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=TIMEOUT_S) as response:   # noqa: S310 - pinned https/file URLs
        return response.read()


def _verified(url: str, expected: str) -> bytes:
    try:
        data = _download(url)
    except OSError as exc:
        raise InputError(url, "", f"download failed: {exc}") from None
    actual = hashlib.sha256(data).hexdigest()
    if actual != expected:
        raise InputError(url, "sha256", f"expected {expected} (pinned in policies/admission/sources.yaml), "
                          f"got {actual}; refusing to use it")
    return data


MAX_CACHED_BYTES = 64 * 2**20   # far above any pinned file; a larger one is replaced, never read


def _holds(target: Path, sha256: str) -> bool:
    """Whether the cache already holds the pinned file: a regular file (a link, a FIFO or a
    device is not one, and is replaced), at most MAX_CACHED_BYTES, with the pinned sha256."""
    try:
        data = read_regular(target, MAX_CACHED_BYTES)
    except Unreadable:
        return False
    return hashlib.sha256(data).hexdigest() == sha256


def _write(target: Path, data: bytes) -> None:
    replace(target, data, target.with_suffix(target.suffix + f".{os.getpid()}.tmp"))


def fetch(dest: Path | None = None, sources_file: Path = SOURCES) -> list[Path]:
    """Download every pinned source into ``dest`` (the cache by default); return the files written."""
    dest = dest or cache_dir()
    data = yaml.safe_load(sources_file.read_text(encoding="utf-8"))
    written = []
    for source in data["sources"]:
        for f in source.get("files", []):
            target = dest / f["path"]
            if _holds(target, f["sha256"]):
                continue
            _write(target, _verified(f["url"], f["sha256"]))
            written.append(target)
        archive = source.get("archive")
        if archive:
            blob = _verified(archive["url"], archive["sha256"])
            with tarfile.open(fileobj=io.BytesIO(blob), mode="r:gz") as tar:
                for member in tar.getmembers():
                    for rule in archive["extract"]:
                        if member.isfile() and fnmatch.fnmatch(member.name, rule["glob"]):
                            target = dest / rule["to"] / Path(member.name).name
                            _write(target, tar.extractfile(member).read())
                            written.append(target)
    return written
