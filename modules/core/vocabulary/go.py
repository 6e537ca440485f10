"""Go's formatting and parsing as upstream's messages and parsers use them.

``go_quote`` is ``fmt``'s ``%q`` of a string; ``go_value`` what ``field.Error`` prints for a value
(``%q`` for strings, ``%v`` for numbers and booleans, ``%#v`` for a string map); ``atoi`` is
``strconv.Atoi`` on a 64-bit platform: ASCII digits only, one optional sign, the int64 range;
``is_duration`` what ``time.ParseDuration`` accepts.
"""
from __future__ import annotations

import re
from typing import Any

_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v",
            "\\": "\\\\", '"': '\\"'}
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
# Longer text is never a valid int64; refusing it first also keeps int() off huge digit strings.
_MAX_INT_TEXT = 20


def _printable(ch: str) -> bool:
    # strconv.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space.
    return ch == " " or (ch.isprintable() and not ch.isspace())


def go_quote(text: str) -> str:
    """``fmt.Sprintf("%q", text)``: escapes as Go's ``strconv.Quote`` writes them."""
    out = ['"']
    for ch in text:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif _printable(ch) and not 0xD800 <= ord(ch) <= 0xDFFF:
            out.append(ch)
        elif ord(ch) < 0x80:
            out.append(f"\\x{ord(ch):02x}")
        elif 0xD800 <= ord(ch) <= 0xDFFF:
            out.append("\\ufffd")   # Go strings hold UTF-8: a lone surrogate is an invalid byte
        elif ord(ch) <= 0xFFFF:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    out.append('"')
    return "".join(out)


def go_value(value: Any) -> str:
    """The value as ``field.Error.ErrorBody`` prints it."""
    if value is None:
        return "null"
    if isinstance(value, str):
        return go_quote(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        inner = ", ".join(f"{go_quote(k)}:{go_quote(v)}" for k, v in sorted(value.items()))
        return "map[string]string{" + inner + "}"
    return str(value)


def atoi(text: str, bits: int = 64) -> int | None:
    """``strconv.Atoi`` (``ParseInt(s, 10, bits)``): the integer, or None where Go returns an error.

    ASCII digits only (no spaces, no superscripts or other scripts' digits, no underscores), one
    optional leading ``+`` or ``-``, within the signed range of ``bits``."""
    if not isinstance(text, str) or not text or len(text) > _MAX_INT_TEXT:
        return None
    body = text[1:] if text[0] in "+-" else text
    if not body or not body.isascii() or not body.isdigit():
        return None
    value = int(text)
    low, high = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    return value if low <= value <= high else None


# strconv.ParseBool: exactly these spellings
GO_BOOLS = {**dict.fromkeys(("1", "t", "T", "TRUE", "true", "True"), True),
            **dict.fromkeys(("0", "f", "F", "FALSE", "false", "False"), False)}


def parse_bool(text: object) -> bool | None:
    """``strconv.ParseBool``: the boolean, or None where Go returns an error."""
    return GO_BOOLS.get(text) if isinstance(text, str) else None


_DURATION = re.compile(r"[-+]?((\d+(\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h))+|[-+]?0")


def is_duration(text: str) -> bool:
    """``time.ParseDuration`` accepts ``text``: signed decimals with units (``1h30m``, ``.5s``), or ``0``."""
    return _DURATION.fullmatch(text) is not None


def is_ascii_digits(text: str) -> bool:
    """True for a non-empty run of ``0``-``9`` (``str.isdigit`` also accepts ``²`` and ``٣``)."""
    return bool(text) and text.isascii() and text.isdigit()
