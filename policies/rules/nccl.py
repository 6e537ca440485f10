"""NCCL variables must be real NCCL settings with valid values."""
from __future__ import annotations

from typing import Iterator

from modules.nccl import variables

from ..framework import MANDATORY, CheckContext, Finding, Rule, containers, pod_templates, where


def _env_of_container(container: dict) -> dict[str, str]:
    out = {}
    for item in container.get("env") or []:
        if isinstance(item, dict) and "name" in item and "value" in item:
            out[str(item["name"])] = item["value"]
    return out


def _nccl_env_valid(obj: dict, ctx: CheckContext) -> Iterator[Finding]:
    if obj.get("kind") == "ConfigMap":
        data = obj.get("data") or {}
        if not isinstance(data, dict):
            return
        looks_nccl = any(str(k).startswith("NCCL_") or k in variables.NOT_SETTINGS for k in data)
        if not looks_nccl:
            return
        for name, problem in variables.problems(data):
            yield Finding(f"data.{name}", f"{where(obj, f'data.{name}')}: {problem}. NCCL ignores or rejects the value "
                          "at run time without failing the pod; fix the value or remove the key.")
        return
    for template_path, template in pod_templates(obj):
        for path, container in containers(template, template_path):
            env = _env_of_container(container)
            for name, problem in variables.problems(env):
                yield Finding(f"{path}.env.{name}", f"{where(obj, f'{path}.env')}: {problem}. Fix the value or "
                              "remove the variable.")
    if obj.get("kind") == "TrainJob":
        trainer = (obj.get("spec") or {}).get("trainer") or {}
        env = _env_of_container(trainer if isinstance(trainer, dict) else {})
        for name, problem in variables.problems(env):
            yield Finding(f"spec.trainer.env.{name}", f"{where(obj, 'spec.trainer.env')}: {problem}.")


RULES = (
    Rule(
        id="nccl-env-valid",
        description="NCCL variables in ConfigMaps and pod environments are real NCCL settings with values NCCL accepts.",
        why="NCCL silently ignores unknown variables and falls back on invalid values (NCCL_NTHREADS=4 logs at INFO "
            "and uses 512), and names like nrings, crossNic or socketTimeout are not settings at all.",
        fix="Use the variable names and ranges listed in reference/nccl.md, or set them through trainstack:nccl.",
        severity="high", enforcement=MANDATORY, check=_nccl_env_valid),
)
