"""Topology constraints must name real tiers and must be satisfiable on the fabric."""
from __future__ import annotations

from typing import Iterator

from modules.semantics.capacity import (counted, not_counted_note, pods_per_node, reachable_pool_counts,
                                       smallest_fitting_domain)

from ..framework import (MANDATORY, CheckContext, Finding, NotChecked, Rule, annotations, resource_id, where)
from ..k8s import add, show_resources
from modules.semantics.volcano import (MODE_ANNOTATION, TIER_ANNOTATION, Constraint, Tiers, constraints,
                                       effective_constraints, job_constraint, tiers_of)
from modules.semantics.workloads import Gang, PodSet, Unknown, gang_of, gangs_of

TIER_EXISTS = "topology-tier-exists"
SATISFIABLE = "topology-satisfiable"


def _tier_text(tiers: Tiers) -> str:
    return f"tiers {tiers.lowest}-{tiers.highest} ({tiers.describe()}, from {' and '.join(tiers.sources)})"


def resolve_tier(c: Constraint, tiers: Tiers) -> int | None:
    if isinstance(c.tier, int) and not isinstance(c.tier, bool):
        return c.tier
    if isinstance(c.tier_name, str):
        return tiers.tier_of(c.tier_name)
    return None


# --- topology-tier-exists ---------------------------------------------------------------------

def _check_constraint(obj: dict, c: Constraint, tiers: Tiers, job: Constraint | None) -> Iterator[Finding]:
    if c.tier is not None and c.tier_name is not None and not c.implicit_tier:
        yield Finding(c.path, f"{where(obj, c.path)}: sets both highestTierAllowed and highestTierName; Volcano's "
                      "admission webhook rejects the object. Keep one of them.")
        return
    if obj.get("kind") in ("ClusterTrainingRuntime", "TrainingRuntime") and c.tier_name is not None:
        yield Finding(c.name_path, f"{where(obj, c.name_path)}: Trainer v2.3's runtime CRD has no highestTierName "
                      "(it vendors Volcano's API from before it existed), so the API server prunes the field and "
                      "the runtime silently gets highestTierAllowed: 1. Use highestTierAllowed with the tier number"
                      + (f" ({tiers.describe()})." if tiers.known else "."))
        return
    if c.tier is not None:
        if not isinstance(c.tier, int) or isinstance(c.tier, bool):
            if c.scope == "pod annotations":
                yield Finding(c.tier_path, f"{where(obj, c.tier_path)}: {TIER_ANNOTATION} is {c.tier!r}, not an "
                              "integer; Volcano ignores it and the pods run in hard mode with no tier, which is no "
                              "constraint at all. Set it to a tier number such as \"1\".")
            else:
                yield Finding(c.tier_path, f"{where(obj, c.tier_path)}: highestTierAllowed is {c.tier!r}, expected an "
                              "integer tier number; the API server rejects the object. Use a tier number"
                              + (f" ({tiers.describe()})." if tiers.known else "."))
            return
        if tiers.known:
            implicit = " (the runtime CRD defaults highestTierAllowed to 1)" if c.implicit_tier else ""
            if c.tier < tiers.lowest:
                yield Finding(c.tier_path, f"{where(obj, c.tier_path)}: highest tier {c.tier}{implicit} is below the "
                              f"lowest tier of the fabric ({_tier_text(tiers)}); no HyperNode is eligible, so a "
                              f"hard-mode job stays Pending forever. Use a tier from {tiers.lowest} to "
                              f"{tiers.highest}.")
            elif c.tier > tiers.highest:
                yield Finding(c.tier_path, f"{where(obj, c.tier_path)}: highest tier {c.tier}{implicit} is above the "
                              f"top tier of the fabric ({_tier_text(tiers)}); Volcano treats it as its virtual "
                              "cluster-top HyperNode, so the job is not constrained at all. Use a tier from "
                              f"{tiers.lowest} to {tiers.highest}.")
    elif c.tier_name is not None:
        if not isinstance(c.tier_name, str) or not c.tier_name:
            yield Finding(c.name_path, f"{where(obj, c.name_path)}: highestTierName must be a tier name "
                          "(a string), got "
                          f"{c.tier_name!r}. Use one of the fabric's tier names.")
        elif tiers.known and c.tier_name not in tiers.names:
            known = (f"the tier names are {tiers.describe()}" if tiers.names
                     else "no HyperNode of the fabric sets spec.tierName")
            yield Finding(c.name_path, f"{where(obj, c.name_path)}: highestTierName {c.tier_name!r} names no tier; "
                          f"{known}. Volcano only logs a warning and schedules the job with no topology constraint. "
                          "Use an existing tier name or highestTierAllowed.")
    elif c.hard:
        yield Finding(c.path, f"{where(obj, c.path)}: hard mode without highestTierAllowed or highestTierName is no "
                      "constraint at all (Volcano needs a tier to enforce hard mode) and the pods may spread over "
                      "the whole cluster. Set highestTierAllowed"
                      + (f" ({tiers.describe()})." if tiers.known else "."))
    if job is not None and c.scope in ("partition", "subgroup") and c.tier is not None:
        job_tier = resolve_tier(job, tiers)
        mine = resolve_tier(c, tiers)
        if job_tier is not None and mine is not None and mine > job_tier:
            yield Finding(c.tier_path, f"{where(obj, c.tier_path)}: the {c.scope} allows tier {mine}, above the job's "
                          f"tier {job_tier} at {job.path}; Volcano does not check this (volcano#4188) and the "
                          f"job-level bound wins. Keep the {c.scope} tier at or below {job_tier}.")


