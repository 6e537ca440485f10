"""The what-if's placement through `simulate`'s own topology-aware allocate, and the HyperNode
domains its gang eviction searches (Volcano v1.15.1).

* **Allocate**: the what-if's cluster model with the submitted gang added (``model.py``, read once;
  ``ClusterModel.topology_view``: the submission Inqueue, other pending PodGroups left out) is
  indexed as placement indexes a snapshot (``snapshot.snapshot_from_model``: its Nodes, HyperNodes,
  bound pods as usage, the conf in effect) and the gang placed by ``scheduler.TopologyAware``, the
  model of allocate that ``simulate`` runs: a hard-mode gang is placed only inside one HyperNode at
  or below its tier, or not at all; it never "fits" across its tier limit.
* **Eviction domains** (``actions/utils/util.go:87`` GetCandidateDomains, the plugin's
  ``HyperNodeGradientForJobFn`` with PurposeEvict, ``network_topology_aware.go:302,663,732``): for a
  job in hard mode, the HyperNodes at or below its tier whose allocatable holds its minResources,
  widest tier first (``reverseAndCapEvictionGradients``, at most
  ``hypernode.gradient.evict.max-hypernodes``, default 8, the last of a tier's list when capped),
  then at most the action's ``maxDomains``; a job without a hard topology has one domain, the
  whole cluster. Inside a tier, HyperNodes go by name (Volcano's map order is random).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import yaml

from modules.semantics import eviction as walk_model
from modules.semantics.scheduler_conf import conf_plugins
from modules.semantics.shapes import as_dict, is_kind

from .eviction import Res, vres
from .model import ClusterModel

EVICT_MAX_HYPERNODES = "hypernode.gradient.evict.max-hypernodes"
DEFAULT_EVICT_MAX_HYPERNODES = 8


@dataclass
class TopologyView:
    """What the topology-aware model says of the submitted gang."""
    enforced: bool = False                  # a hard or soft constraint the conf enforces
    hard_tier: int | None = None            # the tier a hard-mode job must stay within
    placed: dict[str, str] | None = None    # pod (namespace/name) -> node, when allocate places it
    reason: str = ""
    hypernodes: dict[str, tuple[int, tuple[str, ...]]] = field(default_factory=dict)   # name -> (tier, nodes)


def view(model: ClusterModel, submitted: list[str], job_uid: str, conf: dict, shown: str) -> TopologyView | None:
    """The topology-aware model's answer for the submitted job; None when the cluster has no
    HyperNode (nothing topology-aware to decide). ``model``: the cluster with the submission
    (``model.py``, read once by the what-if); ``submitted``: the submission's PodGroups."""
    if not any(is_kind(o, "HyperNode", "topology.volcano.sh") for _, o in model.hypernodes):
        return None
    from .engine import build_cluster, resource_names
    from .scheduler import TopologyAware, prepare
    from .snapshot import snapshot_from_model

    # other pending work is not placed here; only the submitted gang, which enqueue admitted
    snap = snapshot_from_model(model.topology_view(submitted), shown, yaml.safe_dump(conf))
    job = next((j for j in snap.jobs if j.name == job_uid), None)
    out = TopologyView(hypernodes={name: (s.tier, tuple(snap.fabric.nodes_under(name)))
                                   for name, s in snap.fabric.switches.items()})
    if job is None or job_uid not in submitted:
        return out
    cluster = build_cluster(snap.fabric, resource_names(snap.fabric, [job], snap.usage), snap.settings, snap.usage,
                            snap.releasing)
    aware = TopologyAware(cluster, snap.settings)
    cons = aware.constraint(job)
    out.enforced = cons.kind != "any"
    if cons.kind in ("domain", "never") and job.topology is not None and job.topology.mode != "soft":
        out.hard_tier = cons.tier if cons.kind == "domain" else -1
    outcome = aware.place(job, prepare(job, cluster))
    if outcome.placed:
        out.placed = {pod: cluster.node_names[node] for pod, node in outcome.pods}
    else:
        out.reason = outcome.reason or "the topology-aware allocate finds no HyperNode for it"
    return out


def eviction_domains(conf: dict, action: str, hard_tier: int | None, min_resources: Res | None,
                     hypernodes: dict[str, tuple[int, tuple[str, ...]]], allocatable: dict[str, Res]
                     ) -> list[tuple[str, tuple[str, ...]]] | None:
    """The domains ``action`` searches, ``(HyperNode, nodes)`` in order; None: the whole cluster."""
    if hard_tier is None:
        return None
    by_tier: dict[int, list[str]] = {}
    for name, (tier, nodes) in sorted(hypernodes.items()):
        if tier > hard_tier:
            continue
        total: Res = {}
        for node in nodes:
            total = vres.add(total, allocatable.get(node, {}))
        if min_resources and not vres.less_equal(min_resources, total):
            continue
        by_tier.setdefault(tier, []).append(name)
    cap = _plugin_int(conf, EVICT_MAX_HYPERNODES, DEFAULT_EVICT_MAX_HYPERNODES)
    gradients: list[list[str]] = []       # reverseAndCapEvictionGradients: the widest tier first
    remaining = cap
    for tier in sorted(by_tier, reverse=True):
        if remaining <= 0:
            break
        names = by_tier[tier]
        gradients.append(names if len(names) <= remaining else names[len(names) - remaining:])
        remaining -= len(gradients[-1])
    picked = pick_domains(gradients, walk_model.gang_arguments(conf, action).max_domains, "")
    return [(name, hypernodes[name][1]) for name in picked]


def pick_domains(gradients: list[list[str]], max_domains: int, fallback: str) -> list[str]:
    """``PickDomainsFromGradients`` (actions/utils/util.go:61): HyperNodes of the gradients in order,
    each once, at most ``max_domains`` (when positive); the fallback when none."""
    seen: list[str] = []
    for gradient in gradients:
        for name in gradient:
            if name in seen:
                continue
            seen.append(name)
            if max_domains > 0 and len(seen) >= max_domains:
                return seen
    return seen or ([fallback] if fallback else [])


def _plugin_int(conf: dict, key: str, default: int) -> int:
    """A network-topology-aware argument as the plugin reads it: Volcano's ``GetInt`` (a YAML int
    only, ``walk_model.go_int``), the default when it is not positive. The plugins are the conf's
    as ``modules.semantics.scheduler_conf`` reads them; the first one named so counts."""
    plugin = next((p for _, p in conf_plugins(conf) if p.get("name") == "network-topology-aware"), None)
    value = walk_model.go_int(as_dict((plugin or {}).get("arguments")), key, default)
    return value if value > 0 else default
