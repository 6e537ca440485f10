"""The fixture table and the three runners it goes through."""
from __future__ import annotations

import copy
import functools
import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from modules.core.config import load_project, load_stack, pulumi_config_map
from modules.core.render import render
from policies.driver import Pack, analyze, manifest_resources, stack_urn
from policies.framework import Violation
from policies.admission.upstream_tables import load_fixture
from policies.runner import bundle_objects, config_path
from tests.support.cli import ROOT, run

TABLE = Path(__file__).resolve().parent / "cases.yaml"
SHIPPED = ("dev", "staging", "prod")


@dataclass
class Case:
    id: str
    rule: str
    stack: str
    expect: str
    message: str = ""
    manifests: list[dict] | None = None
    also: list[str] = field(default_factory=list)

    @property
    def custom_stack(self) -> bool:
        return self.stack not in SHIPPED


@functools.lru_cache(maxsize=None)
def table() -> tuple[dict, tuple[Case, ...]]:
    data = load_fixture(TABLE)   # our own data: the C loader, 10x faster than yaml.safe_load
    cases = tuple(Case(**{k: v for k, v in c.items()}) for c in data["cases"])
    return data.get("stacks") or {}, cases


def project_with_stacks(folder: Path) -> Path:
    """A project folder with the repo's Pulumi.yaml and stacks plus the table's test stacks."""
    stacks, _ = table()
    shutil.copy(ROOT / "Pulumi.yaml", folder / "Pulumi.yaml")
    shutil.copytree(ROOT / "stacks", folder / "stacks")
    for name, config in stacks.items():
        (folder / "stacks" / f"Pulumi.{name}.yaml").write_text(yaml.safe_dump({"config": config}, sort_keys=False))
    return folder


def hardened(objects: list[dict]) -> list[dict]:
    """The table's pod templates with the Pod Security Standards Restricted settings filled in where
    a case leaves them out, so that a case about another rule breaks only that rule. Cases of the
    pod-security rules get their manifests exactly as written."""
    from policies.framework import as_dict, containers, pod_templates

    out = copy.deepcopy(objects)
    for obj in out:
        if not isinstance(obj, dict):
            continue
        for path, template in pod_templates(obj):
            spec = template.get("spec")
            if not isinstance(spec, dict):
                continue
            spec.setdefault("automountServiceAccountToken", False)
            spec.setdefault("securityContext", {}).setdefault("seccompProfile", {"type": "RuntimeDefault"})
            for _, container in containers(template, path):
                sc = container.setdefault("securityContext", {})
                sc.setdefault("allowPrivilegeEscalation", False)
                caps = sc.setdefault("capabilities", {})
                caps["drop"] = ["ALL"] if "ALL" not in as_dict(caps).get("drop", []) else caps["drop"]
    return out


def write_manifests(case: Case, folder: Path) -> Path | None:
    if case.manifests is None:
        return None
    path = folder / f"{case.id.replace('/', '--')}.yaml"
    manifests = case.manifests if case.rule.startswith("pod-security") else hardened(case.manifests)
    path.write_text(yaml.safe_dump_all(manifests, sort_keys=False))
    return path


@dataclass
class Report:
    """One runner's verdict, comparable across runners."""

    code: int
    violations: list[dict]      # as in `check --format json`
    notes: list[dict]

    def on(self, source: str | None) -> "Report":
        """Only what concerns the user's manifests (all of it for a stack case)."""
        if source is None:
            return self
        keep = [v for v in self.violations if v.get("source") == source or v["resource"] == "stack"]
        notes = [v for v in self.notes if v.get("source") == source or v["resource"] == "stack"]
        return Report(self.code, keep, notes)

    def key(self) -> tuple:
        violations = sorted((v["rule"], v["level"], v["resource"], v["path"], v["message"]) for v in self.violations)
        notes = sorted((v["rule"], v["message"]) for v in self.notes)
        return violations, notes


def _json_report(text: str, code: int, stack: str) -> Report:
    doc = json.loads(text)["stacks"][stack]
    return Report(code, doc["violations"], doc["notChecked"])


def check(project: Path, case: Case, manifests: Path | None) -> Report:
    args = ["check", case.stack, "--project", str(project), "--format", "json"]
    if manifests is not None:
        args += ["--manifests", str(manifests)]
    result = run(*args)
    assert result.code in (0, 1), result.err
    return _json_report(result.out, result.code, case.stack)


def preview(project: Path, stack: str, manifests: Path | None = None) -> Report:
    args = ["preview", stack, "--project", str(project), "--format", "json"]
    if manifests is not None:
        args += ["--manifests", str(manifests)]
    result = run(*args)
    assert result.code in (0, 1), result.err
    return _json_report(result.out, result.code, stack)


def _as_dicts(violations: list[Violation]) -> tuple[list[dict], list[dict]]:
    return ([v.as_dict() for v in violations if not v.is_note], [v.as_dict() for v in violations if v.is_note])


def policy_data(stack: str):
    path = config_path(stack)
    return json.loads(path.read_text()) if path.is_file() else None


def through_pack(pack: Pack, project: Path, case: Case, manifests: Path | None) -> Report:
    """The engine's sequence against the shared pack process: ConfigureStack switches it to the
    case's stack; the user's manifests (or, for a stack case, the rendered bundle) are analyzed."""
    from policies.inputs import load

    stack = load_stack(load_project(project), case.stack)
    pack.stack, pack.config = case.stack, pulumi_config_map(stack)
    if manifests is not None:
        loaded = load([str(manifests)])
        objects, sources = loaded.objects, loaded.sources
    else:
        objects, sources = bundle_objects(render(stack)), {}
    resources = manifest_resources(objects, case.stack, "trainstack", stack_urn(case.stack, "trainstack"), sources)
    outcome = analyze(pack, resources, policy_data(case.stack), f"policies/config.{case.stack}.json")
    violations, notes = _as_dicts(outcome.violations)
    code = 1 if any(v["level"] == "mandatory" for v in violations) else 0
    return Report(code, violations, notes)


def start_pack() -> Pack:
    stack = load_stack(load_project(ROOT), "prod")
    return Pack("prod", "trainstack", pulumi_config_map(stack))
