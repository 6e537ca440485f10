"""Manifest input as real repositories hold it, findings that point at lines, and the false
positives the peers' corpora showed."""
from __future__ import annotations

import io
import json
import sys
import xml.etree.ElementTree as ET

import jsonschema
import pytest
import yaml

from modules.core.config import load_project, load_stack
from modules.core.render import render
from policies.checking import stack_locator, without_copies
from policies.framework import CheckContext
from policies.inputs import load
from policies.rules import BY_ID
from policies.runner import PolicySettings, run_rules
from tests.support.cli import ROOT, run

from .test_report import sarif_schema

CRONJOB = """\
apiVersion: batch.volcano.sh/v1alpha1
kind: CronJob
metadata:
  name: nightly
  namespace: training
spec:
  schedule: "0 3 * * *"
  jobTemplate:
    spec:
      tasks:
      - name: burn
        replicas: 1
        template:
          spec:
            containers:
            - name: burn
              image: busybox:latest
              securityContext:
                privileged: true
"""


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    """A folder shaped like a real repository: kustomize, Helm, patches, a List, one bad object."""
    root = tmp_path_factory.mktemp("repo")
    (root / "base").mkdir()
    (root / "base" / "kustomization.yaml").write_text("resources: [cron.yaml]\npatches: [{path: patch.yaml}]\n")
    (root / "base" / "cron.yaml").write_text(CRONJOB)
    (root / "base" / "patch.yaml").write_text("metadata: {name: nightly}\nspec: {schedule: '0 4 * * *'}\n")
    (root / "chart").mkdir()
    (root / "chart" / "Chart.yaml").write_text("apiVersion: v2\nname: thing\nversion: 1.0.0\n")
    (root / "chart" / "values.yaml").write_text("image: {tag: latest}\nreplicas: 2\n")
    (root / "list.yaml").write_text("apiVersion: v1\nkind: List\nitems:\n"
                                    "- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a, namespace: training}\n"
                                    "- {spec: {replicas: 3}}\n")
    return root


def test_a_repository_folder_is_checked_and_the_rest_noted(repo):
    result = run("check", "prod", "--manifests", str(repo), "--format", "json")
    assert result.code == 1, result.err
    doc = json.loads(result.out)["stacks"]["prod"]
    notes = [n["message"] for n in doc["notChecked"] if n["rule"] == "manifests"]
    assert len(notes) == 5, notes   # one each: kustomization, patch, Chart.yaml, values, the List's item 1
    assert any("kustomization.yaml: document 1: skipped, a kustomization file" in n for n in notes)
    assert any("Chart.yaml: document 1: skipped, a Helm Chart.yaml" in n for n in notes)
    assert any("values.yaml: document 1: skipped, Helm chart values" in n for n in notes)
    assert any("patch.yaml: document 1: skipped, no apiVersion and kind" in n for n in notes)
    assert any("list.yaml: document 1 item 1: skipped" in n for n in notes)
    mine = [v for v in doc["violations"] if v.get("source", "").endswith("cron.yaml")]
    assert {v["rule"] for v in mine} >= {"requests-required", "image-pinned", "pod-security-baseline"}
    privileged = next(v for v in mine if v["rule"] == "pod-security-baseline")
    assert privileged["resource"] == "batch.volcano.sh/v1alpha1/CronJob/training/nightly"
    assert (privileged["line"], privileged["column"]) == (19, 17)    # privileged: true
    image = next(v for v in mine if v["rule"] == "image-pinned")
    assert (image["line"], image["column"]) == (17, 15)
    # rules on the patch fragment: none (requests-required used to fire on it)
    assert not [v for v in doc["violations"] if v.get("source", "").endswith("patch.yaml")]


def test_stdin(monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO(CRONJOB))
    result = run("check", "prod", "--manifests", "-", "--format", "json")
    assert result.code == 1, result.err
    hits = [v for v in json.loads(result.out)["stacks"]["prod"]["violations"] if v.get("source") == "<stdin>"]
    assert hits and all(v["line"] > 1 for v in hits)


