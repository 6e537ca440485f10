"""The eviction what-if (`simulate SNAPSHOT --submit JOB`) at fabric scale, against the time to read
the snapshot.

    python benchmarks/whatif_scale.py [--nodes 4096 16384] [--json]

Each snapshot is a generated three-tier fabric (spines of 16 leaves of 32 nodes, 8 GPUs per node,
HyperNodes for leaves and spines), a queue, a conf running enqueue, allocate, gangpreempt and
gangreclaim with network-topology-aware, and running 8-pod low-priority jobs on about 60 % of the
nodes, spread evenly so that every spine has fewer free nodes than the submission needs. The
submission is a 512-pod hard `highestTierAllowed: 2` gang of whole-node pods at high priority: it
must not "fit" across spines; gangpreempt evicts inside one spine. Written as `-o json` (what a
cluster of this size is read from), timed in CPU seconds: loading the snapshot as `simulate
SNAPSHOT` does (`load_snapshot`: reading it and building the fabric, usage and jobs), and the
what-if on the read objects (the submission, the conf, the session, the topology-aware allocate,
the eviction actions). The ratio is the what-if over the load. `submit_s` is the whole of `simulate
SNAPSHOT --submit JOB` but its report: reading the snapshot's files (`read_s`) and the what-if.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from modules.simulate import submit, whatif  # noqa: E402
from modules.simulate.snapshot import load_snapshot, read_objects  # noqa: E402

CONF = """actions: "enqueue, allocate, gangpreempt, gangreclaim, backfill"
tiers:
- plugins: [{name: priority}, {name: gang, enablePreemptable: false}, {name: conformance}, {name: capacity}]
- plugins: [{name: predicates}, {name: network-topology-aware}, {name: nodeorder}, {name: binpack}]
"""
GPU = {"cpu": "90", "memory": "900Gi", "nvidia.com/gpu": "8"}
LEAVES, PER_LEAF = 16, 32


def snapshot(nodes: int) -> list[dict]:
    spines = max(nodes // (LEAVES * PER_LEAF), 1)
    out: list[dict] = [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "volcano-scheduler-configmap",
                                                               "namespace": "volcano-system"},
         "data": {"volcano-scheduler.conf": CONF}},
        {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "ml"},
         "spec": {"weight": 1}, "status": {"state": "Open"}},
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "low"}, "value": 10},
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000}]
    names = []
    for s in range(spines):
        out.append({"apiVersion": "topology.volcano.sh/v1alpha1", "kind": "HyperNode",
                    "metadata": {"name": f"spine-{s}"}, "spec": {"tier": 2, "members": [
                        {"type": "HyperNode", "selector": {"regexMatch": {"pattern": f"^leaf-{s}-[0-9]+$"}}}]}})
        for leaf in range(LEAVES):
            out.append({"apiVersion": "topology.volcano.sh/v1alpha1", "kind": "HyperNode",
                        "metadata": {"name": f"leaf-{s}-{leaf}"}, "spec": {"tier": 1, "members": [
                            {"type": "Node", "selector": {"regexMatch": {"pattern": f"^n-{s}-{leaf}-[0-9]+$"}}}]}})
            for n in range(PER_LEAF):
                name = f"n-{s}-{leaf}-{n}"
                names.append(name)
                out.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
                            "status": {"allocatable": {"cpu": "96", "memory": "1000Gi", "nvidia.com/gpu": "8",
                                                       "pods": "110"}}})
    busy = [n for i, n in enumerate(names) if i % 5 < 3]          # 60 % of every leaf
    for j in range(len(busy) // 8):
        group = f"run-{j}"
        out.append({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
                    "metadata": {"name": group, "namespace": "ml"},
                    "spec": {"queue": "ml", "minMember": 8, "priorityClassName": "low"},
                    "status": {"phase": "Running"}})
        for i, node in enumerate(busy[8 * j:8 * j + 8]):
            out.append({"apiVersion": "v1", "kind": "Pod", "metadata": {
                "name": f"{group}-{i}", "namespace": "ml", "annotations": {"scheduling.k8s.io/group-name": group}},
                "spec": {"nodeName": node, "priorityClassName": "low", "priority": 10,
                         "containers": [{"name": "c", "resources": {"requests": GPU}}]},
                "status": {"phase": "Running"}})
    return out


def submission(pods: int) -> dict:
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "big", "namespace": "ml"},
            "spec": {"minAvailable": pods, "queue": "ml", "priorityClassName": "high",
                     "networkTopology": {"mode": "hard", "highestTierAllowed": 2},
                     "tasks": [{"name": "w", "replicas": pods, "template": {"spec": {"containers": [
                         {"name": "c", "image": "x", "resources": {"requests": GPU, "limits": GPU}}]}}}]}}


def measure(nodes: int, folder: Path) -> dict:
    snap = folder / f"snap-{nodes}.json"
    snap.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": snapshot(nodes)}))
    job = folder / "job.yaml"
    job.write_text(json.dumps(submission(512)))
    start = time.process_time()
    load_snapshot(snap, str(snap))
    load_s = time.process_time() - start
    start = time.process_time()
    objects = read_objects(snap, str(snap))
    read_s = time.process_time() - start
    start = time.process_time()
    cluster = [o for _, o in objects]
    new, groups = submit.submitted(job, str(job), None, cluster)
    conf, _, _ = whatif.scheduler_conf(cluster, None, str(snap))
    result = whatif.what_if(objects, new, groups, conf, str(snap), str(job), str(snap))
    what_if_s = time.process_time() - start
    spines = {e.node.split("-")[1] for e in result.evictions}
    return {"nodes": nodes, "running_pods": sum(o.get("kind") == "Pod" for o in cluster), "load_s": round(load_s, 2),
            "what_if_s": round(what_if_s, 2), "read_s": round(read_s, 2),
            "submit_s": round(read_s + what_if_s, 2), "ratio": round(what_if_s / load_s, 2), "outcome": result.outcome,
            "evicted": len(result.evictions), "evicted_in_spines": sorted(spines),
            "placed_in_spines": sorted({n.split("-")[1] for n in result.placed.values()})}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, nargs="+", default=[4096, 16384])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        rows = [measure(n, Path(tmp)) for n in args.nodes]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    for r in rows:
        print(f"{r['nodes']:>6} nodes, {r['running_pods']:>6} running pods: load {r['load_s']:.2f} s CPU, what-if "
              f"{r['what_if_s']:.2f} s CPU ({r['ratio']:.2f}x; simulate --submit {r['submit_s']:.2f} s); "
              f"{r['outcome']}, {r['evicted']} evicted in spine(s) "
              f"{','.join(r['evicted_in_spines']) or '-'}, placed in spine(s) {','.join(r['placed_in_spines']) or '-'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
