"""The `trainstack` command. Each capability registers its own subcommands (see COMMANDS)."""
from __future__ import annotations

import argparse
import importlib
import sys
import traceback
from pathlib import Path

from modules.core.config import find_project, load_project
from modules.core.errors import ConfigError

# Modules that define `register(subparsers, common_parser)`; their parsers set `run(args, project)`.
COMMANDS = (
    "modules.core.commands",
    "policies.commands",
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


EXIT_INTERNAL = 4   # a trainstack bug: one line asking for a report; --debug shows the traceback


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv   # accepted anywhere on the line, for every command
    args = parser().parse_args([a for a in argv if a != "--debug"])
    try:
        project = load_project(find_project(Path(args.project) if args.project else None))
        return args.run(args, project)
    except ConfigError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except RecursionError:   # a guard missed some deep input: still one line, never a traceback
        print("error: the input is nested too deeply", file=sys.stderr)
        return 2
    except OSError as err:   # the environment: read-only or full file system, permissions, long names
        where = err.filename if err.filename is not None else "trainstack"
        reason = err.strerror or err.__class__.__name__
        print(f"error: {where}: {reason}", file=sys.stderr)
        return 2
    except Exception as err:   # noqa: BLE001 - the one place that turns a bug into one line
        if debug:
            traceback.print_exc()
        print(f"error: internal error ({err.__class__.__name__}); please report it with the command "
              "you ran{}".format("" if debug else " (add --debug for the traceback)"), file=sys.stderr)
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
