"""`trainstack simulate STACK --workloads FILE` or `trainstack simulate SNAPSHOT`: where would these
jobs land, and what does it cost?"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from modules.core.config import Project, load_stack
from modules.core.errors import InputError, show
from modules.core.quantity import parse_quantity
from modules.core.yamlio import read_text
from modules.core.render import render
from modules.probe import results

# The simulator itself (engine, report, snapshot, cost) is imported when a simulate command runs, not
# when the CLI registers its subcommands: `trainstack check` and `render` never load it.


MAX_GRADIENT_BYTES = 2**60   # 1Ei


def gradient_bytes(value: str) -> int:
    try:
        amount = parse_quantity(value)
    except ValueError:
        amount = None
    # 0.5 would be 0 bytes (an all-reduce of nothing); 1e400 would overflow the cost model's floats
    if amount is None or not 1 <= amount <= MAX_GRADIENT_BYTES:
        raise InputError("trainstack simulate", "--gradient-size",
                          f"expected a positive quantity of bytes, at least 1, at most 1Ei, such as 1Gi or 256Mi, "
                          f"got {show(value)}")
    return int(amount)


def snapshot_path(args: argparse.Namespace) -> str | None:
    """The snapshot to simulate: ``--snapshot PATH``, or a positional argument that names an
    existing file or directory other than a stack file (``Pulumi.<stack>.yaml``)."""
    if args.snapshot:
        if args.stack:
            raise InputError("trainstack simulate", "--snapshot",
                              f"give a stack ({args.stack}) or a snapshot, not both")
        return args.snapshot
    if args.stack is None:
        raise InputError("trainstack simulate", "", "expected a stack name, or a snapshot file or directory "
                          "(kubectl get hypernodes,nodes,podgroups,pods -A -o yaml)")
    path = Path(args.stack)
    if path.exists() and not (path.is_file() and path.name.startswith("Pulumi.")):
        return args.stack
    return None


def needs_project(args: argparse.Namespace) -> bool:
    """A snapshot is simulated without a project; a stack needs one."""
    return snapshot_path(args) is None


def probe_records(args: argparse.Namespace, fabric, warnings: list[str]) -> list:
    """``--probe`` results (the one probe format), numbered by the fabric's tiers."""
    records = results.read(args.probe)
    warnings += results.require_representative(records, args.accept_cpu, "simulate")
    records, ignored = results.numbered(records, fabric.tier_names)
    warnings += ignored
    return records


def cmd_simulate_snapshot(args: argparse.Namespace, shown: str) -> int:
    """Simulate the pending gangs of a cluster snapshot, with no stack (snapshot.py)."""
    from .cost import fit_links
    from .engine import simulate
    from .report import json_report, text_report
    from .objects import read_objects
    from .snapshot import snapshot_from_objects
    from .workloads import load_workloads
    if args.submit:
        from . import whatif_commands

        return whatif_commands.on_snapshot(args, shown)
    nbytes = gradient_bytes(args.gradient_size)
    if args.usage:
        raise InputError("trainstack simulate", "--usage", "a snapshot's bound pods are its usage; --usage is "
                          "for stacks")
    conf = read_text(Path(args.scheduler_conf), args.scheduler_conf) if args.scheduler_conf else None
    objects = read_objects(Path(shown), shown)
    snap = snapshot_from_objects(objects, shown, conf)
    warnings = list(snap.warnings)
    jobs = list(snap.jobs)
    if args.workloads:     # admitted against the snapshot's objects (its Queues, PriorityClasses, runtimes)
        jobs += load_workloads(Path(args.workloads), args.workloads, snap.fabric, snap.runtimes, "the snapshot",
                               warnings, context=[o for _, o in objects])
    if not jobs:
        raise InputError(shown, "", "nothing to place: no pending pod, Volcano Job or TrainJob in the snapshot "
                          "(add --workloads FILE)")
    links = dict(snap.fabric.links)
    if args.probe:
        links.update(fit_links(probe_records(args, snap.fabric, warnings), links[0].latency_us if 0 in links else 0.0,
                                warnings))
    result = simulate(snap.fabric, jobs, usage=snap.usage, settings=snap.settings, links=links, gradient_bytes=nbytes,
                      releasing=snap.releasing)
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if args.format == "json":
        sys.stdout.write(json_report(result))
    else:
        sys.stdout.write(text_report(result, f"snapshot {shown}", compare=args.compare == "oblivious"))
    return 0


