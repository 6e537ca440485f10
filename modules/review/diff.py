"""`trainstack diff [BASE]`: what a change to the stacks means, for a pull-request review.

The stacks are rendered twice with the same (working tree) code: once from the inputs at BASE (the
project folder of that commit, taken with `git archive`) and once from the working tree. The two
Bundles are compared per module: objects added, removed and changed (with the changed fields), the
HyperNode tree (switches and nodes added, removed or moved; capacity per tier), chart versions, and
the policy findings that appear or go away. Markdown is ready to post as a PR comment; `--format
json` is the same data for bots.
"""
from __future__ import annotations

import argparse
import io
import json
import subprocess
import sys
import copy
import os
import tarfile
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

from modules.core.bundle import Bundle
from modules.core.config import Project, load_project, load_stack
from modules.core.errors import InputError, listing

MAIN_BRANCHES = ("main", "origin/main", "master", "origin/master")
LIST_LIMIT = 25        # items listed per section in Markdown (JSON has them all)
FIELD_LIMIT = 10       # changed fields shown per object in Markdown
VALUE_LIMIT = 60


# --- git ------------------------------------------------------------------------------------

def git(root: Path, *args: str, binary: bool = False) -> Any:
    try:
        proc = subprocess.run(["git", "-C", str(root), *args], capture_output=True, check=False)
    except FileNotFoundError:
        raise InputError("git", "", "git is not installed; trainstack diff reads the base from git") from None
    if proc.returncode != 0:
        message = proc.stderr.decode(errors="replace").strip().splitlines()
        raise InputError(f"git {' '.join(args[:2])}", "", message[-1] if message else f"exit {proc.returncode}")
    return proc.stdout if binary else proc.stdout.decode().strip()


def default_base(root: Path) -> tuple[str, str]:
    """The merge base of HEAD with the main branch: what a pull request is compared against."""
    for branch in MAIN_BRANCHES:
        try:
            git(root, "rev-parse", "--verify", "--quiet", f"{branch}^{{commit}}")
        except InputError:
            continue
        return git(root, "merge-base", "HEAD", branch), f"merge base with {branch}"
    raise InputError("trainstack diff", "", f"no branch named {' or '.join(MAIN_BRANCHES)}; name the base, "
                      "for example `trainstack diff origin/develop`")


def _extract(data: bytes, dest: Path) -> None:
    """Unpack ``git archive`` output. A symbolic link in history is data: it becomes a small file
    holding its target (as git stores it), so nothing read later follows it out of the folder."""
    with tarfile.open(fileobj=io.BytesIO(data)) as archive:
        members = archive.getmembers()
        archive.extractall(dest, members=[m for m in members if not (m.issym() or m.islnk())], filter="data")
        for link in (m for m in members if m.issym() or m.islnk()):
            plain = copy.copy(link)
            plain.type, plain.linkname = tarfile.REGTYPE, ""
            as_file = tarfile.data_filter(plain, str(dest))   # the name must stay inside dest
            path = dest / as_file.name
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
            with os.fdopen(fd, "wb") as out:
                out.write(link.linkname.encode("utf-8", "surrogateescape"))


def checkout_project(project: Project, ref: str, dest: Path) -> Path | None:
    """The project folder as it was at ``ref`` (without deploy/), extracted under ``dest``; None
    when the project did not exist there."""
    top = Path(git(project.root, "rev-parse", "--show-toplevel")).resolve()
    prefix = project.root.relative_to(top).as_posix()
    exclude = f":(exclude){prefix}/deploy" if prefix != "." else ":(exclude)deploy"
    try:
        data = git(top, "archive", "--format=tar", ref, "--", prefix, exclude, binary=True)
    except InputError as err:
        if "did not match any files" in err.message:
            return None
        raise
    try:
        _extract(data, dest)
    except tarfile.TarError as err:   # a name outside the folder, a device: history is data, never a crash
        raise InputError(f"git archive {ref}", "", f"cannot unpack the commit: {err}") from None
    root = dest / prefix if prefix != "." else dest
    return root if (root / "Pulumi.yaml").is_file() else None


