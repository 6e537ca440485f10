"""Fidelity of the eviction and admission model (``eviction.py``, ``cycle.py``) against Volcano's
action tests, compared as upstream's ``uthelper`` compares them:

* ``evict`` (CheckEvict): the evicted pods (namespace/name) as a multiset, and their number (the
  ported tables set no ExpectPipeLined or binds; none of these actions binds).
* ``podgroup-phase`` (CheckPGStatus): each PodGroup's phase after the action.
* ``pending-order`` (backfill's pickUpPendingTasks): the task names in the order picked.
* ``domain-victims`` (gangpreempt / gangreclaim selectDomainBundles): the victim tasks chosen in one
  domain for one preemptor job.
* ``domains`` (PickDomainsFromGradients): the domains tried, in order (``whatif_topology.pick_domains``,
  which the what-if's gang eviction runs).
* ``tier-walk`` (Session.UnifiedEvictable): the victims the tier walk returns for test plugins
  with fixed answers, and the tier that decided.
"""
from __future__ import annotations

from typing import Any

from modules.semantics import eviction as walk_model

from . import cycle
from .whatif_topology import pick_domains
from .eviction import Session, cluster_of, conf_of, pod_fits
from .model import read_model

CHECKS = ("evict", "podgroup-phase", "pending-order", "domain-victims", "domains", "tier-walk")


def run(case: Any) -> tuple[dict, bool]:
    """``(got, reproduced)`` for one ported action case."""
    expect = case.expect
    if expect["check"] == "tier-walk":
        returns = expect["returns"]
        filters = {name: (lambda _c, r=r: None if r is None else list(r)) for name, r in returns.items()}
        decision = walk_model.walk_tiers(expect["tiers"], list(expect["candidates"]), filters, key=str)
        got_walk = {"victims": decision.victims, "tier": None if decision.tier is None else decision.tier + 1}
        ok = decision.victims == expect["victims"] and ("tier" not in expect or got_walk["tier"] == expect["tier"])
        return got_walk, ok
    if expect["check"] == "domains":
        got = pick_domains(expect["gradients"], expect["maxDomains"], expect.get("fallback", ""))
        return {"domains": got}, got == expect["domains"]
    shown = f"{case.test}: {case.name}"
    conf = conf_of(case.conf, shown)
    objects = [(f"objects[{i}]", o) for i, o in enumerate(case.objects)]
    model = read_model(objects, shown)
    cluster = cluster_of(model, conf)
    ssn = Session(cluster)
    chosen = pod_fits(model.pods)
    if expect["check"] == "pending-order":
        for task_uid, node in (expect.get("pipelineFirst") or {}).items():
            if node in ssn.nodes:   # Statement.Pipeline rolls back on a node the session lacks
                task = next(t for j in ssn.jobs.values() for t in j.tasks if t.uid == task_uid)
                ssn.pipeline([], task, node)
        got = [t.name for t in cycle.backfill_order(ssn)]
        return {"pendingTasks": got}, got == expect["pendingTasks"]
    if expect["check"] == "domain-victims":
        job = ssn.jobs[expect["preemptor"]]
        nodes = [ssn.nodes[n] for n in expect["domainNodes"]]
        runs = []
        for run_ in expect["runs"]:
            bundles, _ = cycle.domain_victims(ssn, expect["action"], job, nodes, run_["allowWholeBundle"])
            runs.append({"allowWholeBundle": run_["allowWholeBundle"],
                         "victims": sorted(t.uid for _, _, tasks in bundles for t in tasks)})
        return {"runs": runs}, runs == [{**r, "victims": sorted(r["victims"])} for r in expect["runs"]]
    # enableTopologyAwarePreemption (TestTopologyAwarePreempt) searches candidate nodes from a random
    # offset; the model runs the node-by-node search for both (modules/simulate/README.md)
    for action in walk_model.actions_of(conf):
        if action in cycle.ACTIONS:
            cycle.ACTIONS[action](ssn, chosen)
    if expect["check"] == "podgroup-phase":
        got_phases = {uid: job.phase for uid, job in sorted(cluster.jobs.items()) if uid in expect["phases"]}
        return {"phases": got_phases}, got_phases == expect["phases"]
    evicted = sorted(e.task for e in ssn.evictions)
    got: dict = {"evicted": evicted, "evictNum": len(evicted)}
    ok = evicted == sorted(expect["evicted"]) and len(evicted) == expect["evictNum"]
    return got, ok
