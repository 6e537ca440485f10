"""Shared data must survive (ReadWriteMany, retained claims), and the claims pods mount must serve them."""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Iterator

from modules.core.context import KEEP_ANNOTATIONS
from modules.semantics.capacity import counted
from modules.semantics.workloads import Unknown, find_runtime, job_patches, workload_of
from modules.storage.render import SHARED_LABEL

from ..framework import (MANDATORY, CheckContext, Finding, NotChecked, Rule, as_dict, as_list, labels, meta,
                         pod_templates, where)
from ..k8s import show_resources


def _labelled_shared(obj: dict) -> bool:
    return str(labels(obj).get(SHARED_LABEL, "")).lower() == "true"


def _stack_shared_names(ctx: CheckContext) -> set[str]:
    """Claims the stack declares shared (storage.claims[].shared): a user's claim of the same name
    replaces one of them, label or not."""
    values = getattr(ctx.stack, "values", None)
    claims = as_list(as_dict(as_dict(values).get("storage")).get("claims")) if isinstance(values, dict) else []
    return {c.get("name") for c in map(as_dict, claims) if c.get("shared", True) and c.get("name")}


def _is_shared(obj: dict, ctx: CheckContext) -> bool:
    if _labelled_shared(obj):
        return True
    key = (meta(obj).get("name"), meta(obj).get("namespace"))
    if any(_labelled_shared(o) and (meta(o).get("name"), meta(o).get("namespace")) == key and o is not obj
           for o in ctx.manifests if o.get("kind") == "PersistentVolumeClaim"):
        return True
    name = meta(obj).get("name")
    return isinstance(name, str) and name in _stack_shared_names(ctx)


def _shared_claims_rwx_retained(obj: dict, ctx: CheckContext) -> Iterator[Finding]:
    if not _is_shared(obj, ctx):
        return
    meta_ = as_dict(obj.get("metadata"))
    modes = as_list(as_dict(obj.get("spec")).get("accessModes"))
    if "ReadWriteMany" not in modes:
        yield Finding("spec.accessModes",
                      f"{where(obj, 'spec.accessModes')}: shared-data claim has access modes {modes}; pods of one job "
                      "run on many nodes and a ReadWriteOnce volume attaches to one node only, so the others "
                      "stay Pending. Use accessModes [ReadWriteMany] on a NAS StorageClass.")
    annotations = as_dict(meta_.get("annotations"))
    missing = [k for k, v in KEEP_ANNOTATIONS.items() if annotations.get(k) != v]
    if missing:
        yield Finding("metadata.annotations",
                      f"{where(obj, 'metadata.annotations')}: shared-data claim is not retained; deleting the stack "
                      "or a GitOps prune would delete the claim and, with a Delete reclaim policy, the data. Set "
                      + ", ".join(f"{k}: {KEEP_ANNOTATIONS[k]}" for k in missing)
                      + " (trainstack does this with storage.claims[].retain: true).")


RULES = (
    Rule(
        id="shared-claims-rwx-retained",
        description="Shared-data claims (labelled trainstack.io/shared-data=true, or named like a claim the stack "
                    "declares shared) are ReadWriteMany and carry the keep annotations.",
        why="A ReadWriteOnce volume attaches to one node, so a multi-node job's other pods stay Pending; an unretained "
            "claim is deleted with the stack or by a GitOps prune, and with a Delete reclaim policy the data goes too.",
        fix="Set accessModes [ReadWriteMany] on a NAS StorageClass and keep storage.claims[].retain true.",
        severity="high", enforcement=MANDATORY, check=_shared_claims_rwx_retained,
        kinds=frozenset({"PersistentVolumeClaim"})),
)


# --- claims-serve-pods ------------------------------------------------------------------------

NODE_BOUND = ("ReadWriteOnce", "ReadWriteOncePod")
CLAIMS_RULE = "claims-serve-pods"
_STEP = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


@dataclass(frozen=True)
class Use:
    """One pod volume that mounts a claim: where it is declared (``path``, in ``owner``) and the
    gang pods of the pod set that mount it (0 outside the gang)."""

    claim: str
    path: str
    owner: dict
    pods: int
    requests: dict
    one_per_node: bool


def _at(obj: object, path: str) -> object:
    """The value at a dotted path with [i] indexes (the semantic core's PodSet.path)."""
    for name, index in _STEP.findall(path):
        obj = as_list(obj)[int(index)] if index and int(index) < len(as_list(obj)) else \
            (as_dict(obj).get(name) if name else None)
    return obj