# --- one side -------------------------------------------------------------------------------

@dataclass
class Rendered:
    """One side of a diff: the rendered bundle and its findings, or why it did not render."""
    bundle: Bundle | None = None
    error: str | None = None
    findings: list = field(default_factory=list)   # what the judge said of it (the pack's violations)


# (project root, stack config, rendered bundle) -> the findings on that side
Judge = Callable[[Path, Any, Bundle], list]


def render_side(project: Project | None, stacks: list[str], judge: Judge) -> dict[str, Rendered]:
    """Each of ``stacks`` of ``project`` rendered, with ``judge``'s findings on it."""
    from modules.core.render import render

    out: dict[str, Rendered] = {}
    if project is None:
        return out
    known = set(project.stacks())
    for name in stacks:
        if name not in known:
            continue
        try:
            stack = load_stack(project, name)
            bundle = render(stack)
            findings = judge(project.root, stack, bundle)
        except InputError as err:
            out[name] = Rendered(error=str(err))
            continue
        out[name] = Rendered(bundle=bundle, findings=findings)
    return out


# --- comparing ------------------------------------------------------------------------------

def changed_fields(before: Any, after: Any, path: str = "") -> Iterator[tuple[str, Any, Any]]:
    """(path, before, after) for every leaf that differs. Lists of named items match by name."""
    if isinstance(before, dict) and isinstance(after, dict):
        for key in sorted(set(before) | set(after), key=str):
            sub = f"{path}.{key}" if path else str(key)
            if key not in before:
                yield sub, None, after[key]
            elif key not in after:
                yield sub, before[key], None
            elif before[key] != after[key]:
                yield from changed_fields(before[key], after[key], sub)
        return
    if isinstance(before, list) and isinstance(after, list):
        named = all(isinstance(i, dict) and isinstance(i.get("name"), str) for i in before + after)
        if named and before and after:
            old = {i["name"]: i for i in before}
            new = {i["name"]: i for i in after}
            if len(old) == len(before) and len(new) == len(after):
                yield from changed_fields(old, new, path)   # path.<name>: readable and stable
                return
        if len(before) == len(after):
            for i, (a, b) in enumerate(zip(before, after)):
                if a != b:
                    yield from changed_fields(a, b, f"{path}[{i}]")
            return
        gone = [i for i in before if i not in after]
        new_items = [i for i in after if i not in before]
        if len(gone) + len(new_items) == abs(len(after) - len(before)):   # items only added or only removed
            for item in gone:
                yield f"{path}[]", item, None
            for item in new_items:
                yield f"{path}[]", None, item
            return
    yield path, before, after


def _key_module(bundle: Bundle) -> dict[str, tuple[str, dict]]:
    return {r.key: (r.module, r.obj) for r in bundle.resources}


def fabric_summary(fabric) -> dict:
    """Switches (with parent and tier), node -> leaf, and capacity per tier."""
    if fabric is None or fabric.label_defined:   # no stack on that side: nothing; label-defined: no tree
        return {"capacityKnown": fabric is None, "switches": {}, "nodes": {}, "tiers": {}}
    switches = {s.hypernode or s.name: {"tier": s.tier, "parent": (fabric.switches[s.parent].hypernode or s.parent)
                                        if s.parent else None}
                for s in fabric.switches.values()}
    nodes = {}
    for name in fabric.nodes:
        leaf = fabric.leaf_of(name)
        nodes[name] = (leaf.hypernode or leaf.name) if leaf is not None else None
    tiers = {}
    for tier in fabric.tiers:
        at = fabric.at_tier(tier)
        largest = fabric.largest_domain(tier)
        tiers[tier] = {"name": fabric.tier_names.get(tier, str(tier)), "switches": len(at),
                       "gpus": sum(fabric.gpu_count(s.name) for s in at),
                       "largestDomainNodes": largest.nodes if largest else 0,
                       "largestDomainGpus": largest.gpus if largest else 0}
    return {"capacityKnown": True, "switches": switches, "nodes": nodes, "tiers": tiers,
            "totalNodes": len(fabric.nodes), "totalGpus": fabric.total_gpus}


