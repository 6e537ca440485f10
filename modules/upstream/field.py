"""apimachinery's ``field.Error``: a coded field error (type, field path, bad value, detail).

Ports return these; rules select them by ``type`` and ``field`` (never by message text) and render
them with :meth:`FieldError.message` / :meth:`FieldError.error`, worded as upstream words them
(``k8s.io/apimachinery/pkg/util/validation/field/errors.go``).
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any, Callable

from modules.core.vocabulary.go import go_value


class ErrorType(Enum):
    """apimachinery's ``field.ErrorType``: the value is upstream's constant, ``text`` its ``String()``
    (``TypeInvalid`` and ``Invalid`` read alike but are distinct codes)."""

    NOT_FOUND = "FieldValueNotFound"
    REQUIRED = "FieldValueRequired"
    DUPLICATE = "FieldValueDuplicate"
    INVALID = "FieldValueInvalid"
    NOT_SUPPORTED = "FieldValueNotSupported"
    FORBIDDEN = "FieldValueForbidden"
    TOO_LONG = "FieldValueTooLong"
    TOO_MANY = "FieldValueTooMany"
    INTERNAL = "InternalError"
    TYPE_INVALID = "FieldValueTypeInvalid"

    @property
    def text(self) -> str:
        return _TEXT[self]


_TEXT = {
    ErrorType.NOT_FOUND: "Not found", ErrorType.REQUIRED: "Required value",
    ErrorType.DUPLICATE: "Duplicate value", ErrorType.INVALID: "Invalid value",
    ErrorType.NOT_SUPPORTED: "Unsupported value", ErrorType.FORBIDDEN: "Forbidden",
    ErrorType.TOO_LONG: "Too long", ErrorType.TOO_MANY: "Too many", ErrorType.INTERNAL: "Internal error",
    ErrorType.TYPE_INVALID: "Invalid value",
}


class _Omit:
    """The ``field.OmitValueType``: an error whose value is not printed."""

    def __repr__(self) -> str:
        return "OMIT"


OMIT: Any = _Omit()

# Upstream prints the type alone (no value) for these, whatever the value.
_VALUELESS = frozenset({ErrorType.REQUIRED, ErrorType.FORBIDDEN, ErrorType.TOO_LONG, ErrorType.INTERNAL})


@dataclass(frozen=True)
class FieldError:
    """One refusal: what kind (``type``), where (``field``), of what (``value``) and why (``detail``)."""

    type: ErrorType
    field: str
    value: Any = OMIT
    detail: str = ""
    origin: str = ""   # upstream's optional origin code (``format=k8s-short-name``); not printed

    def message(self) -> str:
        """``ErrorBody()``: the text after ``<field>: ``."""
        if self.type in _VALUELESS or self.value is OMIT:
            text = self.type.text
        else:
            text = f"{self.type.text}: {go_value(self.value)}"
        return f"{text}: {self.detail}" if self.detail else text

    def error(self) -> str:
        """``Error()``: ``<field>: <body>``."""
        return f"{self.field}: {self.message()}" if self.field else self.message()

    def problem(self) -> tuple[str, str]:
        """The ``(field path, message)`` pair the older ports returned."""
        return self.field, self.message()


def required(field: str, detail: str = "") -> FieldError:
    return FieldError(ErrorType.REQUIRED, field, OMIT, detail)


def invalid(field: str, value: Any, detail: str) -> FieldError:
    return FieldError(ErrorType.INVALID, field, value, detail)


def formatted(field: str, value: str, check: Callable[[str], list[str]], missing: str = "") -> list[FieldError]:
    """A required string in a format: ``Required`` (detail ``missing``) when empty, else one ``Invalid``
    per problem ``check`` finds."""
    if not value:
        return [required(field, missing)]
    return [invalid(field, value, m) for m in check(value)]


def type_invalid(field: str, value: Any, detail: str) -> FieldError:
    return FieldError(ErrorType.TYPE_INVALID, field, value, detail)


def duplicate(field: str, value: Any) -> FieldError:
    return FieldError(ErrorType.DUPLICATE, field, value)


def not_found(field: str, value: Any) -> FieldError:
    return FieldError(ErrorType.NOT_FOUND, field, value)


def not_supported(field: str, value: Any, supported: list[str] | tuple[str, ...]) -> FieldError:
    detail = "supported values: " + ", ".join(go_value(str(s)) for s in supported) if supported else ""
    return FieldError(ErrorType.NOT_SUPPORTED, field, value, detail)


def forbidden(field: str, detail: str) -> FieldError:
    return FieldError(ErrorType.FORBIDDEN, field, OMIT, detail)


def too_long(field: str, limit: int) -> FieldError:
    detail = f"may not be more than {limit} bytes" if limit >= 0 else "value is too long"
    return FieldError(ErrorType.TOO_LONG, field, OMIT, detail)


def too_many(field: str, actual: int, limit: int) -> FieldError:
    detail = f"must have at most {limit} items" if limit >= 0 else "has too many items"
    return FieldError(ErrorType.TOO_MANY, field, actual if actual >= 0 else OMIT, detail)


def internal(field: str, detail: str) -> FieldError:
    return FieldError(ErrorType.INTERNAL, field, OMIT, detail)
