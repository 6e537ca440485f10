"""The user cache (modules/core/cache.py): what comes back from it is what was computed."""
from __future__ import annotations

import json

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
        assert len(entries) == 1 and json.loads(entries[0].read_text()) == first
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
