"""One reader of a stack's policy settings (``runner.load_settings``): `check` reads the installed
pack's ``policies/config.<stack>.json``; `trainstack diff` reads each side's own (``review.settings_for``
calls the same reader with the side's ``policies/``), falling back to the installed pack's, with the
same bounds and the same errors."""
from __future__ import annotations

import json

import pytest

from modules.core.errors import InputError
from policies.review import settings_for
from policies.rules import BY_ID
from policies.runner import POLICY_DIR, load_settings

RULE = BY_ID["upstream-admission"]


def test_a_side_with_its_own_settings_uses_them_and_one_without_uses_the_installed_packs(tmp_path):
    (tmp_path / "policies").mkdir()
    (tmp_path / "policies" / "config.dev.json").write_text(json.dumps({"all": "advisory"}))
    assert settings_for(tmp_path, "dev").level(RULE) == "advisory"
    assert load_settings("dev", tmp_path / "policies").level(RULE) == "advisory"
    installed = load_settings("dev")
    assert settings_for(tmp_path / "elsewhere", "dev") == installed
    assert load_settings("dev", POLICY_DIR) == installed


@pytest.mark.parametrize("text, where", [("{\"all\": \"loud\"}", "all"), ("{\"all\": NaN}", None),
                                         ("{\"all\": ", "line 1, column 9")])
def test_a_broken_settings_file_is_the_same_error_from_either_side(tmp_path, monkeypatch, text, where):
    (tmp_path / "policies").mkdir()
    (tmp_path / "policies" / "config.dev.json").write_text(text)
    with pytest.raises(InputError) as side:
        settings_for(tmp_path, "dev")
    monkeypatch.setattr("policies.runner.POLICY_DIR", tmp_path / "policies")
    with pytest.raises(InputError) as installed:
        load_settings("dev")
    assert str(side.value) == str(installed.value) and "policies/config.dev.json" in str(side.value)
    if where is not None:
        assert where in str(side.value)
