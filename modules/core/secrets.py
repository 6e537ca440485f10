"""What looks like a credential, so that it is never written to ``deploy/`` nor shown in a message.

``redact`` hides credentials inside text (every error message passes through it);
``find_credentials`` walks a rendered object or chart values and names each credential-looking
value. The policy rule ``no-secrets-in-configmaps`` and ``render`` share these definitions.
"""
from __future__ import annotations

import functools
import re
from typing import Any, Iterator

import re2

SECRET_WORDS = {"password", "passwd", "pwd", "secret", "token", "apikey", "credential", "credentials",
                "privatekey", "accesskey", "secretkey", "passphrase", "bearer"}
SECRET_PAIRS = {("api", "key"), ("private", "key"), ("access", "key"), ("secret", "key"), ("client", "secret"),
                ("auth", "token"), ("pass", "word"), ("signing", "key"), ("encryption", "key"), ("session", "key"),
                ("master", "key"), ("auth", "header"), ("key", "data")}
# Last words that hold a secret only after another word: `DB_PASS`, `REDIS_AUTH` (not `auth: none`).
SECRET_LAST_WORDS = {"pass", "auth"}
ENCODED = "a base64-encoded credential"
# Credentials recognised by their shape alone. URLs: any scheme in any case, userinfo with or
# without a password (`https://TOKEN@host`; `ssh://git@host`, the usual SSH user, is no secret),
# and `user:password@host.domain` written without a scheme (chart repositories, registries).
ASSIGNMENT = "a credential in a variable assignment"   # `TOKEN=get()` in code is none: a call follows
VALUE_PATTERNS: list[tuple[str, int, str]] = [   # (pattern, re flags, what it is)
    (r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----", 0, "a PEM private key"),
    (r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|A3T[A-Z0-9])[0-9A-Z]{16}\b", 0, "an AWS access key id"),
    (r"\bgh[pousr]_[A-Za-z0-9]{30,}|\bgithub_pat_[A-Za-z0-9_]{22,}", 0, "a GitHub token"),
    (r"\bgl(?:pat|dt|rt|ptt|cbt|oas|imt|agent|ft|soat)-[A-Za-z0-9_-]{16,}", 0, "a GitLab token"),
    (r"\bxox[abposre]-[A-Za-z0-9-]{10,}|\bxapp-\d-[A-Za-z0-9-]{10,}"
     r"|hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]{16,}", re.I, "a Slack token"),
    (r"\bAIza[0-9A-Za-z_-]{35}\b", 0, "a Google API key"),
    (r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}|\bsk-(?:proj-|ant-|svcacct-)?[A-Za-z0-9_-]{20,}", 0,
     "an API secret key"),
    (r"\b(?:npm_[A-Za-z0-9]{36}|hf_[A-Za-z0-9]{30,}|pypi-AgE[A-Za-z0-9_-]{50,}|dop_v1_[a-f0-9]{64}"
     r"|SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}|shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32})", 0, "an API token"),
    (r"\bAccountKey=[A-Za-z0-9+/=]{20,}|\bSharedAccessSignature=|[?&]sig=[A-Za-z0-9%+/=]{20,}", re.I,
     "an Azure key or signature"),
    (r"\b[a-z][a-z0-9+.-]*:(?:\\?/){2}(?!git@)[^/\\\s@?#\"'<>]+@", re.I, "credentials in a URL"),
    # scheme-relative (`//user:pw@host`) and a path that swallowed a slash (`https:/user:pw@host`)
    (r"(?:(?<![\w:/])//|\b[a-z][a-z0-9+.-]*:/)[^/\s@?#\"'<>:]+:[^/\s@?#\"'<>]+@", re.I,
     "credentials in a URL"),
    (r"(?<![\w.:/@%+-])(?!mailto:)[A-Za-z0-9._~%+-]+:[^\s/@:\"'<>]+@"
     r"(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+|localhost\b)", 0,
     "credentials in an address"),
    (r"[?&][A-Za-z0-9_.-]*(?:password|passwd|secret|token|api[_-]?key|access[_-]?key)=(?![$<{])[^&\s#\"'<>]+",
     re.I, "a credential in a URL query"),
    # `DB_PASSWORD=...`, `export HF_TOKEN=...` in a shell line: the variable's name ends in the word
    (r"(?<![\w.-])[A-Za-z0-9_]*(?:password|passwd|secret|token|api_?key|access_?key|secret_?key|_pass|_auth"
     r"|signing_?key|encryption_?key|session_?key|master_?key|auth_?header)"
     r"=(?![$<{/\"'])[^\s\"';&|()\[\]]{4,}(?![^\s;&|\"'])", re.I, ASSIGNMENT),
    (r"(?<![^\s\"'])(?:-u|--user)(?:=|\s+)[^\s:\"'$<{-][^\s:\"']*:(?![$<{])[^\s\"']+", 0,
     "a user and password option"),
    (r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]+", 0, "a JSON Web Token"),
    (r"\b(?:proxy-)?authorization\s*[:=]\s*\"?(?:(?:bearer|basic|token|digest|apikey)\s+"
     r"(?![$<{])[A-Za-z0-9._~+/=-]{8,}|(?![$<{])[A-Za-z0-9._~+/=-]{24,})"
     r"|\bbearer\s+(?![$<{])[A-Za-z0-9._~+/=-]{16,}", re.I, "an Authorization header"),
    (r"(?<![^\s\"'])--?[a-z0-9_.-]*(?:password|passwd|secret|token|api-?key|access-?key)"
     r"(?:=|\s+)(?![$<{-])[^\s\"']+", re.I, "a password option"),
    # Command lines whose password option is one letter: `mysql -pVALUE`, `docker login -p VALUE`,
    # `sshpass -p VALUE`, `redis-cli -a VALUE` (a variable, `-p` alone or `-P 3306` is none).
    (r"\b(?:mysql|mysqldump|mysqladmin|mariadb)\b[^\n|;&]*?\s-p(?![$<{\s\"'])[^\s\"']+"
     r"|\bdocker\s+login\b[^\n|;&]*?\s-p(?:=|\s+)(?![$<{-])[^\s\"']+"
     r"|\bsshpass\s+(?:-[a-oq-z]\s+)*-p\s*(?![$<{-])[^\s\"']+"
     r"|\bredis-cli\b[^\n|;&]*?\s-a\s+(?![$<{-])[^\s\"']+", 0, "a password on a command line"),
    # JSON inside a string: `{"password": "..."}`, a .dockerconfigjson's `"auth"`, a kubeconfig's key data
    (r"\"[A-Za-z0-9_.-]*(?:password|passwd|secret|token|api_?key|apikey|access_?key|private_?key)\"\s*:\s*"
     r"\"(?![$<{])(?!true\"|false\"|null\")[^\"\s]{4,}\"|\"auth\"\s*:\s*\"[A-Za-z0-9+/=]{8,}\"", re.I,
     "a credential in JSON"),
    (r"\bclient-key-data[\"']?\s*:[ \t]*[\"']?[A-Za-z0-9+/=]{16,}", 0, "a kubeconfig client key"),
    (r"[?&]X-(?:Amz|Goog)-(?:Signature|Credential)=[A-Za-z0-9%/_.-]{16,}", re.I, "a presigned URL"),
    (r"(?<![\w-])_auth(?:Token)?[ \t]*=[ \t]*(?![$<{])[^\s\"']{8,}", 0, "an npm registry credential"),
    (r"\b(?:x-api-key|private-token|x-auth-token|api-key|x-vault-token)[ \t]*[:=][ \t]*\"?(?![$<{])"
     r"[A-Za-z0-9._~+/=-]{8,}", re.I, "an API key header"),
    (r"(?:^|[\s\"'])[\w.@-]+:(?:\$apr1\$|\$2[aby]\$\d\d\$|\{SHA\}|\$[56]\$)[./A-Za-z0-9$+=]{20,}", 0,
     "an htpasswd line"),
    (r"PuTTY-User-Key-File-\d", 0, "a PuTTY private key"),
    (r"(?:password|passwd|secret|token|api_?key)(?:%3D|%22%3A%22)(?!%24)[^&\s%\"']{4,}"
     r"|%3A%2F%2F[^%\s/@]+%3A[^%\s/@]+%40", re.I, "a URL-encoded credential"),
    # `user:pw@host/repo.git`: an address without a dot in the host, followed by a path
    (r"(?<![\w.:/@%+-])[A-Za-z0-9._~%+-]+:[^\s/@:\"'<>]+@[A-Za-z0-9-]+(?::\d+)?/", 0, "credentials in an address"),
    # base64 of a PEM private key or of registry credentials: decoded and scanned (``_decoded``)
    (r"\b(?:LS0tLS1CRUdJTi|eyJhdXRocyI6|eyAiYXV0aHMiOi)[A-Za-z0-9+/]{8,}={0,2}", 0, ENCODED),
]


