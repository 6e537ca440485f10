"""The `trainstack` command. Each capability registers its own subcommands (see COMMANDS)."""
from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

from modules.core.config import find_project, load_project
from modules.core.errors import ConfigError

# Modules that define `register(subparsers, common_parser)`; their parsers set `run(args, project)`.
COMMANDS = (
    "modules.core.commands",
    "policies.commands",
    "policies.admission.commands",
    "modules.probe.commands",
    "modules.fabric.commands",
    "modules.simulate.commands",
)


def parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--project", metavar="DIR", help="project folder (default: the nearest folder "
                        "at or above the current one that holds Pulumi.yaml)")
    top = argparse.ArgumentParser(prog="trainstack", description="Render, check and explore trainstack stacks.")
    sub = top.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(name).register(sub, common)
    return top


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        project = load_project(find_project(Path(args.project) if args.project else None))
        return args.run(args, project)
    except ConfigError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
