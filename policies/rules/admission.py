"""Upstream's own admission rules, evaluated offline: what the API server would refuse at CREATE."""
from __future__ import annotations

from typing import Iterable, Iterator

from modules.upstream.volcano.mutation import as_created
from modules.upstream.volcano.partitions import UPSTREAM_MESSAGES

from ..framework import MANDATORY, CheckContext, Finding, NotChecked, RuleOutcome, Rule, api_group, is_kind, meta, where

HOW = ("fill the cache with `trainstack admission fetch` or pass --admission-dir DIR (volcano/*.yaml or the "
       "Volcano chart archive, and crds/); `trainstack admission status` shows what is read")


# API groups whose objects upstream's pinned rules judge (policies/admission/sources.yaml); the core
# group only for Pods (Volcano's pod policies). Other objects need no rules, loaded or not.
COVERED_GROUPS = frozenset({"batch.volcano.sh", "scheduling.volcano.sh", "topology.volcano.sh", "flow.volcano.sh",
                            "trainer.kubeflow.org", "jobset.x-k8s.io", "kubeflow.org", "monitoring.coreos.com"})


def _covered(obj: dict) -> bool:
    return api_group(obj) in COVERED_GROUPS or is_kind(obj, "Pod", "")


def _upstream_admission(objects: list[dict], ctx: CheckContext) -> Iterator[RuleOutcome]:
    from ..admission import Denial, rules

    # Our own code for upstream's Go-only checks: evaluated whether or not the CEL rules load.
    yield from _go_webhooks(objects, ctx)
    ruleset = rules()
    if ruleset.missing and any(_covered(o) for o in ctx.manifests):
        # One line for the run, whenever the stack or the manifests hold an object the rules judge
        # (every runner sees the same stack, so they all say it, once). A production stack is not
        # accepted unjudged: there it is a violation, elsewhere a note.
        missing = f"upstream admission rules not evaluated: {'; '.join(ruleset.missing)}; {HOW}"
        if ctx.production:
            yield Finding("", f"{missing}. A production stack is checked against upstream's rules: the API "
                              "server applies them at create whether trainstack read them or not.")
        else:
            yield NotChecked(missing)
        if not ruleset.policies and not ruleset.crds:
            return
    namespaces = _namespaces_in(ctx.manifests)
    skipped: set[tuple[str, str]] = set()
    try:   # all objects in one round trip to the evaluating process
        # The API server drops .status of a status-subresource kind on CREATE before admission.
        outcomes: list | None = ruleset.evaluate_all([as_created(obj) for obj in objects], namespaces)
    except Exception:   # noqa: BLE001 - each object is tried again below, and its failure said there
        outcomes = None
    for number, obj in enumerate(objects):
        try:
            items = outcomes[number] if outcomes is not None else ruleset.evaluate(as_created(obj), namespaces)
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


def _namespaces_in(objects: Iterable[dict]) -> dict[str, dict]:
    return {meta(o).get("name"): o for o in objects if is_kind(o, "Namespace", "")}


def _send(objects: list[dict], namespaces: dict[str, dict]) -> None:
    """The objects, as created, to the evaluating process without waiting (``RuleSet.send``): it
    judges them while the caller goes on, and the rule reads the outcomes back when it runs."""
    from ..admission import rules

    ruleset = rules()
    if ruleset.policies or ruleset.crds:
        ruleset.send([as_created(obj) for obj in objects], namespaces)


def _hand_over(objects: list[dict], ctx: CheckContext) -> None:
    """Before the rules run: the objects go to the evaluating process, which judges them while the
    other rules run."""
    _send(objects, _namespaces_in(ctx.manifests))


