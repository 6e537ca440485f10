"""Upstream's own admission rules, evaluated offline: what the API server would refuse at CREATE."""
from __future__ import annotations

from typing import Iterator

from ..framework import MANDATORY, CheckContext, Finding, NotChecked, RuleOutcome, Rule, api_group, is_kind, meta, where

HOW = ("run `trainstack admission fetch` (pinned sources, sha256-verified) or point --admission-dir / "
       "$TRAINSTACK_ADMISSION_DIR at a folder with volcano/*.yaml (or the Volcano chart archive) and "
       "$TRAINSTACK_CRD_DIR at the upstream CRDs")


# API groups whose objects upstream's pinned rules judge (policies/admission/sources.yaml); the core
# group only for Pods (Volcano's pod policies). Other objects need no rules, loaded or not.
COVERED_GROUPS = frozenset({"batch.volcano.sh", "scheduling.volcano.sh", "topology.volcano.sh", "flow.volcano.sh",
                            "trainer.kubeflow.org", "jobset.x-k8s.io", "kubeflow.org", "monitoring.coreos.com"})


def _covered(obj: dict) -> bool:
    return api_group(obj) in COVERED_GROUPS or is_kind(obj, "Pod", "")


def _upstream_admission(objects: list[dict], ctx: CheckContext) -> Iterator[RuleOutcome]:
    from ..admission import Denial, rules

    ruleset = rules()
    if ruleset.missing and any(_covered(o) for o in ctx.manifests):
        # One line for the run, whenever the stack or the manifests hold an object the rules judge
        # (every runner sees the same stack, so they all say it, once).
        yield NotChecked(f"upstream admission rules not evaluated: {'; '.join(ruleset.missing)}; {HOW}")
        if not ruleset.policies and not ruleset.crds:
            return
    namespaces = {meta(o).get("name"): o for o in ctx.manifests if is_kind(o, "Namespace", "")}
    skipped: set[tuple[str, str]] = set()
    try:   # all objects in one round trip to the evaluating process; evaluate() then answers from memory
        ruleset.prefetch(objects, namespaces)
    except Exception:   # noqa: BLE001 - each object is tried again below, and its failure said there
        pass
    for obj in objects:
        try:
            items = ruleset.evaluate(obj, namespaces)
        except Exception as exc:   # never crash a run on an odd object; say what was not checked
            yield NotChecked(f"upstream admission rules not evaluated: {type(exc).__name__}: {exc}", obj)
            continue
        for item in items:
            if isinstance(item, Denial):
                reads = f" (the rule reads {', '.join(item.reads)})" if item.reads else ""
                yield Finding(item.path, f"{where(obj, item.path)}: {item.source} rejects this object: "
                                         f"\"{item.message}\"{reads}. The API server refuses it at create, so "
                                         f"`pulumi up` or the GitOps sync fails; change the object so that upstream's "
                                         f"rule `{item.rule}` holds.", obj)
            elif (item.source, item.rule) not in skipped:
                skipped.add((item.source, item.rule))
                yield NotChecked(f"{item.source}: rule `{item.rule}` not evaluated: {item.reason}")


RULES = (
    Rule(
        id="upstream-admission",
        description="Each object passes upstream's own admission rules for its kind: Volcano's "
                    "ValidatingAdmissionPolicies (after its MutatingAdmissionPolicies' defaults) and the CEL "
                    "`x-kubernetes-validations` rules of the Volcano, Trainer v2, JobSet, Training Operator and "
                    "prometheus-operator CRDs.",
        why="The API server runs these rules on every create; an object that breaks one (a Queue with guarantee "
            "but no deserved, duplicated Volcano task names, a TrainJob with an unknown managedBy) is refused, "
            "and `pulumi up` or the GitOps sync fails after part of the stack was applied. CRD schema checks "
            "and trainstack's other rules do not see these.",
        fix="Change the object so that the quoted upstream rule holds (the message is upstream's own). When the "
            "rules cannot be loaded the rule says so in one note; see 'Upstream admission rules' below.",
        severity="high", enforcement=MANDATORY, check_stack=_upstream_admission),
)
