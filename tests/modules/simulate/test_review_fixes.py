"""Review fixes in modules/simulate (cost.py): the per-tier fit charges a tier only for the ring
steps that cross it."""
from __future__ import annotations

import pytest

from modules.simulate.cost import fit_links

MiB = 2**20


def _records(alpha_node: float, alpha_tier: float, busbw: float, ranks: int, nodes: int, tier: int) -> list[dict]:
    """Exact times of NCCL's ring: 2(p-nodes) intra-node steps at the node's
    latency, 2(nodes-1) steps across the tier, and 2(p-1)/p·n at busbw."""
    out = []
    for n in (MiB, 16 * MiB, 256 * MiB, 1024 * MiB):
        t = (2 * (ranks - nodes) * alpha_node + 2 * (nodes - 1) * alpha_tier
             + 2 * (ranks - 1) / ranks * n / busbw)
        out.append({"collective": "all_reduce", "bytes": n, "world_size": ranks, "time_s": t, "tier": tier,
                    "nodes": nodes})
    return out


def test_a_multi_node_fit_recovers_the_inter_node_step_latency():
    # 16 ranks on 2 nodes: 28 NVLink steps at 3.4 us, 2 leaf steps at 14 us, busbw 40 GB/s.
    links = fit_links(_records(3.4e-6, 14e-6, 40e9, ranks=16, nodes=2, tier=1), node_latency_us=3.4)
    assert links[1].latency_us == pytest.approx(14, rel=1e-6)     # was ~4.1: the 30-step average
    assert links[1].bandwidth_gbps == pytest.approx(40, rel=1e-6)


def test_the_node_latency_comes_from_tier_0_results_when_there_are_some():
    records = (_records(3.4e-6, 0.0, 300e9, ranks=8, nodes=1, tier=0)
               + _records(3.4e-6, 14e-6, 40e9, ranks=16, nodes=2, tier=1))
    links = fit_links(records)                    # no node_latency_us: tier 0's fit is used
    assert links[0].latency_us == pytest.approx(3.4, rel=1e-6)
    assert links[1].latency_us == pytest.approx(14, rel=1e-6)


def test_json_report_lists_each_jobs_own_pod_gpus():
    """Two jobs (same name, other namespaces) have pods of the same name but other GPU counts: each
    job's pods keep their own count (the report merged every job's pods into one dict)."""
    import json
    import re
    from decimal import Decimal

    from modules.fabric.model import Fabric, Link, Node, NodePool, Switch
    from modules.simulate.engine import simulate
    from modules.simulate.jobs import Job, Pod
    from modules.simulate.report import json_report

    pool = NodePool(name="gpu", match=re.compile(".*"), gpus=8, gpu_resource="nvidia.com/gpu", gpu_type=None,
                    cpu_milli=64000, memory_bytes=512 * 2**30, resources={})
    names = ["n1", "n2"]
    fabric = Fabric(source="test", tier_names={1: "leaf"},
                    switches={"leaf": Switch(name="leaf", tier=1, parent=None, hypernode="leaf", nodes=names)},
                    nodes={n: Node(name=n, leaf="leaf", pool=pool) for n in names}, pools={"gpu": pool},
                    links={0: Link(370, 3.4), 1: Link(350, 14)})

    def job(gpus: int) -> Job:
        requests = {"nvidia.com/gpu": Decimal(gpus), "cpu": Decimal(1), "memory": Decimal(2**30)}
        return Job("train", "Job", [Pod("train-worker-0", requests, gpus)], 1, None)

    doc = json.loads(json_report(simulate(fabric, [job(8), job(2)])))
    pods = [j["pods"] for j in doc["strategies"]["topology-aware"]["jobs"]]
    assert [p[0]["gpus"] for p in pods] == [8, 2]


@pytest.mark.parametrize("value", ["0.5", "500m", "0"])
def test_gradient_size_below_one_byte_is_refused(value):
    """0.5 (or 500m) became an all-reduce of 0 bytes."""
    from modules.core.errors import InputError
    from modules.simulate.commands import gradient_bytes

    with pytest.raises(InputError) as err:
        gradient_bytes(value)
    assert err.value.path == "--gradient-size" and "at least 1," in err.value.message
