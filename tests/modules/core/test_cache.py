"""The user cache (modules/core/cache.py): what comes back from it is what was computed."""
from __future__ import annotations

import json
import os

import pytest

from modules.core import cache, schema, yamlio
from tests.support.cli import ROOT

SCHEMAS = sorted(ROOT.glob("modules/*/schema.yaml"))


@pytest.mark.parametrize("path", SCHEMAS, ids=[p.parent.name for p in SCHEMAS])
def test_every_schema_survives_the_json_cache(path):
    """A schema read back from the cache equals the one parsed from its YAML (JSON keeps it whole)."""
    parsed = yamlio.loads(path.read_text(encoding="utf-8"), str(path))
    assert json.loads(json.dumps(parsed)) == parsed


def test_a_schema_is_read_from_the_cache_after_the_first_time(tmp_path, monkeypatch):
    monkeypatch.setenv(cache.ENV_CACHE, str(tmp_path))
    path = SCHEMAS[0]
    schema.load_schema.cache_clear()
    try:
        first = schema.load_schema(path)
        entries = list((tmp_path / "schemas").glob("*.json"))
        assert len(entries) == 1 and json.loads(entries[0].read_text().split("\n", 1)[1]) == first
        schema.load_schema.cache_clear()
        assert schema.load_schema(path) == first
    finally:
        schema.load_schema.cache_clear()


def test_a_corrupt_or_unwritable_cache_costs_time_only(tmp_path, monkeypatch):
    monkeypatch.setenv(cache.ENV_CACHE, str(tmp_path / "cache"))
    key = cache.content_key("a", "b")
    assert key != cache.content_key("ab", "")   # parts are length-prefixed
    cache.store_json("kind", key, {"x": 1})
    assert cache.load_json("kind", key) == {"x": 1}
    cache.entry("kind", key).write_text("{not json")
    assert cache.load_json("kind", key) is None
    (tmp_path / "file").write_text("")
    monkeypatch.setenv(cache.ENV_CACHE, str(tmp_path / "file"))   # a file where the folder should be
    cache.store_json("kind", key, {"x": 1})
    assert cache.load_json("kind", key) is None


def test_an_entry_made_for_another_key_is_a_miss(tmp_path, monkeypatch):
    """Entries are named by a checksum of their key: one that two keys share holds the key it was
    made for, and a read with the other key misses."""
    monkeypatch.setenv(cache.ENV_CACHE, str(tmp_path))
    cache.store_json("kind", "one", {"x": 1})
    cache.entry("kind", "one").rename(cache.entry("kind", "two"))   # as if "two" had the same name
    assert cache.load_json("kind", "two") is None
    assert cache.load_json("kind", "one") is None
    cache.store_json("kind", "two", [2])
    assert cache.load_json("kind", "two") == [2]


def test_a_file_changed_is_a_new_key(tmp_path):
    """``files_key`` follows a file's size and modification time (as the bytecode cache does)."""
    path = tmp_path / "schema.yaml"
    path.write_text("a: 1\n")
    first = cache.files_key("v1", [path])
    assert cache.files_key("v1", [path]) == first
    assert cache.files_key("v2", [path]) != first
    path.write_text("a: 12\n")
    assert cache.files_key("v1", [path]) != first
    size_kept = cache.files_key("v1", [path])
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert cache.files_key("v1", [path]) != size_kept
    assert "unreadable" in cache.files_key("v1", [tmp_path / "missing.yaml"])