def test_a_folder_of_one_unparsable_file_among_good_ones_is_checked(tmp_path):
    (tmp_path / "good.yaml").write_text(CRONJOB)
    (tmp_path / "template.yaml").write_text("kind: {{ .Values.kind }}\n  bad: [\n")
    result = run("check", "prod", "--manifests", str(tmp_path), "--format", "json")
    assert result.code == 1
    notes = json.loads(result.out)["stacks"]["prod"]["notChecked"]
    assert any("template.yaml" in n["message"] and "does not parse" in n["message"] for n in notes)
    # the one file the user names does not parse: exit 2, as before
    assert run("check", "prod", "--manifests", str(tmp_path / "template.yaml")).code == 2


def test_the_stacks_own_output_counts_once():
    plain = json.loads(run("check", "prod", "--format", "json").out)["stacks"]["prod"]
    result = run("check", "prod", "--manifests", str(ROOT / "deploy" / "prod"), "--format", "json")
    assert result.code == 0, result.out
    doc = json.loads(result.out)["stacks"]["prod"]
    assert doc["violations"] == [] == plain["violations"]
    # prod delivers with Flux: its HelmReleases, sources and Kustomizations are objects of their own
    engine = [d for f in sorted((ROOT / "deploy" / "prod" / "flux").rglob("*.yaml")) if f.name != "kustomization.yaml"
              for d in yaml.safe_load_all(f.read_text()) if d]
    assert engine and doc["objects"] == plain["objects"] + len(engine)
    assert {n["rule"] for n in doc["notChecked"]} == {"manifests"}   # charts/*.values.yaml, kustomization.yaml


def test_identical_objects_count_once_and_changed_ones_are_judged():
    a = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "namespace": "n"}, "data": {"k": "1"}}
    b = {**a, "data": {"k": "2"}}
    assert without_copies([a], [dict(a), b, dict(b)]) == [b]


@pytest.mark.parametrize("fmt", ["json", "sarif", "junit"])
def test_a_failed_run_still_writes_a_valid_document(fmt, tmp_path):
    result = run("check", "prod", "--manifests", str(tmp_path / "missing.yaml"), "--format", fmt)
    assert result.code == 2 and "no such file or folder" in result.err
    if fmt == "json":
        assert "no such file" in json.loads(result.out)["error"]
    elif fmt == "sarif":
        doc = json.loads(result.out)
        jsonschema.Draft4Validator(sarif_schema()).validate(doc)
        invocation = doc["runs"][0]["invocations"][0]
        assert invocation["executionSuccessful"] is False
        assert "no such file" in invocation["toolExecutionNotifications"][0]["message"]["text"]
    else:
        root = ET.fromstring(result.out)
        assert root.get("errors") == "1" and "no such file" in root.find(".//error").get("message")


def test_every_sarif_result_has_a_region_and_a_relative_uri(repo):
    result = run("check", "prod", "--project", str(ROOT), "--manifests", ".", "--format", "sarif", cwd=repo)
    doc = json.loads(result.out)
    jsonschema.Draft4Validator(sarif_schema()).validate(doc)
    results = doc["runs"][0]["results"]
    assert results
    for r in results:
        physical = r["locations"][0]["physicalLocation"]
        assert physical["region"]["startLine"] >= 1
        assert physical["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
        assert not physical["artifactLocation"]["uri"].startswith(("file:", "/"))


@pytest.fixture(scope="module")
def prod():
    project = load_project(ROOT)
    stack = load_stack(project, "prod")
    return project, stack, render(stack)


def test_rendered_objects_point_at_deploy_and_at_the_stack_key(prod, monkeypatch):
    monkeypatch.chdir(ROOT)
    project, stack, bundle = prod
    locate, objects = stack_locator(project, stack, bundle, load([]))
    deployment = next(o for o in objects if o["kind"] == "Deployment" and o["metadata"]["name"] == "eval-servers")
    where = locate(deployment, "spec.template.spec.containers[0].image")
    assert where["source"] == "deploy/prod/workloads/deployment.research.eval-servers.yaml"
    lines = (ROOT / where["source"]).read_text().splitlines()
    assert lines[where["line"] - 1].strip() == "image: vllm/vllm-openai:v0.11.0"
    file, line, _ = where["origin"].rsplit(":", 2)
    assert file == "stacks/Pulumi.prod.yaml"
    assert (ROOT / file).read_text().splitlines()[int(line) - 1].strip() == "- name: eval-servers"
    release = next(o for o in objects if o["kind"] == "Release" and o["metadata"]["name"] == "volcano")
    where = locate(release, "spec.values")
    assert where["source"] == "deploy/prod/charts/volcano.values.yaml"
    assert (ROOT / "stacks/Pulumi.prod.yaml").read_text().splitlines()[int(where["origin"].split(":")[1]) - 1] \
        .startswith("  trainstack:volcano")
    assert locate(None, "")["source"] == "stacks/Pulumi.prod.yaml"


# --- false positives ------------------------------------------------------------------------------

def violations(objects, rule, config=None):
    settings = PolicySettings(configs={rule: config} if config else {})
    return run_rules(objects, CheckContext(), settings, rules=[BY_ID[rule]])


def _pod(namespace, **spec):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": namespace},
            "spec": {"containers": [{"name": "c", "image": "x:1"}], **spec}}


