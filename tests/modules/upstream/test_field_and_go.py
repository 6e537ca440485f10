"""The port layer's shared contract: apimachinery's field.Error wording, Go's %q and strconv.Atoi."""
from __future__ import annotations

import pytest

from modules.upstream import field
from modules.core.vocabulary.go import atoi, go_quote, go_value, is_ascii_digits, is_duration


@pytest.mark.parametrize("error, text", [
    (field.invalid("spec.minAvailable", "two", "must be an integer"),
     'spec.minAvailable: Invalid value: "two": must be an integer'),
    (field.invalid("spec.replicas", -1, "must be greater than or equal to 0"),
     "spec.replicas: Invalid value: -1: must be greater than or equal to 0"),
    (field.invalid("spec.suspend", True, "x"), "spec.suspend: Invalid value: true: x"),
    (field.invalid("spec.x", None, "x"), "spec.x: Invalid value: null: x"),
    (field.required("metadata.name"), "metadata.name: Required value"),
    (field.required("metadata.name", "name or generateName is required"),
     "metadata.name: Required value: name or generateName is required"),
    (field.not_supported("spec.restartPolicy", "Sometimes", ["Always", "Never"]),
     'spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "Never"'),
    (field.forbidden("spec.x", "may not be set"), "spec.x: Forbidden: may not be set"),
    (field.too_long("metadata.name", 63), "metadata.name: Too long: may not be more than 63 bytes"),
    (field.too_many("spec.items", 5, 4), "spec.items: Too many: 5: must have at most 4 items"),
    (field.duplicate("spec.tasks[1].name", "a"), 'spec.tasks[1].name: Duplicate value: "a"'),
    (field.not_found("spec.volumes", "data"), 'spec.volumes: Not found: "data"'),
    (field.invalid("metadata.labels", {"b": "2", "a": "1"}, "x"),
     'metadata.labels: Invalid value: map[string]string{"a":"1", "b":"2"}: x'),
])
def test_field_errors_render_as_apimachinery_words_them(error, text):
    assert error.error() == text
    assert error.problem() == (error.field, text.split(": ", 1)[1])


def test_required_and_forbidden_never_print_their_value():
    error = field.FieldError(field.ErrorType.REQUIRED, "spec.a", "ignored", "why")
    assert error.message() == "Required value: why"


@pytest.mark.parametrize("text, quoted", [
    ("plain", '"plain"'),
    ('say "hi"\\', '"say \\"hi\\"\\\\"'),
    ("tab\tnew\nline", '"tab\\tnew\\nline"'),
    ("\x1b]0;pwned\x07", '"\\x1b]0;pwned\\a"'),
    ("\x7f", '"\\x7f"'),
    ("é日本", '"é日本"'),
    ("\u200b", '"\\u200b"'),
    ("\U000e0001", '"\\U000e0001"'),
    ("\ud800", '"\\ufffd"'),
])
def test_go_quote_escapes_as_strconv_quote(text, quoted):
    assert go_quote(text) == quoted


def test_go_value_prints_numbers_and_booleans_bare():
    assert [go_value(v) for v in (3, 1.5, False, "x")] == ["3", "1.5", "false", '"x"']


@pytest.mark.parametrize("text, value", [
    ("5", 5), ("+500", 500), ("-7", -7), ("007", 7),
    ("9223372036854775807", 2**63 - 1), ("-9223372036854775808", -(2**63)),
    ("9223372036854775808", None), (" 5", None), ("5 ", None), ("", None), ("+", None), ("--1", None),
    ("５", None), ("²", None), ("٣", None), ("1_000", None), ("1e3", None), ("0x10", None),
    ("9" * 5000, None),
])
def test_atoi_follows_strconv(text, value):
    assert atoi(text) == value


def test_atoi_32_bit_range():
    assert atoi("2147483647", bits=32) == 2**31 - 1
    assert atoi("2147483648", bits=32) is None
    assert atoi("-2147483648", bits=32) == -(2**31)


def test_ascii_digits_refuse_other_scripts():
    assert is_ascii_digits("0123") and not is_ascii_digits("²") and not is_ascii_digits("٣")
    assert not is_ascii_digits("")


@pytest.mark.parametrize("text, valid", [
    ("0", True), ("-0", True), ("1h30m", True), (".5s", True), ("1.5µs", True), ("2.ms", True),
    ("", False), ("1", False), ("1d", False), ("1h ", False), ("1h\n", False), ("h", False),
])
def test_is_duration_follows_time_parse_duration(text, valid):
    assert is_duration(text) is valid


def test_type_invalid_is_its_own_code_worded_as_invalid():
    """apimachinery's TypeInvalid and Invalid print alike; a port tells them apart by code."""
    assert field.ErrorType.TYPE_INVALID is not field.ErrorType.INVALID
    assert len({t.value for t in field.ErrorType}) == len(field.ErrorType)
    error = field.type_invalid("spec.minAvailable", "string", "spec.minAvailable in body must be of type integer")
    assert error.error().startswith('spec.minAvailable: Invalid value: "string": ')
