"""How Go's ``fmt`` prints the values a schema error quotes (``%v`` of a float64, ``%#v`` of the
``interface{}`` values a decoded JSON object holds), so messages read as the API server's."""
from __future__ import annotations

import math
from typing import Any

from modules.core.vocabulary.go import go_quote


def go_float(value: float) -> str:
    """``fmt.Sprintf("%v", f)`` of a float64: ``strconv``'s ``%g`` with the shortest digits, which
    switches to an exponent below 1e-4 and from 1e+06 up (``1e+06``, ``1.5e+07``, ``100000``)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value == 0:
        return "0" if math.copysign(1.0, value) > 0 else "-0"
    mantissa = repr(float(value)).partition("e")[0]   # Python's shortest round-trip digits, as Go's
    digits = mantissa.replace("-", "").replace(".", "").strip("0") or "0"
    exponent = math.floor(math.log10(abs(value)))
    # correct log10 rounding at powers of ten
    if 10 ** exponent > abs(value):
        exponent -= 1
    elif 10 ** (exponent + 1) <= abs(value):
        exponent += 1
    if exponent < -4 or exponent >= 6:
        digits = digits.rstrip("0") or "0"
        head = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        sign = "-" if value < 0 else ""
        return f"{sign}{head}e{'-' if exponent < 0 else '+'}{abs(exponent):02d}"
    return f"{value:.{max(0, len(digits) - exponent - 1)}f}"


def go_number(value: Any) -> str:
    """``%v`` of an int64 or float64."""
    if isinstance(value, float):
        return go_float(value)
    return str(value)


def go_sharp(value: Any) -> str:
    """``fmt.Sprintf("%#v", v)`` of a decoded JSON value held in an ``interface{}``."""
    if value is None:
        return "interface {}(nil)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return go_quote(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return go_float(value)
    if isinstance(value, list):
        return "[]interface {}{" + ", ".join(go_sharp(v) for v in value) + "}"
    if isinstance(value, dict):
        inner = ", ".join(f"{go_quote(str(k))}:{go_sharp(v)}" for k, v in sorted(value.items()))
        return "map[string]interface {}{" + inner + "}"
    return str(value)


class GoText:
    """A value whose printed form is fixed (``field.Error`` prints it with ``%v``/``%#v``)."""

    __slots__ = ("raw", "text")

    def __init__(self, raw: Any, text: str) -> None:
        self.raw, self.text = raw, text

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return self.text

    def __eq__(self, other: object) -> bool:
        return self.raw == (other.raw if isinstance(other, GoText) else other)

    def __hash__(self) -> int:
        return hash(self.text)


def printed(value: Any) -> Any:
    """The value as a ``field.Error`` carries it: strings, booleans and integers as they are
    (``FieldError`` prints them), floats and compound values in Go's ``%v``/``%#v``."""
    if isinstance(value, float):
        return GoText(value, go_float(value))
    if isinstance(value, (dict, list)):
        return GoText(value, go_sharp(value))
    return value
