"""Shared helpers for the observability tests: rendered stacks, promtool and the probe run."""
from __future__ import annotations

import functools
import importlib.util
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from modules.core import yamlio
from modules.core.config import load_project, load_stack
from modules.core.render import render
from tests.support.cli import ROOT, Started, start_process

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


PROBE_ARGS = ("probe", "--nproc", "2", "--backend", "gloo", "--sizes", "1MiB,4MiB", "--iters", "3", "--warmup", "1",
              "--collectives", "all_reduce,all_gather,reduce_scatter,sendrecv,broadcast")
_EARLY_PROBE: list[tuple[Started, Path]] = []


def start_probe(folder: Path) -> Started:
    return start_process(*PROBE_ARGS, "--json", str(folder / "out.json"), "--prom", str(folder / "out.prom"))


def start_early() -> None:
    """Start the session's probe run now (tests/conftest.py calls this after collection)."""
    if not _EARLY_PROBE and importlib.util.find_spec("torch") is not None:
        folder = Path(tempfile.mkdtemp(prefix="trainstack-probe-"))
        _EARLY_PROBE.append((start_probe(folder), folder))


def early_probe() -> tuple[Started, Path] | None:
    """The run start_early began (for the probe_run fixture), or None."""
    return _EARLY_PROBE[0] if _EARLY_PROBE else None


def stop_early() -> None:
    for run, folder in _EARLY_PROBE:
        run.stop()
        shutil.rmtree(folder, ignore_errors=True)
    _EARLY_PROBE.clear()
