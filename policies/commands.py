"""`trainstack check` and `trainstack preview`: one report loop over stacks, two ways to collect
violations.

Both load the user's manifests, then for each stack: load and render it (a mistake a rule also
catches becomes that rule's mandatory violation at its line in the stack file; any other error
stops the run, exit 2, as in `render`), print the render's warnings as `validate` and `render` do,
collect and locate violations, and write one report in --format. A run that stops on its input
still writes a valid json/sarif/junit document that records the failure.

* `check` runs the rules in-process over the rendered objects plus the user's manifests.
* `preview` is what `pulumi preview --policy-pack policies --policy-pack-config
  policies/config.<stack>.json` does, without the Pulumi CLI, a backend, cloud credentials or a
  cluster: the Pulumi program registers its resources with a mock monitor and every registration
  goes to the real pack, started as the engine starts it (one process for the run) and driven
  over gRPC. Violations come back by resource id and are located as `check` locates them.
"""
from __future__ import annotations

import argparse
import sys
from contextlib import contextmanager

from modules.core.commands import add_stack_args, stacks_from, warn
from modules.core.config import Project, load_stack, pulumi_config_map
from modules.core.errors import InputError

from .framework import CheckContext, Violation
from .inputs import Manifests, load
from .runner import has_mandatory, load_settings, read_settings_file, run_rules

EXIT_PACK_FAILED = 3


# --- the shared loop ----------------------------------------------------------------------------

class Collector:
    """How a command turns one rendered stack (and the user's manifests) into located violations
    and the number of objects judged. A context manager: resources live for one run."""

    def __enter__(self) -> "Collector":
        return self

    def __exit__(self, *exc) -> None:
        pass

    def collect(self, project: Project, stack, bundle, user: Manifests, settings) -> tuple[list[Violation], int]:
        raise NotImplementedError

    def decorate(self, fmt: str, report_text: str) -> str:
        """The report as written: `preview` puts its plan in front (text) or inside (json)."""
        return report_text


def report(args: argparse.Namespace, project: Project, collector: Collector) -> int:
    """Both commands' run; an InputError (exit 2) still leaves a valid json/sarif/junit document."""
    from .admission.commands import apply_dir_option

    apply_dir_option(args)
    try:
        return _report(args, project, collector)
    except InputError as err:
        _failure(args, str(err), 2)
        raise


def _failure(args: argparse.Namespace, message: str, code: int) -> None:
    if args.format != "text":
        from .report import failure

        sys.stdout.write(failure(args.format, [args.stack or "all"], message, code))


def _report(args: argparse.Namespace, project: Project, collector: Collector) -> int:
    from modules.core.render import render

    from .checking import skipped_notes, stack_error_violation
    from .report import FORMATS

    user = load(args.manifests or [])
    results: dict[str, tuple[list[Violation], int]] = {}
    with collector:
        for name in stacks_from(args, project):
            settings = load_settings(name)   # a broken settings file is exit 2, whether or not the stack renders
            try:
                stack = load_stack(project, name)
                bundle = render(stack)
            except InputError as err:
                results[name] = ([stack_error_violation(err, settings, project)], 0)
                continue
            warn(bundle.warnings)   # a warning in validate and render is the same warning here
            violations, count = collector.collect(project, stack, bundle, user, settings)
            results[name] = (violations + skipped_notes(user), count)
        sys.stdout.write(collector.decorate(args.format, FORMATS[args.format](results)))
    return 1 if any(has_mandatory(v) for v, _ in results.values()) else 0


# --- check: the rules in-process ----------------------------------------------------------------

class InProcess(Collector):
    def __enter__(self) -> "InProcess":
        from .admission import start

        start()   # upstream's admission rules compile in their own process while the stack renders
        return self

    def collect(self, project, stack, bundle, user, settings):
        from .checking import stack_locator, without_copies

        locate, rendered = stack_locator(project, stack, bundle, user)
        objects = rendered + without_copies(rendered, user.objects)
        violations = run_rules(objects, CheckContext(stack=stack, fabric=bundle.fabric), settings,
                               sources=user.sources, locate=locate)
        return violations, len(objects)


def cmd_check(args: argparse.Namespace, project: Project | None) -> int:
    if project is None:
        return report_manifests(args)
    if args.profile:
        raise InputError("trainstack check", "--profile", "only for manifests checked without a stack; a stack's "
                         "own trainstack:profile applies to it")
    return report(args, project, InProcess())