def test_dns_policy_respects_exempt_namespaces():
    assert violations([_pod("kube-system", hostNetwork=True)], "host-network-opt-in") == []
    assert [v.path for v in violations([_pod("training", hostNetwork=True)], "host-network-opt-in")] == \
        ["spec.hostNetwork", "spec.dnsPolicy"]


def test_rules_skip_objects_without_kind():
    fragment = {"metadata": {"name": "x"}, "spec": {"template": {"spec": {"containers": [{"name": "c"}]}}}}
    for rule in BY_ID:
        assert [v for v in violations([fragment], rule) if not v.is_note and v.resource != "stack"] == [], rule


UPSTREAM_RUNTIME = {   # kubeflow/trainer v2.3.0 manifests/base/runtimes/torch_distributed.yaml, reduced
    "apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "ClusterTrainingRuntime",
    "metadata": {"name": "torch-distributed", "labels": {"trainer.kubeflow.org/framework": "torch"}},
    "spec": {"mlPolicy": {"numNodes": 1, "torch": {"numProcPerNode": "auto"}}, "template": {"spec": {
        "replicatedJobs": [{"name": "node", "template": {
            "metadata": {"labels": {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}},
            "spec": {"template": {"spec": {"containers": [
                {"name": "node", "image": "pytorch/pytorch:2.9.1-cuda12.8-cudnn9-runtime",
                 "command": ["/bin/bash", "-c", "torchrun"]}]}}}}}]}}},
}


def _trainjob(per_node):
    return {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
            "metadata": {"name": "llm", "namespace": "training"},
            "spec": {"runtimeRef": {"name": "torch-distributed"},
                     "trainer": {"numNodes": 2, **({"resourcesPerNode": per_node} if per_node else {})}}}


def test_runtime_that_leaves_requests_to_trainjobs_is_a_note_and_the_trainjob_is_checked():
    alone = violations([UPSTREAM_RUNTIME], "requests-required")
    assert [v.level for v in alone] == ["note"] and "resourcesPerNode" in alone[0].message
    sized = violations([UPSTREAM_RUNTIME, _trainjob({"requests": {"cpu": "8", "memory": "64Gi"}})],
                       "requests-required")
    assert [v.level for v in sized] == ["note"]
    unsized = violations([UPSTREAM_RUNTIME, _trainjob(None)], "requests-required")
    assert [(v.level, v.resource) for v in unsized if not v.is_note] == \
        [("mandatory", "trainer.kubeflow.org/v1alpha1/TrainJob/training/llm")]


def test_image_digest_on_request():
    pod = _pod("training")
    pod["spec"]["containers"][0]["image"] = "registry.example.com/x:1.2.3"
    assert violations([pod], "image-pinned") == []
    hits = violations([pod], "image-pinned", {"exemptImages": [], "requireDigest": True})
    assert [v.path for v in hits] == ["spec.containers[0].image"] and "no digest" in hits[0].message
    pod["spec"]["containers"][0]["image"] += "@sha256:" + "a" * 64
    assert violations([pod], "image-pinned", {"requireDigest": True}) == []
