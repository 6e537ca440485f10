"""The upstream-port layer's shape: modules never import policies; policies.rules may use
policies.admission but not the other way round; the one registry holds every ported admission check
under one signature; no file of the layer (or of the admission engine) over 800 lines, no function
over 80."""
from __future__ import annotations

import ast
import inspect

from modules.upstream.registry import MUTATE, SOURCES, VALIDATE, all_checks
from tests.support.cli import ROOT


def _imports(path) -> set[str]:
    """Every module ``path`` imports, relative imports resolved against its package."""
    package = path.relative_to(ROOT).with_suffix("").parts[:-1]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else ()
            name = ".".join((*base, node.module)) if node.module else ".".join(base)
            out.add(name)
            out.update(f"{name}.{a.name}" for a in node.names)
    return out


def _files(*tops: str):
    return [p for top in tops for p in sorted((ROOT / top).rglob("*.py"))]


def test_modules_never_import_policies():
    stray = [(p.relative_to(ROOT).as_posix(), name) for p in _files("modules") for name in _imports(p)
             if name == "policies" or name.startswith("policies.")]
    assert stray == []


def test_policies_admission_does_not_import_the_rules():
    stray = [(p.relative_to(ROOT).as_posix(), name) for p in _files("policies/admission") for name in _imports(p)
             if name.startswith("policies.rules")]
    assert stray == []


def test_every_check_has_the_one_signature():
    checks = all_checks()
    assert {c.source for c in checks} == set(SOURCES)
    assert {c.phase for c in checks} == {VALIDATE, MUTATE}
    for check in checks:
        params = list(inspect.signature(check.fn).parameters)
        assert params[:4] == [params[0], "operation", "old", "cluster"], (check.kind, params)
        assert check.upstream and check.name


def test_files_and_functions_a_person_can_hold():
    long_files, long_functions = [], []
    for path in _files("modules/upstream") + _files("policies/admission") + _files("policies/rules"):
        text = path.read_text()
        if text.count("\n") > 800:
            long_files.append(path.relative_to(ROOT).as_posix())
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno - node.lineno + 1 > 80:
                long_functions.append(f"{path.relative_to(ROOT).as_posix()}:{node.name}")
    assert long_files == [] and long_functions == []
