"""The string formats a CRD schema may name, as apiextensions-apiserver v0.35.0 validates them.

``pkg/apiserver/validation/formats.go`` lists the formats CRDs support (since 1.0, plus
``k8s-short-name`` and ``k8s-long-name`` since 1.34); any other format is stripped from the schema
before validation (``StripUnsupportedFormatsPostProcessorForVersion``), so ``int32``, ``int64``,
``double`` or a made-up name check nothing. Names are normalised as go-openapi does (dashes
removed: ``date-time`` is ``datetime``). The checks follow kube-openapi's ``pkg/validation/strfmt``
registry (``default.go``, ``kubernetes-extensions.go``, ``date.go``, ``time.go``, ``duration.go``);
where strfmt calls a Go parser (``net/mail``, ``net/url``, ``net``), the same grammar is written
here as a bounded check (README: what is approximated).
"""
from __future__ import annotations

import base64
import functools
import binascii
import re
from datetime import date, datetime
from typing import Callable

from modules.core.patterns import compile_go
from modules.core.vocabulary.go import atoi, is_duration
from modules.core.vocabulary.names import is_dns1123_label, is_dns1123_subdomain, sloppy_ip

# The supported formats at compatibility version 1.35, normalised (dashes removed).
SUPPORTED = frozenset({
    "bsonobjectid", "uri", "email", "hostname", "ipv4", "ipv6", "cidr", "mac", "uuid", "uuid3", "uuid4",
    "uuid5", "isbn", "isbn10", "isbn13", "creditcard", "ssn", "hexcolor", "rgbcolor", "byte", "password",
    "date", "duration", "datetime", "k8sshortname", "k8slongname",
})

_HOSTNAME = (r"^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}]"
             r"(([a-zA-Z0-9-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$")


@functools.cache
def _hostname_pattern():
    """strfmt's HostnamePattern through RE2 (its Unicode classes cost 0.4 s to compile: on first use)."""
    return compile_go(_HOSTNAME)


def _hostname(text: str) -> bool:
    return _hostname_pattern().found_in(text) and len(text) <= 255 and all(len(p) <= 63 for p in text.split("."))
_UUID = {
    "uuid": re.compile(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}\Z"),
    "uuid3": re.compile(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}\Z"),
    "uuid4": re.compile(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}\Z"),
    "uuid5": re.compile(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}\Z"),
}
_SSN = re.compile(r"^\d{3}[- ]?\d{2}[- ]?\d{4}\Z", re.ASCII)
_HEXCOLOR = re.compile(r"^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})\Z")
_BYTE = r"(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])"
_RGB = re.compile(rf"^rgb\(\s*{_BYTE}\s*,\s*{_BYTE}\s*,\s*{_BYTE}\s*\)\Z", re.ASCII)
_BASE64 = re.compile(r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})\Z")
_ISBN10 = re.compile(r"^(?:[0-9]{9}X|[0-9]{10})\Z")
_ISBN13 = re.compile(r"^(?:[0-9]{13})\Z")
_CREDITCARD = re.compile(r"^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|"
                         r"3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35\d{3})\d{11})\Z", re.ASCII)
_BSON = re.compile(r"^[0-9a-fA-F]{24}\Z")
_MAC = re.compile(r"^(?:[0-9a-fA-F]{2}[:-]){5,19}[0-9a-fA-F]{2}\Z|^(?:[0-9a-fA-F]{4}\.){2,9}[0-9a-fA-F]{4}\Z")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}\Z", re.ASCII)
_DATETIME = re.compile(r"^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?"
                       r"([Zz]|[+-]\d{2}:\d{2})?\Z", re.ASCII)
_DURATION = re.compile(r"(\d+)\s*([A-Za-zµ]+)")
_DURATION_GROUPS = (("ns", "nano"), ("us", "µs", "micro"), ("ms", "milli"), ("s", "sec"), ("m", "min"),
                    ("h", "hr", "hour"), ("d", "day"), ("w", "wk", "week"))
_EMAIL = re.compile(r"^(?:[^<>@\s\"]*\s*<)?[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]+@[A-Za-z0-9.-]+(?:\]|>)?\Z")
_URI_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def normalize(name: str) -> str:
    return name.replace("-", "")


def _ipv4(text: str) -> bool:
    """``netutils.ParseIPSloppy`` (leading zeros allowed) of a text with a dot."""
    return "." in text and _ip_sloppy(text)