def fabric_diff(old, new) -> dict:
    from modules.fabric.hostlist import compress

    a, b = fabric_summary(old), fabric_summary(new)
    out: dict = {"capacityKnown": a["capacityKnown"] and b["capacityKnown"]}
    sa, sb = a["switches"], b["switches"]
    out["switchesAdded"] = [{"name": n, **sb[n]} for n in sorted(set(sb) - set(sa))]
    out["switchesRemoved"] = [{"name": n, **sa[n]} for n in sorted(set(sa) - set(sb))]
    out["switchesMoved"] = [{"name": n, "from": sa[n]["parent"], "to": sb[n]["parent"]}
                            for n in sorted(set(sa) & set(sb)) if sa[n]["parent"] != sb[n]["parent"]]
    na, nb = a["nodes"], b["nodes"]
    added, removed = sorted(set(nb) - set(na)), sorted(set(na) - set(nb))
    out["nodesAdded"], out["nodesRemoved"] = compress(added), compress(removed)
    moved: dict[tuple, list[str]] = {}
    for n in sorted(set(na) & set(nb)):
        if na[n] != nb[n]:
            moved.setdefault((na[n], nb[n]), []).append(n)
    out["nodesMoved"] = [{"nodes": compress(names), "from": f, "to": t} for (f, t), names in sorted(
        moved.items(), key=lambda kv: (str(kv[0][0]), str(kv[0][1])))]
    out["nodesAddedCount"], out["nodesRemovedCount"] = len(added), len(removed)
    tiers = []
    for tier in sorted(set(a["tiers"]) | set(b["tiers"])):
        ta, tb = a["tiers"].get(tier), b["tiers"].get(tier)
        row = {"tier": tier, "name": (tb or ta)["name"], "before": ta, "after": tb}
        row["changed"] = _capacity(ta) != _capacity(tb)
        tiers.append(row)
    out["tiers"] = tiers
    out["totals"] = {"before": {"nodes": a.get("totalNodes", 0), "gpus": a.get("totalGpus", 0)},
                     "after": {"nodes": b.get("totalNodes", 0), "gpus": b.get("totalGpus", 0)}}
    out["changed"] = bool(out["switchesAdded"] or out["switchesRemoved"] or out["switchesMoved"] or
                          out["nodesAdded"] or out["nodesRemoved"] or out["nodesMoved"] or
                          any(t["changed"] for t in tiers))
    return out


def _capacity(tier: dict | None) -> tuple:
    if tier is None:
        return ()
    return (tier["switches"], tier["gpus"], tier["largestDomainNodes"], tier["largestDomainGpus"])


def _finding(v) -> dict:
    return {"rule": v.rule, "level": v.level, "resource": v.resource, "path": v.path, "message": v.message}