@functools.lru_cache(maxsize=None)
def _value_patterns() -> list[tuple[re.Pattern, str]]:
    """VALUE_PATTERNS compiled, on first use: the RE2 pre-check below is built from their text, so a
    run that meets nothing credential-like (the usual `check`) never compiles them."""
    return [(re.compile(pattern, flags), what) for pattern, flags, what in VALUE_PATTERNS]


# A secret-like key whose last word says the value names or points at the secret, not holds it.
_POINTER_WORDS = {"name", "names", "ref", "refs", "file", "files", "path", "paths", "dir", "namespace", "mount",
                  "selector", "enabled", "type", "mode", "id", "key", "keys", "provider", "store"}
REFERENCE = re.compile(r"^\s*(?:$|[{$/<]|\"?\$\{|.*(?:secretRef|secretKeyRef|SecretName|valueFrom))")

REDACTED = "<redacted>"


@functools.lru_cache(maxsize=None)
def _redactions() -> tuple[re.Pattern, re.Pattern]:
    """The userinfo of a URL, and `password=...` on a command line or `"password": "..."` in JSON
    (not `path.password: message`, the shape of our own messages); compiled on first use: a run
    that reports nothing redacts nothing."""
    return (re.compile(r"\b([a-z][a-z0-9+.-]*:(?:\\?/){2})(?!git@)[^/\\\s@?#\"'<>]+@", re.I),
            re.compile(r"\b([A-Za-z0-9_.-]*(?:password|passwd|secret|token|apikey|api_key|credential)"
                       r"[A-Za-z0-9_.-]*)(\s*=\s*\"?|\"\s*:\s*\")([^\s\",;}]+)"))


