"""Upstream's own admission rules, evaluated offline: what the API server would refuse at CREATE."""
from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from modules.upstream.cluster import Cluster
from modules.upstream.install import CHART_DEFAULT_ADMISSIONS, Install
from modules.upstream.volcano.partitions import CODES as PARTITION_CODES

from ..framework import MANDATORY, CheckContext, Finding, NotChecked, RuleOutcome, Rule, api_group, is_kind, where

if TYPE_CHECKING:
    from ..admission.webhook_check import Admitted

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
    from .crd_schema import refused_by_schema

    # An object its CRD schema refuses never reaches validating admission (crd-schema reports it).
    objects = [o for o in objects if not refused_by_schema(o, ctx)]
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
    admission = stack_admission(ctx)
    install = admission.install
    if install.assumed and not install.vap and any(_volcano(o) for o in objects):
        yield NotChecked(f"Volcano's ValidatingAdmissionPolicies not evaluated: no Volcano chart release among the "
                         f"checked objects, so {install.assumed} are assumed (vap_enable: false; webhooks "
                         f"{', '.join(sorted(CHART_DEFAULT_ADMISSIONS))})")
    namespaces = admission.namespaces()
    uninstalled = frozenset() if install.vap else ruleset.policy_sources()
    skipped: set[tuple[str, str]] = set()
    admitted = [admission.admitted(obj) for obj in objects]
    try:   # all objects in one round trip to the evaluating process
        outcomes: list | None = ruleset.evaluate_all(admitted, namespaces, install.map)
    except Exception:   # noqa: BLE001 - each object is tried again below, and its failure said there
        outcomes = None
    for number, obj in enumerate(objects):
        try:
            items = (outcomes[number] if outcomes is not None
                     else ruleset.evaluate(admitted[number], namespaces, install.map))
        except Exception as exc:   # never crash a run on an odd object; say what was not checked
            yield NotChecked(f"upstream admission rules not evaluated: {type(exc).__name__}: {exc}", obj)
            continue
        for item in items:
            if item.source in uninstalled:
                continue   # the chart does not install this policy (vap_enable false)
            if isinstance(item, Denial):
                reads = f" (the rule reads {', '.join(item.reads)})" if item.reads else ""
                yield Finding(item.path, f"{where(obj, item.path)}: {item.source} rejects this object: "
                                         f"\"{item.message}\"{reads}. The API server refuses it at create, so "
                                         f"`pulumi up` or the GitOps sync fails; change the object so that upstream's "
                                         f"rule `{item.rule}` holds.", obj)
            elif (item.source, item.rule) not in skipped:
                skipped.add((item.source, item.rule))
                yield NotChecked(f"{item.source}: rule `{item.rule}` not evaluated: {item.reason}")


def _volcano(obj: dict) -> bool:
    return api_group(obj).endswith("volcano.sh") or is_kind(obj, "Pod", "")


def stack_admission(ctx: CheckContext) -> "Admitted":
    """The checked objects as admitted on CREATE (``webhook_check.Admitted``): the Volcano install
    and cluster their manifests describe, and each object mutated once, for every rule of the check
    (``runner.run_rules`` shares the context's memo among its rules)."""
    from ..admission.webhook_check import Admitted

    return ctx.remember("upstream-admission:admitted", lambda: Admitted(ctx.manifests))


def stack_install(ctx: CheckContext) -> Install:
    """The Volcano install the checked objects describe (their chart release)."""
    return stack_admission(ctx).install


def stack_cluster(ctx: CheckContext) -> Cluster:
    """What Volcano's webhooks look up among the checked objects: their Queues (each Open) and
    Namespaces, complete when the objects are a whole stack's."""
    return stack_admission(ctx).cluster


def _send(objects: list[dict], admission: "Admitted") -> None:
    """The objects, as created and mutated, to the evaluating process without waiting
    (``RuleSet.send``): it judges them while the caller goes on, and the rule reads the outcomes
    back when it runs."""
    from ..admission import rules

    ruleset = rules()
    if ruleset.policies or ruleset.crds:
        ruleset.send([admission.admitted(obj) for obj in objects], admission.namespaces(), admission.install.map)


def _hand_over(objects: list[dict], ctx: CheckContext) -> None:
    """Before the rules run: the objects go to the evaluating process, which judges them while the
    other rules run."""
    _send(objects, stack_admission(ctx))


def _go_webhooks(objects: list[dict], ctx: CheckContext) -> Iterator[RuleOutcome]:
    """Volcano's Go-only webhook checks (the registry, modules/upstream/registry.py) that the install
    sends each object to, on the object as created and mutated. Trainer's, the Training Operator's
    and the API server's checks have rules of their own (`trainer-admission`,
    `training-operator-admission`, `kubernetes-api-validation`), and the partition checks
    `volcano-job-admission`."""
    from modules.upstream.fixes import fix_for

    admission = stack_admission(ctx)
    for obj in objects:
        try:
            refusals = admission.judge(obj, ("volcano",))
        except Exception as exc:   # never crash a run on an odd object; say what was not checked
            yield NotChecked(f"upstream webhook checks not evaluated: {type(exc).__name__}: {exc}", obj)
            continue
        for check, error in refusals:
            if error.origin in PARTITION_CODES:
                continue   # the named sub-rule `volcano-job-admission` reports these, with its own fix
            path = error.field
            fix = fix_for(error) or f"change {path} so that upstream's check holds"
            yield Finding(path, f"{where(obj, path)}: Volcano's admission webhook rejects this object: "
                                f"\"{error.message()}\" ({check.upstream}, {check.name}). The API server refuses it "
                                f"at create, so `pulumi up` or the GitOps sync fails; fix: {fix}.", obj)


RULES = (
    Rule(
        id="upstream-admission",
        description="Each object passes upstream's own admission rules for its kind, judged as created (status "
                    "dropped, the registered mutating webhooks' defaults applied): Volcano's Go-only webhooks as "
                    "the chart registers them (jobs, queues with their hierarchy, podgroups, hypernodes, cronjobs; "
                    "not in the release namespace or kube-system), in trainstack's own code, Volcano's "
                    "ValidatingAdmissionPolicies where the chart installs them (vap_enable), and the CEL "
                    "`x-kubernetes-validations` rules of the Volcano, Trainer v2, JobSet, Training Operator and "
                    "prometheus-operator CRDs.",
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
    """Hand a whole stack's ``objects`` to upstream's rules now (``RuleSet.send``), mutated and with
    the namespaces taken from ``objects`` as the rule takes them from its manifests (``Admitted``,
    built here for ``objects``: no check context holds it yet): the evaluating child judges
    them while the caller goes on, and the rule set remembers the outcomes by content when it is
    next asked. The pack does this when it builds the stack: before its gRPC server starts (the
    child is then forked, not a fresh interpreter), without waiting for the outcomes (its start and
    the Analyze calls do not wait on them); at AnalyzeStack the rule reads them and finds every
    object that arrives unchanged already evaluated. Best effort: an object not remembered, or one
    whose namespace differs, is evaluated by the rule as before."""
    from ..admission.webhook_check import Admitted

    try:
        _send(objects, Admitted(objects))
    except Exception:   # noqa: BLE001 - the rule evaluates what is not remembered, and says why it could not
        pass
