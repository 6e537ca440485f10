"""Only ``modules/semantics`` reads the workload fields whose meaning it owns (one model
that renderers, rules and the simulator share, so they cannot disagree), besides the upstream-port
layer ``modules/upstream``, which writes down what upstream's own code makes of them.

An ast scan of ``modules/`` and ``policies/``: outside ``modules/semantics``, a *read* of one of
``FIELDS`` fails the test. A read is ``x.get("field")`` (or any ``.get``/``.integer``/``.pop`` call,
the Reader's getters included, with the field name among its first two arguments), ``x["field"]``
in a load context, or ``"field" in x``. Writing the fields (dict literals, ``spec["field"] = ...``)
is what renderers do and is fine. A renderer reading its own stack-file *config* key of the same
name is allowed through ``ALLOWED``, one entry per (file, function, field) with its reason.
"""
from __future__ import annotations

import ast
import functools

from tests.support.cli import ROOT

FIELDS = frozenset({
    "minMember", "minAvailable", "minResources", "networkTopology", "highestTierAllowed", "highestTierName",
    "resourcesPerNode", "numNodes", "partitionPolicy", "totalPartitions", "partitionSize", "minPartitions",
    "subGroupPolicy", "subGroupSize", "minSubGroups", "matchLabelKeys",
})
GETTERS = frozenset({"get", "integer", "pop", "setdefault"})
OWNER = ROOT / "modules" / "semantics"
# The upstream-port layer states what upstream's own code makes of these fields (Volcano's webhooks
# and mutations): it is the other place that reads them.
PORTS = ROOT / "modules" / "upstream"

# (file, function) -> the fields it may read, and why they are not a workload object's fields.
CONFIG = "the stack file's config key of that name (schema.yaml), not a workload object's field"
ALLOWED: dict[tuple[str, str], tuple[frozenset[str], str]] = {
    ("modules/volcano/topology.py", "tier_setting"): (frozenset({"highestTierAllowed", "highestTierName"}),
                                                      "a stack file's topology block: " + CONFIG),
    ("modules/runtimes/render.py", "runtime"): (frozenset({"numNodes"}), "runtimes[].numNodes: " + CONFIG),
    ("modules/workloads/render.py", "volcano_job"): (frozenset({"minAvailable", "minPartitions"}),
                                                     "workloads[].minAvailable, .partitions: " + CONFIG),
    ("modules/workloads/render.py", "train_job"): (frozenset({"numNodes", "resourcesPerNode"}),
                                                   "trainJobs[].numNodes, .resourcesPerNode: " + CONFIG),
}


def _allowed(rel: str, function: str, name: str) -> bool:
    return name in ALLOWED.get((rel, function), (frozenset(), ""))[0]


def _field(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and node.value in FIELDS else None


def reads(tree: ast.AST) -> list[tuple[str, str, int]]:
    """``(function, field, line)`` for every read of a semantics-owned field in a module."""
    out: list[tuple[str, str, int]] = []

    def visit(node: ast.AST, function: str) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            function = node.name
        found: list[str | None] = []
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in GETTERS:
            found = [_field(a) for a in node.args[:2]]
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
            found = [_field(node.slice)]
        elif isinstance(node, ast.Compare) and any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops):
            found = [_field(node.left)]
        out.extend((function, f, node.lineno) for f in found if f)
        for child in ast.iter_child_nodes(node):
            visit(child, function)

    visit(tree, "<module>")
    return out


@functools.lru_cache(maxsize=None)   # two tests read the same scan of every module
def _scan() -> tuple[tuple[str, str, str, int], ...]:
    found = []
    for top in ("modules", "policies"):
        for path in sorted((ROOT / top).rglob("*.py")):
            if path.is_relative_to(OWNER) or path.is_relative_to(PORTS):
                continue
            rel = path.relative_to(ROOT).as_posix()
            found.extend((rel, function, name, line) for function, name, line in reads(ast.parse(path.read_text())))
    return tuple(found)


def test_only_semantics_reads_the_workload_fields_it_owns():
    stray = [f"{rel}:{line} {function}() reads {name!r}" for rel, function, name, line in _scan()
             if not _allowed(rel, function, name)]
    assert not stray, ("read these through modules.semantics (workloads.pod_group, trainer_workload, "
                       "per_node_resources, partition_gangs, ...), or allow a config read in ALLOWED:\n"
                       + "\n".join(stray))


def test_every_allowance_is_still_needed():
    used = {(rel, function, name) for rel, function, name, _ in _scan()}
    stale = sorted((key, name) for key, (names, _) in ALLOWED.items() for name in names if (*key, name) not in used)
    assert not stale, f"stale ALLOWED entries: {stale}"


def test_the_scan_sees_each_kind_of_read():
    source = '''
def f(spec, doc, obj):
    a = spec.get("minMember")
    b = doc.integer(spec, "numNodes", "spec.trainer", 1, "an integer >= 1")
    c = obj["networkTopology"]
    d = "resourcesPerNode" in spec
    spec["minAvailable"] = 3
    e = {"partitionPolicy": {"partitionSize": 2}}
    g = spec.get("replicas")
'''
    assert sorted(reads(ast.parse(source))) == [("f", "minMember", 3), ("f", "networkTopology", 5),
                                                  ("f", "numNodes", 4), ("f", "resourcesPerNode", 6)]


def test_the_owner_reads_them():
    """The scan is not vacuous: semantics itself reads the fields it owns."""
    owned = {name for path in OWNER.rglob("*.py") for _, name, _ in reads(ast.parse(path.read_text()))}
    assert {"minMember", "minAvailable", "minResources", "networkTopology", "resourcesPerNode", "numNodes",
            "partitionPolicy", "partitionSize", "subGroupPolicy"} <= owned