def _topology_tier_exists(objects: list[dict], ctx: CheckContext) -> Iterator[Finding | NotChecked]:
    tiers = tiers_of(ctx.manifests or objects, ctx.fabric)
    for obj in objects:
        found = constraints(obj)
        owner = annotations(obj)
        if obj.get("kind") in ("Deployment", "StatefulSet") and (MODE_ANNOTATION in owner or TIER_ANNOTATION in owner):
            yield Finding("metadata.annotations", obj=obj, message=(
                f"{where(obj, 'metadata.annotations')}: volcano.sh/network-topology-* annotations on the "
                f"{obj.get('kind')} itself only reach the PodGroup's annotations, never its spec, so they constrain "
                "nothing. Move them to spec.template.metadata.annotations."))
        if not found:
            continue
        if not tiers.known and any(c.sets_tier for c in found):
            yield NotChecked(f"{resource_id(obj)}: the stack has no fabric, HyperNodes or discovery configuration, "
                             "so its tiers are unknown", obj=obj)
            continue
        job = job_constraint(found)
        for c in found:
            for finding in _check_constraint(obj, c, tiers, job):
                yield Finding(finding.path, finding.message, obj=obj)


# --- topology-satisfiable ---------------------------------------------------------------------

def _fits_in(fabric, switch: str, sets: tuple[PodSet, ...]) -> bool:
    """Place pods of several sizes on the empty nodes below ``switch``, biggest first, node by node
    (first fit decreasing, with the simulator's per-node arithmetic)."""
    # Only nodes whose leaf sits at the lowest tier: Volcano finds no others for a hard job.
    return _fits_on(fabric, reachable_pool_counts(fabric, switch), sets)


def _fits_on(fabric, pool_counts: dict[str, int], sets: tuple[PodSet, ...]) -> bool:
    remaining = [[s.count, s.requests] for s in sorted(sets, key=lambda s: sorted(s.requests.items()), reverse=True)
                 if s.count > 0]
    for pool_name, count in sorted(pool_counts.items()):
        pool = fabric.pools[pool_name]
        for _ in range(count):
            if all(item[0] <= 0 for item in remaining):
                return True
            used: dict = {}
            for item in remaining:
                if item[0] <= 0:
                    continue
                k = min(item[0], pods_per_node(pool, item[1], used))
                if k > 0:
                    item[0] -= k
                    used = add(used, item[1], k)
    return all(item[0] <= 0 for item in remaining)


