"""A refusal a Go webhook words itself (``fmt.Errorf``/``errors.New``, not apimachinery's
``field.Error``): Volcano's and Trainer's webhooks answer with a plain message.

It is still a :class:`~modules.upstream.field.FieldError`, so every check returns one type: ``field``
is where in the object the refusal points, ``origin`` its code (``job.duplicate-task-name``): rules,
the table runner and the fix hints select by that code, never by the text; ``detail`` is upstream's
whole message, rendered alone as upstream renders it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from modules.upstream.field import OMIT, ErrorType, FieldError


@dataclass(frozen=True)
class WebhookError(FieldError):
    """A coded refusal whose message is upstream's own text (no ``Invalid value:`` prefix)."""

    def message(self) -> str:
        return self.detail

    def error(self) -> str:
        return self.detail


def refuse(field: str, code: str, text: str, value: Any = OMIT,
           kind: ErrorType = ErrorType.INVALID) -> WebhookError:
    """The refusal ``code`` at ``field`` with upstream's ``text``."""
    return WebhookError(kind, field, value, text, code)


def coded(error: FieldError, code: str) -> FieldError:
    """A field error (upstream's own ``field.Error``) tagged with the code a fix hint is keyed by."""
    return FieldError(error.type, error.field, error.value, error.detail, code)
