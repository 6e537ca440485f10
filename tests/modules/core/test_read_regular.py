"""One bounded read of a regular file (modules/core/files.py ``read_regular``) serves every reader
of a file someone else may have put there: a user's file (yamlio), a cache entry and the cache
secret (cache), the output marker and journal (output), a cached upstream file (admission fetch).
Each reason it refuses is worded by its caller as before; nothing it refuses is read (a 5 GiB
sparse file costs no memory), and a FIFO with no writer never blocks it."""
from __future__ import annotations

import hashlib
import os
import resource
from pathlib import Path

import pytest

from modules.core import cache, files, output, yamlio
from modules.core.errors import InputError

# A file the kernel calls regular whose size says 0 but which holds some 1,000 bytes: a file that
# "grew" past the limit between fstat and the read, deterministically.
GROWING = Path("/proc/self/status")


def _peak_gib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20   # ru_maxrss is in KiB


def _sparse(path: Path, size: int) -> Path:
    with open(path, "wb") as f:
        f.truncate(size)
    return path


def _reason(path: Path, limit: int, **options) -> str:
    with pytest.raises(files.Unreadable) as caught:
        files.read_regular(path, limit, **options)
    return caught.value.reason


def test_a_regular_file_within_the_limit_is_read_whole(tmp_path):
    data = os.urandom(3 * 2**20 + 7)   # more than one piece
    (tmp_path / "f").write_bytes(data)
    assert files.read_regular(tmp_path / "f", len(data)) == data


def test_each_refusal_has_its_reason(tmp_path):
    (tmp_path / "good").write_text("ok")
    (tmp_path / "link").symlink_to(tmp_path / "good")
    (tmp_path / "folder").mkdir()
    os.mkfifo(tmp_path / "fifo")   # no writer: a blocking open would wait forever
    assert _reason(tmp_path / "absent", 10) == files.MISSING
    assert _reason(tmp_path / "link", 10) == files.LINK
    assert files.read_regular(tmp_path / "link", 10, follow_links=True) == b"ok"
    assert _reason(tmp_path / "folder", 10) == files.NOT_REGULAR
    assert _reason(tmp_path / "fifo", 10) == files.NOT_REGULAR
    assert _reason(Path("/dev/zero"), 10, follow_links=True) == files.NOT_REGULAR
    assert _reason(tmp_path / "good", 1) == files.TOO_LARGE
    assert _reason(GROWING, 10, follow_links=True) == files.GREW


def test_a_link_loop_followed_is_a_system_error_with_its_words(tmp_path):
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    with pytest.raises(files.Unreadable) as caught:
        files.read_regular(tmp_path / "loop", 10, follow_links=True)
    assert (caught.value.reason, caught.value.detail) == (files.OS_ERROR, "Too many levels of symbolic links")


def test_a_huge_file_is_refused_by_its_size_without_being_read(tmp_path):
    huge = _sparse(tmp_path / "huge", 5 * 2**30)
    with pytest.raises(files.Unreadable) as caught:
        files.read_regular(huge, 2**20)
    assert (caught.value.reason, caught.value.size) == (files.TOO_LARGE, 5 * 2**30)
    assert _peak_gib() < 4


# --- each caller words the reasons as it did before ------------------------------------------------

def _yaml_message(path: Path, limit: int = yamlio.MAX_FILE_BYTES) -> str:
    with pytest.raises(InputError) as caught:
        yamlio.read_bytes(path, "shown.yaml", limit)
    return str(caught.value)


def test_a_users_file_refusals_keep_their_words(tmp_path):
    (tmp_path / "folder").mkdir()
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "big").write_bytes(b"x" * 11)
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    assert _yaml_message(tmp_path / "absent") == "shown.yaml: file not found"
    assert _yaml_message(tmp_path / "folder") == "shown.yaml: not a regular file (a folder, device or pipe)"
    assert _yaml_message(tmp_path / "fifo") == "shown.yaml: not a regular file (a folder, device or pipe)"
    assert _yaml_message(tmp_path / "big", 10) == "shown.yaml: file is 11 bytes; at most 10 are read"
    assert _yaml_message(GROWING, 10) == "shown.yaml: file is larger than 10 bytes"
    assert _yaml_message(tmp_path / "loop") == "shown.yaml: cannot read file: Too many levels of symbolic links"


