"""A PodGroup that is not Volcano's (another API group, or no apiVersion) in a snapshot: the one cluster
model (modules/simulate/model.py) reads only scheduling.volcano.sh PodGroups, as Volcano does, and
placement says so instead of calling the PodGroup absent without a word."""
from __future__ import annotations

import json

import pytest
import yaml

from tests.support.cli import run

from .test_whatif import node, queue


def _snapshot(tmp_path, api_version):
    group = {"kind": "PodGroup", "metadata": {"name": "p1", "namespace": "batch"},
             "spec": {"queue": "batch", "minMember": 1}, "status": {"phase": "Inqueue"}}
    if api_version is not None:
        group["apiVersion"] = api_version
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p1-0", "namespace": "batch", "annotations": {
        "scheduling.k8s.io/group-name": "p1"}}, "spec": {"schedulerName": "volcano", "containers": [
            {"name": "main", "image": "x", "resources": {"requests": {"cpu": "10", "nvidia.com/gpu": "8"}}}]},
        "status": {"phase": "Pending"}}
    path = tmp_path / "snap.yaml"
    path.write_text(yaml.safe_dump_all([queue("batch", 16), node("n0"), group, pod]))
    return str(path)


@pytest.mark.parametrize("api_version", [None, "scheduling.incubator.k8s.io/v1alpha1"])
def test_a_podgroup_volcano_does_not_read_is_a_warning_not_a_silent_absence(tmp_path, api_version):
    out = run("simulate", _snapshot(tmp_path, api_version), "--format", "json")
    assert out.code == 0, out.err
    assert "document 3 (PodGroup p1): a PodGroup of apiVersion" in out.err
    assert "not Volcano's (scheduling.volcano.sh/v1beta1)" in out.err
    job = json.loads(out.out)["strategies"]["topology-aware"]["jobs"][0]
    assert job["status"] == "pending" and "not in the snapshot" in job["reason"]


def test_a_volcano_podgroup_draws_no_such_warning(tmp_path):
    out = run("simulate", _snapshot(tmp_path, "scheduling.volcano.sh/v1beta1"), "--format", "json")
    assert out.code == 0, out.err
    assert "not Volcano's" not in out.err
    assert json.loads(out.out)["strategies"]["topology-aware"]["jobs"][0]["status"] == "placed"
