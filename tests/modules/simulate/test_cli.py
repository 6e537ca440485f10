"""`trainstack simulate` end to end on the shipped stacks, checked against the rendered HyperNodes."""
import json
import re

import pytest
import yaml

from modules.core.config import load_project, load_stack
from modules.core.render import render
from tests.support.cli import ROOT, run, run_process


def vcjob(name: str, replicas: int, topology: dict | None, gpus: int = 8, min_available: int | None = None) -> dict:
    spec = {"minAvailable": replicas if min_available is None else min_available,
            "tasks": [{"name": "worker", "replicas": replicas, "template": {"spec": {"containers": [
                {"name": "w", "image": "trainer", "resources": {"limits": {"nvidia.com/gpu": gpus}}}]}}}]}
    if topology is not None:
        spec["networkTopology"] = topology
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": name}, "spec": spec}


PROD_JOBS = [
    vcjob("pretrain", 24, {"mode": "hard", "highestTierAllowed": 1}),
    vcjob("finetune", 12, {"mode": "hard", "highestTierName": "leaf"}),
    vcjob("sweep", 40, {"mode": "hard", "highestTierAllowed": 2}),
    vcjob("eval", 3, {"mode": "soft"}, gpus=4),
    vcjob("too-big", 40, {"mode": "hard", "highestTierAllowed": 1}),
    vcjob("never", 2, {"mode": "hard", "highestTierAllowed": 0}),
    vcjob("free", 20, None),
    vcjob("rack", 6, {"mode": "hard", "highestTierName": "rack"}),
    vcjob("huge", 300, {"mode": "hard", "highestTierAllowed": 3}),
    vcjob("more", 30, {"mode": "hard", "highestTierAllowed": 1}),
    vcjob("overflow", 900, {"mode": "soft"}),
]
JOB_KEYS = ["name", "status", "reason", "hypernode", "tier", "pods", "allreduce_s"]


@pytest.fixture(scope="module")
def prod(tmp_path_factory):
    path = tmp_path_factory.mktemp("sim") / "jobs.yaml"
    path.write_text(yaml.safe_dump_all(PROD_JOBS, sort_keys=False))
    result = run("simulate", "prod", "--workloads", str(path), "--format", "json")
    assert result.code == 0, result.err
    bundle = render(load_stack(load_project(ROOT), "prod"))
    return json.loads(result.out), bundle


def hypernode_members(bundle) -> dict[str, tuple[int, set[str]]]:
    """HyperNode name -> (tier, every node below it), resolved from the rendered objects alone."""
    objs = {r.obj["metadata"]["name"]: r.obj for r in bundle.resources if r.kind == "HyperNode"}
    nodes = list(bundle.fabric.nodes)
    memo: dict[str, set[str]] = {}

    def members(name: str) -> set[str]:
        if name not in memo:
            out: set[str] = set()
            for m in objs[name]["spec"]["members"]:
                sel = m["selector"]
                if m["type"] == "HyperNode":
                    out |= members(sel["exactMatch"]["name"])
                elif "exactMatch" in sel:
                    out.add(sel["exactMatch"]["name"])
                elif "regexMatch" in sel:
                    out |= {n for n in nodes if re.search(sel["regexMatch"]["pattern"], n)}
            memo[name] = out
        return memo[name]

    return {name: (obj["spec"]["tier"], members(name)) for name, obj in objs.items()}


def test_json_shape(prod):
    report, bundle = prod
    assert list(report) == ["nodes", "strategies"]
    assert list(report["strategies"]) == ["topology-aware", "oblivious", "lower-bound"]
    assert set(report["nodes"]) == set(bundle.fabric.nodes)
    assert report["nodes"]["gpu-0001"]["gpus"] == 8
    for strategy in report["strategies"].values():
        assert list(strategy) == ["jobs", "total_allreduce_s"]
        assert [j["name"] for j in strategy["jobs"]] == [d["metadata"]["name"] for d in PROD_JOBS]
        for job in strategy["jobs"]:
            assert list(job) == JOB_KEYS
            assert job["status"] in ("placed", "pending")
            if job["status"] == "pending":
                assert job["reason"] and job["pods"] == [] and job["allreduce_s"] is None
            else:
                assert job["hypernode"] and isinstance(job["tier"], int) and job["allreduce_s"] >= 0


