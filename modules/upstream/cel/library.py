"""The Kubernetes CEL libraries that upstream's admission rules call, for the `cel` evaluator.

The API server adds these to standard CEL (k8s.io/apiserver/pkg/cel/library and cel-go's ext
packages): quantities, strings, lists, regex, `format.*` validators and `jsonpatch.escapeKey`.
Written from the documented semantics (https://kubernetes.io/docs/reference/using-api/cel/), not
from upstream code. A receiver-style call (`x.f(y)`) reaches the Python function as ``f(x, y)``.

A quantity is a CEL map ``{"k8s.quantity": "<numerator>/<denominator>"}``: its exact value, so two
quantities are equal (`==`) when they denote the same amount, as upstream's Quantity equality.
"""
from __future__ import annotations

import re
from decimal import Decimal
from fractions import Fraction
from typing import Any, Callable

from modules.core.patterns import PatternError, compile_go
from modules.core.quantity import parse_quantity

QUANTITY_KEY = "k8s.quantity"
FORMAT_KEY = "k8s.format"


class CelTypeError(TypeError):
    """A call the API server's type checker or runtime would refuse (no matching overload)."""


def _no_overload(name: str, *args: Any) -> CelTypeError:
    kinds = ", ".join(_cel_type(a) for a in args)
    return CelTypeError(f"no matching overload for '{name}' applied to ({kinds})")


def _cel_type(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "double"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "Quantity" if QUANTITY_KEY in value else "map"
    return "null" if value is None else type(value).__name__


# --- quantity ---------------------------------------------------------------------------------

def _to_fraction(text: str) -> Fraction:
    return Fraction(Decimal(parse_quantity(text)))


def _q(value: Fraction) -> dict:
    return {QUANTITY_KEY: f"{value.numerator}/{value.denominator}"}


def _qv(value: Any, name: str) -> Fraction:
    if isinstance(value, dict) and QUANTITY_KEY in value:
        return Fraction(value[QUANTITY_KEY])
    raise _no_overload(name, value)


def quantity(text: Any) -> dict:
    # Only strings: an int-or-string field that holds a number reaches CEL as an int, and the API
    # server has no quantity(int) overload.
    if not isinstance(text, str):
        raise _no_overload("quantity", text)
    try:
        return _q(_to_fraction(text))
    except ValueError:
        raise ValueError(f"quantities must match the regular expression "
                         f"'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$', got {text!r}") from None


def is_quantity(text: Any) -> bool:
    if not isinstance(text, str):
        raise _no_overload("isQuantity", text)
    try:
        parse_quantity(text)
    except ValueError:
        return False
    return True


def _operand(value: Any, name: str) -> Fraction:
    if isinstance(value, bool):
        raise _no_overload(name, value)
    if isinstance(value, int):
        return Fraction(value)
    return _qv(value, name)


def compare_to(a: Any, b: Any) -> int:
    x, y = _qv(a, "compareTo"), _qv(b, "compareTo")
    return (x > y) - (x < y)


def _arith(name: str, sign: int) -> Callable[[Any, Any], dict]:
    def run(a: Any, b: Any) -> dict:
        return _q(_qv(a, name) + sign * _operand(b, name))
    return run


def _fits_int64(value: Fraction) -> bool:
    return value.denominator == 1 and -(2**63) <= value < 2**63


def as_integer(a: Any) -> int:
    value = _qv(a, "asInteger")
    if not _fits_int64(value):
        raise ValueError("cannot convert value to integer")
    return int(value)


def _quantity_dispatch(name: str, on_quantity: Callable, on_other: Callable | None = None) -> Callable:
    """Functions whose name other libraries share (add, sign, ...): quantities first."""
    def run(*args: Any) -> Any:
        if args and isinstance(args[0], dict) and QUANTITY_KEY in args[0]:
            return on_quantity(*args)
        if on_other is not None:
            return on_other(*args)
        raise _no_overload(name, *args)
    return run


# --- strings (cel-go ext.Strings, as the API server enables it) ------------------------------

def _string(name: str, value: Any) -> str:
    if not isinstance(value, str):
        raise _no_overload(name, value)
    return value


def split(s: Any, sep: Any, limit: int | None = None) -> list[str]:
    s, sep = _string("split", s), _string("split", sep)
    if limit is None or limit < 0:
        return s.split(sep) if sep else list(s)
    if limit == 0:
        return []
    if not sep:
        return list(s[:limit - 1]) + ([s[limit - 1:]] if len(s) >= limit else [])
    return s.split(sep, limit - 1)


def join(items: Any, sep: str = "") -> str:
    if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
        raise _no_overload("join", items)
    return sep.join(items)


def replace(s: Any, old: Any, new: Any, limit: int = -1) -> str:
    return _string("replace", s).replace(old, new, limit if limit >= 0 else -1)


def _ascii_case(name: str, upper: bool) -> Callable[[Any], str]:
    def run(s: Any) -> str:
        return "".join(c.upper() if upper and "a" <= c <= "z" else c.lower() if not upper and "A" <= c <= "Z" else c
                       for c in _string(name, s))
    return run


def substring(s: Any, start: int, end: int | None = None) -> str:
    s = _string("substring", s)
    end = len(s) if end is None else end
    if not 0 <= start <= end <= len(s):
        raise IndexError(f"index out of range: {start if not 0 <= start <= len(s) else end}")
    return s[start:end]


def char_at(s: Any, i: int) -> str:
    s = _string("charAt", s)
    if not 0 <= i <= len(s):
        raise IndexError(f"index out of range: {i}")
    return s[i:i + 1]


def trim(s: Any) -> str:
    return _string("trim", s).strip()


def index_of(target: Any, item: Any, start: int = 0) -> int:
    if isinstance(target, str):
        if not 0 <= start <= len(target):
            raise IndexError(f"index out of range: {start}")
        return target.find(item, start)
    if isinstance(target, list):
        return next((i for i, v in enumerate(target) if v == item), -1)
    raise _no_overload("indexOf", target, item)


def last_index_of(target: Any, item: Any) -> int:
    if isinstance(target, str):
        return target.rfind(item)
    if isinstance(target, list):
        return max((i for i, v in enumerate(target) if v == item), default=-1)
    raise _no_overload("lastIndexOf", target, item)


_VERB = re.compile(r"%(\.\d+)?([sdfeExXbo%])")


def string_format(template: Any, args: Any) -> str:
    """`"%s has %d".format([a, b])` (cel-go ext.Strings `format`)."""
    template = _string("format", template)
    if not isinstance(args, list):
        raise _no_overload("format", template, args)
    it = iter(args)

    def verb(match: re.Match) -> str:
        precision, kind = match.groups()
        if kind == "%":
            return "%"
        try:
            value = next(it)
        except StopIteration:
            raise ValueError("index out of range in format arguments") from None
        if kind == "s":
            return str(value).lower() if isinstance(value, bool) else str(value)
        if kind == "d":
            return str(int(value))
        if kind in "fFeE":
            return f"%{precision or '.6'}{kind}" % value
        return format(int(value), {"x": "x", "X": "X", "b": "b", "o": "o"}[kind])
    return _VERB.sub(verb, template)


# --- lists (k8s library) ---------------------------------------------------------------------

def _numbers_or_same(items: Any, name: str) -> list:
    if not isinstance(items, list):
        raise _no_overload(name, items)
    return items


def list_sum(items: Any) -> Any:
    items = _numbers_or_same(items, "sum")
    if any(isinstance(v, dict) and QUANTITY_KEY in v for v in items):
        return _q(sum((_qv(v, "sum") for v in items), Fraction(0)))
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in items):
        raise _no_overload("sum", items)
    return sum(items)