def _ip_sloppy(text: str) -> bool:
    return sloppy_ip(text) is not None   # netutils.ParseIPSloppy: no IPv6 zone (Python's would take one)


def _ipv6(text: str) -> bool:
    return ":" in text and _ip_sloppy(text)


def _cidr(text: str) -> bool:
    address, sep, bits = text.partition("/")
    if not sep or not bits.isascii() or not bits.isdigit() or len(bits) > 3:
        return False
    limit = 128 if ":" in address else 32
    return _ip_sloppy(address) and int(bits) <= limit


def _isbn10(text: str) -> bool:
    text = re.sub(r"[\s-]+", "", text)
    if not _ISBN10.match(text):
        return False
    total = sum((10 - i) * (10 if c == "X" else int(c)) for i, c in enumerate(text))
    return total % 11 == 0


def _isbn13(text: str) -> bool:
    text = re.sub(r"[\s-]+", "", text)
    if not _ISBN13.match(text):
        return False
    total = sum(int(c) * (1 if i % 2 == 0 else 3) for i, c in enumerate(text[:12]))
    return (10 - total % 10) % 10 == int(text[12])


def _creditcard(text: str) -> bool:
    digits = re.sub(r"[^0-9]+", "", text)
    if not _CREDITCARD.match(digits):
        return False
    total, double = 0, False
    for c in reversed(digits):
        n = int(c) * (2 if double else 1)
        total += n - 9 if n > 9 else n
        double = not double
    return total % 10 == 0


def _byte(text: str) -> bool:
    if not _BASE64.match(text):
        return False
    try:
        base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def _date(text: str) -> bool:
    if not _DATE.match(text):
        return False
    try:
        date.fromisoformat(text)
    except ValueError:
        return False
    return True


def _datetime(text: str) -> bool:
    match = _DATETIME.match(text)
    if not match:
        return False
    year, month, day, hour, minute, second = (int(g) for g in match.groups()[:6])
    try:
        datetime(year, month, day, hour, minute, min(second, 59))
    except ValueError:
        return False
    return True


def _duration(text: str) -> bool:
    """strfmt's ``ParseDuration``: Go's ``time.ParseDuration``, else any ``<digits> <unit>`` match whose
    unit (case-insensitive) is one of a group's names or starts with the group's last name
    (``5 days``, ``2 Hours``); a count beyond int64 fails the whole text."""
    if is_duration(text):
        return True
    ok = False
    for count, unit in _DURATION.findall(text):
        if atoi(count) is None:
            return False
        unit = unit.strip().lower()
        ok = ok or any(unit == v.lower() or (i == len(group) - 1 and unit.startswith(v))
                       for group in _DURATION_GROUPS for i, v in enumerate(group))
    return ok


def _uri(text: str) -> bool:
    """``url.ParseRequestURI``: an absolute URI or an absolute path, no control characters or spaces."""
    if not text or any(ord(c) < 0x21 or c == "\x7f" for c in text):
        return False
    return text.startswith("/") or bool(_URI_SCHEME.match(text))


def _email(text: str) -> bool:
    return bool(_EMAIL.match(text.strip()))


CHECKS: dict[str, Callable[[str], bool]] = {
    "bsonobjectid": lambda s: bool(_BSON.match(s)),
    "uri": _uri, "email": _email,
    "hostname": _hostname,
    "ipv4": _ipv4, "ipv6": _ipv6, "cidr": _cidr, "mac": lambda s: bool(_MAC.match(s)),
    **{name: (lambda rx: lambda s: bool(rx.match(s)))(rx) for name, rx in _UUID.items()},
    "isbn": lambda s: _isbn10(s) or _isbn13(s), "isbn10": _isbn10, "isbn13": _isbn13,
    "creditcard": _creditcard, "ssn": lambda s: bool(_SSN.match(s)),
    "hexcolor": lambda s: bool(_HEXCOLOR.match(s)), "rgbcolor": lambda s: bool(_RGB.match(s)),
    "byte": _byte, "password": lambda s: True, "date": _date, "duration": _duration, "datetime": _datetime,
    "k8sshortname": is_dns1123_label, "k8slongname": is_dns1123_subdomain,
}
assert set(CHECKS) == SUPPORTED


def valid(name: str, text: str) -> bool:
    """Whether ``text`` is in format ``name`` (a supported, normalised name)."""
    return CHECKS[name](text)
