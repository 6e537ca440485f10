"""The Pulumi program: load the stack through pulumi.Config, render, register. Nothing else."""
from __future__ import annotations

import json
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

import pulumi

from .config import load_project, load_stack_from_pulumi
from .errors import InputError
from .pulumi_adapter import module_outputs, register
from .render import render


# A render the caller already holds (``trainstack preview`` renders the stack before it runs the
# program under mocks). Render is pure: the program reuses it when its own stack is the same.
_GIVEN: ContextVar[tuple[str, object] | None] = ContextVar("trainstack_given_render", default=None)


def _identity(stack) -> str:
    """Everything render reads from a stack, as text (so ``1`` and ``true`` stay different)."""
    return json.dumps([str(stack.project.root), str(stack.project.stack_dir), stack.project.name, stack.name,
                       stack.file, stack.values, stack.given, stack.other], sort_keys=True, default=repr)


@contextmanager
def rendered(stack, bundle):
    """Within this block the program takes ``bundle`` instead of rendering a stack equal to ``stack``."""
    token = _GIVEN.set((_identity(stack), bundle))
    try:
        yield
    finally:
        _GIVEN.reset(token)


def _render(stack):
    given = _GIVEN.get()
    if given is not None and given[0] == _identity(stack):
        return given[1]
    return render(stack)


def run(project_root: Path) -> None:
    try:
        stack = load_stack_from_pulumi(load_project(Path(project_root)))
        bundle = _render(stack)
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
