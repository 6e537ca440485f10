"""The rule framework: rules are pure functions over manifests (plain dicts).

A resource rule sees one object at a time; a stack rule sees every object of the stack plus the
fabric. The same functions run in ``trainstack check``, inside the CrossGuard pack and in tests.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator

from modules.core.secrets import redact

MANDATORY, ADVISORY, DISABLED = "mandatory", "advisory", "disabled"
LEVELS = (MANDATORY, ADVISORY, DISABLED)
# A report level, not an enforcement level: a rule said what it could not check. Never fails a run.
NOTE = "note"


@dataclass(frozen=True)
class Finding:
    """What a rule reports: the field path, what is wrong and how to fix it."""

    path: str
    message: str
    obj: dict | None = None     # stack rules name the object; resource rules leave it None


@dataclass(frozen=True)
class NotChecked:
    """What a rule could not check and why (e.g. capacity on a label-defined fabric).

    Rules yield it beside their findings; reports show it as a note, the pack as "not applicable".
    """

    reason: str
    obj: dict | None = None     # stack rules name the object; resource rules leave it None
    path: str = ""


@dataclass
class CheckContext:
    """What rules may consult besides the object itself."""

    stack: Any = None                 # modules.core.config.StackConfig, when checking a stack
    fabric: Any = None                # modules.fabric.model.Fabric, when the stack has one
    manifests: list[dict] = field(default_factory=list)   # every object rules may consult
    config: dict = field(default_factory=dict)             # this rule's settings (set per rule)
    memo: dict = field(default_factory=dict, compare=False, repr=False)   # per evaluation, see remember()

    def remember(self, key: str, compute: Callable[[], Any]) -> Any:
        """A fact about ``manifests`` computed once per rule evaluation, not once per object."""
        if key not in self.memo:
            self.memo[key] = compute()
        return self.memo[key]

    @property
    def production(self) -> bool:
        return bool(self.stack is not None and self.stack.production)


Outcome = Finding | NotChecked
ResourceCheck = Callable[[dict, CheckContext], Iterable[Outcome]]
StackCheck = Callable[[list[dict], CheckContext], Iterable[Outcome]]


@dataclass(frozen=True)
class Rule:
    id: str
    description: str             # what it catches, one sentence
    why: str                     # the upstream behaviour it guards against
    fix: str                     # how to fix a violation
    severity: str                # low | medium | high | critical
    enforcement: str             # default level: mandatory | advisory
    check: ResourceCheck | None = None        # resource rule
    check_stack: StackCheck | None = None     # stack rule
    kinds: frozenset[str] | None = None       # kinds a resource rule looks at (None: all)
    config_schema: dict = field(default_factory=dict)   # JSON Schema properties of its settings
    config_defaults: dict = field(default_factory=dict)

    @property
    def is_stack_rule(self) -> bool:
        return self.check_stack is not None

    def applies_to(self, obj: dict) -> bool:
        # No kind: a patch fragment or values file, not an object any rule can judge.
        return bool(obj.get("kind")) and (self.kinds is None or obj.get("kind") in self.kinds)


@dataclass(frozen=True)
class Violation:
    rule: str
    level: str
    severity: str
    resource: str        # kind/namespace/name
    path: str
    message: str
    source: str | None = None   # file the object came from, when known
    line: int | None = None     # 1-based line and column of the field in source, when known
    column: int | None = None
    origin: str | None = None   # "file:line:column" of the stack key that renders the object

    def __post_init__(self) -> None:   # a message may quote a user's value: never a credential
        object.__setattr__(self, "message", redact(self.message))

    @property
    def is_note(self) -> bool:
        return self.level == NOTE

    def as_dict(self) -> dict:
        return {"rule": self.rule, "level": self.level, "severity": self.severity,
                "resource": self.resource, "path": self.path, "message": self.message,
                **({"source": self.source} if self.source else {}),
                **({"line": self.line, "column": self.column} if self.line else {}),
                **({"origin": self.origin} if self.origin else {})}


def resource_id(obj: dict) -> str:
    """``apiVersion/Kind/namespace/name`` (namespace left out when cluster-scoped): the apiVersion
    tells ``batch/v1`` Jobs from ``batch.volcano.sh/v1alpha1`` ones."""
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    kind, name, ns = obj.get("kind", "?"), meta.get("name", "?"), meta.get("namespace")
    api = obj.get("apiVersion")
    head = f"{api}/{kind}" if api else str(kind)
    return f"{head}/{ns}/{name}" if ns else f"{head}/{name}"


def kind_of_id(resource: str) -> tuple[str, str]:
    """``(kind, name)`` of a resource id: the kind is the first CamelCase segment (API groups and
    versions are lower case)."""
    parts = resource.split("/")
    kind = next((p for p in parts if p[:1].isupper()), parts[0])
    return kind, parts[-1]


def where(obj: dict, path: str) -> str:
    """``Kind/namespace/name at field.path`` for messages."""
    return f"{resource_id(obj)} at {path}" if path else resource_id(obj)


# --- walking pod templates ------------------------------------------------------------------

_REPLICA_SPECS = {"PyTorchJob": "pytorchReplicaSpecs", "TFJob": "tfReplicaSpecs", "MPIJob": "mpiReplicaSpecs",
                  "XGBoostJob": "xgbReplicaSpecs", "PaddleJob": "paddleReplicaSpecs", "JAXJob": "jaxReplicaSpecs"}


def as_dict(value: Any) -> dict:
    """``value`` if it is a mapping, else ``{}``: rules never crash on odd shapes."""
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list:
    return value if isinstance(value, list) else []


_dict, _list = as_dict, as_list


def as_int(value: Any) -> int | None:
    """An integer field's value, or None. Integral floats count: the Pulumi engine sends every
    number as a float, so ``2.0`` must mean the same as ``2`` in every runner."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def meta(obj: dict) -> dict:
    return as_dict(obj.get("metadata"))


