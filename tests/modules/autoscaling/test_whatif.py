"""`trainstack autoscaling`: a metric series replayed through an HPA (the HPA model), its timeline in
text and JSON, and bad input refused with exit 2."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from modules import cli
from modules.autoscaling import whatif

ROOT = Path(__file__).resolve().parents[3]
T0 = 1_795_300_000


def _prometheus(tmp_path: Path, values: list[float], step: int = 60, series: int = 1) -> str:
    result = [{"metric": {"tier": "spine", "i": str(s)},
               "values": [[T0 + i * step, str(v / series)] for i, v in enumerate(values)]} for s in range(series)]
    path = tmp_path / "range.json"
    path.write_text(json.dumps({"status": "success", "data": {"resultType": "matrix", "result": result}}))
    return str(path)


def _probe(tmp_path: Path, name: str, seconds: float, tier: str = "spine") -> str:
    path = tmp_path / name
    path.write_text(json.dumps({"format": "trainstack.probe/v1", "probe": {"tier": tier, "backend": "nccl"},
                                "results": [{"collective": "all_reduce", "bytes": 1 << 30, "world_size": 64,
                                             "time_s": seconds}]}))
    return str(path)


def _hpa_file(tmp_path: Path, target: dict, behavior: dict | None = None) -> str:
    spec = {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "x"},
            "minReplicas": 2, "maxReplicas": 8,
            "metrics": [{"type": "External", "external": {"metric": {"name": "fabric_busbw_gbps"}, "target": target}}]}
    if behavior is not None:
        spec["behavior"] = behavior
    path = tmp_path / "hpa.yaml"
    path.write_text(json.dumps({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
                                "metadata": {"name": "h"}, "spec": spec}))
    return str(path)


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_legacy_follows_the_fabric_one_worker_per_50_gbps(tmp_path, capsys):
    series = _prometheus(tmp_path, [120] * 20 + [380] * 20 + [90] * 20)
    code, out, _ = run(capsys, "autoscaling", "legacy", "--project", str(ROOT), "--series", series,
                       "--format", "json")
    data = json.loads(out)
    assert code == 0 and data["metric"] == "fabric_busbw_gbps" and data["start"] == 2
    replicas = [s["replicas"] for s in data["timeline"]]
    # ceil(380 / 50) = 8, but from 3 the default scale-up policy allows 7 (3 + 4) and then
    # 380 / (50 x 7) = 1.086 is within the 10 % tolerance: the HPA holds 7
    assert replicas[:2] == [3, 7] and max(replicas) == 7
    assert data["final"] == 2                                          # ceil(90 / 50), one worker per 5 minutes
    downs = [s["time"] for s in data["timeline"] if s["reason"] == "All metrics below target"]
    assert all(b - a >= 300 for a, b in zip(downs, downs[1:]))        # the job's Pods 1 / 300 s policy


def test_a_value_target_runs_to_max_replicas_and_stays(tmp_path, capsys):
    hpa = _hpa_file(tmp_path, {"type": "Value", "value": "100"}, behavior={})
    code, out, _ = run(capsys, "autoscaling", "--hpa-file", hpa, "--series", _prometheus(tmp_path, [120] * 10))
    assert code == 0
    assert "after 24m00s: 8 replicas" in out and "0m00s" in out   # 120 / 100 > 1.1: x1.2 each sync to max


def test_probe_results_files_are_samples_every_six_hours(tmp_path, capsys):
    files = [_probe(tmp_path, f"p{i}.json", t) for i, t in enumerate((0.02, 0.01))]
    code, out, _ = run(capsys, "autoscaling", "legacy", "--project", str(ROOT), "--series", files[0],
                       "--series", files[1], "--format", "json", "--hold", "0")
    data = json.loads(out)
    assert code == 0 and data["samples"] == 2 and data["seconds"] == 21600
    busbw = (1 << 30) / 0.01 / 1e9 * 2 * 63 / 64                      # 211 GB/s: ceil(211 / 50) = 5
    assert data["timeline"][-1]["replicas"] == 5 and data["timeline"][-1]["value"] == pytest.approx(busbw)


def test_text_timeline_lists_each_change(tmp_path, capsys):
    code, out, _ = run(capsys, "autoscaling", "legacy", "--project", str(ROOT), "--series",
                       _prometheus(tmp_path, [120] * 5, series=3))   # three series: the HPA adds them up
    lines = out.splitlines()
    assert code == 0 and lines[0].startswith("stack legacy: HorizontalPodAutoscaler training/llama-elastic-hpa")
    assert lines[2].split()[:3] == ["0m00s", "120", "3"]


@pytest.mark.parametrize("content, words", [
    ('{"status": "error", "data": {}}', 'status: expected "success"'),
    ('{"status": "success", "data": {"resultType": "vector", "result": []}}', "a range query"),
    ('{"status": "success", "data": {"resultType": "matrix", "result": [{"values": [[1, "NaN"]]}]}}',
     "finite value"),
    ('{"status": "success", "data": {"resultType": "matrix", "result": [{"values": [[1, "-3"]]}]}}',
     "finite value >= 0"),
    ('{"status": "success", "data": {"resultType": "matrix", "result": []}}', "no samples"),
    ('{"status": "success", "data": {"resultType": "matrix", "result": [{"values": 5}]}}', "list of [time, value]"),
    ('{"format": "trainstack.probe/v1", "results": []}', "no probe results"),
])
def test_bad_series_exit_2_naming_the_file(tmp_path, capsys, content, words):
    path = tmp_path / "bad.json"
    path.write_text(content)
    code, out, err = run(capsys, "autoscaling", "legacy", "--project", str(ROOT), "--series", str(path))
    assert code == 2 and out == "" and str(path) in err and words in err and "Traceback" not in err


def test_too_many_samples_are_refused(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(whatif, "MAX_SAMPLES", 10)
    code, _, err = run(capsys, "autoscaling", "legacy", "--project", str(ROOT), "--series",
                       _prometheus(tmp_path, [100] * 11))
    assert code == 2 and "at most 10 samples" in err


def test_a_series_too_long_for_the_sync_period_is_refused(tmp_path, capsys):
    code, _, err = run(capsys, "autoscaling", "legacy", "--project", str(ROOT), "--series",
                       _prometheus(tmp_path, [100, 100], step=86400 * 40), "--hold", "0")
    assert code == 2 and "--sync-period" in err


@pytest.mark.parametrize("argv, words", [
    (["prod"], "pick one with --hpa NAME"),
    (["prod", "--hpa", "llm-inference"], "expected --metric NAME"),
    (["prod", "--hpa", "llm-inference", "--metric", "nope"], "no metric named 'nope'"),
    (["legacy", "--sync-period", "0"], "--sync-period: expected seconds between 1"),
    (["dev"], "expected exactly one HPA"),
])
def test_bad_arguments_exit_2(tmp_path, capsys, argv, words):
    code, _, err = run(capsys, "autoscaling", *argv, "--project", str(ROOT), "--series",
                       _prometheus(tmp_path, [100]))
    assert code == 2 and words in err


def test_a_utilization_target_needs_the_pods_request(tmp_path, capsys):
    path = tmp_path / "hpa.yaml"
    path.write_text(json.dumps({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
                                "metadata": {"name": "h"}, "spec": {"maxReplicas": 10, "metrics": [
                                    {"type": "Resource", "resource": {"name": "cpu", "target": {
                                        "type": "Utilization", "averageUtilization": 50}}}]}}))
    series = _prometheus(tmp_path, [4.0] * 3)   # 4 cores in all
    code, _, err = run(capsys, "autoscaling", "--hpa-file", str(path), "--series", series)
    assert code == 2 and "--request" in err
    code, out, _ = run(capsys, "autoscaling", "--hpa-file", str(path), "--series", series, "--request", "1",
                       "--format", "json")
    assert code == 0 and json.loads(out)["final"] == 8   # 4 cores at 50 % of 1 core each


@pytest.mark.parametrize("target, words", [
    ({"type": "Utilization", "averageUtilization": 50}, "expected Value or AverageValue for a External metric"),
    ({"type": "Value", "value": "lots"}, "external.target.value: expected a positive quantity"),
    ({"type": "AverageValue"}, "external.target.averageValue: expected a positive quantity, got null"),
    ({"type": "Value", "value": "-1"}, "expected a positive quantity"),
])
def test_bad_hpa_targets_exit_2(tmp_path, capsys, target, words):
    code, _, err = run(capsys, "autoscaling", "--hpa-file", _hpa_file(tmp_path, target), "--series",
                       _prometheus(tmp_path, [100]))
    assert code == 2 and words in err and "Traceback" not in err


def test_a_probe_sample_is_the_busbw_the_probe_itself_reports(tmp_path):
    """A probe results file's sample is the peak all_reduce busbw the probe computed for it (one
    formula, measure.record's), not a second copy of nccl-tests' formula."""
    from modules.probe import measure

    records = [measure.record("all_reduce", size, n, seconds, seconds)
               for size, n, seconds in ((1 << 20, 8, 0.0003), (1 << 30, 24, 0.0213), (1 << 28, 24, 0.0071))]
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"format": "trainstack.probe/v1", "probe": {"tier": "spine", "backend": "nccl"},
                                "results": records}))
    assert whatif.probe_busbw(str(path), "spine") == max(r["busbw_gbps"] for r in records)


def test_each_metric_is_named_as_the_hpa_names_it(tmp_path, capsys):
    spec = {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "x"}, "maxReplicas": 8,
            "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization",
                                                                                   "averageUtilization": 60}}},
                        {"type": "Pods", "pods": {"metric": {"name": "tokens_per_second"}}},
                        {"type": "External", "external": {"metric": {}}}, "junk"]}
    path = tmp_path / "hpa.yaml"
    path.write_text(json.dumps({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
                                "metadata": {"name": "h"}, "spec": spec}))
    code, _, err = run(capsys, "autoscaling", "--hpa-file", str(path), "--series", _prometheus(tmp_path, [1]))
    assert code == 2 and "the HPA has 4 metrics (cpu, tokens_per_second, ?, ?)" in err
