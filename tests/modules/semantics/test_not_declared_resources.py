"""Resources a fabric's node pools do not declare (ephemeral-storage, hugepages-*, pod slots) are
counted against nodes by neither the fit checks nor the simulator, and each says so once."""
from __future__ import annotations

import json
from decimal import Decimal

from modules.semantics.capacity import counted, not_counted_note, pods_per_node
from tests.support.cli import ROOT, run
from tests.support.stacks import shipped_bundle

JOB = ROOT / "tests" / "support" / "fixtures" / "workloads" / "ephemeral-storage-job.yaml"
NOTE = "requests for ephemeral-storage are not counted against nodes: the fabric's node pools do not declare it"


def test_one_rule_for_what_is_counted():
    assert not counted("ephemeral-storage", {"cpu"}) and counted("ephemeral-storage", {"ephemeral-storage"})
    assert not counted("hugepages-2Mi", set()) and not counted("pods", set())
    assert counted("example.com/fpga", set())          # any other resource a node lacks holds no pod at all
    pool = next(iter(shipped_bundle("prod").fabric.pools.values()))
    plain = pods_per_node(pool, {"cpu": Decimal(1)})
    assert pods_per_node(pool, {"cpu": Decimal(1), "ephemeral-storage": Decimal(10 * 2**30)}) == plain > 0
    assert not_counted_note({"pods", "ephemeral-storage"}).startswith("requests for ephemeral-storage, pods are")


def test_the_ephemeral_storage_job_passes_topology_satisfiable_with_one_note():
    result = run("check", "prod", "--manifests", str(JOB), "--format", "json", cwd=ROOT)
    doc = json.loads(result.out)["stacks"]["prod"]
    assert not [v for v in doc["violations"] if v["rule"] == "topology-satisfiable"], doc["violations"]
    notes = [n["message"] for n in doc["notChecked"] if n["rule"] == "topology-satisfiable"]
    assert notes == [NOTE]


def test_the_simulator_places_it_and_says_so_once():
    result = run("simulate", "prod", "--workloads", str(JOB), "--format", "json", cwd=ROOT)
    assert result.code == 0, result.err
    job = json.loads(result.out)["strategies"]["topology-aware"]["jobs"][0]
    assert job["status"] == "placed"
    assert result.err.count("not counted against nodes") == 1 and NOTE in result.err
