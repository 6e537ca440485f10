"""Stack names: checked once, before any path is built from them.

A stack name becomes a file name (``stacks/Pulumi.<stack>.yaml``) and a folder name
(``deploy/<stack>/``), so it must be a Pulumi stack name that is also a safe folder name:
letters, digits, ``-``, ``_`` and ``.``, not ``.`` or ``..`` alone, at most 100 characters.
Two stacks whose names differ only in case would share one folder on a case-insensitive file
system (macOS, Windows), so a project with both is refused.
"""
from __future__ import annotations

import re
from typing import Iterable

from .errors import InputError, show

_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,100}\Z")


def check_stack_name(name: object, where: str = "trainstack") -> str:
    """Return ``name`` when it is a safe stack name; raise InputError (exit 2) otherwise."""
    if not isinstance(name, str) or not _NAME.match(name) or name in (".", ".."):
        raise InputError(where, "", f"invalid stack name {show(name, 40)}: expected letters, digits, "
                          "'-', '_' and '.' (not '.' or '..' alone, at most 100 characters)")
    return name


def check_stack_names(names: Iterable[str], where: str = "trainstack") -> list[str]:
    """Every name checked, and no two equal but for case."""
    seen: dict[str, str] = {}
    out = []
    for name in names:
        check_stack_name(name, where)
        other = seen.setdefault(name.lower(), name)
        if other != name:
            raise InputError(where, "", f"stacks {other!r} and {name!r} differ only in case; they would "
                              "share one output folder on a case-insensitive file system; rename one")
        out.append(name)
    return out