def _go_webhooks(objects: list[dict], ctx: CheckContext) -> Iterator[RuleOutcome]:
    """Upstream's Go-only webhook checks (the registry in policies/admission/webhooks.py), on each
    object as created and mutated; the sources with a named sub-rule (NAMED_SUB_RULES: Trainer's and
    the Training Operator's webhooks, the API server's built-in validation) are left to it."""
    from ..admission.webhook_check import cluster_of, declares_queues, enabled_admissions, judge

    cluster = ctx.remember("upstream-admission:cluster", lambda: cluster_of(ctx.manifests))
    enabled = ctx.remember("upstream-admission:enabled", lambda: enabled_admissions(ctx.manifests))
    known = ctx.remember("upstream-admission:declared", lambda: declares_queues(ctx.manifests))
    for obj in objects:
        try:
            refusals = list(judge(obj, cluster, enabled, _SUB_RULE_SOURCES, known))
        except Exception as exc:   # never crash a run on an odd object; say what was not checked
            yield NotChecked(f"upstream webhook checks not evaluated: {type(exc).__name__}: {exc}", obj)
            continue
        for hook, path, message in refusals:
            if message.startswith(_PARTITION_MESSAGES):
                continue   # the named sub-rule `volcano-job-admission` reports these, with its own fix
            fix = (hook.fix(message) if hook.fix else None) or f"change {path} so that upstream's check holds"
            who = (f"{_WHO[hook.source]} rejects every Job this CronJob creates (the CronJob itself is admitted)"
                   if hook.kind != obj.get("kind") else f"{_WHO[hook.source]} rejects this object")
            yield Finding(path, f"{where(obj, path)}: {who}: \"{message}\" "
                                f"({hook.upstream}, {hook.name}). The API server refuses it at create, so `pulumi up` "
                                f"or the GitOps sync fails; fix: {fix}.", obj)


_PARTITION_MESSAGES = tuple(UPSTREAM_MESSAGES.values())
# Sources whose refusals a named sub-rule reports (with a fix for each check, its own settings and
# level): the registry still serves them to the upstream-table runner.
NAMED_SUB_RULES = {"trainer": "trainer-admission", "training-operator": "training-operator-admission",
                   "kubernetes": "kubernetes-api-validation"}
_SUB_RULE_SOURCES = frozenset(NAMED_SUB_RULES)
_WHO = {"volcano": "Volcano's admission webhook", "trainer": "Trainer's admission webhook",
        "training-operator": "the Training Operator's admission webhook",
        "kubernetes": "the API server's built-in validation"}


RULES = (
    Rule(
        id="upstream-admission",
        description="Each object passes upstream's own admission rules for its kind, judged as created (status "
                    "dropped, mutating defaults applied): Volcano's ValidatingAdmissionPolicies (after its "
                    "MutatingAdmissionPolicies' defaults), the CEL `x-kubernetes-validations` rules of the Volcano, "
                    "Trainer v2, JobSet, Training Operator and prometheus-operator CRDs, and Volcano's Go-only "
                    "webhooks that the chart enables (jobs, queues with their hierarchy, podgroups, hypernodes, "
                    "cronjobs), in trainstack's own code.",
        why="The API server runs these rules on every create; an object that breaks one (a Queue with guarantee "
            "but no deserved, duplicated Volcano task names, a TrainJob with an unknown managedBy) is refused, "
            "and `pulumi up` or the GitOps sync fails after part of the stack was applied. CRD schema checks "
            "and trainstack's other rules do not see these.",
        fix="Change the object so that the quoted upstream rule holds (the message is upstream's own; a Volcano "
            "webhook finding names the fix). When the rules cannot be loaded the rule says so once: a note, on a "
            "production stack a violation; see 'Upstream admission rules' and 'Volcano's Go-only admission "
            "webhooks' below.",
        severity="high", enforcement=MANDATORY, check_stack=_upstream_admission, prepare=_hand_over),
)


def prime(objects: list[dict]) -> None:
    """Hand a whole stack's ``objects`` to upstream's rules now (``RuleSet.send``), the namespaces
    taken from ``objects`` as the rule takes them from its manifests: the evaluating child judges
    them while the caller goes on, and the rule set remembers the outcomes by content when it is
    next asked. The pack does this when it builds the stack: before its gRPC server starts (the
    child is then forked, not a fresh interpreter), without waiting for the outcomes (its start and
    the Analyze calls do not wait on them); at AnalyzeStack the rule reads them and finds every
    object that arrives unchanged already evaluated. Best effort: an object not remembered, or one
    whose namespace differs, is evaluated by the rule as before."""
    try:
        _send(objects, _namespaces_in(objects))
    except Exception:   # noqa: BLE001 - the rule evaluates what is not remembered, and says why it could not
        pass
