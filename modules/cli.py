"""The `trainstack` command. Each capability registers its own subcommands (see COMMANDS)."""
from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
from pathlib import Path

from modules.core.commands import project_for
from modules.core.errors import InputError, one_line
from modules.core.secrets import escape_controls, redact, redact_shapes

# Modules that define `register(subparsers, common_parser)`; their parsers set `run(args, project)`.
# Each with the commands it registers, so that a command imports only its own module (`check` needs
# neither torch's probe nor the simulator); tests/modules/test_cli_commands.py keeps the table true.
COMMANDS = {
    "modules.core.commands": ("render", "validate", "init"),
    "policies.commands": ("check", "preview"),
    "policies.admission.commands": ("admission",),
    "modules.probe.commands": ("probe", "recommend"),
    "modules.fabric.commands": ("fabric",),
    "modules.simulate.commands": ("simulate",),
    "policies.review": ("diff",),
    "modules.review.drift": ("drift",),
    "modules.autoscaling.whatif": ("autoscaling",),
}


EPILOG = """\
A STACK is a name (dev) or the path of its file (stacks/Pulumi.dev.yaml). Commands find the project
(the folder holding Pulumi.yaml) at or above the current folder, or take --project DIR.

exit codes:
  0    success (check/preview: no mandatory violation; render --check: up to date)
  1    check/preview found a mandatory violation; render --check found stale files; drift found drift
  2    bad input (the message names the file and the path in it) or bad command line
  3    preview: the policy pack could not be started or answered badly
  4    a trainstack bug: one line asking for a report; --debug (anywhere on the line) shows the traceback
  130  interrupted
  141  the reader of the output went away (trainstack admission show | head)

examples:
  trainstack init east --nodes 256 --gpus-per-node 8 --tiers 2 --leaf-size 32 --profile production
  trainstack validate stacks/Pulumi.east.yaml
  trainstack render --all                  # write deploy/<stack>/ for every stack
  trainstack check prod --format sarif     # the policy rules, for CI
  trainstack diff                          # what this branch changes, as a PR comment
  trainstack fabric prod                   # the HyperNode tree
  trainstack drift prod --snapshot snap.yaml   # before pulumi up on an existing cluster
  trainstack probe --sizes 1MiB-64MiB      # a quick local bandwidth probe (no project needed)

Docs: README.md, docs/new-stack.md, docs/policies.md, modules/<module>/README.md.
"""


def version() -> str:
    """The installed distribution's version; the source tree's pyproject.toml when run from a checkout."""
    from importlib import metadata

    try:
        return metadata.version("trainstack")
    except metadata.PackageNotFoundError:
        import tomllib

        pyproject = Path(__file__).resolve().parent.parent / "pyproject.toml"
        try:
            return tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["version"]
        except (OSError, KeyError, ValueError):
            return "unknown"


class VersionAction(argparse.Action):
    """--version, reading the installed version only when asked (importlib.metadata costs every run)."""

    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, help="show the version and exit")

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"trainstack {version()}")
        parser.exit()


def command_modules(argv: list[str] | None = None) -> list[str]:
    """The modules to register: the one that owns the command named on the line, or every module
    (for top-level help, an unknown command, or none)."""
    first = next((a for a in argv or () if not a.startswith("-")), None)
    owners = [module for module, names in COMMANDS.items() if first in names]
    return owners or list(COMMANDS)


