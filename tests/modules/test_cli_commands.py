"""The CLI imports only the module that owns the command on the line: COMMANDS must name, for each
module, exactly the commands it registers (else a command would be missing when run alone)."""
from __future__ import annotations

import argparse
import importlib

import pytest

from modules import cli


def _registered(module: str) -> set[str]:
    sub = argparse.ArgumentParser().add_subparsers()
    importlib.import_module(module).register(sub, argparse.ArgumentParser(add_help=False))
    return set(sub.choices)


@pytest.mark.parametrize("module", sorted(cli.COMMANDS))
def test_table_names_what_each_module_registers(module):
    assert set(cli.COMMANDS[module]) == _registered(module)


@pytest.mark.parametrize("argv, expected", [
    (["check", "prod"], ["policies.commands"]),
    (["render", "--project", "x", "dev"], ["modules.core.commands"]),
    (["--help"], list(cli.COMMANDS)),
    ([], list(cli.COMMANDS)),
    (["nosuchcommand"], list(cli.COMMANDS)),
])
def test_only_the_owner_is_imported(argv, expected):
    assert cli.command_modules(argv) == expected


def test_every_command_runs_alone_and_help_lists_all():
    names = {name for names in cli.COMMANDS.values() for name in names}
    assert set(cli.parser()._subparsers._group_actions[0].choices) == names
    for module, commands in cli.COMMANDS.items():
        for name in commands:
            assert name in cli.parser([name])._subparsers._group_actions[0].choices
