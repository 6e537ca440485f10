"""Per-stack policy configuration and the generated docs."""
from __future__ import annotations

import json

import pytest

from modules.core.errors import InputError
from policies import docs
from policies.rules import BY_ID, RULES
from policies.runner import POLICY_DIR, load_settings, parse_settings, schema_defaults
from tests.support.cli import run


@pytest.mark.parametrize("stack", ["dev", "staging", "prod"])
def test_shipped_policy_configs_are_valid(stack):
    path = POLICY_DIR / f"config.{stack}.json"
    assert path.is_file()
    settings = load_settings(stack)
    data = json.loads(path.read_text())
    for key in data:
        assert key == "all" or key in BY_ID
    if stack == "prod":
        assert settings.level(BY_ID["image-pinned"]) == "mandatory"          # from "all"
        assert settings.level(BY_ID["nccl-algo-override"]) == "advisory"     # per policy wins over "all"


def test_settings_errors_name_the_file_and_path():
    cases = [({"image-pinnned": "advisory"}, "image-pinnned", "did you mean 'image-pinned'"),
             ({"all": "warn"}, "all", "expected one of"),
             ({"nccl-debug-production": {"levels": ["LOUD"]}}, "nccl-debug-production.levels.0", "is not one of"),
             ({"requests-required": {"allowLimitsAsRequests": "yes"}}, "requests-required.allowLimitsAsRequests",
              "is not of type"),
             ({"rbac-no-wildcards": {"whatever": 1}}, "rbac-no-wildcards", "Additional properties")]
    for data, path, fragment in cases:
        with pytest.raises(InputError) as err:
            parse_settings(data, "policies/config.x.json")
        assert err.value.path == path and fragment in err.value.message, str(err.value)


def test_settings_defaults_come_from_the_schemas():
    for rule in RULES:
        for name, schema in rule.config_schema.items():
            assert "description" in schema, f"{rule.id}.{name} needs a description"
            if "default" in schema:
                assert schema_defaults(rule)[name] == schema["default"]


def test_a_broken_policy_config_is_a_config_error(tmp_path, monkeypatch):
    import policies.runner as runner

    (tmp_path / "config.dev.json").write_text('{"image-pinned": ')
    monkeypatch.setattr(runner, "POLICY_DIR", tmp_path)
    result = run("check", "dev")
    assert result.code == 2 and "policies/config.dev.json: line 1" in result.err


def test_docs_are_up_to_date():
    assert docs.main(["--check"]) == 0, "run `python -m policies.docs`"
    text = docs.DOC.read_text()
    for rule in RULES:
        assert f"### {rule.id}" in text and rule.why in text and rule.fix in text
    assert "virtualenv" in text and "../.venv" in text
