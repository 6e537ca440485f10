"""`trainstack fabric STACK`: what the stack's fabric looks like, for reviewers."""
from __future__ import annotations

import argparse
import sys

from modules.core.config import Project, load_stack
from modules.core.context import RenderContext

from . import views
from .model import build_fabric

FORMATS = ("tree", "mermaid", "dot", "json")


def cmd_fabric(args: argparse.Namespace, project: Project) -> int:
    stack = load_stack(project, args.stack)
    ctx = RenderContext(stack)
    fabric = build_fabric(ctx)
    for message in ctx.warnings:
        print(f"warning: {message}", file=sys.stderr)
    if args.format == "tree":
        text = views.tree_text(fabric, stack.name, args.depth)
    elif args.format == "mermaid":
        text = views.mermaid(fabric, stack.name, args.max_boxes)
    elif args.format == "dot":
        text = views.dot(fabric, stack.name, args.max_boxes)
    else:
        text = views.as_json(fabric, stack.name)
    sys.stdout.write(text)
    return 0


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("expected an integer >= 1")
    return value


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("fabric", parents=[common], help="summarize and draw the stack's fabric "
                       "(tiers, switches, nodes, GPUs, largest domain per tier)")
    p.add_argument("stack", help="stack name (stacks/Pulumi.<stack>.yaml)")
    p.add_argument("--format", default="tree", choices=FORMATS,
                   help="tree: summary and indented tree; mermaid: a block to paste into a PR; "
                        "dot: Graphviz; json: the summary and every switch")
    p.add_argument("--depth", type=_positive, metavar="N", help="tree: show N levels below each root")
    p.add_argument("--max-boxes", type=_positive, default=120, metavar="N",
                   help="mermaid/dot: above N HyperNodes, draw the leaves under one parent as one box")
    p.set_defaults(run=cmd_fabric)
