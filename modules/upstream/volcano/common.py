"""What several of Volcano's webhooks share: Go's ``%v`` of a string list, the network-topology
tier rule, names as map keys."""
from __future__ import annotations

from modules.semantics.shapes import as_dict

BOTH_TIERS = "must not specify 'highestTierAllowed' and 'highestTierName' in networkTopology simultaneously"


def go_list(items: list[str]) -> str:
    """A list as Go's %v prints a []string: [a b]."""
    return "[" + " ".join(items) + "]"


def topology_both(topology: object) -> bool:
    t = as_dict(topology)
    return t.get("highestTierAllowed") is not None and bool(t.get("highestTierName"))


def key(value: object) -> str:
    """A name as a key: the CRD schema makes names strings; anything else stands for itself."""
    return value if isinstance(value, str) else repr(value)
