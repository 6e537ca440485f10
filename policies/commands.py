"""`trainstack preview`: the Pulumi program under mocks, checked by the real policy pack over gRPC.

What `pulumi preview --policy-pack policies --policy-pack-config policies/config.<stack>.json`
does, without the Pulumi CLI, a backend, cloud credentials or a cluster: the program registers its
resources with a mock monitor, and every registration goes to the pack started as the engine
starts it. Reports and exit codes are those of `trainstack check`.
"""
from __future__ import annotations

import argparse
import sys

from modules.core.commands import add_stack_args, stacks_from
from modules.core.config import Project, load_stack, pulumi_config_map
from modules.core.errors import ConfigError

from .framework import Violation
from .runner import bundle_objects, has_mandatory, load_settings, read_settings_file, render_error_violation

EXIT_PACK_FAILED = 3


def program_resources(project: Project, stack_name: str, config: dict[str, str]):
    """The program's registrations as the engine would describe them to an analyzer."""
    from modules.core.preview_engine import run_program

    from .driver import Resource, stack_urn

    root = stack_urn(stack_name, project.name)
    out = [Resource(type="pulumi:pulumi:Stack", name=f"{project.name}-{stack_name}", urn=root, properties={},
                    custom=False)]
    by_urn: dict[str, Resource] = {}
    for reg in run_program(project.root, stack_name, config):
        if reg.read:   # prerequisites the program only reads (an existing CRD): nothing to analyze
            continue
        resource = Resource(type=reg.type, name=reg.name, urn=reg.urn, properties=reg.inputs, custom=reg.custom,
                            parent=reg.parent or root, dependencies=list(reg.dependencies),
                            provider=by_urn.get(reg.provider))
        by_urn[reg.urn] = resource
        out.append(resource)
    return out


def preview_stack(project: Project, stack_name: str, user: list[dict] = (),
                  sources: dict[int, str] | None = None, loaded=None) -> tuple[list[Violation], int]:
    """``loaded``: the policies.inputs.Manifests ``user`` came from, to locate findings by line."""
    from modules.core.render import render

    from .checking import locate_violations, without_copies
    from .driver import Pack, analyze, manifest_resources, stack_urn
    from .inputs import Manifests
    from .pack import PACK_DIR

    stack = load_stack(project, stack_name)
    bundle = render(stack)             # a broken stack is a ConfigError (exit 2), not a failed program
    user = without_copies(bundle_objects(bundle), list(user))   # as `check` counts them: once
    config = pulumi_config_map(stack)
    resources = program_resources(project, stack_name, config)
    resources += manifest_resources(list(user), stack_name, project.name, stack_urn(stack_name, project.name),
                                    sources, taken=[r.urn for r in resources])
    data, shown = read_settings_file(stack_name)
    root = None if project.root == PACK_DIR.parent else project.root
    with Pack(stack_name, project.name, config, project_root=root) as pack:
        outcome = analyze(pack, resources, data, shown)
    return locate_violations(outcome.violations, project, stack, bundle, loaded or Manifests()), outcome.objects


def cmd_preview(args: argparse.Namespace, project: Project) -> int:
    try:
        return preview(args, project)
    except ConfigError as err:   # as in `check`: json/sarif/junit still get a valid document
        if args.format != "text":
            from .report import failure

            sys.stdout.write(failure(args.format, [args.stack or "all"], str(err)))
        raise


def preview(args: argparse.Namespace, project: Project) -> int:
    from .admission.commands import apply_dir_option
    from .checking import skipped_notes
    from .driver import PackError
    from .inputs import load
    from .report import FORMATS

    apply_dir_option(args)
    loaded = load(args.manifests or [])
    user, sources = loaded.objects, loaded.sources
    results = {}
    for name in stacks_from(args, project):
        try:
            results[name] = preview_stack(project, name, user, sources, loaded)
            results[name] = (results[name][0] + skipped_notes(loaded), results[name][1])
        except PackError as err:
            print(f"error: {name}: {err}", file=sys.stderr)
            return EXIT_PACK_FAILED
        except ConfigError as err:   # as in `check`: a mistake a rule also catches is that rule's violation
            violation = render_error_violation(err, load_settings(name))
            if violation is None:
                raise
            results[name] = ([violation], 0)
    sys.stdout.write(FORMATS[args.format](results))
    return 1 if any(has_mandatory(v) for v, _ in results.values()) else 0


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    from .report import FORMATS

    p = sub.add_parser("preview", parents=[common],
                       help="run the Pulumi program under mocks and check it with the real policy pack over gRPC")
    add_stack_args(p)
    p.add_argument("--manifests", nargs="+", metavar="PATH", help="also send these YAML files or folders to the pack")
    p.add_argument("--format", default="text", choices=sorted(FORMATS), help="report format")
    from .admission.commands import add_dir_option

    add_dir_option(p)
    p.set_defaults(run=cmd_preview)