def test_a_users_file_behind_a_link_is_read(tmp_path):
    (tmp_path / "real.yaml").write_text("a: 1\n")
    (tmp_path / "link.yaml").symlink_to(tmp_path / "real.yaml")
    assert yamlio.read_bytes(tmp_path / "link.yaml", "link.yaml") == b"a: 1\n"


@pytest.mark.parametrize(("how", "why"), [("link", "a link"), ("fifo", "not a regular file"),
                                          ("sparse", "larger than 32 MiB")])
def test_a_bad_cache_entry_is_named_in_its_note(tmp_path, monkeypatch, capsys, how, why):
    monkeypatch.setenv(cache.ENV_CACHE, str(tmp_path / "cache"))
    path = cache.entry("kind", "key")
    path.parent.mkdir(parents=True)
    if how == "link":
        path.symlink_to(tmp_path)
    elif how == "fifo":
        os.mkfifo(path)
    else:
        _sparse(path, 5 * 2**30)
    assert cache.load_json("kind", "key") is None
    assert capsys.readouterr().err == f"note: ignored the cache entry {path} ({why}); it is rebuilt\n"


def test_a_cache_secret_that_is_not_one_the_cache_made_disables_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    secret = cache.secret_file()
    secret.parent.mkdir(parents=True)
    secret.write_bytes(os.urandom(33))   # longer than the 32 bytes the cache writes
    assert cache._read_secret(secret) is None
    secret.unlink()
    secret.symlink_to("/dev/zero")
    assert cache._read_secret(secret) is None
    secret.unlink()
    made = cache._read_secret(secret)   # none: made, then read back
    assert made is not None and len(made) == 32 and secret.read_bytes() == made


def test_an_output_marker_larger_than_trainstack_writes_is_refused(tmp_path):
    target = tmp_path / "t"
    target.mkdir()
    (target / output.MARKER).write_text(output.marker_text("t") + "#" * 5000 + "\n")
    with pytest.raises(InputError, match="exists and was not written by trainstack"):
        output._check_owned(target, "t", "deploy/t")
    (target / output.MARKER).write_text(output.marker_text("t"))
    assert output._check_owned(target, "t", "deploy/t") is True


def test_an_output_journal_that_is_a_link_is_refused_and_not_followed(tmp_path):
    target = tmp_path / "t"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_text(".t.new-0123abcd\n")
    output._journal(target).symlink_to(elsewhere)
    with pytest.raises(InputError) as caught:
        output._journaled(target)
    assert str(caught.value) == f"{output._journal(target)}: exists and was not written by trainstack; remove it"
    output._journal(target).unlink()
    assert output._journaled(target) == []
    output._journal(target).write_text(".t.new-0123abcd\nnot ours\n")
    assert output._journaled(target) == [".t.new-0123abcd"]


def test_a_cached_upstream_file_is_held_only_as_a_regular_file_with_the_pinned_digest(tmp_path):
    from policies.admission.fetch import MAX_CACHED_BYTES, _holds

    (tmp_path / "x.yaml").write_text("kind: X\n")
    sha = hashlib.sha256(b"kind: X\n").hexdigest()
    assert _holds(tmp_path / "x.yaml", sha)
    assert not _holds(tmp_path / "x.yaml", "0" * 64)
    (tmp_path / "link.yaml").symlink_to(tmp_path / "x.yaml")
    assert not _holds(tmp_path / "link.yaml", sha)
    os.mkfifo(tmp_path / "fifo.yaml")
    assert not _holds(tmp_path / "fifo.yaml", sha)
    assert not _holds(_sparse(tmp_path / "huge.yaml", MAX_CACHED_BYTES + 1), sha)
    assert _peak_gib() < 4