def _comparable(items: list) -> list:
    return [Fraction(v[QUANTITY_KEY]) if isinstance(v, dict) and QUANTITY_KEY in v else v for v in items]


def is_sorted(items: Any) -> bool:
    values = _comparable(_numbers_or_same(items, "isSorted"))
    return all(a <= b for a, b in zip(values, values[1:]))


def _extreme(name: str, pick: Callable) -> Callable[[Any], Any]:
    def run(items: Any) -> Any:
        items = _numbers_or_same(items, name)
        if not items:
            raise ValueError(f"{name} called on an empty list")
        values = _comparable(items)
        return items[values.index(pick(values))]
    return run


def list_slice(items: Any, start: int, end: int) -> list:
    items = _numbers_or_same(items, "slice")
    if not 0 <= start <= end <= len(items):
        raise IndexError("index out of range")
    return items[start:end]


# --- regex (k8s library) ---------------------------------------------------------------------

def _go_regex(name: str, pattern: Any):
    """The pattern compiled as the API server (Go, RE2) compiles it: linear time, Go's syntax."""
    try:
        return compile_go(_string(name, pattern))
    except PatternError as exc:
        raise ValueError(f"{name}: the pattern {exc}") from None


def find(s: Any, pattern: str) -> str:
    match = _go_regex("find", pattern).search(_string("find", s))
    return match.group(0) if match else ""


def find_all(s: Any, pattern: str, limit: int = -1) -> list[str]:
    found = []
    for m in _go_regex("findAll", pattern).finditer(_string("findAll", s)):
        if 0 <= limit <= len(found):
            break
        found.append(m.group(0))
    return found


# --- format library: format.<name>().validate(s) -> optional list of errors --------------------

# Whole-string patterns (matched with fullmatch: Python's `$` would accept a trailing newline, Go's does not).
_DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_DNS1035_LABEL = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
_QUALIFIED_NAME_PART = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")