def _without_userinfo(text: str) -> str:
    return _redactions()[0].sub(lambda m: m.group(1) + REDACTED + "@", text)


_CAMEL = re.compile(r"([a-z0-9])([A-Z])")
_NOT_ALNUM = re.compile(r"[^A-Za-z0-9]+")


def words(key: str) -> list[str]:
    spaced = _CAMEL.sub(lambda m: f"{m.group(1)} {m.group(2)}", key)
    return [w.lower() for w in _NOT_ALNUM.split(spaced) if w]


@functools.lru_cache(maxsize=4096)   # a stack repeats its keys (env names, ConfigMap keys) many times
def secret_like_key(key: str) -> bool:
    parts = words(key)
    return bool(set(parts) & SECRET_WORDS) or any(pair in SECRET_PAIRS for pair in zip(parts, parts[1:])) \
        or "".join(parts) in SECRET_WORDS or (len(parts) > 1 and parts[-1] in SECRET_LAST_WORDS)


@functools.lru_cache(maxsize=4096)
def holds_secret(key: str) -> bool:
    """A key whose value is the secret itself (``password``, ``apiKey``), not its name
    (``secretName``, ``passwordFile``, ``tokenSecretRef``)."""
    parts = words(key)
    # `apiKey`, `--secret-key`, `OPENAI_API_KEY` hold the secret; `tokenKey` names a Secret's key
    return secret_like_key(key) and bool(parts) and (parts[-1] not in _POINTER_WORDS
                                                       or tuple(parts[-2:]) in SECRET_PAIRS)


