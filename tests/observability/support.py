"""Shared helpers for the observability tests: rendered stacks and promtool."""
from __future__ import annotations

import functools
import shutil
import subprocess
from pathlib import Path

import pytest

from modules.core import yamlio
from modules.core.config import load_project, load_stack
from modules.core.render import render
from tests.support.cli import ROOT

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures"
FIXTURE_PROJECT = FIXTURES / "project"
SHIPPED = tuple(load_project(ROOT).stacks())


@functools.lru_cache(maxsize=None)
def stack(name: str, project: Path = ROOT):
    return load_stack(load_project(project), name)


@functools.lru_cache(maxsize=None)
def bundle(name: str, project: Path = ROOT):
    return render(stack(name, project))


def rule_groups(b) -> list[dict]:
    """The groups of every rendered PrometheusRule, as one promtool rules document's groups."""
    return [g for r in b.resources if r.kind == "PrometheusRule" for g in r.obj["spec"]["groups"]]


def promtool() -> str:
    path = shutil.which("promtool")
    if path is None:
        pytest.skip("promtool is not on PATH; `make promtool` installs it (Debian package prometheus)")
    return path


def write_rules(folder: Path, groups: list[dict], name: str = "alerts.rules.yml") -> Path:
    path = folder / name
    path.write_text(yamlio.dump({"groups": groups}))
    return path


def run_promtool(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([promtool(), *args], cwd=cwd, capture_output=True, text=True, timeout=60)
