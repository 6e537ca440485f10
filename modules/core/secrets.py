"""What looks like a credential, so that it is never written to ``deploy/`` nor shown in a message.

``redact`` hides credentials inside text (every error message passes through it);
``find_credentials`` walks a rendered object or chart values and names each credential-looking
value. The policy rule ``no-secrets-in-configmaps`` and ``render`` share these definitions.
"""
from __future__ import annotations

import functools
import re
from typing import Any, Iterator

SECRET_WORDS = {"password", "passwd", "pwd", "secret", "token", "apikey", "credential", "credentials",
                "privatekey", "accesskey", "secretkey", "passphrase", "bearer"}
SECRET_PAIRS = {("api", "key"), ("private", "key"), ("access", "key"), ("secret", "key"), ("client", "secret"),
                ("auth", "token"), ("pass", "word")}
VALUE_PATTERNS = [
    (re.compile(r"-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----"), "a PEM private key"),
    (re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), "an AWS access key id"),
    (re.compile(r"\bgh[pousr]_[A-Za-z0-9]{36,}\b"), "a GitHub token"),
    (re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}"), "a Slack token"),
    (re.compile(r"\b[a-z][a-z0-9+.-]*://[^/\s:@]+:[^/\s@]+@"), "credentials in a URL"),
    (re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]+"), "a JSON Web Token"),
]
# A secret-like key whose last word says the value names or points at the secret, not holds it.
_POINTER_WORDS = {"name", "names", "ref", "refs", "file", "files", "path", "paths", "dir", "namespace", "mount",
                  "selector", "enabled", "type", "mode", "id", "key", "keys", "provider", "store"}
REFERENCE = re.compile(r"^\s*(?:$|[{$/<]|\"?\$\{|.*(?:secretRef|secretKeyRef|SecretName|valueFrom))")

_URL_USERINFO = re.compile(r"\b([a-z][a-z0-9+.-]*://)[^/\s@]*@", re.I)
# `password=...` on a command line and `"password": "..."` in JSON; not `path.password: message`,
# the shape of our own messages.
_KEY_VALUE = re.compile(r"(?i)\b([A-Za-z0-9_.-]*(?:password|passwd|secret|token|apikey|api_key|credential)"
                        r"[A-Za-z0-9_.-]*)(\s*=\s*\"?|\"\s*:\s*\")([^\s\",;}]+)")
REDACTED = "<redacted>"


def words(key: str) -> list[str]:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", key)
    return [w.lower() for w in re.split(r"[^A-Za-z0-9]+", spaced) if w]


def secret_like_key(key: str) -> bool:
    parts = words(key)
    return bool(set(parts) & SECRET_WORDS) or any(pair in SECRET_PAIRS for pair in zip(parts, parts[1:])) \
        or "".join(parts) in SECRET_WORDS


@functools.lru_cache(maxsize=4096)
def holds_secret(key: str) -> bool:
    """A key whose value is the secret itself (``password``, ``apiKey``), not its name
    (``secretName``, ``passwordFile``, ``tokenSecretRef``)."""
    parts = words(key)
    return secret_like_key(key) and bool(parts) and parts[-1] not in _POINTER_WORDS


_ANY_PATTERN = re.compile("|".join(f"(?:{p.pattern})" for p, _ in VALUE_PATTERNS))


def credential_in(value: str) -> str | None:
    """What credential the text holds, by its shape alone, or None."""
    if not _ANY_PATTERN.search(value):   # one pass for the usual string (thousands of node names)
        return None
    for pattern, what in VALUE_PATTERNS:
        if pattern.search(value):
            return what
    return None


def redact(text: str) -> str:
    """The text with every credential-looking part replaced by <redacted>."""
    if not text:
        return text
    text = _URL_USERINFO.sub(lambda m: m.group(1) + REDACTED + "@", text)
    for pattern, _ in VALUE_PATTERNS:
        text = pattern.sub(REDACTED, text)
    return _KEY_VALUE.sub(lambda m: m.group(1) + m.group(2) + REDACTED, text)


def redact_value(value: Any, depth: int = 0) -> Any:
    """A copy of a user value for messages: secret-like keys' values and credentials hidden."""
    if depth > 20:
        return "..."
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: REDACTED if isinstance(k, str) and holds_secret(k) and isinstance(v, (str, int)) and v != ""
                else redact_value(v, depth + 1) for k, v in list(value.items())[:50]}
    if isinstance(value, list):
        return [redact_value(v, depth + 1) for v in value[:50]]
    return value


def find_credentials(value: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """``(path, what)`` for each credential-looking value below ``value`` (iterative: any depth)."""
    stack = [(path, None, value)]
    while stack:
        where, key, current = stack.pop()
        if isinstance(current, dict):
            if "valueFrom" in current or "secretKeyRef" in current:
                continue   # a reference to a Secret, the right way
            name, literal = current.get("name"), current.get("value")
            if isinstance(name, str) and isinstance(literal, str) and holds_secret(name) and literal.strip() \
                    and not REFERENCE.match(literal):   # an env entry {name: DB_PASSWORD, value: ...}
                yield (f"{where}.value" if where else "value"), f"a literal value for {name!r}"
                continue
            for k, v in current.items():
                stack.append((f"{where}.{k}" if where else str(k), str(k), v))
        elif isinstance(current, list):
            stack.extend((f"{where}[{i}]", key, v) for i, v in enumerate(current))
        elif isinstance(current, str):
            what = credential_in(current)
            if what is None and key is not None and holds_secret(key) and current.strip() \
                    and not REFERENCE.match(current) and "\n" not in current.strip():
                what = f"a literal value for {key!r}"
            if what:
                yield where, what
