"""apimachinery's name formats (``pkg/util/validation``, ``pkg/api/validate/content``): what is wrong
with a string as a DNS label, subdomain, qualified name, label value, port name, env var name, config
map key or path segment; each returns upstream's messages (empty: valid)."""
from __future__ import annotations

import functools

# The formats are checked with character sets rather than regular expressions: the same languages as
# upstream's patterns (quoted in the messages below), without compiling a pattern in every run.
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
            "config-key": r"[-._a-zA-Z0-9]+"}

DNS1123_LABEL_MAX, DNS1123_SUBDOMAIN_MAX, QUALIFIED_NAME_MAX, LABEL_VALUE_MAX = 63, 253, 63, 63


def _regex_error(message: str, pattern: str, *examples: str) -> str:
    shown = ",  or ".join(f"'{e}'" for e in examples)
    return f"{message} (e.g. {shown}, regex used for validation is '{pattern}')"


def max_len_error(n: int) -> str:
    return f"must be no more than {n} characters"


_LABEL_MSG = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "
              "and end with an alphanumeric character")
_SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
                  "must start and end with an alphanumeric character")
_DNS1035_MSG = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "
                "character, and end with an alphanumeric character")
_QUALIFIED_MSG = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
                  "alphanumeric character")
_LABEL_VALUE_MSG = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and "
                    "must start and end with an alphanumeric character")
_CONFIG_KEY_MSG = "a valid config key must consist of alphanumeric characters, '-', '_' or '.'"
_ENV_MSG = "a valid environment variable name must consist only of printable ASCII characters other than '='"


def _format(value: str, limit: int, valid: bool, message: str, pattern: str, *examples: str) -> list[str]:
    """Upstream's two complaints about a formatted string: too long, and not matching its pattern."""
    out = [max_len_error(limit)] if len(value) > limit else []
    if not valid:
        out.append(_regex_error(message, _NAME_RE[pattern], *examples))
    return out


def dns1123_label(value: str) -> list[str]:
    """IsDNS1123Label: what is wrong with ``value`` as a DNS label (empty: nothing)."""
    return _format(value, DNS1123_LABEL_MAX, _is_label(value), _LABEL_MSG, "label", "my-name", "123-abc")


def dns1123_subdomain(value: str) -> list[str]:
    return _format(value, DNS1123_SUBDOMAIN_MAX, _is_subdomain(value), _SUBDOMAIN_MSG, "subdomain", "example.com")


def dns1035_label(value: str) -> list[str]:
    return _format(value, DNS1123_LABEL_MAX, _is_dns1035(value), _DNS1035_MSG, "dns1035", "my-name", "abc-123")


# A stack repeats its label and annotation keys and values on every object: their problems are
# remembered by text (short texts only, as names are; anything else is judged each time).
_REMEMBERED_CHARS = 320


def qualified_name(value: str) -> list[str]:
    """IsQualifiedName: a label or annotation key, ``[prefix/]name``."""
    if isinstance(value, str) and len(value) <= _REMEMBERED_CHARS:
        return list(_remembered_qualified_name(value))
    return list(_qualified_name(value))


def _qualified_name(value: str) -> tuple[str, ...]:
    parts = value.split("/")
    if len(parts) == 1:
        name, prefix = parts[0], None
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            return ("prefix part must be non-empty",)
    else:
        return ("a qualified name " + _regex_error(_QUALIFIED_MSG, _NAME_RE["qualified"], "MyName", "my.name",
                                                   "123-abc") + " with an optional DNS subdomain prefix and '/' "
                "(e.g. 'example.com/MyName')",)
    out = []
    if prefix is not None:
        out += ["prefix part " + m for m in dns1123_subdomain(prefix)]
    if not name:
        out.append("name part must be non-empty")
    elif len(name) > QUALIFIED_NAME_MAX:
        out.append("name part " + max_len_error(QUALIFIED_NAME_MAX))
    if name and not _is_qualified_part(name):
        out.append("name part " + _regex_error(_QUALIFIED_MSG, _NAME_RE["qualified"], "MyName", "my.name", "123-abc"))
    return tuple(out)


_remembered_qualified_name = functools.lru_cache(maxsize=4096)(_qualified_name)


def label_value(value: str) -> list[str]:
    if isinstance(value, str) and len(value) <= _REMEMBERED_CHARS:
        return list(_remembered_label_value(value))
    return list(_label_value(value))


def _label_value(value: str) -> tuple[str, ...]:
    return tuple(_format(value, LABEL_VALUE_MAX, not value or _is_qualified_part(value), _LABEL_VALUE_MSG,
                         "label-value", "MyValue", "my_value", "12345"))


_remembered_label_value = functools.lru_cache(maxsize=4096)(_label_value)


def port_number(value: int) -> list[str]:
    return [] if 1 <= value <= 65535 else ["must be between 1 and 65535, inclusive"]


def port_name(value: str) -> list[str]:
    """IsValidPortName: an IANA_SVC_NAME."""
    out = []
    if len(value) > 15:
        out.append("must be no more than 15 characters")
    if not value or any(c not in _LABEL_CHARS for c in value):
        out.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not any(c in _LOWER_LETTERS for c in value):
        out.append("must contain at least one letter (a-z)")
    if "--" in value:
        out.append("must not contain consecutive hyphens")
    if value.startswith("-") or value.endswith("-"):
        out.append("must not begin or end with a hyphen")
    return out


def env_var_name(value: str) -> list[str]:
    """IsRelaxedEnvVarName (RelaxedEnvironmentVariableValidation, on by default since v1.32)."""
    if not value or "=" in value or any(not " " <= c <= "~" for c in value):
        return [_ENV_MSG]
    return []


def config_map_key(value: str) -> list[str]:
    valid = bool(value) and all(c in _CONFIG_KEY_CHARS for c in value)
    out = _format(value, DNS1123_SUBDOMAIN_MAX, valid, _CONFIG_KEY_MSG, "config-key", "key.name", "KEY_NAME",
                  "key-name")
    if value == ".":
        out.append("must not be '.'")
    elif value == "..":
        out.append("must not be '..'")
    elif value.startswith(".."):
        out.append("must not start with '..'")
    return out


def path_segment_name(value: str) -> list[str]:
    """IsValidPathSegmentName: what RBAC objects and scale targets are named with."""
    if value in (".", ".."):
        return [f"may not be '{value}'"]
    return [f"may not contain '{c}'" for c in ("/", "%") if c in value]
