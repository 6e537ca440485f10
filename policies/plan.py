"""`trainstack preview`'s plan: what the Pulumi program registers, as `pulumi preview` lists it.

Every resource under its parent component (`trainstack:index:<Module>`), with its type and name,
a count per component and per kind. Built from the registrations the program made under mocks
(the ones the pack then judges), sorted so that two runs print the same plan.
"""
from __future__ import annotations

STACK_TYPE = "pulumi:pulumi:Stack"


def kind_of(type_token: str) -> str:
    """``kubernetes:core/v1:ConfigMap`` -> ``ConfigMap``; a component or provider keeps its token."""
    return type_token.rsplit(":", 1)[-1] if type_token.startswith("kubernetes:") else type_token


def plan_of(resources: list) -> dict:
    """``resources``: the registrations (type, name, urn, parent), the Stack among them.
    Returns ``{"components": [{"type", "name", "count", "resources": [{"type", "name"}]}],
    "kinds": {kind: count}, "resources": total}``; resources outside a component (the provider)
    are listed under the Stack."""
    by_urn = {r.urn: r for r in resources}
    groups: dict[str, list] = {}
    for r in resources:
        if r.type == STACK_TYPE:
            continue
        parent = by_urn.get(r.parent)
        if r.custom or parent is None or parent.type != STACK_TYPE:   # components themselves are groups
            groups.setdefault(r.parent, []).append(r)
        else:
            groups.setdefault(r.urn, [])
    components = []
    for urn, members in groups.items():
        owner = by_urn.get(urn)
        kind, name = (owner.type, owner.name) if owner is not None else (STACK_TYPE, "")
        listed = sorted(({"type": m.type, "name": m.name} for m in members), key=lambda m: (m["type"], m["name"]))
        components.append({"type": kind, "name": name, "count": len(listed), "resources": listed})
    components.sort(key=lambda c: (c["type"] == STACK_TYPE, c["name"]))
    kinds: dict[str, int] = {}
    for c in components:
        for m in c["resources"]:
            kinds[kind_of(m["type"])] = kinds.get(kind_of(m["type"]), 0) + 1
    return {"components": components, "kinds": dict(sorted(kinds.items())),
            "resources": sum(c["count"] for c in components)}


def plan_text(stack: str, plan: dict) -> str:
    lines = [f"plan for {stack}: {plan['resources']} resource(s) in {len(plan['components'])} group(s)"]
    for c in plan["components"]:
        label = "stack" if c["type"] == STACK_TYPE else c["name"]
        lines.append(f"  {label} ({c['type']}): {c['count']}")
        width = max((len(m["type"]) for m in c["resources"]), default=0)
        lines.extend(f"    {m['type']:<{width}}  {m['name']}" for m in c["resources"])
    lines.append("  per kind: " + ", ".join(f"{k} {n}" for k, n in plan["kinds"].items()))
    return "\n".join(lines) + "\n"
