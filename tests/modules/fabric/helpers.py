"""Building fabrics the way users do (a stack file or stack config) and checking HyperNode trees
independently of the renderer: CRD schema, one selector per member, every node in exactly one
leaf (regexes evaluated with ``re``), members resolvable, tiers increasing upward."""
from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
import yaml

from modules.core.config import build_stack, load_project
from modules.core.context import RenderContext
from modules.fabric import render as fabric_render
from modules.fabric.model import Fabric, build_fabric
from tests.support.cli import ROOT
from tests.support.crds import validate_cr

PULUMI_YAML = (ROOT / "Pulumi.yaml").read_text()


def topograph_dir() -> Path:
    path = ROOT.parent / "shared" / "fabrics" / "topograph"
    if not path.is_dir():
        pytest.skip("topograph models not found: keep ../shared/fabrics/topograph beside the project")
    return path


TOPOGRAPH_MODELS = ("small-tree", "medium", "large", "nvl72", "dual-xclr-regular", "dual-xclr-irregular")


def project(tmp_path: Path, fabric: dict, files: dict[str, str] | None = None, name: str = "test") -> Path:
    """A trainstack project on disk with one stack whose trainstack:fabric is ``fabric``."""
    (tmp_path / "Pulumi.yaml").write_text(PULUMI_YAML)
    stacks = tmp_path / "stacks"
    stacks.mkdir(exist_ok=True)
    for rel, text in (files or {}).items():
        target = stacks / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    (stacks / f"Pulumi.{name}.yaml").write_text(yaml.safe_dump({"config": {"trainstack:fabric": fabric}}))
    return tmp_path


def in_memory(fabric: dict) -> RenderContext:
    """A render context for a stack that exists only in memory (files resolve against the repo, or
    an absolute fabric path against its own folder, which stands in for stacks/)."""
    project = load_project(ROOT)
    if isinstance(fabric.get("path"), str) and Path(fabric["path"]).is_absolute():
        project = dataclasses.replace(project, stack_dir=Path(fabric["path"]).resolve().parent)
        fabric = {**fabric, "path": Path(fabric["path"]).name}
    stack = build_stack(project, "mem", {"trainstack:fabric": fabric}, "stacks/Pulumi.mem.yaml")
    return RenderContext(stack)


def build(fabric: dict) -> tuple[Fabric, list[dict], RenderContext]:
    ctx = in_memory(fabric)
    ctx.fabric = build_fabric(ctx)
    return ctx.fabric, [r.obj for r in fabric_render.render(ctx)], ctx


def check_tree(objs: list[dict], node_names: list[str], lowest_tier: int = 1, contiguous: bool = True) -> None:
    """Assert the HyperNodes form a tree Volcano schedules correctly over exactly ``node_names``."""
    by_name: dict[str, dict] = {}
    for obj in objs:
        validate_cr(obj)                              # the upstream CRD's OpenAPI schema
        name = obj["metadata"]["name"]
        assert name not in by_name, f"HyperNode {name} rendered twice"
        by_name[name] = obj
    parent: dict[str, str] = {}
    leaf_of: dict[str, str] = {}
    for name, obj in by_name.items():
        members = obj["spec"]["members"]
        assert members, f"{name} is empty"
        types = {m["type"] for m in members}
        assert len(types) == 1, f"{name} mixes Node and HyperNode members"
        for member in members:
            selectors = [k for k in ("exactMatch", "regexMatch", "labelMatch") if k in member["selector"]]
            assert len(selectors) == 1, f"{name}: a member needs exactly one selector (CRD CEL rule)"
            if member["type"] == "HyperNode":
                assert selectors == ["exactMatch"], "HyperNode members resolve only through exactMatch"
                child = member["selector"]["exactMatch"]["name"]
                assert child in by_name, f"{name} points at missing HyperNode {child}"
                assert child not in parent, f"{child} has two parents"
                parent[child] = name
                child_tier, tier = by_name[child]["spec"]["tier"], obj["spec"]["tier"]
                assert tier > child_tier, f"{name} (tier {tier}) is not above {child} ({child_tier})"
                if contiguous:
                    assert tier == child_tier + 1, f"{name} skips a tier above {child}"
            elif "regexMatch" in member["selector"]:
                pattern = member["selector"]["regexMatch"]["pattern"]
                assert pattern.startswith("^") and pattern.endswith("$")
                rx = re.compile(pattern)
                matched = [n for n in node_names if rx.search(n)]
                assert matched, f"{name}: {pattern} matches no node"
                for node in matched:
                    assert node not in leaf_of, f"{node} is in {leaf_of[node]} and {name}"
                    leaf_of[node] = name
            elif "exactMatch" in member["selector"]:
                node = member["selector"]["exactMatch"]["name"]
                assert node not in leaf_of, f"{node} is in {leaf_of[node]} and {name}"
                leaf_of[node] = name
        if types == {"Node"}:
            assert obj["spec"]["tier"] == lowest_tier, f"leaf {name} is not at tier {lowest_tier}"
    for name in by_name:                             # no cycles: every chain reaches a root
        seen, current = set(), name
        while current in parent:
            assert current not in seen, f"cycle through {current}"
            seen.add(current)
            current = parent[current]
    missing = [n for n in node_names if n not in leaf_of]
    assert not missing, f"nodes in no leaf: {missing[:5]}"
    assert not set(by_name) & set(node_names), "a HyperNode per node"
    names_by_tier: dict[int, set] = {}
    for obj in objs:
        names_by_tier.setdefault(obj["spec"]["tier"], set()).add(obj["spec"]["tierName"])
    assert all(len(v) == 1 for v in names_by_tier.values()), f"tier names not one per tier: {names_by_tier}"
    tier_of_name = [n for v in names_by_tier.values() for n in v]
    assert len(tier_of_name) == len(set(tier_of_name)), "a tier name used for two tiers"
