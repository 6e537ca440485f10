"""Volcano must be able to act on the topology settings: plugin enabled, arguments typed, pods
scheduled by Volcano at all."""
from __future__ import annotations

from typing import Any, Iterator

from ..framework import (MANDATORY, CheckContext, Finding, NotChecked, Rule, annotations, as_dict, is_kind,
                         pod_templates, resource_id, where)
from modules.semantics.eviction import GANG_EVICTION, actions_of, unprotected
from modules.semantics.scheduler_conf import (SchedulerConf, conf_plugins, expected_scheduler_name, has_plugin,
                                              is_volcano_release, parse_conf, release_values, scheduler_confs)
from modules.semantics.volcano import (BATCH, MIN_MEMBER_ANNOTATION, NTA, RUNTIME_KINDS, TOPOLOGY, constraints,
                                      uses_volcano_gang)

PLUGIN_ENABLED = "scheduler-plugin-enabled"
ARGS_TYPED = "scheduler-args-typed"
NAME_VOLCANO = "scheduler-name-volcano"

ACTIONS = ("enqueue", "allocate", "backfill", "preempt", "reclaim", "gangpreempt", "gangreclaim", "shuffle")
# Plugin arguments Volcano parses as int (framework/arguments.go: only YAML ints; "5" is ignored).
INT_ARGS = {
    NTA: {"weight", "hypernode.binpack.cpu", "hypernode.binpack.memory", "hypernode.gradient.evict.max-hypernodes"},
    "binpack": {"binpack.weight", "binpack.cpu", "binpack.memory"},
    "nodeorder": {"nodeaffinity.weight", "podaffinity.weight", "leastrequested.weight", "balancedresource.weight",
                  "mostrequested.weight", "tainttoleration.weight", "imagelocality.weight",
                  "podtopologyspread.weight", "volumebinding.weight"},
}
# name -> (string argument listing the weighted resources, prefix of the per-resource int weights)
RESOURCE_ARGS = {NTA: ("hypernode.binpack.resources", "hypernode.binpack.resources."),
                 "binpack": ("binpack.resources", "binpack.resources.")}
FLOAT_ARGS = {NTA: {"hypernode.binpack.normal-pod.fading"}}
BOOL_ARGS = {NTA: {"hypernode.binpack.normal-pod.enable"}}
PARSE_BOOL = {"1", "t", "T", "TRUE", "true", "True", "0", "f", "F", "FALSE", "false", "False"}


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


# --- scheduler-plugin-enabled -----------------------------------------------------------------

def _lacks_nta(conf: SchedulerConf) -> str | None:
    """Why this configuration does not run the network-topology-aware plugin, or None if it does."""
    if conf.uses_default:
        if conf.default_conf.endswith("volcano-scheduler-ci.conf"):
            return None   # the chart's CI conf lists the plugin
        return (f"custom.scheduler_config_override is empty, so the chart's default {conf.default_conf} is used, "
                "which does not list it")
    parsed, problem = parse_conf(conf.text)
    if parsed is None:
        return f"it {problem}, so Volcano keeps its previous configuration"
    if not has_plugin(parsed, NTA):
        return "its tiers do not list it"
    return None