# One linear-time RE2 pass first (about 40 ms for 10 MB of output, where re takes seconds): the
# patterns without their lookarounds (which RE2 lacks) find a superset; re then decides.
_LOOKAROUND = re.compile(r"\(\?<?!(?:\[[^\]]*\]|[^()\[])*\)")
# Asked as a one-pattern set, which builds no match object: about 1 µs a string instead of 5.
_ANY_SET = re2.Set.SearchSet()
_ANY_SET.Add("|".join(f"(?i:{_LOOKAROUND.sub('', p)})" if flags & re.I else f"(?:{_LOOKAROUND.sub('', p)})"
                      for p, flags, _ in VALUE_PATTERNS))
_ANY_SET.Compile()

# RE2 reads UTF-8 and gives \s, \d, \w, \b and case folding their ASCII meaning, where `re` gives
# them their Unicode one (its \s also holds \v and \x1c-\x1f). Other text reaches RE2 with a stand-in
# for each such character that these patterns treat as `re` treats the character, so the pre-check
# still finds every match (and a lone surrogate, from a file name, encodes).
_RE2_READS_OTHERWISE = "\x0b\x1c\x1d\x1e\x1f"
_READ_OTHERWISE = re.compile(f"[{_RE2_READS_OTHERWISE}]")
_FOLDS_ONTO_ASCII = {"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"}   # `re` with re.I: İ ı ſ K


class _StandIns(dict):
    """The ``str.translate`` table: the stand-in of each character as it is first met."""

    def __missing__(self, code: int) -> str:
        char = chr(code)
        if code < 128 and char not in _RE2_READS_OTHERWISE:
            out = char
        elif char.isspace():
            out = " "
        else:
            out = _FOLDS_ONTO_ASCII.get(char) or ("0" if char.isdecimal() else
                                                  "a" if char.isalnum() or char == "_" else "~")
        if len(self) < 65536:   # text with every code point in it keeps the table bounded
            self[code] = out
        return out


_STAND_INS = _StandIns()


def _shape_possible(text: str) -> bool:
    """Whether some pattern of VALUE_PATTERNS may match ``text`` (False: none does)."""
    if not text.isascii() or (not text.isprintable() and _READ_OTHERWISE.search(text)):   # printable: the usual name
        text = text.translate(_STAND_INS)
    return _ANY_SET.Match(text) is not None


def credential_in(value: str) -> str | None:
    """What credential the text holds, by its shape alone, or None."""
    # A rendered stack repeats its short strings (keys, kinds, labels): 19,140 scans, 1,687 distinct
    # strings at 16,384 nodes. Short ones are remembered; long ones (scripts) are scanned each time.
    if len(value) > 256:
        return _credential_in(value)
    if value in _CLEAN:
        return None
    what = _credential_in(value)
    if what is None:
        _remember(_CLEAN, value)
    return what


def _remember(known: set[str], value: str) -> None:
    if len(known) >= 16384:
        known.clear()
    known.add(value)


# Short strings found clean, and keys that do not hold a secret by their name: ``find_credentials``
# passes the usual key and value with a set lookup each (about 60,000 of them at 16,384 nodes).
_CLEAN: set[str] = set()
_PLAIN_KEYS: set[str] = set()


def _credential_in(value: str) -> str | None:
    if not _shape_possible(value):   # one pass for the usual string (thousands of node names)
        return None
    for pattern, what in _value_patterns():
        match = pattern.search(value)
        if match and (what != ENCODED or _decoded(match.group())):
            return what
    return None


def _decoded(text: str) -> bool:
    """Whether base64 ``text`` decodes to a private key or to registry credentials (a base64
    certificate, which starts the same way, is no secret)."""
    import base64
    import binascii

    try:
        plain = base64.b64decode(text[:8192] + "=" * (-len(text[:8192]) % 4)).decode("utf-8", "replace")
    except (binascii.Error, ValueError):
        return False
    return "PRIVATE KEY" in plain or '"auth"' in plain or '"password"' in plain


def redact_shapes(text: str) -> str:
    """The text with every part that looks like a credential by its shape alone replaced by
    <redacted> (not ``"password": "..."``: a report may show a key's name beside its value)."""
    if not text or not _shape_possible(text):
        return text
    text = _without_userinfo(text)
    for pattern, _ in _value_patterns():
        text = pattern.sub(REDACTED, text)
    return text


