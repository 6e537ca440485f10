"""`trainstack check --manifests` over any folder, with no project and no stack (a CI step after
`kustomize build`), and which upstream admission rules a run evaluated."""
from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest

from policies.checking import STACK_RULES
from tests.support.admission import shared_dirs
from tests.support.cli import ROOT, run

PRIVILEGED_JOB = """\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: privileged-train
  namespace: research
spec:
  schedulerName: volcano
  minAvailable: 1
  queue: default
  tasks:
    - name: worker
      replicas: 1
      template:
        spec:
          restartPolicy: Never
          containers:
            - name: main
              image: busybox:1.36
              securityContext:
                privileged: true
              resources:
                requests: {cpu: "1", memory: 1Gi}
                limits: {cpu: "1", memory: 1Gi}
"""


@pytest.fixture()
def outside(tmp_path):
    """A folder in no trainstack project, holding one privileged Volcano Job."""
    (tmp_path / "job.yaml").write_text(PRIVILEGED_JOB)
    return tmp_path


def test_outside_any_project_a_privileged_volcano_job_fails(outside):
    result = run("check", "--manifests", "job.yaml", cwd=outside)
    assert result.code == 1, result.err
    assert "MANDATORY pod-security-baseline:" in result.out and "[job.yaml:20:17]" in result.out
    assert "manifests: 1 mandatory" in result.out
    assert "(profile standard, no stack: " in result.err and "topology-satisfiable" in result.err


def test_standard_input_and_every_report_format(outside, monkeypatch):
    """`kustomize build | trainstack check --manifests -`: once as a separate process with no project
    in sight, then each report format."""
    proc = subprocess.run([sys.executable, "-m", "modules.cli", "check", "--manifests", "-", "--format", "json"],
                          input=PRIVILEGED_JOB, cwd=outside, capture_output=True, text=True, timeout=120,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin",
                               "TRAINSTACK_CACHE_DIR": str(outside / "cache")})
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert json.loads(proc.stdout)["stacks"]["manifests"]["mandatory"] == 1
    for fmt, probe in (("sarif", lambda out: json.loads(out)["runs"][0]["results"][0]["ruleId"]
                        == "pod-security-baseline"),
                       ("junit", lambda out: '<failure type="mandatory"' in out)):
        monkeypatch.setattr(sys, "stdin", io.StringIO(PRIVILEGED_JOB))
        result = run("check", "--manifests", "-", "--format", fmt, cwd=outside)
        assert result.code == 1 and probe(result.out), result.out


def test_stack_rules_run_only_with_a_stack(outside):
    job = outside / "hard.yaml"
    job.write_text(PRIVILEGED_JOB.replace("  queue: default\n", "  queue: default\n  networkTopology:\n"
                                          "    mode: hard\n    highestTierAllowed: 9\n"))
    alone = json.loads(run("check", "--manifests", str(job), "--format", "json", cwd=outside).out)
    rules = {v["rule"] for v in alone["stacks"]["manifests"]["violations"] + alone["stacks"]["manifests"]["notChecked"]}
    assert not rules & STACK_RULES
    with_stack = json.loads(run("check", "dev", "--manifests", str(job), "--format", "json", cwd=ROOT).out)
    assert any(v["rule"] == "topology-tier-exists" for v in with_stack["stacks"]["dev"]["violations"])


def test_profile_is_for_manifests_alone(outside):
    result = run("check", "dev", "--profile", "production", cwd=ROOT)
    assert result.code == 2 and "--profile: only for manifests checked without a stack" in result.err
    assert run("check", "--profile", "nope", "--manifests", "job.yaml", cwd=outside).code == 2
    assert run("check", cwd=outside).code == 2   # nothing to check: no project here


def test_production_without_upstream_rules_fails_and_development_keeps_the_note(outside, monkeypatch):
    monkeypatch.setenv("TRAINSTACK_ADMISSION_DIR", str(outside / "none"))
    monkeypatch.setenv("TRAINSTACK_CRD_DIR", str(outside / "none"))
    prod = json.loads(run("check", "prod", "--format", "json", cwd=ROOT).out)["stacks"]["prod"]
    [missing] = [v for v in prod["violations"] if v["rule"] == "upstream-admission"]
    assert missing["level"] == "mandatory" and "A production stack is checked against upstream's rules" \
        in missing["message"]
    assert run("check", "prod", cwd=ROOT).code == 1
    dev = run("check", "dev", cwd=ROOT)
    assert dev.code == 0 and "NOTE      upstream-admission: upstream admission rules not evaluated" in dev.out
    production = run("check", "--manifests", "job.yaml", "--profile", "production", "--format", "json", cwd=outside)
    assert any(v["rule"] == "upstream-admission" and v["level"] == "mandatory"
               for v in json.loads(production.out)["stacks"]["manifests"]["violations"])


def test_admission_status_names_the_rule_sets_their_folder_and_pins(tmp_path, monkeypatch):
    dirs = shared_dirs()
    if dirs is None:
        pytest.skip("no upstream admission rules beside the checkout")
    admission, crds = dirs
    both = tmp_path / "both"       # one folder holding the policies and the CRDs
    both.mkdir()
    (both / "admission").symlink_to(admission.resolve())
    (both / "crds").symlink_to(crds.resolve())
    monkeypatch.delenv("TRAINSTACK_CRD_DIR", raising=False)
    result = run("admission", "status", "--admission-dir", str(both))
    assert result.code == 0, result.out
    lines = result.out.splitlines()
    assert lines[0] == f"upstream admission rules from $TRAINSTACK_ADMISSION_DIR / --admission-dir ({both})"
    assert any(line.startswith("  volcano-sh/volcano v1.15.1 (") and "admission policies" in line for line in lines)
    assert any(line.startswith("  kubeflow/trainer v2.3.0 (") and "CEL rules in" in line for line in lines)
    assert "missing" not in result.out
    alone = run("admission", "status", "--admission-dir", str(admission))
    assert alone.code == 1 and "missing: no CRDs (none in $TRAINSTACK_CRD_DIR, nor in a crds/ folder" in alone.out