def _share_problems(conf: dict, shared_queues: list[dict]) -> Iterator[tuple[str, str]]:
    """``(path inside the conf, why)`` where the queue-share plugin does not match what the
    configuration asks of it: capacity and proportion are mutually exclusive, gang eviction honours
    guarantee/deserved only through capacity, and proportion ignores a Queue's deserved."""
    names = {str(plugin.get("name")): at for at, plugin in conf_plugins(conf)}
    eviction = [a for a in actions_of(conf) if a in GANG_EVICTION]
    if "capacity" in names and "proportion" in names:
        yield names["proportion"], ("lists both capacity and proportion; Volcano's capacity plugin replaces "
                                    "proportion and the two cannot be used together. Remove proportion.")
        return
    if eviction and "capacity" not in names:
        at = names.get("proportion", "tiers")
        yield at, (f"runs {', '.join(eviction)} without the capacity plugin: these actions choose victims through "
                   "ssn.UnifiedEvictable, which only capacity registers with the queues' guarantee and deserved, "
                   "so with proportion a reclaiming queue can take GPUs from queues inside their fair share. "
                   "Replace `- name: proportion` by `- name: capacity` and give each Queue spec.deserved.")
    for walk in unprotected(conf):
        if not (shared_queues or walk.skipped):
            continue   # no share declared anywhere: nothing for the walk to protect
        at = f"tiers[{walk.tier}]"
        protected = (f" ({', '.join(resource_id(q) for q in shared_queues[:3])})" if shared_queues else "")
        yield at, (f"lets {walk.action} evict pods of queues inside their deserved or guarantee{protected}: "
                   f"{walk.describe()}. Put the share-aware plugin (capacity) in tier {walk.tier + 1}, as "
                   "Volcano's gang-eviction e2e configuration does.")
    deserved = [q for q in shared_queues if as_dict(q.get("spec")).get("deserved")]
    if "proportion" in names and "capacity" not in names and deserved:
        shown = ", ".join(resource_id(q) for q in deserved[:3])
        yield names["proportion"], (f"uses the proportion plugin, which ignores spec.deserved ({shown}): those "
                                    "shares never hold. Use the capacity plugin instead of proportion.")


def _share_findings(every: list[dict], judged: set[int]) -> Iterator[Finding]:
    shared = sorted((o for o in every if is_kind(o, "Queue", "scheduling.volcano.sh")
                     and (as_dict(o.get("spec")).get("deserved") or as_dict(o.get("spec")).get("guarantee"))),
                    key=resource_id)
    for conf in scheduler_confs(every):
        if id(conf.obj) not in judged or conf.uses_default:
            continue
        parsed, _ = parse_conf(conf.text)
        if parsed is None:
            continue   # scheduler-args-typed reports a conf that does not parse
        for inner, why in _share_problems(parsed, shared):
            at = f"{conf.path}:{inner}"
            yield Finding(at, obj=conf.obj, message=f"{where(conf.obj, at)}: the scheduler configuration {why}")


def _scheduler_plugin_enabled(objects: list[dict], ctx: CheckContext) -> Iterator[Finding | NotChecked]:
    """Reported once on each configuration that lacks the plugin while constraints exist; when the
    configuration is only context (the pack judging a user's job against the stack), on the job.
    Also: the queue-share plugin matches the actions and Queues (capacity for gang eviction)."""
    every = ctx.manifests or objects
    judged = {id(o) for o in objects}
    yield from _share_findings(every, judged)
    # Sorted and de-duplicated by object, so every runner words the finding the same way.
    unique = {resource_id(obj): (obj, found[0].path) for obj in every if (found := constraints(obj))}
    constrained = [unique[key] for key in sorted(unique)]
    hypernodes = [obj for obj in every if is_kind(obj, "HyperNode", TOPOLOGY)]
    if not constrained and not hypernodes:
        return
    confs = scheduler_confs(every)
    lacking = [(conf, why) for conf in confs if (why := _lacks_nta(conf))]
    if not confs:
        for obj, _ in constrained:
            if id(obj) in judged:
                yield NotChecked(f"{resource_id(obj)}: has a network-topology constraint, but the stack and the "
                                 "given manifests hold no Volcano scheduler configuration (chart release or "
                                 "volcano-scheduler-configmap) to check for the network-topology-aware plugin", obj=obj)
        return
    examples = ", ".join(f"{resource_id(o)} at {p}" for o, p in constrained[:3])
    more = f" and {len(constrained) - 3} more" if len(constrained) > 3 else ""
    uses = ([f"{len(constrained)} object(s) carry network-topology constraints ({examples}{more})"]
            if constrained else [])
    if hypernodes:
        uses.append(f"{len(hypernodes)} HyperNode(s) describe the fabric, which only this plugin reads")
    fix = (f"Without it Volcano never enforces hard-mode tiers and ignores HyperNodes. Add `- name: {NTA}` to a "
           "tier of the scheduler configuration (trainstack's volcano module does this), or drop the constraints.")
    reported = False
    for conf, why in lacking:
        if id(conf.obj) in judged:
            reported = True
            yield Finding(conf.path, obj=conf.obj, message=(
                f"{where(conf.obj, conf.path)}: the scheduler configuration does not enable the {NTA} plugin ({why}), "
                f"but {' and '.join(uses)}. {fix}"))
    if lacking and not reported:
        where_confs = "; ".join(f"{resource_id(conf.obj)} at {conf.path}: {why}" for conf, why in lacking)
        for obj, path in constrained:
            if id(obj) in judged:
                yield Finding(path, obj=obj, message=(
                    f"{where(obj, path)}: has a network-topology constraint, but the Volcano scheduler configuration "
                    f"does not enable the {NTA} plugin ({where_confs}). {fix}"))