def labels(obj: dict) -> dict:
    return as_dict(meta(obj).get("labels"))


def annotations(obj: dict) -> dict:
    return as_dict(meta(obj).get("annotations"))


def api_group(obj: dict) -> str:
    """``batch.volcano.sh`` for ``batch.volcano.sh/v1alpha1``; ``""`` for the core group."""
    api_version = str(obj.get("apiVersion", ""))
    return api_version.rpartition("/")[0]


def is_kind(obj: dict, kind: str, group: str | None = None) -> bool:
    """Same kind, and (when given) the same API group: Volcano's Job is not batch/v1's Job."""
    return obj.get("kind") == kind and (group is None or api_group(obj) == group)


def pod_templates(obj: dict) -> Iterator[tuple[str, dict]]:
    """Every pod template an object carries, as ``(path to the template, template)``.

    Covers core workloads, Kubeflow v1 jobs, Volcano Jobs, CronJobs and JobFlow JobTemplates, JobSets and
    Trainer (Cluster)TrainingRuntimes.
    A bare Pod yields itself at path "".
    """
    kind = obj.get("kind")
    spec = _dict(obj.get("spec"))
    volcano = str(obj.get("apiVersion", "")).startswith("batch.volcano.sh/")
    if kind == "Pod":
        yield "", obj
    elif kind == "Job" and volcano:
        yield from _volcano_tasks(spec, "spec")
    elif kind == "CronJob" and volcano:   # Volcano's CronJob stamps out Volcano Jobs
        yield from _volcano_tasks(_dict(_dict(spec.get("jobTemplate")).get("spec")), "spec.jobTemplate.spec")
    elif kind == "JobTemplate" and str(obj.get("apiVersion", "")).startswith("flow.volcano.sh/"):
        yield from _volcano_tasks(spec, "spec")   # a JobFlow's step: a Volcano Job spec
    elif kind in ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "ReplicationController"):
        if isinstance(spec.get("template"), dict):
            yield "spec.template", spec["template"]
    elif kind == "CronJob":
        template = _dict(_dict(_dict(spec.get("jobTemplate")).get("spec")).get("template"))
        if template:
            yield "spec.jobTemplate.spec.template", template
    elif kind in _REPLICA_SPECS:
        key = _REPLICA_SPECS[kind]
        for role, replica in _dict(spec.get(key)).items():
            if isinstance(_dict(replica).get("template"), dict):
                yield f"spec.{key}.{role}.template", replica["template"]
    elif kind == "JobSet":
        yield from _replicated_jobs(spec, "spec")
    elif kind in ("TrainingRuntime", "ClusterTrainingRuntime"):
        yield from _replicated_jobs(_dict(_dict(spec.get("template")).get("spec")), "spec.template.spec")


def _volcano_tasks(job_spec: dict, prefix: str) -> Iterator[tuple[str, dict]]:
    for i, task in enumerate(_list(job_spec.get("tasks"))):
        if isinstance(_dict(task).get("template"), dict):
            yield f"{prefix}.tasks[{i}].template", task["template"]


def _replicated_jobs(jobset_spec: dict, prefix: str) -> Iterator[tuple[str, dict]]:
    for i, rj in enumerate(_list(jobset_spec.get("replicatedJobs"))):
        template = _dict(_dict(_dict(_dict(rj).get("template")).get("spec")).get("template"))
        if template:
            yield f"{prefix}.replicatedJobs[{i}].template.spec.template", template


def containers(template: dict, path: str) -> Iterator[tuple[str, dict]]:
    """``(path, container)`` for the containers and init containers of a pod template."""
    pod_spec = _dict(template.get("spec"))
    base = f"{path}.spec" if path else "spec"
    for field_name in ("initContainers", "containers"):
        for i, container in enumerate(_list(pod_spec.get(field_name))):
            if isinstance(container, dict):
                yield f"{base}.{field_name}[{i}]", container
