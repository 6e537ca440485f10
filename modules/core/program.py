"""The Pulumi program: load the stack through pulumi.Config, render, register. Nothing else."""
from __future__ import annotations

from pathlib import Path

import pulumi

from .config import load_project, load_stack_from_pulumi
from .errors import InputError
from .pulumi_adapter import module_outputs, register
from .render import render


def run(project_root: Path) -> None:
    try:
        stack = load_stack_from_pulumi(load_project(Path(project_root)))
        bundle = render(stack)
    except InputError as err:
        failure = pulumi.RunError(str(err))   # shown without a traceback
        failure.input_error = err   # preview (the program under mocks) reports it as itself
        raise failure from None
    for warning in bundle.warnings:
        pulumi.log.warn(warning)
    register(bundle, stack.kube_context, stack.secrets)
    pulumi.export("objects", len(bundle.resources))
    pulumi.export("releases", [r.name for r in bundle.releases])
    # per module: objects by kind, namespaces, chart versions; the fabric's HyperNode count
    outputs = module_outputs(bundle)
    pulumi.export("modules", outputs)
    pulumi.export("hyperNodes", outputs.get("fabric", {}).get("hyperNodes", 0))
    pulumi.export("charts", {r.name: r.version for r in bundle.releases})