def _claim_volumes(pod_spec: object, base: str) -> Iterator[tuple[str, str]]:
    """``(path of claimName, claim)`` for each persistentVolumeClaim volume of a pod spec."""
    for i, volume in enumerate(as_list(as_dict(pod_spec).get("volumes"))):
        name = as_dict(as_dict(volume).get("persistentVolumeClaim")).get("claimName")
        if isinstance(name, str) and name:
            yield f"{base}.volumes[{i}].persistentVolumeClaim.claimName", name


def _patched_volumes(trainjob: dict, job_name: str | None) -> Iterator[tuple[str, str]]:
    """Claims a TrainJob's runtimePatches add to the pods of replicatedJob ``job_name`` (None: any)."""
    for patch in job_patches(trainjob):
        if job_name is None or patch.name == job_name:
            yield from _claim_volumes(patch.pod, f"{patch.template_path}.spec")


def _volcano_job_volumes(obj: dict) -> Iterator[tuple[str, str]]:
    """A Volcano Job's own ``spec.volumes`` that name an existing claim (``volumeClaimName`` without a
    ``volumeClaim`` to create it): its job controller mounts them into every task's pods."""
    if obj.get("kind") != "Job" or not str(obj.get("apiVersion", "")).startswith("batch.volcano.sh/"):
        return
    for i, volume in enumerate(as_list(as_dict(obj.get("spec")).get("volumes"))):
        volume = as_dict(volume)
        name = volume.get("volumeClaimName")
        if isinstance(name, str) and name and volume.get("volumeClaim") is None:
            yield f"spec.volumes[{i}].volumeClaimName", name


def _uses(obj: dict, ctx: CheckContext) -> list[Use]:
    """Every claim the object's pods mount, with the gang pods that mount it (the semantic core's
    reading of the workload's pods and gang)."""
    runtime = find_runtime(obj, ctx.manifests) if obj.get("kind") == "TrainJob" else None
    try:
        workload = workload_of(obj, ctx.manifests)
    except Unknown:
        workload = None
    out: list[Use] = []
    if workload is None:   # no gang known: the claims still have to exist
        templates = pod_templates(runtime) if runtime is not None else pod_templates(obj)
        for path, template in templates:
            for at, claim in _claim_volumes(template.get("spec"), f"{path}.spec" if path else "spec"):
                out.append(Use(claim, at, runtime or obj, 0, {}, False))
        out += [Use(claim, at, obj, 0, {}, False) for at, claim in _volcano_job_volumes(obj)]
        if obj.get("kind") == "TrainJob":
            out += [Use(claim, at, obj, 0, {}, False) for at, claim in _patched_volumes(obj, None)]
        return out
    gang = {s.path: s.count for s in workload.gang().sets}
    job_level = list(_volcano_job_volumes(obj))
    for s in workload.sets:
        owner = runtime if runtime is not None else obj
        spec = _at(owner, s.path)
        found = [(at, claim, owner) for at, claim in _claim_volumes(spec, s.path)]
        if runtime is not None:
            found += [(at, claim, obj) for at, claim in _patched_volumes(obj, s.name)]
        found += [(at, claim, obj) for at, claim in job_level]   # every task's pods mount those
        for at, claim, where_from in found:
            out.append(Use(claim, at, where_from, gang.get(s.path, 0), s.requests,
                           as_dict(spec).get("hostNetwork") is True))
    return out


def _pvcs(manifests: list[dict]) -> dict[tuple[str, str], dict]:
    return {(str(meta(o).get("namespace") or "default"), str(meta(o).get("name"))): o
            for o in manifests if o.get("kind") == "PersistentVolumeClaim" and meta(o).get("name")}


def _nodes_needed(ctx: CheckContext, uses: list[Use]) -> tuple[int, str] | None:
    """The fewest nodes the gang pods of ``uses`` need (a lower bound: their summed requests over
    the best pool's node), and how it was found; None without a fabric inventory."""
    pods = sum(u.pods for u in uses)
    if any(u.one_per_node for u in uses if u.pods):
        return pods, "host-network pods run one per node"
    pools = getattr(ctx.fabric, "pools", None) or {}
    best: tuple[int, str] | None = None
    for pool in pools.values():
        allocatable = pool.allocatable()
        need = 1
        for name in {n for u in uses for n in u.requests}:
            total = sum((u.requests.get(name, Decimal(0)) * u.pods for u in uses), Decimal(0))
            if total <= 0 or not counted(name, allocatable):
                continue
            have = Decimal(allocatable.get(name, 0))
            need = max(need, math.ceil(total / have) if have > 0 else math.inf)
        if need != math.inf and (best is None or need < best[0]):
            best = (int(need), f"a node of pool {pool.name} holds {show_resources(allocatable)}")
    return best if pools else None