def redact(text: str) -> str:
    """The text with every credential-looking part replaced by <redacted>."""
    if not text:
        return text
    text = _redactions()[1].sub(lambda m: m.group(1) + m.group(2) + REDACTED, _without_userinfo(text))
    if not _shape_possible(text):   # the usual message: no shape to replace one by one
        return text
    for pattern, _ in _value_patterns():
        text = pattern.sub(REDACTED, text)
    return text


# Characters a terminal acts on rather than shows: C0 controls but line feed and tab, DEL, C1
# controls (ESC's 8-bit forms), and the bidirectional overrides that reorder what is shown.
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _escaped(match: re.Match) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escape_controls(text: str) -> str:
    """``text`` with every character a terminal would act on (``ESC ]0;title BEL``, ``ESC [2J``,
    a carriage return, a bidirectional override) written as a visible escape (``\\x1b``); line
    feeds and tabs stay. Everything trainstack prints passes through it (modules/cli.py)."""
    return _CONTROLS.sub(_escaped, text) if _CONTROLS.search(text) else text


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
        return [REDACTED if i in _flag_values(value) else redact_value(v, depth + 1) for i, v in enumerate(value[:50])]
    return value


_FLAG = re.compile(r"--?([A-Za-z][A-Za-z0-9_.-]*)")


def _flag_values(items: list) -> set[int]:
    """Indexes of list items that are the value of the secret-like flag before them
    (``["--password", "hunter2"]`` in a container's args)."""
    out = set()
    for i in range(len(items) - 1):
        flag, value = items[i], items[i + 1]
        if isinstance(flag, str) and isinstance(value, str) and value.strip() and not value.startswith("-") \
                and not REFERENCE.match(value):
            match = _FLAG.fullmatch(flag)
            if match and holds_secret(match.group(1)):
                out.add(i + 1)
    return out


def find_credentials(value: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """``(path, what)`` for each credential-looking value below ``value`` (iterative: any depth)."""
    stack = [(path, None, value)]
    clean, plain_keys = _CLEAN, _PLAIN_KEYS
    while stack:
        where, key, current = stack.pop()
        if isinstance(current, dict):
            if "valueFrom" in current or "secretKeyRef" in current:
                continue   # a reference to a Secret, the right way
            literal = current.get("value")   # most mappings have none: one lookup for them
            if isinstance(literal, str):
                name = current.get("name")
                if isinstance(name, str) and holds_secret(name) and literal.strip() \
                        and not REFERENCE.match(literal):   # an env entry {name: DB_PASSWORD, value: ...}
                    yield (f"{where}.value" if where else "value"), f"a literal value for {name!r}"
                    continue
            for k, v in current.items():
                if k not in clean:
                    what = credential_in(k) if isinstance(k, str) else None
                    if what:   # a key is written out too (a StorageClass parameter, a switch's name); the
                        yield where or "(top level)", f"{what} in a key"   # path stops above it: never shown
                if isinstance(v, str) and v in clean and k in plain_keys:
                    continue   # the usual value: clean, under a key that holds no secret
                stack.append((f"{where}.{k}" if where else str(k), str(k), v))
        elif isinstance(current, list):
            flagged = _flag_values(current) if len(current) > 1 else ()   # a flag needs a value after it
            for i in flagged:
                yield f"{where}[{i}]", f"a literal value after {current[i - 1]!r}"
            stack.extend((f"{where}[{i}]", key, v) for i, v in enumerate(current)
                         if i not in flagged and not (isinstance(v, str) and v in clean and
                                                      (key is None or key in plain_keys)))
        elif isinstance(current, str):
            what = credential_in(current)
            if what is None and key is not None and holds_secret(key) and current.strip() \
                    and not REFERENCE.match(current) and "\n" not in current.strip():
                what = f"a literal value for {key!r}"
            if what:
                yield where, what
            elif key is not None and len(key) <= 256 and not holds_secret(key):
                _remember(plain_keys, key)
