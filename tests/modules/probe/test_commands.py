"""`trainstack probe` for real: two gloo ranks on this machine, as a user runs it."""
from __future__ import annotations

import importlib.util
import json
import subprocess
import sys

import pytest

from modules.probe import measure
from tests.support.cli import run

from tests.support.observability import promtool, start_early, stop_early  # noqa: F401 (tests/conftest.py: probe run early)

if importlib.util.find_spec("torch") is None:   # find_spec: no need to import torch in the test process
    pytest.skip("the probe needs torch: pip install 'trainstack[probe]'", allow_module_level=True)


def test_probe_exits_0_and_prints_a_table(probe_run):
    result, _ = probe_run
    assert result.code == 0, result.err[-2000:]
    assert "busbw GB/s" in result.out and "time = max over ranks" in result.out


def test_json_has_one_record_per_collective_and_size(probe_run):
    _, folder = probe_run
    doc = json.loads((folder / "out.json").read_text())
    records = doc["results"]
    assert {(r["collective"], r["bytes"]) for r in records} == {
        (c, s) for c in measure.COLLECTIVES for s in (1 << 20, 4 << 20)}
    assert doc["probe"]["backend"] == "gloo" and doc["probe"]["world_size"] == 2
    for r in records:
        assert {"collective", "bytes", "world_size", "time_s", "algbw_gbps", "busbw_gbps"} <= set(r)
        assert r["world_size"] == 2 and r["time_s"] > 0 and r["iters"] == 3
        assert r["tier"] == "node" and r["backend"] == "gloo"


def test_busbw_over_algbw_follows_the_nccl_tests_formulas(probe_run):
    _, folder = probe_run
    expected = {"all_reduce": 1.0, "all_gather": 0.5, "reduce_scatter": 0.5, "sendrecv": 1.0, "broadcast": 1.0}
    for r in json.loads((folder / "out.json").read_text())["results"]:
        n = r["world_size"]
        assert r["busbw_gbps"] / r["algbw_gbps"] == pytest.approx(expected[r["collective"]], rel=1e-12)
        assert r["busbw_gbps"] / r["algbw_gbps"] == pytest.approx(measure.busbw_factor(r["collective"], n), rel=1e-12)
        assert r["algbw_gbps"] == pytest.approx(r["bytes"] / r["time_s"] / 1e9, rel=1e-12)
        assert r["time_s"] >= r["time_mean_s"] > 0     # max over ranks >= mean
        assert 0.001 < r["busbw_gbps"] < 1000           # loopback gloo: sane, not a precise figure


def test_prometheus_text_is_valid(probe_run):
    _, folder = probe_run
    text = (folder / "out.prom").read_text()
    result = subprocess.run([promtool(), "check", "metrics"], input=text, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert text.count("trainstack_probe_busbw_gbps{") == 10


def test_missing_torch_is_one_clear_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)   # import torch now fails as if not installed
    result = run("probe", "--nproc", "2")
    assert result.code == 2
    lines = result.err.strip().splitlines()
    assert len(lines) == 1 and "pip install 'trainstack[probe]'" in lines[0]


def test_bad_arguments_are_usage_errors():
    assert run("probe", "--sizes", "12XB").code == 2
    assert run("probe", "--collectives", "alltoall").code == 2
    result = run("probe", "--nproc", "1")
    assert result.code == 2 and "--nproc" in result.err


def test_probe_fails_early_when_its_output_is_unwritable(tmp_path):
    """Before any rank starts: one line, exit 2 (it used to fail after the whole measurement)."""
    result = run("probe", "--json", str(tmp_path / "missing" / "out.json"))
    assert result.code == 2 and "cannot write" in result.err and len(result.err.strip().splitlines()) == 1
