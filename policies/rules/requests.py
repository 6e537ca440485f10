"""Every training pod asks for what it uses: CPU and memory requests, extended resources exact."""
from __future__ import annotations

from typing import Iterator

from ..framework import (MANDATORY, CheckContext, Finding, NotChecked, Rule, as_dict, as_list, pod_templates,
                         where)
from modules.semantics.workloads import (effective_node_pod, find_runtime, node_container_index, per_node_resources,
                                        runtime_ref_name, trainer_job_index)

from ..k8s import CORE_RESOURCES, is_extended, quantity, resources_of

RULE = "requests-required"


def _missing(container: dict, allow_limits: bool) -> list[str]:
    requests, limits = resources_of(container)
    return [r for r in CORE_RESOURCES if r not in requests and not (allow_limits and r in limits)]


def _best_effort(pod_spec: dict) -> bool:
    """No container asks for or is limited in CPU or memory: Kubernetes QoS class BestEffort."""
    for field_name in ("initContainers", "containers"):
        for c in as_list(pod_spec.get(field_name)):
            requests, limits = resources_of(as_dict(c))
            if any(r in requests or r in limits for r in CORE_RESOURCES):
                return False
    return True


def _scalar_names(pod_spec: dict) -> list[str]:
    """Extended resources (and hugepages) the pod's containers ask for: Volcano's ``Resource``
    counts them as scalar resources, so a pod with only these is not empty to it."""
    names = set()
    for field_name in ("initContainers", "containers"):
        for c in as_list(pod_spec.get(field_name)):
            requests, limits = resources_of(as_dict(c))
            names |= {str(n) for n in (*requests, *limits) if is_extended(str(n)) or str(n).startswith("hugepages-")}
    return sorted(names)


def _best_effort_message(obj: dict, base: str, scalars: list[str]) -> str:
    """What a pod template without CPU or memory means, to the kubelet and to Volcano."""
    if scalars:
        # Volcano v1.15.1 Resource.IsEmpty counts scalar resources: the task is not BestEffort to it.
        return (f"{where(obj, base)}: the pod template requests no CPU or memory in any container (only "
                f"{', '.join(scalars)}), so its pods are BestEffort to the kubelet: unbounded CPU and memory on "
                "the node, and the first evicted under node pressure. Volcano still allocates them (its "
                f"Resource.IsEmpty counts {scalars[0]}), but node fit and the gang's minResources count no CPU "
                "or memory for them, so they may be packed onto a node that cannot run them. Set "
                "resources.requests.cpu and .memory on every container.")
    return (f"{where(obj, base)}: the pod template requests no resources in any container, so its pods are "
            "BestEffort: Volcano counts their request as empty (Resource.IsEmpty) and its allocate action, which "
            "enforces network-topology constraints and gangs, skips them (only backfill places them), and the "
            "kubelet evicts them first under node pressure. Set resources.requests.cpu and .memory on every "
            "container.")


def _quantities(obj: dict, path: str, requests: dict, limits: dict) -> Iterator[Finding]:
    """Values must be quantities; extended resources (GPUs, RDMA devices) must request what they limit."""
    for part, values in (("requests", requests), ("limits", limits)):
        for name, value in values.items():
            if quantity(value) is None:
                yield Finding(f"{path}.{part}.{name}", f"{where(obj, f'{path}.{part}.{name}')}: {value!r} is not a "
                              "Kubernetes quantity; the API server rejects the object. Use a number or a quantity "
                              "such as 500m, 64Gi or 8.")
    for name in sorted(set(requests) | set(limits), key=str):
        if not is_extended(str(name)):
            continue
        request, limit = quantity(requests.get(name)), quantity(limits.get(name))
        if name in requests and name not in limits:
            yield Finding(f"{path}.limits.{name}", f"{where(obj, f'{path}.limits')}: {name} is requested "
                          f"({requests[name]}) without a limit; extended resources such as GPUs and RDMA devices "
                          "cannot be overcommitted and the API server rejects a request without an equal limit. "
                          f"Set limits.{name} to {requests[name]} (or set only the limit).")
        elif request is not None and limit is not None and request != limit:
            yield Finding(f"{path}.requests.{name}", f"{where(obj, f'{path}.requests.{name}')}: {name} request "
                          f"{requests[name]} differs from its limit {limits[name]}; extended resources such as GPUs "
                          "and RDMA devices must request exactly their limit (the API server rejects anything "
                          "else). Make requests and limits equal.")


def _check_container(obj: dict, path: str, container: dict, allow_limits: bool, check_core: bool,
                     subject: str | None = None) -> Iterator[Finding]:
    """``path`` is the container's ``resources`` field (a TrainJob's trainer.resourcesPerNode)."""
    requests, limits = resources_of(container)
    yield from _quantities(obj, path, requests, limits)
    if not check_core:
        return
    missing = _missing(container, allow_limits)
    if missing:
        name = container.get("name", "?")
        what = " and ".join(missing)
        _, limits = resources_of(container)
        limited = [m for m in missing if m in limits]
        example = {"cpu": "cpu: \"8\"", "memory": "memory: 64Gi"}
        if limited == missing:
            # The API server copies a limit into a missing request on the created Pod, so node fit
            # counts it; the PodGroup's minResources comes from the undefaulted template.
            why = (f"sets a {what} limit but no request: the API server copies the limit into the Pod's request, "
                   f"so node fit counts it, but Volcano's job controller computes the PodGroup's minResources "
                   f"from the pod template without that defaulting (CalTaskRequests), so queue enqueue and gang "
                   f"admission count no {what} for this pod.")
        else:
            why = (f"sets no {what} request, so the scheduler and Volcano's gang accounting (minResources) treat "
                   f"the pod as needing no {what} and may pack it onto a node that cannot run it.")
        yield Finding(f"{path}.requests",
                      f"{where(obj, f'{path}.requests')}: {subject or f'container {name!r}'} {why} Set "
                      f"resources.requests {{{', '.join(example[m] for m in missing)}}} sized for the workload.")


