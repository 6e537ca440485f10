"""One topology reading: `simulate` and the rule `topology-satisfiable` take every workload's network
topology from the same semantic function (modules/semantics/volcano.py), pod annotations included."""
from __future__ import annotations

import json

import pytest
import yaml

from modules.simulate.workloads import load_workloads, runtimes_in
from policies.rules import topology as rule
from tests.support.cli import run
from tests.support.stacks import shipped_bundle

WORKLOAD_KINDS = ("Job", "TrainJob", "Deployment", "StatefulSet", "ReplicaSet", "PyTorchJob")


def _rule_reading(obj: dict, every: list[dict]):
    """What topology-satisfiable judges: the job-level constraint, as the PodGroup stores it."""
    c = rule.job_constraint(rule.effective_constraints(obj, every))
    if c is None:
        return None
    mode, tier, name = c.as_stored()
    return ("soft" if mode == "soft" else "hard", tier if isinstance(tier, int) else None,
            name if isinstance(name, str) else None)


@pytest.mark.parametrize("stack", ["dev", "staging", "prod", "legacy"])
def test_simulate_reads_every_shipped_workload_as_the_rule_does(stack, tmp_path):
    bundle = shipped_bundle(stack)
    every = [r.obj for r in bundle.resources]
    workloads = [o for o in every if o.get("kind") in WORKLOAD_KINDS and o.get("kind") != "Job"
                 or o.get("kind") == "Job" and str(o.get("apiVersion", "")).startswith("batch.volcano.sh/")]
    if not workloads:
        pytest.skip(f"{stack} renders no workload")
    path = tmp_path / "w.yaml"
    path.write_text(yaml.safe_dump_all(workloads))
    jobs = {j.name: j for j in load_workloads(path, str(path), bundle.fabric, runtimes_in(every), stack)}
    compared = 0
    for obj in workloads:
        job = jobs[obj["metadata"]["name"]]
        got = None if job.topology is None else (job.topology.mode, job.topology.tier, job.topology.tier_name)
        assert got == _rule_reading(obj, every), obj["metadata"]["name"]
        compared += 1
    assert compared == len(workloads)


def test_staging_eval_servers_is_simulated_with_its_hard_tier_1_annotations(tmp_path):
    bundle = shipped_bundle("staging")
    every = [r.obj for r in bundle.resources]
    eval_servers = next(o for o in every if o.get("kind") == "Deployment" and o["metadata"]["name"] == "eval-servers")
    path = tmp_path / "w.yaml"
    path.write_text(yaml.safe_dump(eval_servers))
    (job,) = load_workloads(path, str(path), bundle.fabric, {}, "staging")
    assert (job.topology.mode, job.topology.tier) == ("hard", 1)


GANG = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "gang40", "namespace": "research"},
        "spec": {"replicas": 40, "selector": {"matchLabels": {"app": "gang40"}}, "template": {
            "metadata": {"labels": {"app": "gang40"}, "annotations": {"volcano.sh/network-topology-mode": "hard",
                                         "volcano.sh/network-topology-highest-tier": "1"}},
            "spec": {"schedulerName": "volcano", "containers": [{"name": "main", "image": "x", "resources": {
                "requests": {"nvidia.com/gpu": 8, "cpu": "8", "memory": "64Gi"}, "limits": {"nvidia.com/gpu": 8}}}]}}}}


@pytest.mark.parametrize("annotations, expected", [
    ({"volcano.sh/network-topology-mode": "hard", "volcano.sh/network-topology-highest-tier": "1"}, ("hard", 1)),
    ({"volcano.sh/network-topology-mode": "soft"}, ("soft", None)),
    ({"volcano.sh/network-topology-highest-tier": "2"}, ("hard", 2)),       # the mode defaults to hard
    ({"volcano.sh/network-topology-highest-tier": "two"}, ("hard", None)),  # not a tier: Volcano ignores it
    ({}, None),
])
def test_pod_annotated_deployments_agree(annotations, expected, tmp_path):
    bundle = shipped_bundle("prod")
    obj = json.loads(json.dumps(GANG))
    obj["spec"]["template"]["metadata"]["annotations"] = annotations
    path = tmp_path / "w.yaml"
    path.write_text(yaml.safe_dump(obj))
    (job,) = load_workloads(path, str(path), bundle.fabric, {}, "prod")
    got = None if job.topology is None else (job.topology.mode, job.topology.tier)
    assert got == expected == (None if _rule_reading(obj, [obj]) is None else _rule_reading(obj, [obj])[:2])


def test_a_40_pod_hard_tier_1_deployment_is_pending_in_simulate_as_the_rule_refuses_it(tmp_path):
    path = tmp_path / "gang.yaml"
    path.write_text(yaml.safe_dump(GANG))
    out = run("simulate", "prod", "--workloads", str(path), "--format", "json")
    assert out.code == 0, out.err
    (job,) = json.loads(out.out)["strategies"]["topology-aware"]["jobs"]
    assert job["status"] == "pending" and "tier <= 1" in job["reason"]
    text = run("simulate", "prod", "--workloads", str(path)).out
    assert "hard <= 1" in text
    checked = run("check", "prod", "--manifests", str(path))
    assert "topology-satisfiable" in checked.out and "gang40" in checked.out