def manifests_only(args: argparse.Namespace) -> bool:
    """`check --manifests PATH` with no stack and no --all: no project is needed."""
    return bool(args.manifests) and not args.stack and not args.all


def report_manifests(args: argparse.Namespace) -> int:
    """The user's manifests alone, as a CI step over any folder (`kustomize build | trainstack check
    --manifests -`): every rule that needs no stack, at its default level, with ``--profile``
    (default standard) where a rule depends on it. The rules in STACK_RULES judge against a stack's
    fabric and scheduler configuration and run only when a stack is named."""
    from .admission.commands import apply_dir_option
    from .checking import STACK_RULES, manifest_locator, skipped_notes, without_copies
    from .report import FORMATS
    from .rules import RULES
    from .runner import PolicySettings

    apply_dir_option(args)
    profile = args.profile or "standard"
    try:
        user = load(args.manifests)
    except InputError as err:
        _failure(args, str(err), 2)
        raise
    objects = without_copies([], user.objects)
    rules = [r for r in RULES if r.id not in STACK_RULES]
    violations = run_rules(objects, CheckContext(profile=profile), PolicySettings(), rules=rules,
                           sources=user.sources, locate=manifest_locator(user))
    results = {MANIFESTS: (violations + skipped_notes(user), len(objects))}
    sys.stdout.write(FORMATS[args.format](results))
    if args.format == "text":
        print(f"(profile {profile}, no stack: {', '.join(sorted(STACK_RULES))} need one; name a STACK to run them)",
              file=sys.stderr)
    return 1 if has_mandatory(violations) else 0


MANIFESTS = "manifests"   # the report's name for a run over manifests without a stack


# --- preview: the program under mocks, the pack over gRPC ---------------------------------------

def program_resources(project: Project, stack_name: str, config: dict[str, str], quiet: frozenset[str] = frozenset(),
                      rendered: tuple | None = None):
    """The program's registrations as the engine would describe them to an analyzer. ``quiet``:
    warnings the program logs that the caller has already printed (the render's). ``rendered``:
    the caller's ``(StackConfig, Bundle)``, reused by the program when its stack is the same."""
    from modules.core.preview_engine import run_program

    from .driver import EngineResource, stack_urn

    root = stack_urn(stack_name, project.name)
    out = [EngineResource(type="pulumi:pulumi:Stack", name=f"{project.name}-{stack_name}", urn=root, properties={},
                          custom=False)]
    by_urn: dict[str, EngineResource] = {}

    def add(reg) -> None:
        if reg.read:   # prerequisites the program only reads (an existing CRD): nothing to analyze
            return
        resource = EngineResource(type=reg.type, name=reg.name, urn=reg.urn, properties=reg.inputs, custom=reg.custom,
                                  parent=reg.parent or root, dependencies=list(reg.dependencies),
                                  provider=by_urn.get(reg.provider))
        by_urn[reg.urn] = resource
        out.append(resource)

    with _without_logged(quiet):
        run_program(project.root, stack_name, config, rendered=rendered, on_record=add)
    return out


@contextmanager
def _without_logged(messages: frozenset[str]):
    """Under mocks the program's ``pulumi.log.warn`` goes to the root logger; drop the messages the
    report loop already printed, so each warning shows once and in one form."""
    import logging   # preview only: `check` never logs

    def keep(record: logging.LogRecord) -> bool:
        return record.getMessage() not in messages

    root = logging.getLogger()
    root.addFilter(keep)
    try:
        yield
    finally:
        root.removeFilter(keep)


def in_bundle_order(resources: list, rendered: list[dict]) -> list:
    """The program's registrations in the order `check` judges the objects (the bundle's), the
    Stack first and what the bundle does not hold last. Under mocks the program registers as its
    outputs resolve, in an order that changes from run to run; the pack's findings come back in
    registration order, so without this the report would too."""
    from .framework import resource_id

    rank: dict[str, int] = {}
    for i, obj in enumerate(rendered):
        rank.setdefault(resource_id(obj), i)

    def rank_of(resource) -> int:
        if resource.type == "pulumi:pulumi:Stack":
            return -1
        obj = resource.manifest()
        return len(rank) if obj is None else rank.get(resource_id(obj), len(rank))

    return [r for _, r in sorted(enumerate(resources), key=lambda item: (rank_of(item[1]), item[0]))]


