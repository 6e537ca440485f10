"""A hostile user cache costs time only (a CI cache shared between jobs): an entry that is a FIFO,
a link to /dev/zero or to a huge file, or holds a wrong shape is discarded with a note and rebuilt,
never trusted, never an internal error; an entry made for another key is a miss."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from modules.core import cache
from policies.admission.index_shape import valid_index
from tests.support.admission import require_shared_dirs
from tests.support.cli import ROOT

KEY = cache.content_key("hostile", "cache")


@pytest.fixture
def cached(tmp_path, monkeypatch):
    monkeypatch.setenv(cache.ENV_CACHE, str(tmp_path / "cache"))
    path = cache.entry("kind", KEY)
    path.parent.mkdir(parents=True)
    return path


def _plant(path, how: str) -> None:
    if how == "fifo":
        os.mkfifo(path)
    elif how == "dev-zero":
        path.symlink_to("/dev/zero")
    elif how == "link-to-a-good-entry":
        good = path.with_name("elsewhere.json")
        good.write_text(json.dumps({"key": KEY, "data": {"ok": 1}}))
        path.symlink_to(good)
    elif how == "sparse-5-gib":
        with open(path, "wb") as f:
            f.truncate(5 * 2**30)
    elif how == "folder":
        path.mkdir()
    else:
        path.write_text(how)


@pytest.mark.parametrize("how", ["fifo", "dev-zero", "link-to-a-good-entry", "sparse-5-gib", "not json {",
                                 "[1, 2]", '{"key": 1, "data": {}}', '{"data": {}}', "9" * 5000,
                                 "[" * 100000])
def test_a_bad_entry_is_discarded_with_a_note(cached, capsys, how):
    _plant(cached, how)
    assert cache.load_json("kind", KEY) is None
    assert "ignored the cache entry" in capsys.readouterr().err
    if how != "folder":
        assert not os.path.lexists(cached)   # discarded: the next store writes a good one
    cache.store_json("kind", KEY, {"ok": 2})
    assert cache.load_json("kind", KEY) == {"ok": 2}


def test_an_entry_for_another_key_is_a_miss_without_a_note(cached, capsys):
    cached.write_text(json.dumps({"key": "another", "data": {"ok": 1}}))
    assert cache.load_json("kind", KEY) is None
    assert capsys.readouterr().err == ""


def test_a_wrong_shape_is_never_returned(cached, capsys):
    cache.store_json("kind", KEY, {"policies": "all"})   # signed, as a trainstack of another shape would
    assert cache.load_json("kind", KEY, valid_index) is None
    assert "not the shape" in capsys.readouterr().err


def test_an_entry_not_signed_with_this_users_secret_is_foreign(cached, capsys):
    """An entry with the right key and a valid shape but written by someone else (a poisoned CI
    cache that would inject a rule) is a miss; the next store replaces it."""
    cache.store_json("kind", KEY, {"rules": ["mine"]})
    head, body = cached.read_text().split("\n", 1)
    cached.write_text(head + "\n" + body.replace("mine", "injected"))
    assert cache.load_json("kind", KEY) is None
    cached.write_text(json.dumps({"key": KEY, "data": {"rules": ["injected"]}}))   # the old format, unsigned
    assert cache.load_json("kind", KEY) is None
    assert capsys.readouterr().err == ""
    cache.store_json("kind", KEY, {"rules": ["mine"]})
    assert cache.load_json("kind", KEY) == {"rules": ["mine"]}


def test_without_a_place_for_the_secret_nothing_is_cached(cached, tmp_path, monkeypatch):
    (tmp_path / "config").write_text("a file where the folder would be")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    cache.store_json("kind", KEY, {"ok": 1})
    assert not cached.exists() and cache.load_json("kind", KEY) is None


def test_a_store_never_writes_through_a_planted_link(cached, tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("mine")
    cached.with_suffix(f".{os.getpid()}.tmp").symlink_to(victim)
    cached.symlink_to(victim)
    cache.store_json("kind", KEY, {"ok": 3})
    assert victim.read_text() == "mine"
    assert cache.load_json("kind", KEY) == {"ok": 3}


WRONG_INDEXES = [
    {"policies": [], "crds": [], "problems": [1]},
    {"policies": [{"kind": "ValidatingAdmissionPolicy"}], "crds": [], "problems": []},
    {"policies": [], "crds": [{"crd": "a", "group": "g", "kind": "K", "plural": "ks", "source": "s", "release": "r",
                               "version": "v1", "rules": [{"rule": 5, "path": []}]}], "problems": []},
    {"policies": [], "crds": [{"crd": "a", "group": "g", "kind": "K", "plural": "ks", "source": "s", "release": "r",
                               "version": "v1", "rules": "self.x > 0"}], "problems": []},
    {"policies": {"a": 1}, "crds": [], "problems": []},
    [],
    None,
]


@pytest.mark.parametrize("data", WRONG_INDEXES, ids=range(len(WRONG_INDEXES)))
def test_wrong_shaped_admission_indexes_are_refused(data):
    assert not valid_index(data)


@pytest.mark.parametrize("how", ["fifo", "dev-zero", "wrong-shape", "injected-rule"])
def test_check_with_a_poisoned_admission_index_answers(tmp_path, monkeypatch, how):
    """`check` whose admission-index entry is a FIFO, a link to /dev/zero, a signed entry of the
    wrong shape or an unsigned one that adds a rule gives its normal answer (the index is
    extracted again), with a note for a bad entry and no internal error."""
    admission, crds = require_shared_dirs()
    env = dict(os.environ, PYTHONPATH=str(ROOT), TRAINSTACK_ADMISSION_DIR=str(admission),
               TRAINSTACK_CRD_DIR=str(crds), TRAINSTACK_CACHE_DIR=str(tmp_path / "cache"))
    first = subprocess.run([sys.executable, "-m", "modules.cli", "check", "dev"], cwd=ROOT, env=env,
                           capture_output=True, text=True)
    entries = list((tmp_path / "cache" / "admission-index").glob("*.json"))
    assert len(entries) == 1
    head, body = entries[0].read_text().split("\n", 1)
    key = json.loads(head)["key"]
    entries[0].unlink()
    if how == "wrong-shape":
        monkeypatch.setenv(cache.ENV_CACHE, str(tmp_path / "cache"))
        cache.store_json("admission-index", key, {"policies": 7, "crds": [], "problems": []})
    elif how == "injected-rule":
        index = json.loads(body)
        index["crds"][0]["rules"].append({"path": [], "rule": "false", "message": "injected"})
        entries[0].write_text(head + "\n" + json.dumps(index, separators=(",", ":")))
    else:
        _plant(entries[0], how)
    again = subprocess.run([sys.executable, "-m", "modules.cli", "check", "dev"], cwd=ROOT, env=env,
                           capture_output=True, text=True)
    assert again.returncode == first.returncode, again.stderr[-600:]
    assert again.stdout == first.stdout
    assert "please report" not in again.stderr and "injected" not in again.stdout
    assert ("ignored the cache entry" in again.stderr) == (how != "injected-rule"), again.stderr[-600:]