def test_hard_jobs_sit_in_one_rendered_hypernode_of_an_allowed_tier(prod):
    report, bundle = prod
    hypernodes = hypernode_members(bundle)
    tier_of_name = {obj["spec"]["tierName"]: obj["spec"]["tier"] for r in bundle.resources if r.kind == "HyperNode"
                    for obj in [r.obj]}
    aware = {j["name"]: j for j in report["strategies"]["topology-aware"]["jobs"]}
    checked = 0
    for doc in PROD_JOBS:
        topo = doc["spec"].get("networkTopology") or {}
        if topo.get("mode") != "hard":
            continue
        allowed = topo.get("highestTierAllowed", tier_of_name.get(topo.get("highestTierName")))
        job = aware[doc["metadata"]["name"]]
        if allowed is None or job["status"] != "placed":
            continue
        tier, members = hypernodes[job["hypernode"]]
        assert tier == job["tier"] and tier <= allowed
        assert {p["node"] for p in job["pods"]} <= members
        assert len(job["pods"]) == doc["spec"]["minAvailable"]
        checked += 1
    assert checked >= 5


def test_expected_outcomes_on_prod(prod):
    report, _ = prod
    aware = {j["name"]: j for j in report["strategies"]["topology-aware"]["jobs"]}
    assert aware["pretrain"]["tier"] == 1 and aware["finetune"]["tier"] == 1
    assert aware["sweep"]["tier"] == 2 and aware["huge"]["tier"] == 3
    assert aware["too-big"]["status"] == "pending" and "Pending forever" in aware["too-big"]["reason"]
    assert aware["never"]["status"] == "pending" and "below the lowest tier" in aware["never"]["reason"]
    assert aware["rack"]["status"] == "placed"                  # unknown tier name: no constraint
    assert aware["overflow"]["status"] == "pending" and "now" in aware["overflow"]["reason"]
    oblivious = {j["name"]: j for j in report["strategies"]["oblivious"]["jobs"]}
    assert oblivious["too-big"]["status"] == "placed"            # the oblivious scheduler ignores topology


def test_no_node_is_over_committed(prod):
    report, _ = prod
    for name in ("topology-aware", "oblivious"):
        used: dict[str, int] = {}
        for job in report["strategies"][name]["jobs"]:
            for pod in job["pods"]:
                used[pod["node"]] = used.get(pod["node"], 0) + pod["gpus"]
        assert all(used[n] <= report["nodes"][n]["gpus"] for n in used), name


def test_topology_aware_total_is_not_worse_than_oblivious(prod):
    report, _ = prod
    totals = {k: v["total_allreduce_s"] for k, v in report["strategies"].items()}
    assert totals["lower-bound"] <= totals["topology-aware"] < totals["oblivious"]


def test_text_report(tmp_path):
    path = tmp_path / "jobs.yaml"
    path.write_text(yaml.safe_dump_all(PROD_JOBS[:6], sort_keys=False))
    plain = run("simulate", "prod", "--workloads", str(path))
    assert plain.code == 0, plain.err
    assert "pretrain" in plain.out and "leaf-01 (tier 1)" in plain.out and "oblivious" not in plain.out
    assert "never: hard, tier <= 0: below the lowest tier (1)" in plain.out
    compared = run("simulate", "prod", "--workloads", str(path), "--compare", "oblivious")
    assert compared.code == 0
    assert "lower bound" in compared.out and "oblivious" in compared.out
    assert re.search(r"topology-aware\s+4/6\s+3/6", compared.out)
    assert run("simulate", "prod", "--workloads", str(path), "--compare", "oblivious").out == compared.out


def test_usage_and_gradient_size(tmp_path):
    jobs = tmp_path / "jobs.yaml"
    jobs.write_text(yaml.safe_dump(vcjob("a", 2, {"mode": "hard", "highestTierAllowed": 1})))
    usage = tmp_path / "usage.yaml"
    usage.write_text('nodes:\n  "gpu-[0001-0031]": {nvidia.com/gpu: 8}\n')
    big = json.loads(run("simulate", "prod", "--workloads", str(jobs), "--usage", str(usage), "--format", "json").out)
    small = json.loads(run("simulate", "prod", "--workloads", str(jobs), "--usage", str(usage), "--format", "json",
                           "--gradient-size", "64Mi").out)
    aware = big["strategies"]["topology-aware"]["jobs"][0]
    assert aware["hypernode"] == "leaf-02"                     # leaf-01 has one free node left
    assert big["nodes"]["gpu-0001"]["gpusInUse"] == 8
    assert small["strategies"]["topology-aware"]["jobs"][0]["allreduce_s"] < aware["allreduce_s"]


