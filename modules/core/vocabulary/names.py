"""apimachinery's name formats as the v1.35 API server and Volcano v1.15.1 (which vendors
apimachinery v0.35) apply them: ``k8s.io/apimachinery`` ``pkg/util/validation/validation.go``,
``pkg/api/validate/content/{dns,kube,identifier}.go`` and ``pkg/api/validation/path/name.go``.

Each function returns upstream's messages for what is wrong with a string (an empty list: valid), worded
as upstream words them, lengths counted in bytes as Go's ``len`` counts them. Every port, rule and
check that needs a name format imports it from here (``is_*`` are the yes/no forms).
"""
from __future__ import annotations

import functools
import ipaddress

from .go import go_quote

# The formats are checked with character sets rather than regular expressions: the same languages as
# upstream's patterns (quoted in the messages below, anchored as Go's ``^...$``, which admits no
# trailing newline), without compiling a pattern in every run.
_LOWER_ALNUM = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")
_ALNUM = _LOWER_ALNUM | frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
_LOWER_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyz")


def _edged(value: str, inner: frozenset[str], edge: frozenset[str]) -> bool:
    """Non-empty, every character in ``inner``, first and last in ``edge``."""
    return bool(value) and value[0] in edge and value[-1] in edge and inner.issuperset(value)


_LABEL_CHARS = _LOWER_ALNUM | {"-"}
_NAME_CHARS = _ALNUM | {"-", "_", "."}
_CONFIG_KEY_CHARS = _ALNUM | {"-", "_", "."}


def _is_label(value: str) -> bool:            # [a-z0-9]([-a-z0-9]*[a-z0-9])?
    return _edged(value, _LABEL_CHARS, _LOWER_ALNUM)


def _is_subdomain(value: str) -> bool:        # labels joined by '.'
    return all(_is_label(part) for part in value.split("."))


def _is_dns1035(value: str) -> bool:          # [a-z]([-a-z0-9]*[a-z0-9])?
    return _is_label(value) and value[0] in _LOWER_LETTERS


def _is_qualified_part(value: str) -> bool:   # ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]
    return _edged(value, _NAME_CHARS, _ALNUM)


_NAME_RE = {"label": r"[a-z0-9]([-a-z0-9]*[a-z0-9])?",
            "subdomain": r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*",
            "dns1035": r"[a-z]([-a-z0-9]*[a-z0-9])?",
            "qualified": r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]",
            "label-value": r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?",
            "config-key": r"[-._a-zA-Z0-9]+",
            "env": r"[-._a-zA-Z][-._a-zA-Z0-9]*",
            "c-identifier": r"[A-Za-z_][A-Za-z0-9_]*"}

DNS1123_LABEL_MAX, DNS1123_SUBDOMAIN_MAX, QUALIFIED_NAME_MAX, LABEL_VALUE_MAX = 63, 253, 63, 63


def _bytes(value: str) -> int:
    """Go's ``len``: the UTF-8 length."""
    return len(value.encode("utf-8", "surrogatepass"))


def _regex_error(message: str, pattern: str, *examples: str) -> str:
    """``RegexError``: each example quoted and followed by ", ", joined by " or "."""
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{message} (e.g. {shown}regex used for validation is '{pattern}')"


def max_len_error(n: int) -> str:
    """``validation.MaxLenError`` (the DNS formats, port names, config map keys)."""
    return f"must be no more than {n} characters"


def _max_bytes_error(n: int) -> str:
    """``content.MaxLenError`` (label keys and values since apimachinery v0.35)."""
    return f"must be no more than {n} bytes"


EMPTY_ERROR = "must be non-empty"

_LABEL_MSG = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "
              "and end with an alphanumeric character")
_SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
                  "must start and end with an alphanumeric character")
_DNS1035_MSG = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "
                "character, and end with an alphanumeric character")
_LABEL_KEY_MSG = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
                  "alphanumeric character")
_LABEL_VALUE_MSG = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and "
                    "must start and end with an alphanumeric character")
_CONFIG_KEY_MSG = "a valid config key must consist of alphanumeric characters, '-', '_' or '.'"
_RELAXED_ENV_MSG = "a valid environment variable name must consist only of printable ASCII characters other than '='"
_ENV_MSG = ("a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', and "
            "must not start with a digit")
_C_IDENTIFIER_MSG = ("a valid C identifier must start with alphabetic character or '_', followed by a string of "
                     "alphanumeric characters or '_'")


def _format(value: str, limit_error: str | None, valid: bool, message: str, pattern: str, *examples: str
            ) -> list[str]:
    """Upstream's two complaints about a formatted string: too long, and not matching its pattern."""
    out = [limit_error] if limit_error else []
    if not valid:
        out.append(_regex_error(message, _NAME_RE[pattern], *examples))
    return out