def cmd_simulate(args: argparse.Namespace, project: Project) -> int:
    snapshot = snapshot_path(args)
    if snapshot is not None:
        return cmd_simulate_snapshot(args, snapshot)
    from .cost import fit_links
    from .engine import simulate
    from .report import json_report, text_report
    from .scheduler import settings_from_bundle
    from .whatif import bundle_objects
    from .workloads import load_usage, load_workloads, runtimes_in
    nbytes = gradient_bytes(args.gradient_size)
    stack = load_stack(project, args.stack)
    if args.submit:
        from . import whatif_commands

        return whatif_commands.on_stack(args, stack)
    if not args.workloads:
        raise InputError("trainstack simulate", "--workloads", "a stack needs --workloads FILE (the jobs to place)")
    bundle = render(stack)
    fabric = bundle.fabric
    runtimes = runtimes_in(r.obj for r in bundle.resources)
    warnings = list(bundle.warnings)
    jobs = load_workloads(Path(args.workloads), args.workloads, fabric, runtimes, f"stack {stack.name}", warnings,
                          context=bundle_objects(bundle), stack=True)
    usage = load_usage(Path(args.usage), args.usage, fabric) if args.usage else {}
    links = dict(fabric.links)
    if args.probe:
        links.update(fit_links(probe_records(args, fabric, warnings), links[0].latency_us if 0 in links else 0.0,
                                warnings))
    result = simulate(fabric, jobs, usage=usage, settings=settings_from_bundle(bundle), links=links,
                      gradient_bytes=nbytes)
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if args.format == "json":
        sys.stdout.write(json_report(result))
    else:
        sys.stdout.write(text_report(result, stack.name, compare=args.compare == "oblivious"))
    return 0


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("simulate", parents=[common],
                       help="place Volcano Jobs and TrainJobs on the stack's fabric as Volcano would (what-if)")
    p.add_argument("stack", nargs="?", help="stack name (stacks/Pulumi.<stack>.yaml), or a snapshot file or directory")
    p.add_argument("--snapshot", metavar="PATH", help="a cluster snapshot instead of a stack: the YAML of kubectl get "
                   "hypernodes,nodes,podgroups,pods -A -o yaml (a file, or a directory of such files)")
    p.add_argument("--scheduler-conf", metavar="FILE", help="with a snapshot: the scheduler conf to use: the conf "
                   "itself, the volcano-scheduler-configmap ConfigMap's YAML, or the chart's values file (default: the "
                   "ConfigMap the snapshot's scheduler mounts, else the baseline weights; the what-if runs the chart's "
                   "default conf); a conf with no actions or tiers exits 2")
    p.add_argument("--workloads", metavar="FILE",
                   help="multi-document YAML of Volcano Jobs and TrainJobs, simulated in order (required with a "
                   "stack; with a snapshot, placed after its pending pods)")
    p.add_argument("--compare", choices=["oblivious"],
                   help="also show topology-oblivious first-fit and the lower bound side by side "
                        "(JSON always has them)")
    p.add_argument("--format", default="text", choices=["text", "json"], help="report format")
    p.add_argument("--usage", metavar="FILE", help="resources already in use: nodes: {NODE or range: {resource: qty}}")
    p.add_argument("--gradient-size", default="1Gi", metavar="BYTES",
                   help="all-reduce size per rank for the cost model (default 1Gi)")
    p.add_argument("--probe", metavar="FILE", help="probe results (`trainstack probe --json`, format "
                   "modules/probe/README.md) to fit per-tier latency and bandwidth instead of trainstack:fabric.links")
    p.add_argument("--accept-cpu", action="store_true",
                   help="use probe results measured with gloo on CPUs (not representative of GPU tiers; refused "
                        "otherwise)")
    # the what-if's options (simulate/whatif_commands.py runs it; imported only when it runs)
    p.add_argument("--submit", metavar="FILE", help="what-if: a job to submit (a Volcano Job, a TrainJob, a "
                   "PyTorchJob, a pod-grouped Deployment/StatefulSet/ReplicaSet, or a PodGroup with its Pods); prints "
                   "which running pods Volcano's enqueue and eviction actions (preempt, reclaim, gangpreempt, "
                   "gangreclaim) evict for it, from which queues, and the tier and plugins that chose each, or, when "
                   "it waits, every candidate refused and by which action, tier and plugin")
    p.add_argument("--queue", metavar="NAME", help="with --submit: the queue to submit into (default: the job's own)")
    p.set_defaults(run=cmd_simulate, needs_project=needs_project)
