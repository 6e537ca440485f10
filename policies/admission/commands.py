"""`trainstack admission`: where upstream's admission rules come from; fill the cache."""
from __future__ import annotations

import argparse
import os

from .loader import ENV_CACHE, ENV_CRDS, ENV_DIR


def add_dir_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--admission-dir", metavar="DIR",
                        help=f"offline folder with upstream's admission rules (volcano/*.yaml or the Volcano chart "
                             f"archive; crds/ unless $TRAINSTACK_CRD_DIR is set); default ${ENV_DIR}, else the cache")


def apply_dir_option(args: argparse.Namespace) -> None:
    """The option wins over the environment; the pack's process inherits it. Paths become absolute
    here: the pack runs in its own folder."""
    if getattr(args, "admission_dir", None):
        os.environ[ENV_DIR] = args.admission_dir
    for key in (ENV_DIR, ENV_CRDS, ENV_CACHE):
        if os.environ.get(key):
            os.environ[key] = os.path.abspath(os.environ[key])


def cmd_admission(args: argparse.Namespace, project) -> int:
    apply_dir_option(args)
    if args.action == "fetch":
        from .fetch import fetch
        from .loader import cache_dir

        written = fetch()
        print(f"{len(written)} file(s) downloaded and verified into {cache_dir()}")
        return 0
    from . import rules

    ruleset = rules()
    loc = ruleset.index.location
    if args.action == "status":
        return status(ruleset)
    print(f"source: {loc.origin}")
    print(f"policies: {loc.policies or '-'}; CRDs: {loc.crds or '-'}")
    for p in ruleset.policies:
        print(f"  {p['kind']} {p['name']}: {len(p['validations'])} validations, {len(p['mutations'])} mutations "
              f"[{p['release']}]")
    for c in ruleset.index.crds:
        if c["rules"]:
            print(f"  CRD {c['crd']} {c['version']}: {len(c['rules'])} rules [{c['release']}]")
    for line in ruleset.missing:
        print(f"missing: {line}")
    return 0 if not ruleset.missing else 1


def status(ruleset) -> int:
    """One line per upstream release whose rules `check` and `preview` evaluate: what, from where,
    at which pin; then what is missing. Exit 1 when something is."""
    loc = ruleset.index.location
    per_release: dict[str, list[int]] = {}
    for p in ruleset.policies:
        per_release.setdefault(p["release"], [0, 0, 0])[0] += 1
    for c in ruleset.index.crds:
        if c["rules"]:
            counts = per_release.setdefault(c["release"], [0, 0, 0])
            counts[1] += 1
            counts[2] += len(c["rules"])
    print(f"upstream admission rules from {loc.origin}")
    for release, (policies, crds, cel) in sorted(per_release.items()):
        parts = ([f"{policies} admission policies"] if policies else []) + \
            ([f"{cel} CEL rules in {crds} CRD versions"] if crds else [])
        print(f"  {release}: {', '.join(parts)}")
    if not per_release:
        print("  none")
    for line in ruleset.missing:
        print(f"missing: {line}")
    return 0 if not ruleset.missing else 1


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("admission", parents=[common],
                       help="which upstream admission rules are evaluated and from where, or fetch them into the cache")
    p.add_argument("action", choices=["status", "show", "fetch"], help="status: which upstream rule sets are "
                   "evaluated, from where, at which pins; show: every rule set found; fetch: download the "
                   "pinned sources (policies/admission/sources.yaml) into the cache, verifying each sha256")
    add_dir_option(p)
    p.set_defaults(run=cmd_admission)