def _too_long(value: str, limit: int) -> str | None:
    return max_len_error(limit) if _bytes(value) > limit else None


def dns1123_label(value: str) -> list[str]:
    """``IsDNS1123Label``; a valid subdomain that is not a label has dots, and is told so."""
    out = [max_len_error(DNS1123_LABEL_MAX)] if _bytes(value) > DNS1123_LABEL_MAX else []
    if not _is_label(value):
        out.append("must not contain dots" if _is_subdomain(value) else
                   _regex_error(_LABEL_MSG, _NAME_RE["label"], "my-name", "123-abc"))
    return out


def dns1123_subdomain(value: str, limit_error=max_len_error) -> list[str]:
    """``IsDNS1123Subdomain`` (``limit_error``: which package's length message, see ``qualified_name``)."""
    limit = limit_error(DNS1123_SUBDOMAIN_MAX) if _bytes(value) > DNS1123_SUBDOMAIN_MAX else None
    return _format(value, limit, _is_subdomain(value), _SUBDOMAIN_MSG, "subdomain", "example.com")


def dns1035_label(value: str) -> list[str]:
    """``IsDNS1035Label``: a DNS-1123 label that starts with a letter."""
    return _format(value, _too_long(value, DNS1123_LABEL_MAX), _is_dns1035(value), _DNS1035_MSG, "dns1035",
                   "my-name", "abc-123")


# A stack repeats its label and annotation keys and values on every object: their problems are
# remembered by text (short texts only, as names are; anything else is judged each time).
_REMEMBERED_CHARS = 320


def qualified_name(value: str) -> list[str]:
    """``IsQualifiedName`` (= ``content.IsLabelKey`` since v0.35): a label or annotation key,
    ``[prefix/]name``."""
    if isinstance(value, str) and len(value) <= _REMEMBERED_CHARS:
        return list(_remembered_qualified_name(value))
    return list(_qualified_name(value))


def _qualified_name(value: str) -> tuple[str, ...]:
    parts = value.split("/")
    if len(parts) > 2:
        return ("a valid label key " + _regex_error(_LABEL_KEY_MSG, _NAME_RE["qualified"], "MyName", "my.name",
                                                    "123-abc") + " with an optional DNS subdomain prefix and '/' "
                "(e.g. 'example.com/MyName')",)
    out = []
    name = parts[-1]
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix:
            out.append("prefix part " + EMPTY_ERROR)
        else:
            out += ["prefix part " + m for m in dns1123_subdomain(prefix, _max_bytes_error)]
    if not name:
        out.append("name part " + EMPTY_ERROR)
    elif _bytes(name) > QUALIFIED_NAME_MAX:
        out.append("name part " + _max_bytes_error(QUALIFIED_NAME_MAX))
    if not _is_qualified_part(name):
        out.append("name part " + _regex_error(_LABEL_KEY_MSG, _NAME_RE["qualified"], "MyName", "my.name",
                                               "123-abc"))
    return tuple(out)


_remembered_qualified_name = functools.lru_cache(maxsize=4096)(_qualified_name)


def label_value(value: str) -> list[str]:
    """``IsValidLabelValue`` (= ``content.IsLabelValue``): empty, or a label key's name part."""
    if isinstance(value, str) and len(value) <= _REMEMBERED_CHARS:
        return list(_remembered_label_value(value))
    return list(_label_value(value))


def _label_value(value: str) -> tuple[str, ...]:
    limit = _max_bytes_error(LABEL_VALUE_MAX) if _bytes(value) > LABEL_VALUE_MAX else None
    return tuple(_format(value, limit, not value or _is_qualified_part(value), _LABEL_VALUE_MSG,
                         "label-value", "MyValue", "my_value", "12345"))


_remembered_label_value = functools.lru_cache(maxsize=4096)(_label_value)


def port_number(value: int) -> list[str]:
    """``IsValidPortNum``."""
    return [] if 1 <= value <= 65535 else ["must be between 1 and 65535, inclusive"]


def port_name(value: str) -> list[str]:
    """``IsValidPortName``: an IANA_SVC_NAME."""
    out = []
    if _bytes(value) > 15:
        out.append(max_len_error(15))
    if not value or any(c not in _LABEL_CHARS for c in value):
        out.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not any(c in _LOWER_LETTERS for c in value):
        out.append("must contain at least one letter (a-z)")
    if "--" in value:
        out.append("must not contain consecutive hyphens")
    if value.startswith("-") or value.endswith("-"):
        out.append("must not begin or end with a hyphen")
    return out


def _chdir_prefix(value: str) -> list[str]:
    """``hasChDirPrefix``: what a file name made of the value may not be."""
    if value in (".", ".."):
        return [f"must not be '{value}'"]
    return ["must not start with '..'"] if value.startswith("..") else []