def stack_diff(old: Rendered | None, new: Rendered | None) -> dict:
    out: dict = {"status": "changed", "modules": {}, "charts": [], "findings": {"added": [], "removed": []}}
    if old is None and new is None:
        out["status"] = "missing"
        return out
    if new is None:
        out["status"] = "removed"
    elif old is None:
        out["status"] = "added"
    errors = {side: r.error for side, r in (("before", old), ("after", new)) if r is not None and r.error}
    if errors:
        out["errors"] = errors
    ob = old.bundle if old is not None and old.error is None else None
    nb = new.bundle if new is not None and new.error is None else None
    before = _key_module(ob) if ob else {}
    after = _key_module(nb) if nb else {}
    modules: dict[str, dict] = {}

    def entry(module: str) -> dict:
        return modules.setdefault(module, {"added": [], "removed": [], "changed": []})

    for key in sorted(set(after) - set(before)):
        entry(after[key][0])["added"].append(key)
    for key in sorted(set(before) - set(after)):
        entry(before[key][0])["removed"].append(key)
    for key in sorted(set(before) & set(after)):
        if before[key][1] != after[key][1]:
            fields = [{"path": p, "before": a, "after": b} for p, a, b in changed_fields(before[key][1], after[key][1])]
            entry(after[key][0])["changed"].append({"key": key, "fields": fields})
    out["modules"] = dict(sorted(modules.items()))
    ra = {r.key: r for r in (ob.releases if ob else [])}
    rb = {r.key: r for r in (nb.releases if nb else [])}
    for key in sorted(set(ra) | set(rb)):
        a, b = ra.get(key), rb.get(key)
        if (a is not None and b is not None
                and (a.version, a.chart, a.repository) == (b.version, b.chart, b.repository)
                and a.values == b.values):
            continue
        row: dict = {"release": key, "module": (b or a).module, "chart": (b or a).chart,
                     "before": a.version if a else None, "after": b.version if b else None}
        if a is not None and b is not None and a.values != b.values:
            row["values"] = [p for p, _, _ in changed_fields(a.values, b.values)]
        out["charts"].append(row)
    if ob is not None or nb is not None:
        out["fabric"] = fabric_diff(ob.fabric if ob else None, nb.fabric if nb else None)
    fa = [_finding(v) for v in (old.findings if old else [])]
    fb = [_finding(v) for v in (new.findings if new else [])]
    seen_a, seen_b = {json.dumps(f, sort_keys=True) for f in fa}, {json.dumps(f, sort_keys=True) for f in fb}
    out["findings"] = {"added": [f for f in fb if json.dumps(f, sort_keys=True) not in seen_a],
                       "removed": [f for f in fa if json.dumps(f, sort_keys=True) not in seen_b]}
    if out["status"] == "changed" and not (modules or out["charts"] or errors or out["findings"]["added"]
                                           or out["findings"]["removed"] or out.get("fabric", {}).get("changed")):
        out["status"] = "unchanged"
    return out


def diff_projects(old: Project | None, new: Project, stacks: list[str] | None, judge: Judge) -> dict[str, dict]:
    names = stacks or sorted(set(new.stacks()) | set(old.stacks() if old else []))
    before = render_side(old, names, judge)
    after = render_side(new, names, judge)
    return {name: stack_diff(before.get(name), after.get(name)) for name in names}


# --- output ---------------------------------------------------------------------------------

def _value(value: Any) -> str:
    if value is None:
        return "(none)"
    if isinstance(value, str) and "\n" in value:
        return f"({value.count(chr(10)) + 1} lines of text)"
    text = json.dumps(value, sort_keys=True) if not isinstance(value, str) else value
    text = text if len(text) <= VALUE_LIMIT else text[: VALUE_LIMIT - 3] + "..."
    return f"`{text}`"


def _limited(items: list[str], limit: int = LIST_LIMIT) -> list[str]:
    return items if len(items) <= limit else items[:limit] + [f"... and {len(items) - limit} more"]


def _tier_cell(tier: dict | None, key: str) -> str:
    return "-" if tier is None else str(tier[key])


