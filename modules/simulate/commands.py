"""`trainstack simulate STACK --workloads FILE`: where would these jobs land, and what does it cost?"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from modules.core.config import Project, load_stack
from modules.core.errors import ConfigError, show
from modules.core.quantity import parse_quantity
from modules.core.render import render
from modules.probe import results

from .cost import fit_links
from .engine import simulate
from .report import json_report, text_report
from .scheduler import settings_from_bundle
from .workloads import load_usage, load_workloads, runtimes_in


def gradient_bytes(value: str) -> int:
    try:
        amount = parse_quantity(value)
    except ValueError:
        amount = None
    if amount is None or amount <= 0:
        raise ConfigError("trainstack simulate", "--gradient-size",
                          f"expected a positive quantity of bytes such as 1Gi or 256Mi, got {show(value)}")
    return int(amount)


def cmd_simulate(args: argparse.Namespace, project: Project) -> int:
    nbytes = gradient_bytes(args.gradient_size)
    stack = load_stack(project, args.stack)
    bundle = render(stack)
    fabric = bundle.fabric
    runtimes = runtimes_in(r.obj for r in bundle.resources)
    warnings = list(bundle.warnings)
    jobs = load_workloads(Path(args.workloads), args.workloads, fabric, runtimes, stack.name, warnings)
    usage = load_usage(Path(args.usage), args.usage, fabric) if args.usage else {}
    links = dict(fabric.links)
    if args.probe:
        records = results.read(args.probe)
        warnings += results.require_representative(records, args.accept_cpu, "simulate")
        records, ignored = results.numbered(records, fabric.tier_names)
        warnings += ignored
        links.update(fit_links(records))
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
    p.add_argument("stack", help="stack name (stacks/Pulumi.<stack>.yaml)")
    p.add_argument("--workloads", required=True, metavar="FILE",
                   help="multi-document YAML of Volcano Jobs and TrainJobs, simulated in order")
    p.add_argument("--compare", choices=["oblivious"],
                   help="also show topology-oblivious first-fit and the lower bound side by side (JSON always has them)")
    p.add_argument("--format", default="text", choices=["text", "json"], help="report format")
    p.add_argument("--usage", metavar="FILE", help="resources already in use: nodes: {NODE or range: {resource: qty}}")
    p.add_argument("--gradient-size", default="1Gi", metavar="BYTES",
                   help="all-reduce size per rank for the cost model (default 1Gi)")
    p.add_argument("--probe", metavar="FILE", help="probe results (`trainstack probe --json`, format "
                   "modules/probe/README.md) to fit per-tier latency and bandwidth instead of trainstack:fabric.links")
    p.add_argument("--accept-cpu", action="store_true",
                   help="use probe results measured with gloo on CPUs (not representative of GPU tiers; refused "
                        "otherwise)")
    p.set_defaults(run=cmd_simulate)