def fitting_domain(fabric, gang: Gang, highest_tier: int):
    """The tightest HyperNode at tier <= highest_tier holding the whole gang, as (switch, tier) or None."""
    if gang.homogeneous:
        per_pod = next((s.requests for s in gang.sets if s.count), {})
        domain = smallest_fitting_domain(fabric, gang.pods, per_pod, highest_tier, reachable_only=True)
        return (domain.switch, domain.tier) if domain else None
    for tier in fabric.tiers:
        if tier > highest_tier:
            break
        fits = [s for s in fabric.at_tier(tier) if fabric.node_count(s.name) and _fits_in(fabric, s.name, gang.sets)]
        if fits:
            best = min(fits, key=lambda s: (fabric.gpu_count(s.name), s.name))
            return best.name, tier
    return None


def _tier_label(fabric, tier: int) -> str:
    name = fabric.tier_names.get(tier)
    return f"tier {tier} ({name})" if name else f"tier {tier}"


def _unsatisfiable(obj: dict, c: Constraint, tier: int, gang: Gang, fabric, what: str) -> Finding:
    sizes = "; ".join(f"{s.count} x {{{show_resources(s.requests)}}} ({s.what})" for s in gang.sets if s.count)
    largest = fabric.largest_domain(min(tier, fabric.highest_tier)) if tier >= fabric.lowest_tier else None
    per_node_max = max((pods_per_node(p, s.requests) for p in fabric.pools.values() for s in gang.sets if s.count),
                       default=0)
    if per_node_max == 0:
        reason = ("a single pod asks for more than any node pool can allocate "
                  f"({', '.join(f'{p.name}: {show_resources(p.allocatable())}' for p in fabric.pools.values())})")
        fix = "Shrink the pod's requests to fit a node."
    else:
        if largest is not None:
            reason = (f"the largest HyperNode at {_tier_label(fabric, largest.tier)}, {largest.switch}, has "
                      f"{largest.nodes} nodes and {largest.gpus} GPUs")
        else:
            reason = f"no HyperNode exists at or below tier {tier} (the lowest tier is {fabric.lowest_tier})"
        wider = fitting_domain(fabric, gang, fabric.highest_tier)
        if wider is not None:
            fix = (f"Allow {_tier_label(fabric, wider[1])} (the smallest HyperNode that holds it is {wider[0]}), "
                   f"or shrink the gang.")
        else:
            fix = "Not even the whole fabric holds it: shrink the gang or its pods."
    origin = f" (its constraint comes from {c.origin})" if c.origin else ""
    return Finding(c.path, obj=obj, message=(
        f"{where(obj, c.path)}{origin}: the hard-mode {what} of {gang.pods} pod(s) ({gang.how}: {sizes}; "
        f"{show_resources(gang.total())} in all) fits in no HyperNode at or below {_tier_label(fabric, tier)}: "
        f"{reason}. Volcano keeps such a job Pending forever. {fix}"))


def _uncounted(gang: Gang, fabric) -> set[str]:
    declared = {name for pool in fabric.pools.values() for name in pool.allocatable()}
    return {name for s in gang.sets if s.count for name, amount in s.requests.items()
            if amount > 0 and not counted(name, declared)}


def _beyond_cluster(obj: dict, every: list[dict], fabric, whole: dict[str, int],
                    uncounted: set[str]) -> Iterator[Finding]:
    """A gang that the whole cluster cannot hold, on empty nodes: Pending forever whatever the mode."""
    try:
        gang = gang_of(obj, every)
    except Unknown:
        return   # topology rules say nothing more about a gang of unknown size
    if gang is not None:
        uncounted |= _uncounted(gang, fabric)
    if gang is None or gang.pods <= 0 or _fits_on(fabric, whole, gang.sets):
        return
    sizes = "; ".join(f"{s.count} x {{{show_resources(s.requests)}}} ({s.what})" for s in gang.sets if s.count)
    yield Finding("spec", obj=obj, message=(
        f"{where(obj, 'spec')}: its gang of {gang.pods} pod(s) ({gang.how}: {sizes}) does not fit on the whole "
        f"cluster ({len(fabric.nodes)} nodes, {fabric.total_gpus} GPUs, even empty): Volcano admits a gang only "
        "when all its minimum members can run, so the job stays Pending forever. Shrink the gang or its pods."))


