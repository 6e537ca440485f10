"""Smoke test of the pipeline: render, write, check, register under mocks."""
from modules.core.config import load_project, load_stack, pulumi_config_map
from modules.core.mocks import run_program
from modules.core.render import render
from tests.support.cli import ROOT, run


def test_render_check_roundtrip(tmp_path):
    assert run("render", "dev", "--out", str(tmp_path)).code == 0
    result = run("render", "dev", "--out", str(tmp_path), "--check")
    assert result.code == 0, result.out


def test_program_registers_bundle():
    stack = load_stack(load_project(ROOT), "dev")
    bundle = render(stack)
    regs = run_program(ROOT, "dev", pulumi_config_map(stack))
    by_name = {r.name: r for r in regs if r.type.startswith("kubernetes:") and "helm" not in r.type}
    assert set(by_name) == {r.key for r in bundle.resources}
    for resource in bundle.resources:
        assert by_name[resource.key].inputs == resource.obj
