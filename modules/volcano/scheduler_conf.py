"""The Volcano scheduler configuration (`volcano-scheduler.conf`), built as data and dumped once.

Volcano parses plugin arguments strictly by YAML type: an integer argument given as a quoted
string ("5") is ignored with a warning, and `hypernode.binpack.resources` must be one
comma-separated string (a list is ignored). An invalid conf is only logged at hot reload and the
previous one stays active. So the conf is built from typed Python values and dumped with a YAML
dumper, never templated as text.
"""
from __future__ import annotations

from modules.core import yamlio

NTA = "network-topology-aware"
# Registered actions in Volcano 1.15 (pkg/scheduler/actions/factory.go); one unknown name
# invalidates the whole conf.
ACTIONS = ("enqueue", "allocate", "backfill", "preempt", "reclaim", "gangpreempt", "gangreclaim", "shuffle")
# Eviction actions that honour network topology (and read hypernode.gradient.evict.max-hypernodes).
GANG_EVICTION = ("gangpreempt", "gangreclaim")


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
    capacity plugin replaces proportion). gangpreempt/gangreclaim pick victims through
    ssn.UnifiedEvictable, which only capacity registers with guarantee/deserved logic; with
    proportion a reclaiming queue can take GPUs from queues inside their fair share. Per-resource
    `deserved`/`guarantee` are read by capacity too."""
    if any(a in GANG_EVICTION for a in cfg["actions"]):
        return "capacity"
    if any(q.get("deserved") or q.get("guarantee") for q in cfg["queues"]):
        return "capacity"
    return "proportion"


def build(cfg: dict, gpu_resources: list[str]) -> dict:
    """The whole conf as data: the trainstack baseline tiers plus the NTA plugin."""
    actions = list(cfg["actions"])
    return {
        "actions": ", ".join(actions),
        "tiers": [
            {"plugins": [{"name": "priority"}, {"name": "gang", "enablePreemptable": False},
                         {"name": "conformance"}]},
            {"plugins": [{"name": "overcommit"}, {"name": "drf", "enablePreemptable": False},
                         {"name": "predicates"}, {"name": share_plugin(cfg)}, {"name": "nodeorder"},
                         {"name": "binpack"},
                         {"name": NTA, "arguments": nta_arguments(cfg, gpu_resources, actions)}]},
        ],
    }


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