def _check_template(obj: dict, template_path: str, template: dict, allow_limits: bool) -> Iterator[Finding]:
    pod_spec = as_dict(template.get("spec"))
    base = f"{template_path}.spec" if template_path else "spec"
    best_effort = _best_effort(pod_spec) and bool(as_list(pod_spec.get("containers")))
    if best_effort:
        yield Finding(base, _best_effort_message(obj, base, _scalar_names(pod_spec)))
    for field_name in ("initContainers", "containers"):
        for i, container in enumerate(as_list(pod_spec.get(field_name))):
            container = as_dict(container)
            path = f"{base}.{field_name}[{i}]"
            # init containers run one at a time before the others; only regular ones must request CPU/memory
            yield from _check_container(obj, f"{path}.resources", container, allow_limits,
                                        check_core=field_name == "containers" and not best_effort)


def _check_trainjob(obj: dict, ctx: CheckContext, allow_limits: bool) -> Iterator[Finding | NotChecked]:
    per_node = per_node_resources(obj)
    path = "spec.trainer.resourcesPerNode"
    runtime = find_runtime(obj, ctx.manifests)
    if runtime is None:
        yield from _quantities(obj, path, as_dict(per_node.get("requests")), as_dict(per_node.get("limits")))
        if _missing({"resources": per_node}, allow_limits):
            yield NotChecked(f"{where(obj, path)}: its runtime {runtime_ref_name(obj)} is not in the stack or the "
                             "given manifests, so whether its node pods request CPU and memory cannot be told; "
                             "pass the runtime with --manifests or set resourcesPerNode.requests")
        return
    effective = effective_node_pod(obj, runtime)
    if effective is None:
        return
    pod_spec, runtime_path = effective
    c = node_container_index(pod_spec)
    if c is None:
        return
    container = as_dict(pod_spec["containers"][c])
    rname = f"{runtime.get('kind')} {(runtime.get('metadata') or {}).get('name')!r}"
    yield from _check_container(
        obj, path, container, allow_limits, check_core=True,
        subject=f"the node container (runtime {rname} {runtime_path} merged with {path})")


def _left_to_trainjobs(obj: dict, template_path: str, template: dict) -> bool:
    """The trainer node pod of a (Cluster)TrainingRuntime whose node container asks for no CPU or
    memory at all: upstream's runtimes are written so, and every TrainJob sizes its nodes with
    trainer.resourcesPerNode, which is checked on the TrainJob after the merge."""
    if obj.get("kind") not in ("TrainingRuntime", "ClusterTrainingRuntime") or \
            not str(obj.get("apiVersion", "")).startswith("trainer.kubeflow.org/"):
        return False
    index = trainer_job_index(obj)
    if index is None or f"replicatedJobs[{index}]." not in template_path:
        return False
    pod_spec = as_dict(template.get("spec"))
    c = node_container_index(pod_spec)
    return c is not None and _missing(as_dict(pod_spec["containers"][c]), False) == list(CORE_RESOURCES)


def _requests_required(obj: dict, ctx: CheckContext) -> Iterator[Finding | NotChecked]:
    allow_limits = bool(ctx.config.get("allowLimitsAsRequests", False))
    for template_path, template in pod_templates(obj):
        if _left_to_trainjobs(obj, template_path, template):
            base = f"{template_path}.spec"
            yield NotChecked(f"{where(obj, base)}: the node container requests no CPU or memory, so every TrainJob "
                             "on this runtime must set trainer.resourcesPerNode.requests (the design of upstream's "
                             "runtimes); each TrainJob is checked after the merge, the runtime alone is not a "
                             "violation", path=base)
            continue
        yield from _check_template(obj, template_path, template, allow_limits)
    if obj.get("kind") == "TrainJob" and str(obj.get("apiVersion", "")).startswith("trainer.kubeflow.org/"):
        yield from _check_trainjob(obj, ctx, allow_limits)


RULES = (
    Rule(
        id=RULE,
        description="Every pod template (Deployments, StatefulSets, Jobs, PyTorchJob/TFJob/MPIJob replicas, Volcano "
                    "Job tasks, (Cluster)TrainingRuntimes, and TrainJobs merged with their runtime) requests CPU "
                    "and memory, and requests exactly the GPUs and RDMA devices it limits.",
        why="Pods without requests are packed blindly and their gang's minResources undercounts, so a job "
            "starts on nodes that cannot run it; pods without CPU or memory (GPU-only pods too) are BestEffort to "
            "the kubelet, unbounded and evicted first; pods that request nothing at all are also empty to "
            "Volcano (Resource.IsEmpty counts GPUs and other scalar resources) and skipped by its allocate "
            "action, which is where topology constraints and gangs are enforced; extended resources cannot be "
            "overcommitted and the API server rejects a GPU request that differs from its limit. Kyverno, Checkov and "
            "kube-linter never look inside PyTorchJob, TrainJob or Volcano Job templates.",
        fix="Set resources.requests.cpu and .memory on every container (in the runtime's node container or the "
            "TrainJob's trainer.resourcesPerNode), and give GPUs and RDMA devices equal requests and limits.",
        severity="high", enforcement=MANDATORY, check=_requests_required,
        config_schema={"allowLimitsAsRequests": {
            "type": "boolean", "default": False,
            "description": "Accept a CPU/memory limit without a request (the API server copies the limit into "
                           "the Pod's request, so node fit is right; Volcano's minResources still counts none); by "
                           "default requests must be written out."}},
        config_defaults={"allowLimitsAsRequests": False}),
)