def markdown(report: dict) -> str:
    lines = [f"## trainstack diff: `{report['base']['ref'][:12]}` ({report['base']['what']}) → working tree", ""]
    quiet = [n for n, s in report["stacks"].items() if s["status"] == "unchanged"]
    for name, stack in report["stacks"].items():
        if stack["status"] == "unchanged":
            continue
        added = sum(len(m["added"]) for m in stack["modules"].values())
        removed = sum(len(m["removed"]) for m in stack["modules"].values())
        changed = sum(len(m["changed"]) for m in stack["modules"].values())
        f = stack["findings"]
        status = {"added": " (new stack)", "removed": " (stack removed)"}.get(stack["status"], "")
        lines += [f"### Stack `{name}`{status}", "",
                  f"{added} added, {removed} removed, {changed} changed objects; {len(stack['charts'])} chart "
                  f"change(s); findings +{len(f['added'])} −{len(f['removed'])}", ""]
        for side, error in stack.get("errors", {}).items():
            lines += [f"> **Render failed ({side}):** `{error}`", ""]
        fabric = stack.get("fabric")
        if fabric and fabric["changed"]:
            lines += _fabric_markdown(fabric)
        for module, m in stack["modules"].items():
            lines += [f"#### {module}", ""]
            lines += [f"- added `{k}`" if not k.startswith("...") else f"- {k}" for k in _limited(m["added"])]
            lines += [f"- removed `{k}`" if not k.startswith("...") else f"- {k}" for k in _limited(m["removed"])]
            for c in m["changed"][:LIST_LIMIT]:
                shown = [_field(fd) for fd in c["fields"][:FIELD_LIMIT]]
                more = f"; and {len(c['fields']) - FIELD_LIMIT} more fields" if len(c["fields"]) > FIELD_LIMIT else ""
                lines.append(f"- changed `{c['key']}`: " + "; ".join(shown) + more)
            if len(m["changed"]) > LIST_LIMIT:
                lines.append(f"- ... and {len(m['changed']) - LIST_LIMIT} more changed")
            lines.append("")
        if stack["charts"]:
            lines += ["#### Charts", "", "| release | chart | before | after | values changed |",
                      "|---|---|---|---|---|"]
            for c in stack["charts"]:
                values = ", ".join(f"`{p}`" for p in c.get("values", [])[:FIELD_LIMIT]) or "-"
                lines.append(f"| `{c['release']}` | {c['chart']} | {c['before'] or '-'} | {c['after'] or '-'}"
                             f" | {values} |")
            lines.append("")
        if f["added"] or f["removed"]:
            lines += ["#### Policy findings", ""]
            lines += _findings_markdown("new", f["added"]) + _findings_markdown("gone", f["removed"])
            lines.append("")
    if quiet:
        lines += [f"No change: {', '.join(f'`{n}`' for n in quiet)}.", ""]
    return "\n".join(lines).rstrip() + "\n"


def _field(fd: dict) -> str:
    if fd["before"] is None:
        return f"`{fd['path']}` added {_value(fd['after'])}"
    if fd["after"] is None:
        return f"`{fd['path']}` removed {_value(fd['before'])}"
    return f"`{fd['path']}`: {_value(fd['before'])} → {_value(fd['after'])}"


def _findings_markdown(what: str, findings: list[dict]) -> list[str]:
    """One line per rule and level: the objects it names, and its first message (shortened)."""
    groups: dict[tuple[str, str], list[dict]] = {}
    for v in findings:
        groups.setdefault((v["level"], v["rule"]), []).append(v)
    lines = []
    for (level, rule), items in groups.items():
        message = items[0]["message"]
        prefix = f"{items[0]['resource']} at {items[0]['path']}: " if items[0]["path"] else f"{items[0]['resource']}: "
        message = message[len(prefix):] if message.startswith(prefix) else message
        message = message if len(message) <= 160 else message[:157] + "..."
        on = listing([f"`{v['resource']}`" for v in items], 8)
        lines.append(f"- {what} {level} `{rule}` ({len(items)}) on {on}: {message}")
    return lines


