"""Kubernetes resource quantities (``500Gi``, ``250m``, ``1.5``) parsed to numbers."""
from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

_SUFFIX = {
    "": 1, "n": Decimal("1e-9"), "u": Decimal("1e-6"), "m": Decimal("1e-3"),
    "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18,
    "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
}
# The canonical quantity grammar of k8s.io/apimachinery: a signed decimal number, then a binary
# suffix, a decimal suffix or an exponent. "500GB" and "1 Gi" are not quantities.
# Matched with fullmatch: `$` would also accept a trailing newline.
_QUANTITY = re.compile(r"([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?[0-9]+)?")


# Kubernetes stores quantities as int64 (scaled); anything larger is no real resource amount.
MAX_QUANTITY = Decimal(2**63 - 1)


def parse_quantity(value: object) -> Decimal:
    """Return the quantity as a Decimal in base units; raise ValueError if it is not one."""
    if isinstance(value, bool):
        raise ValueError("not a quantity")
    if isinstance(value, (int, float)):
        value = str(value)
    if not isinstance(value, str):
        raise ValueError("not a quantity")
    match = _QUANTITY.fullmatch(value)
    if not match:
        raise ValueError(f"not a quantity: {value!r}")
    number, suffix = match.groups()
    try:
        base = Decimal(number)
    except InvalidOperation:
        raise ValueError(f"not a quantity: {value!r}") from None
    if suffix and suffix not in _SUFFIX:   # an exponent (a lone "E" is exa)
        exponent = int(suffix[1:])
        if abs(exponent) > 40:
            raise ValueError(f"quantity out of range: {value!r}")
        result = base * (Decimal(10) ** exponent)
    else:
        result = base * Decimal(_SUFFIX[suffix or ""])
    if abs(result) > MAX_QUANTITY:
        raise ValueError(f"quantity out of range: {value!r}")
    return result


def is_quantity(value: object) -> bool:
    try:
        parse_quantity(value)
    except ValueError:
        return False
    return True


def is_positive_quantity(value: object) -> bool:
    try:
        return parse_quantity(value) > 0
    except ValueError:
        return False
