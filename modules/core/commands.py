"""`trainstack render`, `check` and `validate`."""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from . import yamlio
from .config import Project, load_stack
from .errors import ConfigError
from .names import check_stack_name, check_stack_names
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
        return check_stack_names(names, project.show(project.stack_dir))
    if not args.stack:
        raise ConfigError("trainstack", "", "name a stack (for example dev) or pass --all")
    return [check_stack_name(args.stack)]


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
    write_tree(rendered, show=project.show)
    for target, files in rendered.items():
        print(f"rendered {target.name}: {len(files)} files in {project.show(target)}")
    return 0


# --- check ----------------------------------------------------------------------------------

def _is_object(obj: object) -> bool:
    """The shape every rule relies on: string kind and apiVersion, metadata a mapping, a string name."""
    if not (isinstance(obj, dict) and isinstance(obj.get("kind"), str) and obj["kind"]
            and isinstance(obj.get("apiVersion", ""), str) and isinstance(obj.get("metadata"), dict)):
        return False
    meta = obj["metadata"]
    return all(isinstance(meta.get(key, ""), str) for key in ("name", "namespace", "generateName"))


def load_manifests(paths: list[str]) -> tuple[list[dict], dict[int, str]]:
    """User manifests from files or folders (every *.yaml / *.yml / *.json below a folder)."""
    objects: list[dict] = []
    sources: dict[int, str] = {}
    for raw in paths:
        path = Path(raw)
        if not os.path.lexists(path):
            raise ConfigError(raw, "", "no such file or folder")
        files = sorted(p for p in path.rglob("*") if p.suffix in (".yaml", ".yml", ".json")) \
            if path.is_dir() else [path]
        for file in files:
            for i, doc in enumerate(yamlio.load_all(yamlio.read_text(file, str(file)), str(file))):
                is_list = isinstance(doc, dict) and isinstance(doc.get("kind"), str) and doc["kind"].endswith("List")
                items = doc.get("items") or [] if is_list else [doc]
                if not isinstance(items, list):
                    raise ConfigError(str(file), f"document {i + 1}: items", "expected a list of Kubernetes objects")
                for obj in items:
                    if not _is_object(obj):
                        raise ConfigError(str(file), f"document {i + 1}", "expected a Kubernetes object with "
                                          "apiVersion, kind and metadata (strings, and a metadata mapping)")
                    objects.append(obj)
                    sources[id(obj)] = str(file)
    return objects, sources


def cmd_check(args: argparse.Namespace, project: Project) -> int:
    from policies.framework import CheckContext
    from policies.report import FORMATS
    from policies.runner import bundle_objects, has_mandatory, load_settings, render_error_violation, run_rules

    user, sources = load_manifests(args.manifests or [])
    results = {}
    for name in stacks_from(args, project):
        settings = load_settings(name)
        try:
            stack = load_stack(project, name)
            bundle = render(stack)
        except ConfigError as err:   # a mistake a rule also catches is reported as that rule
            violation = render_error_violation(err, settings)
            if violation is None:
                raise
            results[name] = ([violation], 0)
            continue
        objects = bundle_objects(bundle) + user
        violations = run_rules(objects, CheckContext(stack=stack, fabric=bundle.fabric), settings, sources=sources)
        results[name] = (violations, len(objects))
    sys.stdout.write(FORMATS[args.format](results))
    return 1 if any(has_mandatory(v) for v, _ in results.values()) else 0


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
    p.add_argument("--manifests", nargs="+", metavar="PATH", help="also check these YAML files or folders")
    from policies.report import FORMATS

    p.add_argument("--format", default="text", choices=sorted(FORMATS), help="report format")
    p.set_defaults(run=cmd_check)

    p = sub.add_parser("validate", parents=[common], help="validate the stack's configuration only")
    add_stack_args(p)
    p.set_defaults(run=cmd_validate)