def _fabric_markdown(fabric: dict) -> list[str]:
    lines = ["#### HyperNode tree", ""]
    for s in _limited([f"`{s['name']}` (tier {s['tier']}, under `{s['parent']}`)" if s["parent"] else
                       f"`{s['name']}` (tier {s['tier']}, a root)" for s in fabric["switchesAdded"]]):
        lines.append(f"- switch added: {s}")
    for s in _limited([f"`{s['name']}` (tier {s['tier']})" for s in fabric["switchesRemoved"]]):
        lines.append(f"- switch removed: {s}")
    for s in _limited([f"`{s['name']}`: under `{s['from']}` → under `{s['to']}`" for s in fabric["switchesMoved"]]):
        lines.append(f"- switch moved: {s}")
    if fabric["nodesAdded"]:
        lines.append(f"- {fabric['nodesAddedCount']} node(s) added: "
                     + ", ".join(f"`{n}`" for n in _limited(fabric["nodesAdded"], 10)))
    if fabric["nodesRemoved"]:
        lines.append(f"- {fabric['nodesRemovedCount']} node(s) removed: "
                     + ", ".join(f"`{n}`" for n in _limited(fabric["nodesRemoved"], 10)))
    for m in fabric["nodesMoved"][:LIST_LIMIT]:
        lines.append(f"- node(s) moved from `{m['from']}` to `{m['to']}`: "
                     + ", ".join(f"`{n}`" for n in m["nodes"][:10]))
    if fabric["capacityKnown"]:
        t = fabric["totals"]
        lines += ["", f"Nodes {t['before']['nodes']} → {t['after']['nodes']}, GPUs {t['before']['gpus']} → "
                  f"{t['after']['gpus']}.", "",
                  "| tier | switches | GPUs under the tier | largest domain (nodes / GPUs) |", "|---|---|---|---|"]
        for row in fabric["tiers"]:
            a, b = row["before"], row["after"]

            def cell(key: str) -> str:
                x, y = _tier_cell(a, key), _tier_cell(b, key)
                return x if x == y else f"{x} → **{y}**"

            dom_a = "-" if a is None else f"{a['largestDomainNodes']} / {a['largestDomainGpus']}"
            dom_b = "-" if b is None else f"{b['largestDomainNodes']} / {b['largestDomainGpus']}"
            lines.append(f"| {row['tier']} `{row['name']}` | {cell('switches')} | {cell('gpus')} | "
                         f"{dom_a if dom_a == dom_b else f'{dom_a} → **{dom_b}**'} |")
    lines.append("")
    return lines


# --- command --------------------------------------------------------------------------------

def cmd_diff(args: argparse.Namespace, project: Project, judge: Judge) -> int:
    if args.base:
        try:
            ref, what = git(project.root, "rev-parse", "--verify", f"{args.base}^{{commit}}"), args.base
        except InputError:
            raise InputError("trainstack diff", "BASE", f"no commit, branch or tag named {args.base!r} in "
                             f"{project.root}; name one that `git log` shows, for example main") from None
    else:
        ref, what = default_base(project.root)
    try:
        with tempfile.TemporaryDirectory(prefix="trainstack-diff-") as tmp:
            old_root = checkout_project(project, ref, Path(tmp))
            old = load_project(old_root) if old_root is not None else None
            stacks = diff_projects(old, project, args.stack or None, judge)
            report = {"base": {"ref": ref, "what": what}, "stacks": stacks}
    finally:
        load_project.cache_clear()   # the temporary project is gone, even after an error
    sys.stdout.write(json.dumps(report, indent=2, sort_keys=True) + "\n" if args.format == "json" else markdown(report))
    return 0


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser, judge: Judge) -> None:
    """The ``diff`` command; ``judge`` gives a rendered stack's findings (the policy pack's, handed
    in by the command layer, policies/review.py: modules never import policies)."""
    p = sub.add_parser("diff", parents=[common],
                       help="what the working tree changes against a git ref: objects, HyperNode tree, "
                            "capacity per tier, charts, policy findings (Markdown for PR comments, or JSON)",
                       description="Render every stack at BASE and in the working tree with the same code and "
                                   "summarise the difference per module. BASE defaults to the merge base of HEAD "
                                   "with main (or origin/main, master). Exit 0 whatever the difference; use "
                                   "`trainstack check` to gate.")
    p.add_argument("base", nargs="?", metavar="BASE", help="git ref to compare with (default: merge base with main)")
    p.add_argument("--stack", action="append", metavar="NAME", help="only this stack (repeatable; default: all)")
    p.add_argument("--format", default="markdown", choices=("markdown", "json"), help="output format")
    p.set_defaults(run=lambda args, project: cmd_diff(args, project, judge))