def _topology_satisfiable(objects: list[dict], ctx: CheckContext) -> Iterator[Finding | NotChecked]:
    fabric = ctx.fabric
    every = ctx.manifests or objects
    tiers = tiers_of(every, fabric)
    capacity = fabric is not None and bool(getattr(fabric, "switches", None)) and bool(getattr(fabric, "nodes", None))
    whole: dict[str, int] = {}
    uncounted: set[str] = set()   # requests no pool declares (ephemeral-storage): said once, at the end
    for obj in objects:
        hard = [c for c in effective_constraints(obj, every) if c.hard and c.sets_tier]
        if not hard:
            if capacity:   # soft or no constraint: Volcano may use every node, but the gang must fit them
                if not whole:
                    for node in fabric.nodes.values():
                        whole[node.pool.name] = whole.get(node.pool.name, 0) + 1
                yield from _beyond_cluster(obj, every, fabric, whole, uncounted)
            continue
        if not capacity:
            why = ("the fabric is label-defined (discovered by Volcano), so trainstack knows no node inventory"
                   if fabric is not None and getattr(fabric, "discovery", None) else "the stack has no fabric model")
            yield NotChecked(f"{resource_id(obj)}: capacity of its hard topology constraint not checked: {why}",
                             obj=obj)
            continue
        try:
            gang, partitions = gangs_of(obj, every)
        except Unknown as exc:
            yield NotChecked(f"{resource_id(obj)}: gang size unknown: {exc}", obj=obj)
            continue
        if gang is None or gang.pods <= 0:
            continue
        uncounted |= _uncounted(gang, fabric)
        for c in hard:
            tier = resolve_tier(c, tiers)
            if tier is None or tier > fabric.highest_tier:
                continue   # no constraint in effect: topology-tier-exists reports it
            if c.scope in ("job", "runtime", "pod annotations"):
                subject, what = gang, "gang"
            elif c.path in partitions:
                subject, what = partitions[c.path], "partition"
            else:
                continue
            if fitting_domain(fabric, subject, tier) is None:
                yield _unsatisfiable(obj, c, tier, subject, fabric, what)
    if uncounted:
        yield NotChecked(not_counted_note(uncounted))


RULES = (
    Rule(
        id=TIER_EXISTS,
        description="Topology constraints name tiers the fabric has: highestTierAllowed lies within its tiers, "
                    "highestTierName is an existing tierName, hard mode names a tier, and partition tiers stay "
                    "within the job's.",
        why="Volcano applies no constraint at all for a highestTierName that matches no tier (it only logs a "
            "warning), for a tier above the top tier, for hard mode without a tier and for a non-integer "
            "volcano.sh/network-topology-highest-tier annotation; a tier below the lowest one leaves nothing "
            "eligible and the job Pending forever. Trainer's runtime CRD prunes highestTierName and defaults the "
            "tier to 1.",
        fix="Use highestTierAllowed between the lowest and highest tier of the stack's fabric, or one of its tier "
            "names (docs: trainstack fabric tierNames); put pod annotations on spec.template.",
        severity="high", enforcement=MANDATORY, check_stack=_topology_tier_exists),
    Rule(
        id=SATISFIABLE,
        description="A hard-mode gang fits, by GPUs, CPU, memory and nodes, inside one HyperNode at or below its "
                    "allowed tier (Volcano Job minAvailable, TrainJob numNodes on its runtime, runtime "
                    "mlPolicy.numNodes, PodGroup minMember/minResources, Deployment replicas); a gang in soft mode "
                    "or without a constraint fits on the whole cluster.",
        why="Volcano places a hard-mode job only inside one HyperNode at tier <= highestTierAllowed; if no such "
            "HyperNode can hold the whole gang on empty nodes, the job stays Pending forever with no error. Any "
            "gang, whatever its mode, is admitted only when all its minimum members fit the cluster. "
            "The check uses the same capacity model as `trainstack simulate`.",
        fix="Raise highestTierAllowed (the message names the smallest tier that holds the gang), or shrink the "
            "gang or its pods' requests.",
        severity="critical", enforcement=MANDATORY, check_stack=_topology_satisfiable),
)
