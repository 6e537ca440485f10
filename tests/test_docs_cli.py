"""README, docs, module READMEs and `--help` agree with the command line: every `trainstack COMMAND
--option` they show exists in argparse, and the README's command table lists every command."""
from __future__ import annotations

import re
import subprocess

import pytest

from modules.cli import EPILOG, parser
from tests.support.cli import ROOT

GLOBAL = {"--project", "--debug", "--help", "-h", "--version"}   # accepted by every command
FRAGMENT = re.compile(r"```[^\n]*\n(.*?)```|`([^`\n]+)`", re.S)
COMMAND = re.compile(r"\btrainstack ([a-z][a-z-]*)")
OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")


def commands() -> dict:
    top = parser()
    return next(a for a in top._actions if isinstance(getattr(a, "choices", None), dict)).choices


def shown_commands(text: str) -> list[tuple[str, list[str], str]]:
    """``(command, options, line)`` for each `trainstack COMMAND ...` in code spans and blocks: where
    the line starts with it or a shell puts it (after `$`, `|`, `&&`, `;`, `(` or a folder)."""
    out = []
    fragments = [m.group(1) if m.group(1) is not None else m.group(2) for m in FRAGMENT.finditer(text)]
    for fragment in fragments:
        for line in fragment.splitlines():
            starts = [m for m in COMMAND.finditer(line) if re.search(r"(^|[$|&;(/=]\s*)$", line[:m.start()].rstrip()
                                                                     + (" " if m.start() else ""))]
            for i, m in enumerate(starts):
                end = starts[i + 1].start() if i + 1 < len(starts) else len(line)
                rest = line[m.end(1):end].split(" #", 1)[0]
                out.append((m.group(1), OPTION.findall(rest), line.strip()))
    return out


def documents() -> list:
    names = subprocess.run(["git", "-C", str(ROOT), "ls-files", "*.md", "Makefile"], capture_output=True,
                           text=True, timeout=60).stdout.split()
    if not names:
        pytest.skip("not a git checkout")
    return [ROOT / n for n in names]


def test_every_documented_option_exists():
    subs = commands()
    wrong = []
    for path in documents() + ["--help"]:
        text = EPILOG if path == "--help" else path.read_text(encoding="utf-8")
        if path != "--help":
            text = text if path.suffix == ".md" else f"```\n{text}\n```"
        for command, options, line in shown_commands(text):
            if command not in subs:
                wrong.append(f"{path}: no command `trainstack {command}`: {line}")
                continue
            known = set(subs[command]._option_string_actions) | GLOBAL
            wrong += [f"{path}: `trainstack {command}` has no option {o}: {line}" for o in options if o not in known]
    assert not wrong, "\n".join(wrong)


def test_the_readme_lists_every_command():
    table = (ROOT / "README.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"^\| `trainstack ([a-z-]+)", table, re.M))
    assert listed == set(commands()), f"README command table: missing {set(commands()) - listed}, " \
                                      f"extra {listed - set(commands())}"


def test_help_and_readme_list_the_same_exit_codes():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    codes = set(re.findall(r"^  (\d+) ", EPILOG, re.M))
    assert codes == {"0", "1", "2", "3", "4", "130", "141"}
    for code in codes:
        assert re.search(rf"\b{code} ", readme.split("Exit codes:", 1)[1][:1600]), code