class Parser(argparse.ArgumentParser):
    """argparse's parser, whose usage errors are one line (the usage is under ``--help``) that
    never shows a credential typed on the command line (``--format https://user:pw@host``)."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {escape_controls(redact(message))} (see {self.prog} --help)\n")


class RedactingOutput:
    """Standard output or error with every credential-looking part of each line replaced by
    <redacted> and every character a terminal acts on escaped: reports echo names, patterns and
    values from user files (a job named like a GitHub token, a HyperNode pattern holding a URL with
    a password, a name holding ``ESC [2J``). Lines are redacted whole; the rest of the stream's
    interface is the wrapped stream's."""

    def __init__(self, stream) -> None:
        self.stream, self.pending = stream, []

    def write(self, text: str) -> int:
        cut = text.rfind("\n")
        if cut < 0:
            self.pending.append(text)
        else:
            self.pending.append(text[:cut + 1])
            self.stream.write(escape_controls(redact_shapes("".join(self.pending))))
            self.pending = [text[cut + 1:]] if cut + 1 < len(text) else []
        return len(text)

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if self.pending:
            text, self.pending = "".join(self.pending), []
            self.stream.write(escape_controls(redact_shapes(text)))
        self.stream.flush()

    def __getattr__(self, name: str):
        return getattr(self.stream, name)


def parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    common = Parser(add_help=False)
    common.add_argument("--project", metavar="DIR", help="project folder (default: the nearest folder "
                        "at or above the current one that holds Pulumi.yaml)")
    top = Parser(prog="trainstack", description="Render, check and explore trainstack stacks.",
                                  epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    top.add_argument("--version", action=VersionAction)
    sub = top.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in command_modules(argv):
        importlib.import_module(name).register(sub, common)
    return top


EXIT_INTERNAL = 4   # a trainstack bug: one line asking for a report; --debug shows the traceback
EXIT_BROKEN_PIPE = 141   # 128 + SIGPIPE, what a shell reports for a tool whose reader went away


def _safe_streams() -> None:
    """Output never fails on a character the locale cannot encode (LANG=C, a stray byte read from
    stdin): it is written as a backslash escape. A closed stdout (``>&-``) swallows the output."""
    if sys.stdout is None:
        sys.stdout = open(os.devnull, "w", encoding="utf-8")
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w", encoding="utf-8")
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            try:
                stream.reconfigure(errors="backslashreplace")
            except (ValueError, OSError):   # a closed or detached stream
                pass


def _silence_stdout() -> None:
    """After a broken pipe, send what is still buffered nowhere (else Python reports it at exit)."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


# Environment variables trainstack reads as paths or configuration.
ENVIRONMENT = ("HOME", "XDG_CACHE_HOME", "TRAINSTACK_ADMISSION_DIR", "TRAINSTACK_CRD_DIR", "PULUMI_CONFIG")


def _not_utf8(argv: list[str]) -> str | None:
    """What on the command line or in the environment is not UTF-8 (Python holds such bytes as lone
    surrogates, which no file name, YAML or JSON written later can encode), or None."""
    def bad(text: str) -> bool:
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            return True
        return False

    for i, arg in enumerate(argv, 1):
        if bad(arg):
            return f"argument {i} ({escape_controls(arg.encode('utf-8', 'backslashreplace').decode())})"
    for name in ENVIRONMENT + tuple(k for k in os.environ if k.startswith("PULUMI_CONFIG_")):
        if bad(os.environ.get(name, "")):
            return f"${name}"
    return None


class Terminated(BaseException):
    """SIGTERM or SIGHUP, raised where the program is, so that it unwinds as after Ctrl-C: files
    it writes are closed or removed, temporary folders go, the admission child is reaped."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _terminated(signum: int, frame) -> None:
    raise Terminated(signum)


def main(argv: list[str] | None = None) -> int:
    whole_process = argv is None   # the console script and `python -m modules.cli`, not a caller in Python
    argv = list(sys.argv[1:] if argv is None else argv)
    if whole_process:
        for signum in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, _terminated)
    _safe_streams()
    debug = "--debug" in argv   # accepted anywhere on the line, for every command
    argv = [a for a in argv if a != "--debug"]
    unreadable = _not_utf8(argv)
    if unreadable:
        print(f"error: {unreadable} is not UTF-8 text; trainstack reads names, paths and values as UTF-8",
              file=sys.stderr)
        return 2
    try:
        args = parser(argv).parse_args(argv)
    except SystemExit:   # --help, --version, a usage error: what they printed must not fail at exit
        try:
            sys.stdout.flush()
        except (OSError, ValueError):   # a full or closed stdout (>/dev/full)
            _silence_stdout()
        raise
    except OSError as err:   # --help or --version printed into a full or broken stdout
        _silence_stdout()
        print(f"error: standard output: {err.strerror or err.__class__.__name__}", file=sys.stderr)
        return 2
    stdout, stderr = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = RedactingOutput(stdout), RedactingOutput(stderr)
    try:
        code = _run(args, debug)
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):   # closed or broken: what is left goes nowhere
                pass
        sys.stdout, sys.stderr = stdout, stderr
    return code


def _run(args: argparse.Namespace, debug: bool) -> int:
    try:
        code = args.run(args, project_for(args))   # None for commands that need no project (probe)
        sys.stdout.flush()   # inside the guard: a reader that left is a broken pipe, below
        return code
    except InputError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except Terminated as err:
        return 128 + err.signum
    except BrokenPipeError:   # `| head` stopped reading: end quietly, as other command-line tools do
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())   # the exit's flush goes nowhere
        except (OSError, ValueError):   # stdout is no file (captured)
            pass
        return EXIT_BROKEN_PIPE
    except RecursionError:   # a guard missed some deep input: still one line, never a traceback
        print("error: the input is nested too deeply", file=sys.stderr)
        return 2
    except OSError as err:   # the environment: read-only or full file system, permissions, long names
        where = err.filename if err.filename is not None else "trainstack"
        reason = err.strerror or err.__class__.__name__
        print(f"error: {redact(one_line(str(where)))}: {reason}", file=sys.stderr)
        return 2
    except ValueError as err:
        if "null byte" not in str(err):   # a NUL in a path from a file (`stackConfigDir: "a\0"`)
            return _internal(err, debug)
        print("error: a file or folder name holds a NUL character, which no file system accepts", file=sys.stderr)
        return 2
    except Exception as err:   # noqa: BLE001 - the one place that turns a bug into one line
        return _internal(err, debug)


def _internal(err: Exception, debug: bool) -> int:
    if debug:
        import traceback   # only a bug shown with --debug needs it

        traceback.print_exc()
    print(f"error: internal error ({err.__class__.__name__}); please report it with the command "
          "you ran{}".format("" if debug else " (add --debug for the traceback)"), file=sys.stderr)
    return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
