"""The one error type for user mistakes, and how values are shown in its messages."""
from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from .secrets import escape_controls, redact, redact_value


def one_line(text: str) -> str:
    """``text`` with line breaks written as escapes (``a\\nb``): a name may hold them; any other
    character a terminal acts on is escaped too (``secrets.escape_controls``)."""
    if "\n" in text or "\r" in text:
        text = text.replace("\r", "\\r").replace("\n", "\\n")
    return escape_controls(text)


class InputError(Exception):
    """A mistake in user input (a stack file, a fabric, manifests, workloads, probe results, a CLI
    argument): names the file, the path inside it and what was expected.

    The CLI prints ``str(error)`` on one line and exits 2; nothing else catches it.
    """

    def __init__(self, file: str | Path, path: str, message: str, rule: str | None = None):
        self.file = redact(one_line(str(file)))   # a folder named with a newline is still one line
        self.path = redact(one_line(path))   # a key path can hold a credential too (a key named like a URL)
        self.message = escape_controls(redact(" ".join(str(message).split())))  # one line, no credential
        # The policy rule that catches the same mistake in manifests: `trainstack check` and
        # `preview` report the error as a violation of it (exit 1); render and validate exit 2.
        self.rule = rule
        super().__init__(str(self))

    def __str__(self) -> str:
        return f"{self.file}: {self.path}: {self.message}" if self.path else f"{self.file}: {self.message}"


def listing(items: Sequence[str], limit: int = 5) -> str:
    """The first ``limit`` items, then how many more: ``a, b and 3 more``."""
    return ", ".join(items[:limit]) + (f" and {len(items) - limit} more" if len(items) > limit else "")


def show(value: object, limit: int = 60) -> str:
    """Render a user value for an error message: JSON-like, short, on one line."""
    if isinstance(value, SecureValue):
        return "a secure value"
    try:
        text = json.dumps(redact_value(value), sort_keys=True, default=str)
    except (TypeError, ValueError, RecursionError):
        text = redact(repr(value)[:limit])
    return text if len(text) <= limit else text[: limit - 3] + "..."


def expected(file: str | Path, path: str, what: str, got: object) -> InputError:
    """The common shape: ``file: path: expected <what>, got <value>``."""
    return InputError(file, path, f"expected {what}, got {show(got)}")


class SecureValue:
    """A Pulumi ``secure:`` value. It is carried opaquely: never decrypted, printed or rendered."""

    __slots__ = ("ciphertext",)

    def __init__(self, ciphertext: str):
        self.ciphertext = ciphertext

    def __repr__(self) -> str:  # never leak the ciphertext into logs either
        return "SecureValue(<redacted>)"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SecureValue) and other.ciphertext == self.ciphertext

    def __hash__(self) -> int:
        return hash(self.ciphertext)


class SecretText:
    """A secret the Pulumi CLI decrypted and handed the program (``trainstack:secrets``). Only the
    program reads ``.value``; it never reaches a Bundle, deploy/ or a log line."""

    __slots__ = ("value",)

    def __init__(self, value: str):
        self.value = value

    def __repr__(self) -> str:
        return "SecretText(<redacted>)"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SecretText) and other.value == self.value

    def __hash__(self) -> int:
        return hash(self.value)
