"""`trainstack render`, `check` and `validate`."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .config import Project, load_stack
from .errors import ConfigError
from .output import bundle_files, stale_files, write_tree
from .render import render


def stacks_from(args: argparse.Namespace, project: Project) -> list[str]:
    """The stacks a command acts on: one named, or every stack file with --all."""
    if args.all and args.stack:
        raise ConfigError("trainstack", "", "give a stack name or --all, not both")
    if args.all:
        names = project.stacks()
        if not names:
            raise ConfigError(project.show(project.stack_dir), "", "no Pulumi.<stack>.yaml files here")
        return names
    if not args.stack:
        raise ConfigError("trainstack", "", "name a stack (for example dev) or pass --all")
    return [args.stack]


def add_stack_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("stack", nargs="?", help="stack name (stacks/Pulumi.<stack>.yaml)")
    parser.add_argument("--all", action="store_true", help="every stack in the project")


def warn(messages: list[str]) -> None:
    for message in messages:
        print(f"warning: {message}", file=sys.stderr)


# --- render ---------------------------------------------------------------------------------

def cmd_render(args: argparse.Namespace, project: Project) -> int:
    out_dir = Path(args.out) if args.out else project.root / "deploy"
    rendered = {}
    for name in stacks_from(args, project):   # render everything before touching the disk
        stack = load_stack(project, name)
        bundle = render(stack)
        warn(bundle.warnings)
        rendered[out_dir / name] = bundle_files(bundle, stack.file)
    if args.check:
        stale = {target: stale_files(files, target) for target, files in rendered.items()}
        for target, diffs in stale.items():
            shown = project.show(target)
            if diffs:
                print(f"{shown} is stale; run `trainstack render {target.name}`:")
                print("\n".join(f"  {d}" for d in diffs))
            else:
                print(f"{shown} is up to date ({len(rendered[target])} files)")
        return 1 if any(stale.values()) else 0
    write_tree(rendered)
    for target, files in rendered.items():
        print(f"rendered {target.name}: {len(files)} files in {project.show(target)}")
    return 0


# --- check ----------------------------------------------------------------------------------

def load_manifests(paths: list[str]) -> tuple[list[dict], dict[int, str]]:
    """User manifests from files, folders or standard input (``-``); see policies/inputs.py."""
    from policies.inputs import load

    loaded = load(paths)
    return loaded.objects, loaded.sources


def cmd_check(args: argparse.Namespace, project: Project) -> int:
    from policies.checking import cmd_check as check

    return check(args, project)


# --- validate -------------------------------------------------------------------------------

def cmd_validate(args: argparse.Namespace, project: Project) -> int:
    for name in stacks_from(args, project):
        stack = load_stack(project, name)
        bundle = render(stack)
        warn(bundle.warnings)
        print(f"{stack.file}: valid ({len(bundle.resources)} objects, {len(bundle.releases)} chart releases)")
    return 0


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("render", parents=[common], help="write deploy/<stack>/ from the stack file")
    add_stack_args(p)
    p.add_argument("--out", metavar="DIR", help="parent folder of the output (default: deploy)")
    p.add_argument("--check", action="store_true", help="exit 1 and list the files that differ, write nothing")
    p.set_defaults(run=cmd_render)

    p = sub.add_parser("check", parents=[common], help="run the policy rules on the rendered stack")
    add_stack_args(p)
    p.add_argument("--manifests", nargs="+", metavar="PATH",
                   help="also check these YAML files or folders (- reads standard input)")
    from policies.report import FORMATS

    p.add_argument("--format", default="text", choices=sorted(FORMATS), help="report format")
    p.set_defaults(run=cmd_check)

    p = sub.add_parser("validate", parents=[common], help="validate the stack's configuration only")
    add_stack_args(p)
    p.set_defaults(run=cmd_validate)