def _length_and_pattern(limit: int, pattern: re.Pattern, message: str) -> Callable[[str], list[str]]:
    """A Kubernetes name validator: the length error, then the format error, as apimachinery words them."""
    def errors(value: str) -> list[str]:
        out = []
        if len(value) > limit:
            out.append(f"must be no more than {limit} characters")
        if not pattern.fullmatch(value):
            out.append(message)
        return out
    return errors


_dns1123_label = _length_and_pattern(
    63, _DNS1123_LABEL,
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
_dns1123_subdomain = _length_and_pattern(
    253, _DNS1123_SUBDOMAIN,
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
_dns1035_label = _length_and_pattern(
    63, _DNS1035_LABEL,
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', "
    "regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')")


def _qualified_name(value: str) -> list[str]:
    errors = []
    prefix, sep, name = value.rpartition("/")
    if sep:
        if not prefix:
            errors.append("prefix part must be non-empty")
        else:
            errors += [f"prefix part {e}" for e in _dns1123_subdomain(prefix)]
    if not name:
        errors.append("name part must be non-empty")
    elif len(name) > 63:
        errors.append("name part must be no more than 63 characters")
    if name and not _QUALIFIED_NAME_PART.fullmatch(name):
        errors.append("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
                      "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
                      "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")
    if value.count("/") > 1:
        errors = ["a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and "
                  "end with an alphanumeric character, with an optional DNS subdomain prefix and '/'"]
    return errors


def _label_value(value: str) -> list[str]:
    errors = []
    if len(value) > 63:
        errors.append("must be no more than 63 characters")
    if not _LABEL_VALUE.fullmatch(value):
        errors.append("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
                      "and must start and end with an alphanumeric character")
    return errors


FORMATS: dict[str, Callable[[str], list[str]]] = {
    "dns1123Label": _dns1123_label, "dns1123Subdomain": _dns1123_subdomain, "dns1035Label": _dns1035_label,
    "qualifiedName": _qualified_name, "labelValue": _label_value,
}


def _format_factory(name: str) -> Callable[[Any], dict]:
    def run(namespace: Any) -> dict:
        if not (isinstance(namespace, dict) and namespace.get(FORMAT_KEY) == "namespace"):
            raise _no_overload(name, namespace)
        return {FORMAT_KEY: name}
    return run


def make_validate(optional_type: Any) -> Callable[[Any, Any], Any]:
    def validate(fmt: Any, value: Any) -> Any:
        if not (isinstance(fmt, dict) and fmt.get(FORMAT_KEY) in FORMATS) or not isinstance(value, str):
            raise _no_overload("validate", fmt, value)
        errors = FORMATS[fmt[FORMAT_KEY]](value)
        return optional_type.of(errors) if errors else optional_type.none()
    return validate


# --- jsonpatch.escapeKey (MutatingAdmissionPolicy) --------------------------------------------

def escape_key(namespace: Any, key: Any) -> str:
    if not (isinstance(namespace, dict) and namespace.get(FORMAT_KEY) == "jsonpatch"):
        raise _no_overload("escapeKey", namespace, key)
    return _string("escapeKey", key).replace("~", "~0").replace("/", "~1")


# --- the environment --------------------------------------------------------------------------

def functions(optional_type: Any) -> dict[str, Callable]:
    """Every function this module adds, by the name CEL calls it."""
    out: dict[str, Callable] = {
        "quantity": quantity, "isQuantity": is_quantity, "compareTo": compare_to,
        "isLessThan": lambda a, b: compare_to(a, b) < 0, "isGreaterThan": lambda a, b: compare_to(a, b) > 0,
        "add": _arith("add", 1), "sub": _arith("sub", -1),
        "asInteger": as_integer, "isInteger": lambda a: _fits_int64(_qv(a, "isInteger")),
        "asApproximateFloat": lambda a: float(_qv(a, "asApproximateFloat")),
        "sign": _quantity_dispatch("sign", lambda a: (_qv(a, "sign") > 0) - (_qv(a, "sign") < 0)),
        "split": split, "join": join, "replace": replace, "lowerAscii": _ascii_case("lowerAscii", False),
        "upperAscii": _ascii_case("upperAscii", True), "substring": substring, "charAt": char_at, "trim": trim,
        "indexOf": index_of, "lastIndexOf": last_index_of, "format": string_format,
        "sum": list_sum, "isSorted": is_sorted, "min": _extreme("min", min), "max": _extreme("max", max),
        "slice": list_slice, "find": find, "findAll": find_all,
        "validate": make_validate(optional_type), "escapeKey": escape_key,
    }
    out.update({name: _format_factory(name) for name in FORMATS})
    return out


# Namespaces the API server's libraries call functions on (`format.dns1123Label()`,
# `jsonpatch.escapeKey(k)`): variables the functions above recognise as their receiver.
NAMESPACES = {"format": {FORMAT_KEY: "namespace"}, "jsonpatch": {FORMAT_KEY: "jsonpatch"}}
