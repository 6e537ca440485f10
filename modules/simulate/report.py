"""The simulation report: JSON for scripts, text (rich tables without colour) for people and CI logs.

JSON always carries all three strategies, so scripts see one shape whatever the flags; the text
report adds the side-by-side comparison with ``--compare oblivious``. Lower-bound jobs list no pods:
each is placed alone on the empty fabric, so its nodes overlap other jobs' and are not a placement.
"""
from __future__ import annotations

import io
from decimal import Decimal

from rich import box
from rich.console import Console
from rich.table import Table

from modules.core import yamlio

from .cost import link_for
from .engine import STRATEGIES, SimulationResult
from .jobs import TOP_NAME, Job
from .scheduler import JobOutcome


def _number(value: Decimal | int | float):
    value = Decimal(value)
    return int(value) if value == value.to_integral_value() else float(value)


def to_json(result: SimulationResult) -> dict:
    c = result.cluster
    nodes = {}
    for i, name in enumerate(c.node_names):
        node = result.fabric.nodes[name]
        alloc = node.pool.allocatable()
        leaf = result.fabric.switches[node.leaf] if node.leaf is not None else None
        used = result.usage.get(name, {})
        nodes[name] = {"gpus": node.pool.gpus if node.pool.gpus else 0,
                       "cpu": _number(alloc["cpu"]), "memory": _number(alloc["memory"]),
                       "pool": node.pool.name, "leaf": (leaf.hypernode or leaf.name) if leaf else None,
                       "gpusInUse": _number(used.get(node.pool.gpu_resource, 0))}
    # per job: pods of two jobs may share a name (the same job name in two namespaces)
    gpus = [{pod.name: pod.gpus for pod in job.pods} for job in result.jobs]
    strategies = {}
    for name in STRATEGIES:
        jobs = []
        for i, outcome in enumerate(result.outcomes[name]):
            pods = [] if name == "lower-bound" else [
                {"name": pod, "node": c.node_names[node], "gpus": gpus[i][pod]} for pod, node in outcome.pods]
            jobs.append({"name": outcome.job, "status": outcome.status, "reason": outcome.reason,
                         "hypernode": outcome.hypernode, "tier": outcome.tier, "pods": pods,
                         "allreduce_s": outcome.allreduce_s})
        strategies[name] = {"jobs": jobs, "total_allreduce_s": result.totals[name]}
    return {"nodes": nodes, "strategies": strategies}


def json_report(result: SimulationResult) -> str:
    return yamlio.dumps_json(to_json(result), indent=2) + "\n"


# --- text ---------------------------------------------------------------------------------------

def constraint_label(job: Job) -> str:
    topo = job.topology
    if topo is None:
        label = "none"
    elif topo.mode == "soft":
        label = "soft"
    elif topo.tier_name is not None:
        label = f"hard <= {topo.tier_name}"
    elif topo.tier is not None:
        label = f"hard <= {topo.tier}"
    else:
        label = "hard (no tier)"
    if job.partitions:
        label += f", {len(job.partitions)} partitions"
    return label


def size(nbytes: int) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if nbytes >= scale and nbytes % scale == 0:
            return f"{nbytes // scale} {unit}"
    return f"{nbytes:,} bytes"


def ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1e3:.3f} ms"


def where(outcome: JobOutcome) -> str:
    if not outcome.placed:
        return "Pending"
    return f"{outcome.hypernode} (tier {outcome.tier})"


def nodes_of(outcome: JobOutcome) -> int:
    return len({node for _, node in outcome.pods})


def _table(*columns: str, right: tuple[str, ...] = ()) -> Table:
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    for column in columns:
        table.add_column(column, justify="right" if column in right else "left", overflow="fold")
    return table


def text_report(result: SimulationResult, stack: str, compare: bool) -> str:
    fabric = result.fabric
    c = result.cluster
    out = io.StringIO()
    console = Console(file=out, width=160, color_system=None, highlight=False, emoji=False, soft_wrap=True)
    tiers = ", ".join(f"{t} {fabric.tier_names.get(t, '')}".strip() for t in c.tiers)
    gpus = sum(c.node_gpus(i) for i in range(len(c.node_names)))
    console.print(f"trainstack simulate {stack}: {len(result.jobs)} jobs on {len(c.node_names):,} nodes "
                  f"({gpus:,} GPUs); tiers {tiers}; {TOP_NAME} is tier {c.top_tier}")
    console.print(f"scheduler: {result.settings.source}")
    links = "; ".join(f"tier {t}: {link_for(result.links, t).bandwidth_gbps:g} GB/s, "
                      f"{link_for(result.links, t).latency_us:g} us" for t in [0] + c.tiers)
    console.print(f"all-reduce: {size(result.gradient_bytes)} per rank, two-level alpha-beta model ({links})")
    if result.usage:
        console.print(f"existing usage on {len(result.usage)} nodes (not in the lower bound)")

    aware = result.outcomes["topology-aware"]
    console.print()
    console.print("topology-aware (Volcano v1.15 network-topology-aware)")
    table = _table("job", "kind", "pods", "GPUs", "constraint", "landed in", "nodes", "all-reduce",
                   right=("pods", "GPUs", "nodes", "all-reduce"))
    for job, outcome in zip(result.jobs, aware):
        table.add_row(job.name, job.kind, str(len(job.pods)), str(job.gpus), constraint_label(job),
                      where(outcome), str(nodes_of(outcome)) if outcome.placed else "-", ms(outcome.allreduce_s))
    console.print(table)
    notes = [(o.job, o.reason) for o in aware if o.reason]
    if notes:
        console.print("notes:")
        for job, reason in notes:
            console.print(f"  {job}: {reason}")

    if compare:
        console.print()
        console.print("comparison (lower bound: each job alone on the empty fabric)")
        table = _table("job", "topology-aware", "all-reduce", "oblivious", "all-reduce ", "lower bound",
                       "all-reduce  ", right=("all-reduce", "all-reduce ", "all-reduce  "))
        for i, job in enumerate(result.jobs):
            row = [job.name]
            for name in STRATEGIES:
                outcome = result.outcomes[name][i]
                row += [where(outcome), ms(outcome.allreduce_s)]
            table.add_row(*row)
        console.print(table)
        reasons = [(o.job, o.reason) for o in result.outcomes["oblivious"] if not o.placed]
        if reasons:
            console.print("oblivious pending:")
            for job, reason in reasons:
                console.print(f"  {job}: {reason}")

    console.print()
    console.print(f"totals over the {len(result.common)} of {len(result.jobs)} jobs every strategy placed")
    table = _table("strategy", "placed", "inside one leaf", "total all-reduce", "mean all-reduce",
                   right=("placed", "inside one leaf", "total all-reduce", "mean all-reduce"))
    for name in STRATEGIES if compare else STRATEGIES[:1]:
        outcomes = result.outcomes[name]
        placed = [o for o in outcomes if o.placed]
        one_leaf = sum(1 for o in placed if o.leaves == 1)
        mean = result.totals[name] / len(result.common) if result.common else None
        table.add_row(name, f"{len(placed)}/{len(outcomes)}", f"{one_leaf}/{len(outcomes)}",
                      ms(result.totals[name]), ms(mean))
    console.print(table)
    return out.getvalue()
