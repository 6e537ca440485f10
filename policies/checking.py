"""`trainstack check`: the stack's rendered objects plus the user's manifests through every rule,
each finding located (file, line, column; for rendered objects also the stack key behind them)."""
from __future__ import annotations

from dataclasses import replace

from modules.core import yamlio
from modules.core.bundle import Bundle, ChartRelease, Resource
from modules.core.errors import InputError

from .framework import NOTE, Violation, resource_id
from .inputs import Manifests
from .locate import Locator, StackMarks, document_path
from .report import shown
from .runner import STACK, bundle_objects, render_error_violation

INPUT = "manifests"   # the rule name of notes about skipped input
# Rules that judge objects against a stack (its fabric's tiers and capacity, its Volcano scheduler
# configuration): `check --manifests` without a stack leaves them out and says so.
STACK_RULES = frozenset({"topology-tier-exists", "topology-satisfiable", "scheduler-plugin-enabled"})


def without_copies(rendered: list[dict], user: list[dict]) -> list[dict]:
    """The user's objects less those identical to one the stack renders (or to an earlier one of
    theirs): checking deploy/<stack> against <stack> judges each object once."""
    from modules.gitops.render import without_delivery_notes

    # Waves and phases are delivery order, written by the GitOps engine: not part of the object.
    seen: dict[str, list[dict]] = {}
    for obj in rendered:
        seen.setdefault(resource_id(obj), []).append(without_delivery_notes(obj))
    out = []
    for obj in user:
        twins = seen.setdefault(resource_id(obj), [])
        plain = without_delivery_notes(obj)
        if any(plain == twin for twin in twins):
            continue
        twins.append(plain)
        out.append(obj)
    return out


def stack_locator(project, stack, bundle: Bundle, user: Manifests):
    """Locations for one stack's check: user objects in their files, rendered objects in
    deploy/<stack>/ and at their stack key, stack-wide findings at the stack file."""
    from modules.core.output import bundle_files, header, resource_path

    stack_path = project.stack_file(stack.name)
    stack_shown = shown(stack_path)
    marks = StackMarks(stack_shown, lambda: yamlio.read_text(stack_path, stack_shown))
    rendered = Locator()
    head = header(bundle, stack.file)
    out_dir = project.root / "deploy" / stack.name
    objects = bundle_objects(bundle)   # chart releases become objects here: same order as bundle.items
    items = [i for i in bundle.items if isinstance(i, (ChartRelease, Resource))]
    written: dict[str, bytes] = {}

    def text_of(path: str, obj: dict) -> str:
        """The file as render writes it (a GitOps engine adds annotations), built once when a line is asked."""
        if not written:
            written.update(bundle_files(bundle, stack.file))
        data = written.get(path)
        return data.decode() if data is not None else head + yamlio.dump(obj)

    # The folder is resolved once (``shown`` resolves a path); its files are named under it.
    out_shown = shown(out_dir)
    under = "" if out_shown == "." else f"{out_shown}/"
    for item, obj in zip(items, objects):
        name = (obj.get("metadata") or {}).get("name")
        if isinstance(item, Resource):
            path = resource_path(item)
            rendered.add(obj, f"{under}{path}", lambda p=path, o=obj: text_of(p, o), 0)
        else:
            rendered.add(obj, f"{under}charts/{item.name}.values.yaml",
                         lambda v=item.values: head + yamlio.dump(v), 0, strip="spec.values")
        rendered.add_origin(obj, stack_shown, lambda m=item.module, n=name: marks.module_key(m, n))

    def locate(obj: dict | None, path: str) -> dict | None:
        if obj is None:   # a finding on the whole stack: its file
            return {"source": stack_shown, "line": 1, "column": 1}
        where = user.locator.locate(obj, path) or rendered.locate(obj, path)
        if where is None:
            return None
        out = {"source": where.file, "line": where.line, "column": where.column}
        origin = rendered.origin(obj)
        if origin is not None:
            out["origin"] = f"{origin.file}:{origin.line}:{origin.column}"
        return out

    return locate, objects


def manifest_locator(user: Manifests):
    """Locations for a check of the user's manifests alone: each object in its own file."""
    def locate(obj: dict | None, path: str) -> dict | None:
        where = user.locator.locate(obj, path) if obj is not None else None
        return None if where is None else {"source": where.file, "line": where.line, "column": where.column}

    return locate


def locate_violations(violations: list[Violation], locate, rendered: list[dict],
                      user: Manifests) -> list[Violation]:
    """Locations for violations that came back by resource id (the pack over gRPC in `preview`);
    ``locate`` and ``rendered`` are what `stack_locator` returned."""
    mine = {(resource_id(o), user.sources.get(id(o))): o for o in reversed(user.objects)}
    theirs = {resource_id(o): o for o in reversed(rendered)}
    out = []
    for v in violations:
        obj = mine.get((v.resource, v.source)) or theirs.get(v.resource)
        if v.line or (obj is None and v.resource != STACK):
            out.append(v)
            continue
        where = locate(obj, v.path)
        out.append(replace(v, **where) if where else v)
    return out


def skipped_notes(user: Manifests) -> list[Violation]:
    out = []
    for s in user.skipped:
        line, column = (s.line, s.column) if s.line else user.locator.position(s.file, s.document - 1, s.item)
        out.append(Violation(rule=INPUT, level=NOTE, severity="low", resource="input", path="", message=str(s),
                             source=s.file, line=line, column=column))
    return out


def stack_error_violation(err: InputError, settings, project) -> Violation:
    """A stack that does not render, as `check` and `preview` report it: the violation of the rule
    that catches the same mistake in manifests, at the error's line in the stack file (or the
    fabric file it names). Re-raises ``err`` when no enabled rule catches it (exit 2, as render)."""
    violation = render_error_violation(err, settings)
    if violation is None:
        raise err
    path = project.root / err.file   # errors name files relative to the project root (Project.show)
    if not path.is_file():
        return violation
    in_stack = path.name.startswith("Pulumi.") and path.resolve().parent == project.stack_dir.resolve()
    # Read under the bound its loader used: a fabric may be larger than a stack file.
    text = yamlio.read_text(path, err.file, limit=yamlio.MAX_FILE_BYTES if in_stack else yamlio.MAX_FABRIC_FILE_BYTES)
    if in_stack:
        line, column = StackMarks(err.file, lambda: text).path(err.path)
    else:
        line, column = document_path(text, err.path)
    return replace(violation, source=shown(path), line=line, column=column)
