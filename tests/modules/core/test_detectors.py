"""The one credential detector (modules/core/secrets.py) and the one input-pattern compiler
(modules/core/patterns.py), as tables: what each must catch, what must pass, and how fast."""
from __future__ import annotations

import re
import signal
import sys
from contextlib import contextmanager

import pytest
from hypothesis import given, settings, strategies as st

from modules.core.patterns import compile_go, go_problem
from modules.core.secrets import ASSIGNMENT, VALUE_PATTERNS, credential_in, find_credentials, redact

PLANTED = "hunter2pw"

CAUGHT = [
    ("https://alice:hunter2pw@git.example.com/x.git", "credentials in a URL"),
    ("HTTPS://alice:hunter2pw@git.example.com/x.git", "credentials in a URL"),
    ("Https://hunter2pw@git.example.com", "credentials in a URL"),
    ("oci://bob:hunter2pw@registry.example.com/charts", "credentials in a URL"),
    ("bob:hunter2pw@registry.example.com/charts", "credentials in an address"),
    ("ghp_" + "hunter2pw" * 4, "a GitHub token"),
    ("github_pat_hunter2pw" + "A" * 20, "a GitHub token"),
    ("glpat-hunter2pwhunter2pwXX", "a GitLab token"),
    ("AKIAHUNTER2PWXXXXXXX", "an AWS access key id"),
    ("xoxb-123456-hunter2pw", "a Slack token"),
    ("https://hooks.slack.com/services/T000/B000/hunter2pwhunter2pw", "a Slack token"),
    ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJodW50ZXIyIn0.hunter2pw", "a JSON Web Token"),
    ("sk-proj-hunter2pwhunter2pwhunter2pw", "an API secret key"),
    ("-----BEGIN OPENSSH PRIVATE KEY-----", "a PEM private key"),
    ("--password=hunter2pw", "a password option"),
    ("train --api-key hunter2pw", "a password option"),
    ("Authorization: Bearer hunter2pwhunter2pw", "an Authorization header"),
    ("Bearer hunter2pwhunter2pwhunter2pw", "an Authorization header"),
]
# Whitespace and case folds that are Unicode's to Python's `re` but not to RE2 (a message shows
# them as written; their repr, escaped, holds no credential's shape).
CAUGHT_UNICODE = [
    ("Bearer\u00a0hunter2pwhunter2pw", "an Authorization header"),
    ("bearer\x0bhunter2pwhunter2pw", "an Authorization header"),
    ("train --password\u2003hunter2pw", "a password option"),
    ("DB_PA\u017fSWORD=hunter2pw", ASSIGNMENT),
]

PASSES = ["https://kubernetes.default.svc", "ssh://git@github.com/org/repo.git", "git@github.com:org/repo.git",
          "nginx:1.25@sha256:0123456789abcdef", "registry.example.com:5000/team/image:v1", "mailto:ops@example.com",
          "ops@example.com", "--password=$(DB_PASSWORD)", "--password-file=/etc/secret/pw", "--token-path /var/run/x",
          "Authorization: Bearer $(TOKEN)", "gpu-[0001-0032]", "authorization: {mode: Webhook}"]


@pytest.mark.parametrize("text,what", CAUGHT)
def test_caught_and_redacted(text, what):
    assert credential_in(text) == what
    assert PLANTED not in redact(f"error: x: {text!r} and {text}")


@pytest.mark.parametrize("text,what", CAUGHT_UNICODE)
def test_caught_and_redacted_with_unicode_whitespace_and_folds(text, what):
    assert credential_in(text) == what
    assert PLANTED not in redact(f"error: x: {text}")


@pytest.mark.parametrize("text", PASSES)
def test_not_a_credential(text):
    assert credential_in(text) is None


@pytest.mark.parametrize("text", [t for t, _ in CAUGHT] + PASSES + [
    "error: password=hunter2pw at https://alice:hunter2pw@git.example.com", "spec.replicas: expected an integer"])
def test_redact_skips_the_one_by_one_patterns_only_where_none_can_match(text):
    """``redact`` asks the RE2 superset first; the answer is what every pattern in turn gives."""
    from modules.core import secrets

    text = f"error: x: {text!r} and {text}"
    userinfo, key_value = secrets._redactions()
    expected = key_value.sub(lambda m: m.group(1) + m.group(2) + secrets.REDACTED,
                             userinfo.sub(lambda m: m.group(1) + secrets.REDACTED + "@", text))
    for pattern, _ in secrets._value_patterns():
        expected = pattern.sub(secrets.REDACTED, expected)
    assert redact(text) == expected


# Characters RE2 reads otherwise than `re` does, and credential fragments to put them between.
_PIECES = ["bearer", "Bearer", "token", "TO", "KEN", "password", "pa", "ss", "=", ":", "@", "//", "https", "-u",
           "--password", "x", "hunter2pw", "abcdefghij0123456789", "sk-", "xapp-", "AKIA", " ", "\t", "\n",
           "\x0b", "\x1c", "\x1f", "\u00a0", "\u2003", "\u3000", "\u0663", "\u00e9", "\u0130", "\u0131",
           "\u017f", "\u212a", "\ud800", "\udcff", "\u00b5", "_", ".", "-"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=14).map("".join))
