"""One probe format: what `trainstack probe --json` writes, `simulate --probe` and `recommend` read
(modules/probe/results.py, documented in modules/probe/README.md). CPU (gloo) results are refused
as GPU tier measurements unless the user passes --accept-cpu."""
from __future__ import annotations

import json

import pytest
import yaml

from modules.core.errors import InputError
from modules.probe import measure, results
from tests.support.cli import run

from tests.support.observability import start_early, stop_early  # noqa: F401 (tests/conftest.py starts the probe run early)


def test_the_writer_and_the_reader_agree_on_the_version():
    assert measure.RESULTS_FORMAT == results.FORMAT


def test_probe_json_is_versioned_and_read_back(probe_run):
    result, folder = probe_run
    assert result.code == 0, result.err[-2000:]
    doc = json.loads((folder / "out.json").read_text())
    assert doc["format"] == results.FORMAT
    records = results.read(folder / "out.json")
    assert len(records) == len(doc["results"])
    assert {r["tier"] for r in records} == {"node"} and not any(r["representative"] for r in records)
    prom = results.read(folder / "out.prom")
    assert {(r["collective"], r["bytes"]) for r in prom} == {(r["collective"], r["bytes"]) for r in records}


def test_recommend_reads_probe_json_and_refuses_cpu_results_without_the_flag(probe_run):
    _, folder = probe_run
    args = ("recommend", "dev", "--probe", str(folder / "out.json"), "--model-size", "7B")
    refused = run(*args)
    assert refused.code == 2 and "measured with gloo on CPUs" in refused.err and "--accept-cpu" in refused.err
    accepted = run(*args, "--accept-cpu")
    assert accepted.code == 0, accepted.err
    assert "not representative of the GPU fabric" in accepted.out and "measured" in accepted.out


def test_simulate_reads_probe_json_and_refuses_cpu_results_without_the_flag(probe_run, tmp_path):
    _, folder = probe_run
    jobs = tmp_path / "jobs.yaml"
    jobs.write_text(yaml.safe_dump({
        "apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "a", "namespace": "default"},
        "spec": {"minAvailable": 2, "schedulerName": "volcano", "queue": "default",
                 "tasks": [{"name": "worker", "replicas": 2, "template": {"spec": {"containers": [{
                     "name": "c", "image": "x", "resources": {"requests": {"nvidia.com/gpu": 8},
                                                              "limits": {"nvidia.com/gpu": 8}}}]}}}]}}))
    args = ("simulate", "dev", "--workloads", str(jobs), "--format", "json", "--probe", str(folder / "out.json"))
    refused = run(*args)
    assert refused.code == 2 and "measured with gloo on CPUs" in refused.err
    accepted = run(*args, "--accept-cpu")
    assert accepted.code == 0, accepted.err
    assert "not representative of the GPU fabric" in accepted.err
    assert json.loads(accepted.out)["strategies"]["topology-aware"]["jobs"]


def test_reader_errors_name_the_file_and_record(tmp_path):
    path = tmp_path / "probe.json"
    path.write_text(json.dumps({"results": [{"collective": "all_reduce", "bytes": 1, "world_size": 2,
                                             "time_s": "slow"}]}))
    with pytest.raises(InputError, match=r"probe.json: results\[0\].time_s: expected time_s"):
        results.read(path, "probe.json")
    path.write_text(json.dumps([{"collective": "all_reduce", "bytes": 1, "world_size": 2, "time_s": 1, "tier": -1}]))
    with pytest.raises(InputError, match=r"probe.json: \[0\].tier: expected a tier name"):
        results.read(path, "probe.json")
    path.write_text(json.dumps({"format": "trainstack.probe/v9", "results": []}))
    with pytest.raises(InputError, match=r"format: expected 'trainstack.probe/v1'"):
        results.read(path, "probe.json")
    path.write_text("{not json")
    with pytest.raises(InputError, match="expected JSON probe results"):
        results.read(path, "probe.json")


def test_tier_names_and_numbers_resolve_against_the_stack():
    names = {1: "leaf", 2: "spine"}
    recs = [{"tier": "node", "source": "f"}, {"tier": "spine", "source": "f"}, {"tier": 1, "source": "f"},
            {"tier": "rack", "source": "f"}]
    numbered, notes = results.numbered(recs, names)
    assert [r["tier"] for r in numbered] == [0, 2, 1]
    assert notes == ["f: results for tier 'rack' ignored: the stack's tiers are node, leaf, spine"]