def env_var_name(value: str) -> list[str]:
    """``IsRelaxedEnvVarName``, what the API server applies (RelaxedEnvironmentVariableValidation,
    on by default since v1.32): printable ASCII without ``=``."""
    if not value:
        return ["environment variable name " + EMPTY_ERROR]
    if "=" in value or any(not " " <= c <= "~" for c in value):
        return [_RELAXED_ENV_MSG]
    return []


_ENV_FIRST = _ALNUM - _LOWER_ALNUM | _LOWER_LETTERS | {"-", ".", "_"}
_ENV_CHARS = _ALNUM | {"-", ".", "_"}


def strict_env_var_name(value: str) -> list[str]:
    """``IsEnvVarName``: what ``PodValidationOptions{}`` without the relaxed option applies (Volcano's
    job webhook): letters, digits, ``_``, ``-`` and ``.``, not starting with a digit."""
    valid = bool(value) and value[0] in _ENV_FIRST and _ENV_CHARS.issuperset(value)
    out = [] if valid else [_regex_error(_ENV_MSG, _NAME_RE["env"], "my.env-name", "MY_ENV.NAME", "MyEnvName1")]
    return out + _chdir_prefix(value)


def c_identifier(value: str) -> list[str]:
    """``IsCIdentifier``."""
    valid = bool(value) and value[0] in _ALNUM - _LOWER_ALNUM | _LOWER_LETTERS | {"_"} \
        and (_ALNUM | {"_"}).issuperset(value)
    return [] if valid else [_regex_error(_C_IDENTIFIER_MSG, _NAME_RE["c-identifier"], "my_name", "MY_NAME", "MyName")]


def config_map_key(value: str) -> list[str]:
    """``IsConfigMapKey``: a ConfigMap or Secret key (also a file name in a volume)."""
    valid = bool(value) and all(c in _CONFIG_KEY_CHARS for c in value)
    out = _format(value, _too_long(value, DNS1123_SUBDOMAIN_MAX), valid, _CONFIG_KEY_MSG, "config-key", "key.name",
                  "KEY_NAME", "key-name")
    return out + _chdir_prefix(value)


def path_segment_name(value: str) -> list[str]:
    """``IsValidPathSegmentName``: names that only need to be a URL path segment (RBAC objects,
    CertificateSigningRequests, scale targets)."""
    if value in (".", ".."):
        return [f"may not be '{value}'"]
    return [f"may not contain '{c}'" for c in ("/", "%") if c in value]


def is_dns1123_label(value: str) -> bool:
    return isinstance(value, str) and _bytes(value) <= DNS1123_LABEL_MAX and _is_label(value)


def is_dns1123_subdomain(value: str) -> bool:
    return isinstance(value, str) and _bytes(value) <= DNS1123_SUBDOMAIN_MAX and _is_subdomain(value)


def is_qualified_name(value: str) -> bool:
    return isinstance(value, str) and not qualified_name(value)


def sloppy_ip(value: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """``netutils.ParseIPSloppy`` (Go's ``net.ParseIP`` before 1.17): IPv4 octets may have leading
    zeros (read as decimal); no IPv6 zone."""
    if "%" in value or not value.isascii():
        return None
    if ":" in value:
        try:
            return ipaddress.IPv6Address(value)
        except ValueError:
            return None
    octets = value.split(".")
    if len(octets) != 4 or not all(o.isascii() and o.isdigit() and len(o) <= 3 and int(o) <= 255 for o in octets):
        return None
    return ipaddress.IPv4Address(".".join(str(int(o)) for o in octets))


def legacy_ip_address(value: str) -> list[str]:
    """``IsValidIPForLegacyField`` without strict validation: any address ``ParseIPSloppy`` reads
    (leading zeros, non-canonical IPv6 spellings admitted)."""
    return [] if sloppy_ip(value) is not None else ["must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"]


def ip_address(value: str) -> list[str]:
    """``IsValidIP`` (``pkg/util/validation/ip.go``): an IP address with no leading zeros, not
    IPv4-mapped, in canonical form (what an ``IPAddress`` object is named)."""
    ip = sloppy_ip(value)
    if ip is None:
        return ["must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"]
    out = []
    if ip.version == 4 and any(len(o) > 1 and o.startswith("0") for o in value.split(".")):
        out.append("must not have leading 0s")
    if ip.version == 6 and ip.ipv4_mapped is not None:
        out.append("must not be an IPv4-mapped IPv6 address")
    if out:
        return out
    canonical = str(ip) if ip.version == 4 else ip.compressed
    return [] if value == canonical else [f"must be in canonical form ({go_quote(canonical)})"]
