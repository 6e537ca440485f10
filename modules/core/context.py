"""What every module's ``render(ctx)`` receives."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .config import StackConfig
from .errors import InputError

if TYPE_CHECKING:  # the fabric model is built once per render and shared by every module
    from modules.fabric.model import Fabric

MANAGED_BY = {"app.kubernetes.io/managed-by": "trainstack", "app.kubernetes.io/part-of": "trainstack"}
# Objects that must outlive `pulumi destroy` and GitOps pruning (claims and the namespaces holding
# them): Argo CD and Flux honour the first two; Helm's keep policy documents the intent for the rest.
KEEP_ANNOTATIONS = {
    "argocd.argoproj.io/sync-options": "Delete=false",
    "kustomize.toolkit.fluxcd.io/prune": "disabled",
    "helm.sh/resource-policy": "keep",
}


@dataclass
class RenderContext:
    """What each module's renderer is given: the stack, its fabric, and this render's warnings and shared results."""
    stack: StackConfig
    fabric: "Fabric | None" = None
    warnings: list[str] = field(default_factory=list)
    # What a module works out once per render and other modules ask for again (the runtimes), by
    # the owning module's name: the same answer, not a second one.
    derived: dict[str, Any] = field(default_factory=dict)

    def section(self, name: str) -> dict:
        return self.stack.section(name)

    def warn(self, message: str) -> None:
        """Something the reviewer should see that does not stop the render."""
        if message not in self.warnings:
            self.warnings.append(message)

    def error(self, path: str, message: str, rule: str | None = None) -> InputError:
        """A InputError at ``path``; ``rule`` names the policy rule that catches the same mistake."""
        return self.stack.error(path, message, rule=rule)

    def expected(self, path: str, what: str, got: object, rule: str | None = None) -> InputError:
        return self.stack.expected(path, what, got, rule=rule)

    def pick(self, path: str, name: str, choices: list[str], what: str) -> str:
        """``name`` if it is one of ``choices`` (else an error saying ``what`` was expected); the first
        choice when ``name`` is empty."""
        if not name:
            return choices[0]
        if name not in choices:
            raise self.expected(path, what, name)
        return name

    def metadata(self, module: str, name: str, namespace: str | None = None,
                 labels: dict | None = None, annotations: dict | None = None) -> dict[str, Any]:
        """Object metadata with trainstack's standard labels."""
        meta: dict[str, Any] = {"name": name}
        if namespace:
            meta["namespace"] = namespace
        meta["labels"] = {**MANAGED_BY, "app.kubernetes.io/component": module, **(labels or {})}
        if annotations:
            meta["annotations"] = dict(annotations)
        return meta