# --- scheduler-args-typed ---------------------------------------------------------------------

def _check_args(plugin: dict, at: str) -> Iterator[tuple[str, str]]:
    name = plugin.get("name")
    for key, value in plugin.items():
        if isinstance(key, str) and key.startswith("enable") and not isinstance(value, bool):
            yield f"{at}.{key}", (f"{key} is {value!r}, not a boolean; the scheduler fails to load the whole "
                                  "configuration (and keeps the previous one). Write true or false unquoted.")
    args = plugin.get("arguments")
    if args is None:
        return
    if not isinstance(args, dict):
        yield f"{at}.arguments", f"arguments must be a mapping, got {type(args).__name__}."
        return
    listed: set[str] = set()
    resources_key, weight_prefix = RESOURCE_ARGS.get(name, (None, None))
    if resources_key and resources_key in args:
        value = args[resources_key]
        if isinstance(value, str):
            listed = {r.strip() for r in value.split(",") if r.strip()}
        else:
            yield f"{at}.arguments[{resources_key}]", (
                f"{resources_key} is a {type(value).__name__}, but Volcano reads it only as a comma-separated "
                f"string and silently ignores anything else. Write it as a string such as \"nvidia.com/gpu\".")
    for key, value in args.items():
        key = str(key)
        path = f"{at}.arguments[{key}]"
        wants_int = key in INT_ARGS.get(name, set()) or bool(weight_prefix and key.startswith(weight_prefix))
        if wants_int:
            if not _is_int(value):
                yield path, (f"{key} is {value!r} ({type(value).__name__}); Volcano parses it only as a YAML "
                             "integer and ignores anything else (a quoted \"5\" logs a warning and the default "
                             "applies). Write an unquoted integer.")
            elif value < 0 or (key == "weight" and value == 0):
                effect = "zeroes every HyperNode score" if value == 0 else "is replaced by the default"
                yield path, f"{key} is {value}, which {effect}. Use an integer >= 1."
            if weight_prefix and key.startswith(weight_prefix) and key[len(weight_prefix):] not in listed:
                yield path, (f"{key} weighs {key[len(weight_prefix):]}, which {resources_key} does not list, so "
                             f"the weight is ignored. Add it to {resources_key}.")
        elif key in FLOAT_ARGS.get(name, set()):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                yield path, f"{key} is {value!r}; Volcano expects a number and ignores anything else."
        elif key in BOOL_ARGS.get(name, set()):
            if not isinstance(value, bool) and str(value) not in PARSE_BOOL:
                yield path, f"{key} is {value!r}; Volcano expects true or false and ignores anything else."


def _check_conf(conf: dict) -> Iterator[tuple[str, str]]:
    actions = conf.get("actions")
    if actions is not None:
        if not isinstance(actions, str):
            yield "actions", ("actions must be one comma-separated string such as \"enqueue, allocate, backfill\"; "
                              "the scheduler rejects the whole configuration.")
        else:
            names = [a.strip() for a in actions.split(",") if a.strip()]
            unknown = [a for a in names if a not in ACTIONS]
            if unknown:
                yield "actions", (f"unknown action(s) {', '.join(unknown)}; one unknown action invalidates the whole "
                                  f"configuration (Volcano keeps the previous one). Valid: {', '.join(ACTIONS)}.")
    for at, plugin in conf_plugins(conf):
        yield from _check_args(plugin, at)