def test_probe_results_replace_the_stack_links(tmp_path):
    jobs = tmp_path / "jobs.yaml"
    jobs.write_text(yaml.safe_dump(vcjob("a", 2, {"mode": "hard", "highestTierAllowed": 1})))
    probe = tmp_path / "probe.json"
    probe.write_text(json.dumps([{"collective": "all_reduce", "bytes": 2**30, "world_size": 2,
                                  "time_s": 2**30 / 35e9, "algbw_gbps": 35.0, "busbw_gbps": 35.0, "tier": 1}]))
    base = json.loads(run("simulate", "prod", "--workloads", str(jobs), "--format", "json").out)
    slow = json.loads(run("simulate", "prod", "--workloads", str(jobs), "--format", "json", "--probe", str(probe)).out)
    assert (slow["strategies"]["topology-aware"]["jobs"][0]["allreduce_s"]
            > base["strategies"]["topology-aware"]["jobs"][0]["allreduce_s"])


@pytest.mark.parametrize("args, message", [
    (["--workloads", "missing.yaml"], "missing.yaml: file not found"),
    (["--workloads", "BAD", "--gradient-size", "1GB"], "--gradient-size: expected a positive quantity of bytes"),
])
def test_errors_are_one_line_with_exit_2(tmp_path, args, message):
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(vcjob("a", 1, {"mode": "strict"})))
    args = [str(bad) if a == "BAD" else a for a in args]
    result = run_process("simulate", "dev", *args)
    assert result.code == 2 and result.out == ""
    assert result.err.count("\n") == 1 and message in result.err and "Traceback" not in result.err


def test_bad_workload_document_is_one_line(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump_all([vcjob("a", 1, None), vcjob("b", 1, {"mode": "strict"})]))
    result = run_process("simulate", "dev", "--workloads", str(bad))
    assert result.code == 2
    assert result.err.strip() == (f"error: {bad}: document 2 (Job b): spec.networkTopology.mode: expected hard or "
                                  'soft, got "strict"')


def test_trainjobs_on_the_stacks_own_runtimes(tmp_path):
    bundle = render(load_stack(load_project(ROOT), "prod"))
    runtimes = [r.obj for r in bundle.resources if r.kind == "ClusterTrainingRuntime"]
    if not runtimes:
        pytest.skip("the prod stack renders no ClusterTrainingRuntime yet")
    docs = [{"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob", "metadata": {"name": f"tj-{i}"},
             "spec": {"runtimeRef": {"name": rt["metadata"]["name"], "kind": "ClusterTrainingRuntime"},
                      "trainer": {"numNodes": 2}}} for i, rt in enumerate(runtimes)]
    path = tmp_path / "jobs.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    result = run("simulate", "prod", "--workloads", str(path), "--format", "json")
    assert result.code == 0, result.err
    for job in json.loads(result.out)["strategies"]["topology-aware"]["jobs"]:
        assert job["status"] == "placed", job


def test_mixed_depth_file_fabric_end_to_end(tmp_path):
    """A `file` fabric with a leaf at tier 2 (allowMixedDepth): hard jobs never reach its nodes,
    soft jobs do through the cluster-top."""
    (tmp_path / "Pulumi.yaml").write_text((ROOT / "Pulumi.yaml").read_text())
    stacks = tmp_path / "stacks"
    (stacks / "fabrics").mkdir(parents=True)
    (stacks / "fabrics" / "mixed.yaml").write_text(
        "tierNames: [leaf, rack, spine]\n"
        "switches:\n"
        "  spine: {tier: 3, switches: [leaf-1, rack-x]}\n"
        "  leaf-1: {tier: 1, nodes: ['gpu-[01-02]']}\n"
        "  rack-x: {tier: 2, nodes: ['gpu-[03-04]']}\n")
    (stacks / "Pulumi.mixed.yaml").write_text(
        "config:\n  trainstack:fabric: {source: file, path: fabrics/mixed.yaml, allowMixedDepth: true}\n")
    jobs = tmp_path / "jobs.yaml"
    jobs.write_text(yaml.safe_dump_all([vcjob("hard", 3, {"mode": "hard", "highestTierAllowed": 3}),
                                        vcjob("soft", 3, {"mode": "soft"})], sort_keys=False))
    result = run("simulate", "mixed", "--workloads", str(jobs), "--format", "json", "--project", str(tmp_path))
    assert result.code == 0, result.err
    assert "allowMixedDepth" not in result.err or "warning" in result.err
    aware = {j["name"]: j for j in json.loads(result.out)["strategies"]["topology-aware"]["jobs"]}
    assert aware["hard"]["status"] == "pending" and "Pending forever" in aware["hard"]["reason"]
    assert (aware["soft"]["hypernode"], aware["soft"]["tier"]) == ("<cluster-top>", 4)
    assert {p["node"] for p in aware["soft"]["pods"]} & {"gpu-03", "gpu-04"}
