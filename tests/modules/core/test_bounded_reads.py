"""Reads of user files are bounded before reading, whatever the path is: a deploy file linked to
an 8 GiB sparse file (render --check), a cached upstream file linked to a 5 GiB one (admission
fetch), are judged without being read."""
from __future__ import annotations

import hashlib
import os
import resource

from tests.support.cli import run

PULUMI_YAML = "name: trainstack\nstackConfigDir: stacks\n"


def _peak_gib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20   # ru_maxrss is in KiB


def _sparse(path, size: int) -> None:
    with open(path, "wb") as f:
        f.truncate(size)


def test_render_check_does_not_read_a_linked_sparse_file(tmp_path):
    (tmp_path / "Pulumi.yaml").write_text(PULUMI_YAML)
    (tmp_path / "stacks").mkdir()
    (tmp_path / "stacks" / "Pulumi.t.yaml").write_text("config:\n  trainstack:fabric: {source: generated}\n")
    assert run("render", "t", "--project", str(tmp_path)).code == 0
    target = next(p for p in sorted((tmp_path / "deploy" / "t").rglob("*.yaml")) if p.is_file())
    _sparse(tmp_path / "huge", 8 * 2**30)
    target.unlink()
    target.symlink_to(tmp_path / "huge")
    result = run("render", "t", "--check", "--project", str(tmp_path))
    assert result.code == 1 and f"changed  {target.relative_to(tmp_path / 'deploy' / 't')}" in result.out
    assert _peak_gib() < 4   # the 8 GiB were never read into memory


def test_admission_fetch_replaces_a_linked_huge_file_without_reading_it(tmp_path):
    from policies.admission.fetch import fetch

    upstream = tmp_path / "upstream.yaml"
    upstream.write_text("kind: X\n")
    sha = hashlib.sha256(upstream.read_bytes()).hexdigest()
    sources = tmp_path / "sources.yaml"
    sources.write_text(f"sources:\n- files:\n  - {{url: 'file://{upstream}', path: volcano/x.yaml, sha256: {sha}}}\n")
    dest = tmp_path / "cache"
    (dest / "volcano").mkdir(parents=True)
    _sparse(tmp_path / "huge", 5 * 2**30)
    os.symlink(tmp_path / "huge", dest / "volcano" / "x.yaml")
    assert fetch(dest, sources) == [dest / "volcano" / "x.yaml"]
    assert not (dest / "volcano" / "x.yaml").is_symlink()
    assert (dest / "volcano" / "x.yaml").read_text() == "kind: X\n"
    assert os.path.getsize(tmp_path / "huge") == 5 * 2**30   # the link was replaced, its target left alone
    assert fetch(dest, sources) == []   # now held: not fetched again
    assert _peak_gib() < 4   # the 5 GiB were never read into memory
