"""`trainstack diff` with each side's policy findings: modules/review/diff.py renders and compares
the two sides and never imports policies; this command layer hands it the function that judges a
rendered stack with the pack's rules and that side's own settings."""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from modules.core.bundle import Bundle
from modules.review import diff


def settings_for(root: Path, stack: str):
    """The policy settings a side uses: its own ``policies/config.<stack>.json`` when the project
    carries one, else the installed pack's (``runner.load_settings``, the one reader)."""
    from policies.runner import load_settings

    return load_settings(stack, root / "policies")


def judge(root: Path, stack: Any, bundle: Bundle) -> list:
    """The pack's violations on one rendered side."""
    from policies.framework import CheckContext
    from policies.runner import bundle_objects, run_rules

    return run_rules(bundle_objects(bundle), CheckContext(stack=stack, fabric=bundle.fabric),
                     settings_for(root, stack.name))


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    diff.register(sub, common, judge)
