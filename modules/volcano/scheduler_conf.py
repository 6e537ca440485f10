"""The Volcano scheduler configuration (`volcano-scheduler.conf`), built as data and dumped once.

Volcano parses plugin arguments strictly by YAML type: an integer argument given as a quoted
string ("5") is ignored with a warning, and `hypernode.binpack.resources` must be one
comma-separated string (a list is ignored). An invalid conf is only logged at hot reload and the
previous one stays active. So the conf is built from typed Python values and dumped with a YAML
dumper, never templated as text (reference/volcano.md §3, §4.1).
"""
from __future__ import annotations

from modules.core import yamlio
from modules.semantics.eviction import EVICTION_ACTIONS, GANG_EVICTION, first_filtering_tier

NTA = "network-topology-aware"
# Registered actions in Volcano 1.15 (pkg/scheduler/actions/factory.go); one unknown name
# invalidates the whole conf.
ACTIONS = ("enqueue", "allocate", "backfill", "preempt", "reclaim", "gangpreempt", "gangreclaim", "shuffle")
# GANG_EVICTION: the eviction actions that honour network topology (and read
# hypernode.gradient.evict.max-hypernodes).


def nta_arguments(cfg: dict, gpu_resources: list[str], actions: list[str]) -> dict:
    """Arguments of the network-topology-aware plugin, each with the YAML type Volcano reads."""
    nta = cfg["networkTopologyAware"]
    args: dict[str, object] = {"weight": int(nta["weight"])}
    args["hypernode.binpack.cpu"] = int(nta["binpackCpu"])
    args["hypernode.binpack.memory"] = int(nta["binpackMemory"])
    weights = dict(nta["binpackResources"]) or {r: int(nta["binpackGpuWeight"]) for r in gpu_resources}
    if weights:
        args["hypernode.binpack.resources"] = ", ".join(weights)          # one string, never a list
        for resource, weight in weights.items():
            args[f"hypernode.binpack.resources.{resource}"] = int(weight)
    args["hypernode.binpack.normal-pod.enable"] = bool(nta["normalPodBinpack"])
    args["hypernode.binpack.normal-pod.fading"] = float(nta["normalPodFading"])
    if any(a in GANG_EVICTION for a in actions):
        args["hypernode.gradient.evict.max-hypernodes"] = int(nta["evictMaxHyperNodes"])
    return args


def share_plugin(cfg: dict) -> str:
    """`capacity` when queue shares must hold under eviction, else `proportion` (never both: Volcano's
    capacity plugin replaces proportion). Eviction actions pick victims through a tier walk
    (`modules.semantics.eviction`); only capacity registers a gang-eviction filter with the queues'
    guarantee and deserved, and per-resource `deserved`/`guarantee` are read by capacity only."""
    if any(a in EVICTION_ACTIONS for a in cfg["actions"]):
        return "capacity"
    if any(q.get("deserved") or q.get("guarantee") for q in cfg["queues"]):
        return "capacity"
    return "proportion"


def build(cfg: dict, gpu_resources: list[str]) -> dict:
    """The whole conf as data: the trainstack baseline tiers plus the NTA plugin.

    With `capacity`, the share plugin goes into the first tier that filters eviction victims (the
    one whose answer decides, as upstream's gang-eviction e2e conf does), with `overcommit` beside it:
    JobEnqueueable also stops at the first tier with a permitting vote, so overcommit in a later
    tier would no longer gate enqueue. Allocation sees the same plugins as before."""
    actions = list(cfg["actions"])
    share = share_plugin(cfg)
    first = [{"name": "priority"}, {"name": "gang", "enablePreemptable": False}, {"name": "conformance"}]
    second = [{"name": "overcommit"}, {"name": "drf", "enablePreemptable": False}, {"name": "predicates"},
              {"name": share}, {"name": "nodeorder"}, {"name": "binpack"},
              {"name": NTA, "arguments": nta_arguments(cfg, gpu_resources, actions)}]
    tiers = [first, second]
    if share == "capacity":
        at = first_filtering_tier([[p["name"] for p in t] for t in tiers], EVICTION_ACTIONS)
        for moved in ("overcommit", share):
            entry = next(p for p in second if p["name"] == moved)
            second.remove(entry)
            tiers[at].append(entry)
    return {"actions": ", ".join(actions), "tiers": [{"plugins": t} for t in tiers]}


def dump(conf: dict) -> str:
    """YAML text for `custom.scheduler_config_override` (types preserved, keys in build order)."""
    return yamlio.dump(conf)


def plugin(conf: dict, name: str) -> dict | None:
    """The entry of a plugin in a parsed conf, or None."""
    for tier in conf.get("tiers") or []:
        for entry in tier.get("plugins") or []:
            if entry.get("name") == name:
                return entry
    return None