class OverGrpc(Collector):
    """One pack process for the run (started on the first stack that renders), switched to each
    stack with ConfigureStack as the engine does for a new preview."""

    def __init__(self) -> None:
        self.pack = None
        self.plans: dict[str, dict] = {}   # stack -> what the program registers (policies/plan.py)

    def decorate(self, fmt: str, report_text: str) -> str:
        import json

        from .plan import plan_text

        if fmt == "text":
            return "".join(plan_text(name, plan) + "\n" for name, plan in self.plans.items()) + report_text
        if fmt == "json" and self.plans:
            doc = json.loads(report_text)
            for name, plan in self.plans.items():
                doc["stacks"].get(name, {})["plan"] = plan
            return json.dumps(doc, indent=2, sort_keys=True) + "\n"
        return report_text

    def __exit__(self, *exc) -> None:
        if self.pack is not None:
            self.pack.close()
            self.pack = None

    def collect(self, project, stack, bundle, user, settings):
        import grpc

        from .checking import locate_violations, stack_locator, without_copies
        from .driver import Analysis, Pack, PackError, manifest_resources, stack_urn
        from .pack import PACK_DIR
        from .plan import plan_of

        locate, rendered = stack_locator(project, stack, bundle, user)
        mine = without_copies(rendered, list(user.objects))   # as `check` counts them: once
        config = pulumi_config_map(stack)
        if self.pack is None:   # started before the program runs: the pack boots meanwhile
            root = None if project.root == PACK_DIR.parent else project.root
            try:
                self.pack = Pack(stack.name, project.name, config, project_root=root)
            except PackError as err:
                raise PackError(f"{stack.name}: {err}") from None
        data, shown = read_settings_file(stack.name)
        self.pack.stack, self.pack.config = stack.name, dict(config)   # Analysis() sends ConfigureStack
        from modules.core.pulumi_adapter import load_classes

        load_classes(bundle)
        program = program_resources(project, stack.name, config, frozenset(bundle.warnings), rendered=(stack, bundle))
        resources = in_bundle_order(program, rendered)
        self.plans[stack.name] = plan_of(resources)
        user_resources = manifest_resources(mine, stack.name, project.name, stack_urn(stack.name, project.name),
                                            user.sources, taken=[r.urn for r in resources])
        everything = resources + user_resources
        try:
            analysis = Analysis(self.pack, data, shown)
            for resource in everything:
                analysis.analyze(resource)
            outcome = analysis.finish(everything)
        except (PackError, grpc.RpcError) as err:   # the pack died or answered badly: not the user's mistake
            raise PackError(f"{stack.name}: {err}") from None
        return locate_violations(outcome.violations, locate, rendered, user), outcome.objects


def preview_stack(project: Project, stack_name: str, user: Manifests | None = None) -> tuple[list[Violation], int]:
    """One stack through the program and the pack, no report (benchmarks, tests)."""
    from modules.core.render import render

    stack = load_stack(project, stack_name)
    bundle = render(stack)
    with OverGrpc() as collector:
        return collector.collect(project, stack, bundle, user or Manifests(), load_settings(stack_name))


def cmd_preview(args: argparse.Namespace, project: Project) -> int:
    from .driver import PackError

    try:
        return report(args, project, OverGrpc())
    except PackError as err:   # not the user's mistake: exit 3, and CI still gets a document
        print(f"error: {err}", file=sys.stderr)
        _failure(args, str(err), EXIT_PACK_FAILED)
        return EXIT_PACK_FAILED


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    from .admission.commands import add_dir_option
    from .report import FORMATS

    p = sub.add_parser("check", parents=[common], help="run the policy rules on the rendered stack, or on "
                       "manifests alone (no project needed)")
    add_stack_args(p)
    p.add_argument("--manifests", nargs="+", metavar="PATH",
                   help="also check these YAML files or folders (- reads standard input); without a STACK, "
                        "check them alone with the rules that need no stack")
    from modules.core.config import module_schema

    p.add_argument("--profile", choices=module_schema("core")["properties"]["profile"]["enum"],
                   help="manifests without a stack: how strict (default standard); a stack has its own")
    p.add_argument("--format", default="text", choices=sorted(FORMATS), help="report format")
    add_dir_option(p)
    p.set_defaults(run=cmd_check, needs_project=lambda a: not manifests_only(a))

    p = sub.add_parser("preview", parents=[common],
                       help="run the Pulumi program under mocks and check it with the real policy pack over gRPC")
    add_stack_args(p)
    p.add_argument("--manifests", nargs="+", metavar="PATH", help="also send these YAML files or folders to the pack")
    p.add_argument("--format", default="text", choices=sorted(FORMATS), help="report format")
    add_dir_option(p)
    p.set_defaults(run=cmd_preview)
