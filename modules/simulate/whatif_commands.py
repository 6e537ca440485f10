"""The ``--submit`` options of ``trainstack simulate`` (the eviction what-if, ``whatif.py``)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from modules.core.errors import InputError
from modules.core.render import render
from modules.core.yamlio import read_text
from modules.semantics.shapes import is_kind

from . import submit, whatif
from .engine import simulate
from .scheduler import settings_from_bundle
from .objects import read_objects
from .workloads import load_workloads, runtimes_in


def _print(w: whatif.WhatIf, fmt: str) -> int:
    sys.stdout.write(whatif.json_report(w) if fmt == "json" else whatif.text_report(w))
    return 0


def _check(args: argparse.Namespace) -> None:
    for option in ("probe", "usage"):
        if getattr(args, option):
            raise InputError("trainstack simulate", f"--{option}", "is not used with --submit")
    if args.compare:
        raise InputError("trainstack simulate", "--compare", "is not used with --submit")


def on_snapshot(args: argparse.Namespace, shown: str) -> int:
    """The what-if on a cluster snapshot: its pods are the running jobs."""
    _check(args)
    if args.workloads:
        raise InputError("trainstack simulate", "--workloads", "with a snapshot and --submit, the snapshot's pods are "
                          "the running jobs; --workloads is for stacks")
    objects = read_objects(Path(shown), shown)
    if not any(is_kind(o, "Queue", "scheduling.volcano.sh") for _, o in objects):
        raise InputError(shown, "", "no Queue in the snapshot (add kubectl get queues.scheduling.volcano.sh -o yaml): "
                         "Volcano drops every job whose queue is missing, so no eviction can be judged")
    cluster = [o for _, o in objects]
    refused: list[str] = []
    new, groups = submit.submitted(Path(args.submit), args.submit, args.queue, cluster, f"the snapshot {shown}",
                                   notes=refused)
    text = read_text(Path(args.scheduler_conf), args.scheduler_conf) if args.scheduler_conf else None
    conf, source, notes = whatif.scheduler_conf(cluster, text, args.scheduler_conf or shown)
    result = whatif.what_if(objects, new, groups, conf, f"snapshot {shown}", args.submit, shown)
    result.conf_source, result.notes = source, refused + notes + result.notes
    return _print(result, args.format)


def on_stack(args: argparse.Namespace, stack) -> int:
    """The what-if on a stack: its fabric, Queues, PriorityClasses and conf, with ``--workloads``
    running where the topology-aware model places them."""
    _check(args)
    if args.scheduler_conf:
        raise InputError("trainstack simulate", "--scheduler-conf", "a stack runs the conf it renders")
    bundle = render(stack)
    stack_objects = whatif.bundle_objects(bundle)
    objects = [(f"{stack.name}: {o.get('kind')} {o.get('metadata', {}).get('name')}", o)
               for o in whatif.fabric_nodes(bundle.fabric) + stack_objects]
    warnings = list(bundle.warnings)
    if args.workloads:
        jobs = load_workloads(Path(args.workloads), args.workloads, bundle.fabric,
                              runtimes_in(r.obj for r in bundle.resources), stack.name, warnings,
                              context=stack_objects, stack=True)
        placed = simulate(bundle.fabric, jobs, settings=settings_from_bundle(bundle))
        objects += whatif.running_objects(placed, Path(args.workloads), args.workloads, stack_objects)
    refused: list[str] = []
    new, groups = submit.submitted(Path(args.submit), args.submit, args.queue, stack_objects, f"stack {stack.name}",
                                   stack=True, notes=refused)
    conf, source, notes = whatif.scheduler_conf(stack_objects, None, f"stack {stack.name}")
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    result = whatif.what_if(objects, new, groups, conf, f"stack {stack.name}", args.submit)
    result.conf_source, result.notes = source, refused + notes + result.notes
    return _print(result, args.format)
