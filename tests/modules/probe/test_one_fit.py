"""`recommend` and `simulate --probe` read a probe results file through one fit and print the same
per-tier figures."""
from __future__ import annotations

import json
import re

import pytest
import yaml

from tests.support.cli import ROOT, run

PROBE = ROOT / "tests" / "support" / "fixtures" / "probe-gloo-2ranks.json"
WORKLOAD = ROOT / "tests" / "support" / "fixtures" / "workloads" / "ephemeral-storage-job.yaml"


def test_recommend_and_simulate_print_the_same_fit(tmp_path):
    recommended = run("recommend", "--probe", str(PROBE), "dev", "--accept-cpu", "--format", "json", cwd=ROOT)
    assert recommended.code == 0, recommended.err
    tiers = {t["tier"]: t for t in json.loads(recommended.out)["tiers"]}
    assert tiers[0]["source"] == "measured"
    job = yaml.safe_load(WORKLOAD.read_text())
    job["spec"]["queue"] = "dev"          # the queue dev renders: the job webhook refuses one it lacks
    workload = tmp_path / "job.yaml"
    workload.write_text(yaml.safe_dump(job))
    simulated = run("simulate", "dev", "--workloads", str(workload), "--probe", str(PROBE), "--accept-cpu", cwd=ROOT)
    assert simulated.code == 0, simulated.err
    printed = {int(t): (float(bw), float(us)) for t, bw, us in
               re.findall(r"tier (\d+): ([\d.]+) GB/s, ([\d.]+) us", simulated.out)}
    assert set(printed) == set(tiers)
    for tier, (bandwidth, latency) in printed.items():   # simulate prints %g: six significant digits
        assert bandwidth == pytest.approx(tiers[tier]["busbw_gbps"], rel=1e-5), tier
        assert latency == pytest.approx(tiers[tier]["alpha_us"], rel=1e-5, abs=1e-9), tier
    text = run("recommend", "--probe", str(PROBE), "dev", "--accept-cpu", cwd=ROOT).out
    assert f"busbw {tiers[0]['busbw_gbps']:10.3f} GB/s" in text and f"{printed[0][0]:.3f}" in text