def _scheduler_args_typed(obj: dict, ctx: CheckContext) -> Iterator[Finding]:
    if is_volcano_release(obj):
        custom = as_dict(release_values(obj).get("custom"))
        controller = custom.get("controller_config_override")
        if controller is not None and not isinstance(controller, dict):
            path = "spec.values.custom.controller_config_override"
            yield Finding(path, f"{where(obj, path)}: must be a mapping (the chart renders it with toYaml); a block "
                          "string becomes a YAML string scalar and the controller fails to parse its "
                          "configuration, which turns HyperNode discovery off. Write it as a mapping.")
    for conf in scheduler_confs([obj]):
        if conf.obj is not obj or conf.uses_default:
            continue
        parsed, problem = parse_conf(conf.text)
        if parsed is None:
            yield Finding(conf.path, f"{where(obj, conf.path)}: the scheduler configuration {problem}; Volcano "
                          "refuses it at start-up, or keeps the previous configuration on reload. Fix the YAML.")
            continue
        for inner, message in _check_conf(parsed):
            yield Finding(f"{conf.path}:{inner}", f"{where(obj, f'{conf.path}:{inner}')}: {message}")


# --- scheduler-name-volcano -------------------------------------------------------------------

_POD_KEYS = ("volcano.sh/network-topology-", "scheduling.volcano.sh/", "scheduling.k8s.io/group-name")


def _volcano_pod_settings(template: dict) -> list[str]:
    notes = as_dict(as_dict(template.get("metadata")).get("annotations"))
    return sorted(k for k in notes if isinstance(k, str) and k.startswith(_POD_KEYS))


def _scheduler_name_volcano(obj: dict, ctx: CheckContext) -> Iterator[Finding]:
    spec = as_dict(obj.get("spec"))
    volcano_job = is_kind(obj, "Job", BATCH) or is_kind(obj, "JobTemplate", "flow.volcano.sh")
    job_path = "spec.schedulerName"
    if is_kind(obj, "CronJob", BATCH):   # Volcano's CronJob: the Job it creates is spec.jobTemplate
        volcano_job, spec, job_path = True, as_dict(as_dict(spec.get("jobTemplate")).get("spec")), \
            "spec.jobTemplate.spec.schedulerName"
    gang_runtime = obj.get("kind") in RUNTIME_KINDS and uses_volcano_gang(obj)
    owner_gang = MIN_MEMBER_ANNOTATION in annotations(obj)
    if not (volcano_job or gang_runtime or owner_gang
            or any(_volcano_pod_settings(template) for _, template in pod_templates(obj))):
        return   # nothing here asks for Volcano
    expected = ctx.config.get("schedulerName") or ctx.remember(
        "scheduler-name", lambda: expected_scheduler_name(ctx.manifests))
    if volcano_job:
        name = spec.get("schedulerName")
        if name not in (None, "", expected):
            yield Finding(job_path, f"{where(obj, job_path)}: is {name!r}; a Volcano Job's "
                          f"pods are only gang- and topology-scheduled by {expected!r}. Set spec.schedulerName: "
                          f"{expected} (or leave it empty).")
    for path, template in pod_templates(obj):
        pod_spec = as_dict(template.get("spec"))
        name = pod_spec.get("schedulerName")
        base = f"{path}.spec.schedulerName" if path else "spec.schedulerName"
        settings = _volcano_pod_settings(template)
        if volcano_job:
            if name not in (None, "", expected):
                yield Finding(base, f"{where(obj, base)}: is {name!r}; this task's pods would bypass Volcano and "
                              f"its gang and network-topology constraints. Remove it or set {expected}.")
            continue
        if not (gang_runtime or settings or owner_gang):
            continue
        if name == expected:
            continue
        if gang_runtime:
            why = ("the runtime sets podGroupPolicy.volcano, but Trainer's Volcano plugin only creates the PodGroup "
                   "and never sets the pods' scheduler")
        elif settings:
            why = f"the pod template carries Volcano settings ({', '.join(settings)})"
        else:
            why = f"the {obj.get('kind')} asks Volcano for a gang ({MIN_MEMBER_ANNOTATION})"
        got = "not set (so the default scheduler places the pods)" if not name else f"{name!r}"
        yield Finding(base, f"{where(obj, base)}: schedulerName is {got}, but {why}; only Volcano honours gangs, "
                      f"queues and network-topology constraints, so they are silently ignored. Set "
                      f"schedulerName: {expected}.")


