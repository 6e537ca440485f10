"""The repository stands alone: no tracked file (code, READMEs, docs, tests, data) points at notes
outside it or at tracker numbers a reader cannot see, and every relative Markdown link resolves to a
file inside the repository. Upstream references stay allowed: `owner/repo#123`, `owner/repo #123`."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.support.cli import ROOT

# The notes kept beside the project (never part of it): `reference/<topic>.md`.
REFERENCE = re.compile(r"\breference/[\w.-]+\.md\b")
# Tracker numbers in prose: "issue 12", "issues 11 and 12", "#12" (not an upstream `owner/repo#12`,
# `owner/repo #12`, a Markdown heading, a colour, a `&#12;` entity or an unnamed upstream test row
# named as its test's failure message numbers it, "case #3").
ISSUE = re.compile(r"\b[Ii]ssues? #?\d+\b")
HASH = re.compile(r"(?<![\w/&#-])#\d{1,5}\b")
UPSTREAM_BEFORE = re.compile(r"[\w.-]+/[\w.-]+,? $|[\w.-]+/[\w.-]+#\d+, $")
LINK = re.compile(r"\]\(([^)\s]+)\)")


def tracked() -> list[Path]:
    try:
        names = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True, check=True,
                               timeout=60).stdout.decode().split("\0")
    except (OSError, subprocess.SubprocessError):
        pytest.skip("not a git checkout")
    here = Path(__file__).resolve()
    return [ROOT / n for n in names if n and (ROOT / n).is_file() and (ROOT / n).resolve() != here]


def _text(path: Path) -> str | None:
    data = path.read_bytes()
    if b"\0" in data[:4096]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def problems(path: Path, text: str) -> list[str]:
    out = []

    def at(pos: int, what: str) -> None:
        out.append(f"{path.relative_to(ROOT)}:{text.count(chr(10), 0, pos) + 1}: {what}")

    for m in REFERENCE.finditer(text):
        at(m.start(), f"cites {m.group()}, a note outside the repository; carry the facts into docs/ or a README")
    for m in ISSUE.finditer(text):
        at(m.start(), f"{m.group()!r}: a tracker number; name the thing instead")
    for m in HASH.finditer(text):
        if text[max(0, m.start() - 5):m.start()] == "case ":   # an unnamed upstream row, as its test numbers it
            continue
        if not UPSTREAM_BEFORE.search(text[max(0, m.start() - 80):m.start()]):
            at(m.start(), f"{m.group()!r}: a tracker number; name the thing, or write owner/repo#N for upstream's")
    if path.suffix == ".md":
        for m in LINK.finditer(text):
            target = m.group(1).split("#", 1)[0]
            if not target or re.match(r"[a-z][a-z0-9+.-]*:", target):   # an anchor, a URL
                continue
            resolved = (path.parent / target).resolve()
            if not resolved.is_relative_to(ROOT.resolve()):
                at(m.start(), f"links to {target}, outside the repository")
            elif not resolved.exists():
                at(m.start(), f"links to {target}, which does not exist")
    return out


def test_no_tracked_file_points_outside_the_repository():
    found = [p for path in tracked() if (text := _text(path)) is not None for p in problems(path, text)]
    assert not found, "\n".join(found)


@pytest.mark.parametrize("text, bad", [
    ("see reference/volcano.md §4", True),
    ("the checks of issue 12", True),
    ("fixed in #12 last week", True),
    ("Issues 11 and 12", True),
    ("upstream kubeflow/trainer#1515 says", False),
    ("NVIDIA/dcgm-exporter #655 renamed it", False),
    ("(kubeflow/trainer#2282, #1797)", False),
    ("## 12 nodes", False),
    ("&#12; entity", False),
    ("see [x](../../outside.md)", True),
    ("see [x](docs/nowhere.md)", True),
    ("see [x](README.md#commands) and [y](https://example.com/a.md)", False),
])
def test_the_patterns_are_precise(text, bad):
    path = ROOT / "x.md"
    found = problems(path, text)
    assert bool(found) == bad, (text, found)