def _node_bound(obj: dict, claim: dict, uses: list[Use], ctx: CheckContext) -> Iterator[Finding | NotChecked]:
    modes = [m for m in as_list(as_dict(claim.get("spec")).get("accessModes")) if isinstance(m, str)]
    if not modes or not set(modes) <= set(NODE_BOUND):
        return
    pods = sum(u.pods for u in uses)
    if pods < 2:
        return
    first = uses[0]
    name = meta(claim).get("name")
    at = first.path if first.owner is obj else "spec.runtimeRef"
    if "ReadWriteOncePod" in modes:
        yield Finding(at, f"{where(obj, at)}: {pods} pods of one gang mount claim {name!r}, which is "
                      "ReadWriteOncePod: one pod in the whole cluster may use it, so the others stay Pending and the "
                      "gang never starts. Use a ReadWriteMany claim (a NAS StorageClass) for data the pods share.")
        return
    needed = _nodes_needed(ctx, uses)
    if needed is None:
        yield NotChecked(f"{where(obj, at)}: {pods} pods of one gang mount ReadWriteOnce claim {name!r}; whether they "
                         "fit on one node is unknown: no fabric node pools, or none holds their requests", path=at)
        return
    nodes, how = needed
    if nodes > 1:
        yield Finding(at, f"{where(obj, at)}: {pods} pods of one gang mount claim {name!r}, which is ReadWriteOnce "
                      f"(attached to one node at a time), but they need at least {nodes} nodes ({how}); the pods "
                      "on every other node stay Pending (Multi-Attach error), so the gang never starts. Use a "
                      "ReadWriteMany claim (a NAS StorageClass) for data the pods share.")


def _claims_serve_pods(obj: dict, ctx: CheckContext) -> Iterator[Finding | NotChecked]:
    namespace = meta(obj).get("namespace")
    if not isinstance(namespace, str) or not namespace:
        return   # cluster-scoped runtimes: judged on each TrainJob, in its namespace
    uses = _uses(obj, ctx)
    if not uses:
        return
    claims = ctx.remember("claims", lambda: _pvcs(ctx.manifests))
    known = ctx.stack is not None or bool(ctx.config.get("clusterObjectsKnown"))
    by_claim: dict[str, list[Use]] = {}
    for use in uses:
        by_claim.setdefault(use.claim, []).append(use)
    for name, mine in by_claim.items():
        claim = claims.get((namespace, name))
        at = mine[0].path if mine[0].owner is obj else "spec.runtimeRef"
        via = "" if mine[0].owner is obj else f" (from {mine[0].owner.get('kind')} {meta(mine[0].owner).get('name')!r})"
        if claim is None:
            elsewhere = sorted(ns for ns, n in claims if n == name)
            if known or elsewhere:
                yield Finding(at, f"{where(obj, at)}: its pods{via} mount claim {name!r}, which does not exist in "
                              f"namespace {namespace!r}" + (f" (only in {', '.join(elsewhere)})" if elsewhere else "")
                              + ": a pod mounts claims of its own namespace only, so the pods stay Pending. Create "
                              "the claim there (trainstack:storage.claims[].namespace) or fix the name.")
            else:
                yield NotChecked(f"{where(obj, at)}: claim {name!r} is not among the checked objects; whether it "
                                 f"exists in {namespace!r} is unknown (set clusterObjectsKnown when they are all)",
                                 path=at)
            continue
        yield from _node_bound(obj, claim, mine, ctx)


RULES += (
    Rule(
        id=CLAIMS_RULE,
        description="Claims that pods mount exist in the pods' namespace, and a ReadWriteOnce (or ReadWriteOncePod) "
                    "claim is not shared by pods of one gang that must land on several nodes (or, for "
                    "ReadWriteOncePod, by more than one pod).",
        why="A pod waits for a missing claim forever (Pending); a ReadWriteOnce volume attaches to one node at a "
            "time and a ReadWriteOncePod volume to one pod, so the gang's other pods never start, and Volcano "
            "keeps the started ones holding their GPUs until the gang times out.",
        fix="Mount claims of the pods' own namespace (trainstack:storage.claims[].namespace) and use ReadWriteMany "
            "claims on a NAS StorageClass for data the pods of a job share.",
        severity="high", enforcement=MANDATORY, check=_claims_serve_pods,
        kinds=frozenset({"Job", "CronJob", "TrainJob", "PyTorchJob", "TFJob", "MPIJob", "JobSet", "Deployment",
                         "StatefulSet", "ReplicaSet", "DaemonSet", "Pod"}),
        config_schema={"clusterObjectsKnown": {
            "type": "boolean", "default": False,
            "description": "The checked objects are all the cluster holds: a claim not among them does not exist "
                           "(with a stack this is always so)."}},
        config_defaults={"clusterObjectsKnown": False}),
)