RULES = (
    Rule(
        id=PLUGIN_ENABLED,
        description="Any network-topology constraint (Volcano Job, PodGroup, runtime podGroupPolicy, pod "
                    "annotations), and any HyperNode, requires the network-topology-aware plugin in the Volcano "
                    "scheduler configuration (chart values or volcano-scheduler-configmap). The configuration "
                    "uses the capacity plugin, not proportion, when it runs gangpreempt/gangreclaim or Queues set "
                    "deserved, and never both; where reclaim or gangreclaim runs, the first tier that filters "
                    "eviction victims holds a share-aware plugin whenever Queues set deserved or guarantee or the "
                    "configuration lists one in a later tier.",
        why="Only the network-topology-aware plugin registers the HyperNode ordering and gradient functions; "
            "without it Volcano falls back to one cluster-wide domain and hard-mode tiers are never enforced. "
            "Neither Volcano's built-in default nor the chart's default configuration lists it, and a configuration "
            "that does not parse is ignored on reload. Gang eviction respects queue guarantee/deserved only "
            "through the capacity plugin (ssn.UnifiedEvictable); proportion ignores deserved. The eviction actions "
            "walk the tiers and stop at the first tier whose plugins return victims: with priority, gang and "
            "conformance in tier 1, every non-critical pod is a victim and capacity in tier 2 is never asked.",
        fix="List `- name: network-topology-aware` in a tier of custom.scheduler_config_override (trainstack's "
            "volcano module renders it), or drop the constraint. With gangpreempt/gangreclaim or Queues with "
            "deserved, list `capacity` instead of `proportion`, in the first tier (as Volcano's gang-eviction e2e "
            "configuration does; trainstack's volcano module renders it there).",
        severity="critical", enforcement=MANDATORY, check_stack=_scheduler_plugin_enabled),
    Rule(
        id=ARGS_TYPED,
        description="The Volcano scheduler configuration parses, names only real actions, and its plugin "
                    "arguments have the types Volcano reads: integer weights are unquoted integers >= 1, "
                    "resource lists are strings, enable flags are booleans; controller_config_override is a mapping.",
        why="Volcano reads integer arguments only from YAML integers: a quoted \"10\" or 10.0 is ignored with a log "
            "line and the default weight applies; hypernode.binpack.resources as a YAML list is silently ignored; "
            "an unknown action or a non-boolean enable flag invalidates the whole configuration, which is kept "
            "at its previous state on hot reload.",
        fix="Write integer arguments unquoted (weight: 10), resource lists as comma-separated strings, and "
            "booleans as true/false; keep actions to enqueue, allocate, backfill, preempt, reclaim, gangpreempt, "
            "gangreclaim, shuffle.",
        severity="high", enforcement=MANDATORY, check=_scheduler_args_typed,
        kinds=frozenset({"Release", "ConfigMap"})),
    Rule(
        id=NAME_VOLCANO,
        description="Pods that carry Volcano settings (topology or gang annotations, Volcano Job tasks, runtimes "
                    "with podGroupPolicy.volcano) use schedulerName: volcano (or the chart's custom.scheduler_name).",
        why="The default scheduler ignores PodGroups, queues and topology annotations, so such pods run "
            "ungrouped and unconstrained. Trainer's Volcano plugin creates the PodGroup but never sets "
            "schedulerName on the runtime's pods.",
        fix="Set spec.schedulerName: volcano in every pod template of the workload (for Trainer, in each "
            "replicatedJob of the runtime).",
        severity="high", enforcement=MANDATORY, check=_scheduler_name_volcano,
        config_schema={"schedulerName": {
            "type": "string", "minLength": 1,
            "description": "The Volcano scheduler's name; by default the Volcano release's custom.scheduler_name, "
                           "else volcano."}}),
)
