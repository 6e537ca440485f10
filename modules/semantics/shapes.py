"""Plain-dict access that never crashes on odd shapes, and where an object keeps its pod templates.

Rules over hand-written manifests and the simulator's strict reader both walk objects with these.
"""
from __future__ import annotations

from typing import Any, Iterator

from .training_kinds import REPLICA_SPECS as _REPLICA_SPECS


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
