"""Every capability has the same shape, and its README documents its schema."""
from __future__ import annotations

import importlib
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from modules.core import docs
from modules.core.config import MODULES_DIR, module_schema
from modules.core.registry import MODULES
from tests.support.cli import ROOT


@pytest.mark.parametrize("name", MODULES)
def test_module_shape(name):
    folder = MODULES_DIR / name
    for part in ("schema.yaml", "render.py", "README.md"):
        assert (folder / part).is_file(), f"modules/{name}/{part} is missing"
    assert callable(importlib.import_module(f"modules.{name}.render").render)
    schema = module_schema(name)
    Draft202012Validator.check_schema(schema)
    assert schema.get("type") == "object" and schema.get("additionalProperties") is False


@pytest.mark.parametrize("name", ("core",) + MODULES)
def test_every_option_is_described(name):
    """Every option, scalars included, has a non-empty description (the README tables and the
    generated reference show it; a blank cell documents nothing). Values of free-form maps (an
    inline fabric's switches) are described by their map."""
    def walk(schema, path):
        for key, sub in schema.get("properties", {}).items():
            yield f"{path}.{key}", sub
            yield from walk(sub, f"{path}.{key}")
            if isinstance(sub.get("items"), dict):
                yield from walk(sub["items"], f"{path}.{key}[]")
    undocumented = [p for p, sub in walk(module_schema(name), name) if not str(sub.get("description") or "").strip()]
    assert not undocumented, undocumented


def test_readme_options_tables_are_current():
    assert docs.main(["--check"]) == 0, "run python -m modules.core.docs"


def _packages(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir() if (p / "__init__.py").is_file()}


@pytest.mark.parametrize("code, tests", [("modules", "tests/modules"), ("policies", "tests/policies")])
def test_test_folders_mirror_the_code(code, tests):
    """tests/modules/<package>/ for every package under modules/, tests/policies/<package>/ for every
    package under policies/, each with tests, and no test folder for code that does not exist."""
    code_dir, tests_dir = ROOT / code, ROOT / tests
    assert _packages(tests_dir) == _packages(code_dir)
    for name in sorted(_packages(code_dir)):
        assert list((tests_dir / name).glob("test_*.py")), f"{tests}/{name}/ has no tests"
