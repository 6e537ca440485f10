"""The shipped `legacy` stack: Training Operator v1, an elastic PyTorchJob ganged by Volcano, and an
HPA that scales it on the probe's all-reduce bandwidth through prometheus-adapter."""
from __future__ import annotations

import functools

import yaml

from modules.core.config import load_project, load_stack
from modules.core.render import render
from tests.support import crds
from tests.support.cli import ROOT, run


@functools.lru_cache(maxsize=None)
def legacy():
    return render(load_stack(load_project(ROOT), "legacy"))


def one(kind: str) -> dict:
    (obj,) = [r.obj for r in legacy().resources if r.kind == kind]
    return obj


def test_legacy_runs_the_training_operator_v1():
    (overlay,) = legacy().overlays
    assert overlay.name == "training-operator"
    (remote,) = overlay.kustomization["resources"]
    assert remote.endswith("?ref=v1.9.4")
    assert not [r for r in legacy().resources if r.api_version.startswith("trainer.kubeflow.org/")]


def test_elastic_pytorchjob_validates_and_gangs_with_volcano():
    job = one("PyTorchJob")
    crds.validate_cr(job)
    spec = job["spec"]
    policy = spec["elasticPolicy"]
    assert policy["rdzvBackend"] == "c10d" and policy["minReplicas"] < policy["maxReplicas"]
    assert "metrics" not in policy   # the HPA below scales it; the operator's own HPA would fight it
    assert set(spec["pytorchReplicaSpecs"]) == {"Worker"}   # c10d rendezvous: no Master
    scheduling = spec["runPolicy"]["schedulingPolicy"]
    assert scheduling["minAvailable"] == policy["minReplicas"]   # the gang is the elastic minimum
    assert scheduling["queue"] in {q["metadata"]["name"] for q in (r.obj for r in legacy().resources)
                                   if q["kind"] == "Queue"}
    pod = spec["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]
    assert pod["schedulerName"] == "volcano"
    # The operator creates the PodGroup for Volcano when started with the gang scheduler flag.
    patch = yaml.safe_load(legacy().overlays[0].kustomization["patches"][0]["patch"])
    assert "--gang-scheduler-name=volcano" in patch[0]["value"]


def test_hpa_targets_the_pytorchjob_scale_subresource_on_probe_bandwidth():
    hpa = one("HorizontalPodAutoscaler")
    crds.validate_core(hpa)
    job = one("PyTorchJob")
    target = hpa["spec"]["scaleTargetRef"]
    assert target == {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "name": job["metadata"]["name"]}
    assert hpa["metadata"]["namespace"] == job["metadata"]["namespace"]
    policy = job["spec"]["elasticPolicy"]
    assert policy["minReplicas"] <= hpa["spec"]["minReplicas"] <= hpa["spec"]["maxReplicas"] <= policy["maxReplicas"]
    (metric,) = hpa["spec"]["metrics"]
    assert metric["type"] == "External" and metric["external"]["metric"]["name"] == "fabric_busbw_gbps"
    # The upstream CRD serves the scale subresource the HPA drives (Worker replicas).
    crd_file = crds.require_crds() / "kubeflow" / "kubeflow.org_pytorchjobs.yaml"
    crd = yaml.load(crd_file.read_text(), Loader=yaml.CSafeLoader)
    (version,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1"]
    scale = version["subresources"]["scale"]
    assert scale["specReplicasPath"] == ".spec.pytorchReplicaSpecs.Worker.replicas"
    # prometheus-adapter serves the metric from the probe's series.
    (adapter,) = [r for r in legacy().releases if r.chart == "prometheus-adapter"]
    rules = adapter.values["rules"]["external"]
    assert any("trainstack_probe_busbw_gbps" in r["seriesQuery"] and r["name"]["as"] == "fabric_busbw_gbps"
               for r in rules), rules


def test_legacy_checks_clean():
    result = run("check", "legacy")
    assert result.code == 0, result.out + result.err

# `trainstack preview legacy` (program under mocks, real pack over gRPC) runs with the other shipped
# stacks in tests/policies/test_stacks.py: one preview process for all of them, compared with `check`.
