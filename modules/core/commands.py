"""`trainstack render` and `validate` (`check` and `preview` live in policies/commands.py)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .config import Project, find_project, load_project, load_stack
from .errors import InputError
from .names import check_stack_name, check_stack_names
from .output import bundle_files, stale_files, write_tree
from .render import render


def looks_like_path(text: object) -> bool:
    return isinstance(text, str) and (text.endswith((".yaml", ".yml")) or "/" in text or "\\" in text)


def project_for(args: argparse.Namespace) -> Project | None:
    """The project a command acts on, or None for commands that need none (``needs_project``
    False, e.g. ``probe``). A stack given as a path to its file (``stacks/Pulumi.east.yaml``)
    becomes its name; without --project, the project is the one holding that file."""
    needs = getattr(args, "needs_project", True)
    if not (needs(args) if callable(needs) else needs):   # a command may decide from its arguments
        return None
    stack = getattr(args, "stack", None)
    path = Path(stack) if looks_like_path(stack) else None
    start = Path(args.project) if getattr(args, "project", None) else (path.resolve().parent if path else None)
    project = load_project(find_project(start))
    if path is not None:
        args.stack = stack_name_of(project, path)
    return project


def stack_name_of(project: Project, path: Path) -> str:
    """``stacks/Pulumi.east.yaml`` -> ``east``, when that file is one of the project's stack files."""
    name = path.name
    if not (name.startswith("Pulumi.") and name.endswith((".yaml", ".yml"))) or name.count(".") < 2:
        raise InputError(str(path), "", "invalid stack name: expected a stack name (letters, digits, '-', '_', "
                          "'.') or the path of a stack file named Pulumi.<stack>.yaml")
    stack = name[len("Pulumi."):name.rindex(".")]
    if path.resolve() != project.stack_file(stack).resolve():
        raise InputError(str(path), "", f"not a stack file of the project at {project.root}: its stacks are "
                          f"{project.show(project.stack_dir)}/Pulumi.<stack>.yaml")
    if not path.is_file():
        raise InputError(str(path), "", "no such file")
    return stack


def stacks_from(args: argparse.Namespace, project: Project) -> list[str]:
    """The stacks a command acts on: one named, or every stack file with --all."""
    if args.all and args.stack:
        raise InputError("trainstack", "", "give a stack name or --all, not both")
    if args.all:
        names = project.stacks()
        if not names:
            raise InputError(project.show(project.stack_dir), "", "no Pulumi.<stack>.yaml files here")
        return check_stack_names(names, project.show(project.stack_dir))
    if not args.stack:
        raise InputError("trainstack", "", "name a stack (for example dev) or pass --all")
    return [check_stack_name(args.stack)]


def add_stack_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("stack", nargs="?", help="stack name, or the path of its file (stacks/Pulumi.<stack>.yaml)")
    parser.add_argument("--all", action="store_true", help="every stack in the project")


def warn(messages: list[str]) -> None:
    for message in messages:
        print(f"warning: {message}", file=sys.stderr)


# --- render ---------------------------------------------------------------------------------

def cmd_render(args: argparse.Namespace, project: Project) -> int:
    out_dir = Path(args.out) if args.out else project.root / "deploy"
    rendered, bundles = {}, {}
    for name in stacks_from(args, project):   # render everything before touching the disk
        stack = load_stack(project, name)
        bundle = render(stack)
        warn(bundle.warnings)
        rendered[out_dir / name] = bundle_files(bundle, stack.file)
        bundles[out_dir / name] = bundle
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
    write_tree(rendered, show=project.show)
    for target, files in rendered.items():
        print(f"rendered {target.name}: {bundles[target].objects_text()} as {len(files)} files in "
              f"{project.show(target)}")
    return 0


# --- validate -------------------------------------------------------------------------------

def cmd_validate(args: argparse.Namespace, project: Project) -> int:
    for name in stacks_from(args, project):
        stack = load_stack(project, name)
        bundle = render(stack)
        warn(bundle.warnings)
        print(f"{stack.file}: valid, {bundle.objects_text()}")
    return 0


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("render", parents=[common], help="write deploy/<stack>/ from the stack file")
    add_stack_args(p)
    p.add_argument("--out", metavar="DIR", help="parent folder of the output (default: deploy)")
    p.add_argument("--check", action="store_true", help="exit 1 and list the files that differ, write nothing")
    p.set_defaults(run=cmd_render)

    p = sub.add_parser("validate", parents=[common], help="validate the stack's configuration only")
    add_stack_args(p)
    p.set_defaults(run=cmd_validate)

    from .init import register as register_init

    register_init(sub, common)