def test_the_re2_pre_check_misses_no_match_of_the_patterns(text):
    """The one RE2 pass rules a text out only where no pattern matches it, whatever its characters;
    and a lone surrogate (a file name read with surrogateescape) is no error."""
    from modules.core import secrets

    if not secrets._shape_possible(text):
        assert [p for p, flags, _ in VALUE_PATTERNS if re.search(p, text, flags)] == []
    redact(text)


def test_the_case_folds_onto_ascii_letters_are_those_of_re():
    """`_FOLDS_ONTO_ASCII` lists every character that `re` matches to an ASCII letter under re.I."""
    from modules.core import secrets

    letters = re.compile("[a-z]", re.I)
    found = {}
    for code in range(128, sys.maxunicode + 1):
        char = chr(code)
        if any(c.isascii() for c in char.lower() + char.upper() + char.casefold()) and letters.fullmatch(char):
            found[char] = next(c for c in "abcdefghijklmnopqrstuvwxyz" if re.fullmatch(c, char, re.I))
    assert found == secrets._FOLDS_ONTO_ASCII


def test_a_flag_and_its_value_as_two_list_items():
    found = list(find_credentials({"args": ["--db-password", PLANTED, "--port", "5432"]}))
    assert found == [("args[1]", "a literal value after '--db-password'")]
    assert list(find_credentials({"args": ["--db-password", "$(DB_PASSWORD)"]})) == []


def test_findings_are_the_same_with_the_remembered_clean_strings_warm():
    """``find_credentials`` passes strings it found clean before (and keys that hold no secret by
    their name) without a stack entry: the findings, their paths and their order do not change."""
    from modules.core import secrets

    warm_up = {"name": "x", "value": "hunter2pw", "password": "plain", "args": ["--port", "hunter2pw"],
               "env": [{"name": "MODE", "value": "hunter2pw"}], "hunter2pw": {"token": "$(T)"}}
    document = {"spec": {"password": "hunter2pw", "containers": [{"env": [
        {"name": "DB_PASSWORD", "value": "hunter2pw"}, {"name": "MODE", "value": "hunter2pw"}],
        "args": ["--db-password", "hunter2pw", "hunter2pw", "--token", "$(T)"]}]},
        "data": {"url": "https://alice:hunter2pw@git.example.com/x.git", "plain": "hunter2pw",
                 "apiKey": "hunter2pw", "tokens": ["hunter2pw", "x"], 7: "hunter2pw", "7": "hunter2pw"}}
    secrets._CLEAN.clear()
    secrets._PLAIN_KEYS.clear()
    cold = list(find_credentials(document, "obj"))
    list(find_credentials(warm_up))
    list(find_credentials(document))
    assert list(find_credentials(document, "obj")) == cold
    assert {what for _, what in cold} >= {"a literal value for 'password'", "a literal value for 'DB_PASSWORD'",
                                         "a literal value after '--db-password'", "credentials in a URL",
                                         "a literal value for 'apiKey'"}


@contextmanager
def bounded(cpu_seconds: int = 20):
    """A spin guard like the hostile corpus' (not a timing assertion): backtracking never ends.
    CPU time, which a busy machine does not use up."""
    def stop(signum, frame):
        raise TimeoutError("did not end: not linear")
    old = signal.signal(signal.SIGPROF, stop)
    signal.setitimer(signal.ITIMER_PROF, cpu_seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, old)


def test_the_scan_of_large_output_ends():
    text = "  name: gpu-node-00001\n  labels: {a: b}\n" * 250_000   # ten megabytes
    with bounded():
        assert credential_in(text) is None


GO_REFUSES = [("(?=a)", "lookaround"), ("(?<!a)b", "lookaround"), ("(a)\\1", "backreferences"),
              ("(?>a)", "atomic groups"), ("a++", "possessive"), ("\\Z", "\\Z"), ("\\C", "\\C"),
              ("a{1001}", "does not compile"), ("gpu-[0-9", "does not compile")]


@pytest.mark.parametrize("pattern,why", GO_REFUSES)
def test_go_refuses(pattern, why):
    assert why in go_problem(pattern)


def test_go_semantics_and_linear_time():
    assert go_problem("^gpu-0[0-7][0-9]$") is None
    assert compile_go("gpu-0").search("xgpu-01") and not compile_go("gpu-0").fullmatch("xgpu-01")
    with bounded():   # backtracking would take longer than the universe
        assert compile_go("(a+)+$").search("a" * 100_000 + "b") is None


@pytest.mark.parametrize("pattern", ["gpu-0", "^node-(0[0-4][0-9]|05[01])$", "^a|b$", "[[:digit:]]+", "", "x*",
                                     "(?i)GPU", "^$", "é+"])
@pytest.mark.parametrize("text", ["gpu-01", "xgpu-0", "node-042", "node-0512", "", "ab", "b", "123", "Gpu", "é"])
def test_the_yes_no_tests_agree_with_the_match_objects(pattern, text):
    """found_in and whole (one-pattern RE2 sets, the hot loops' path) say what search and fullmatch say."""
    compiled = compile_go(pattern)
    assert compiled.found_in(text) == (compiled.search(text) is not None)
    assert compiled.whole(text) == (compiled.fullmatch(text) is not None)
