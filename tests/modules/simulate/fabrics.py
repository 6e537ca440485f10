"""Small fabrics built directly from the model, for hand-checked cases.

``tree({"spine-1": {"leaf-1": 4, "leaf-2": 4}})``: a dict is a switch with child switches, an int
is a leaf with that many nodes, a list is a leaf with those node names. Tiers are inferred bottom-up
(leaf = 1) unless ``tiers`` pins some (mixed-depth trees).
"""
from __future__ import annotations

import re
from decimal import Decimal

from modules.fabric.model import Fabric, Link, Node, NodePool, Switch, k8s_name

GiB = 2**30
LINKS = {0: Link(370, 3.4), 1: Link(350, 14), 2: Link(350, 16), 3: Link(175, 18)}


def pool(name: str = "default", gpus: int = 8, cpu: int = 192, memory: int = 1800 * GiB,
         match: str = ".*", resources: dict | None = None, gpu_resource: str = "nvidia.com/gpu") -> NodePool:
    return NodePool(name=name, match=re.compile(match), gpus=gpus, gpu_resource=gpu_resource, gpu_type=None,
                    cpu_milli=cpu * 1000, memory_bytes=memory, resources=dict(resources or {}))


def tree(spec: dict, *, pools: list[NodePool] | None = None, tiers: dict[str, int] | None = None,
         tier_names: dict[int, str] | None = None, links: dict | None = None) -> Fabric:
    pools = pools or [pool()]
    switches: dict[str, Switch] = {}
    nodes: dict[str, Node] = {}
    counter = [0]

    def build(name: str, body, parent: str | None) -> int:
        sw = Switch(name=name, tier=0, parent=parent, hypernode=k8s_name(name))
        switches[name] = sw
        if isinstance(body, dict):
            sw.children = list(body)
            sw.tier = max(build(child, sub, name) for child, sub in body.items()) + 1
        else:
            names = body if isinstance(body, list) else []
            if isinstance(body, int):
                for _ in range(body):
                    counter[0] += 1
                    names.append(f"n{counter[0]:03d}")
            sw.nodes = list(names)
            for n in names:
                match = next(p for p in pools if p.match.fullmatch(n))
                nodes[n] = Node(name=n, leaf=name, pool=match)
            sw.tier = 1
        if tiers and name in tiers:
            sw.tier = tiers[name]
        return sw.tier

    for root, body in spec.items():
        build(root, body, None)
    used = sorted({s.tier for s in switches.values()})
    names = tier_names or {t: ("leaf", "spine", "core")[t - 1] if t <= 3 else f"tier-{t}" for t in used}
    return Fabric(source="test", tier_names=names, switches=switches, nodes=nodes,
                  pools={p.name: p for p in pools}, mixed_depth=True, links=links or dict(LINKS))


def gpus(n: int) -> dict[str, Decimal]:
    return {"nvidia.com/gpu": Decimal(n), "cpu": Decimal(8), "memory": Decimal(64 * GiB)}
