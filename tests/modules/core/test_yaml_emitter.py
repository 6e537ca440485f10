"""``yamlio.dump`` writes the usual rendered object itself: every document must be byte-identical to
PyYAML's C dumper (``yamlio.c_dump``), whatever the keys and strings hold. The golden tests compare
whole stacks; here odd scalars and shapes are compared one by one and at random."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from modules.core import yamlio

# Strings whose style libyaml decides by its indicators, by what they would read back as, or by
# their length; and strings it writes in styles ``dump`` leaves to the C dumper.
TRICKY = [
    "", " ", "a", "a ", " a", "a b", "a  b", "-", "--", "---", "---x", "-x", "- x", "--flag", "-1", "-1.5", "+1",
    "?", "?x", "? x", ":", ":x", ": x", "a:", "a:b", "a: b", "a::", "#", "#x", "a#b", "a #b", "a# b", ",a", "a,b",
    "[", "a[0]", "]", "{", "a{b}", "}", "&a", "*a", "!a", "|", "a|b", ">", "'", "a'b", "'a'", '"', 'a"b', "%", "@a",
    "`a", "a`", "...", "..", "...x", ".5", ".", "./x", "~", "null", "Null", "NULL", "nul", "true", "True", "TRUE",
    "false", "yes", "no", "on", "off", "y", "n", "Y", "=", "<<", "<", "0", "00", "012", "0x1F", "0o17", "0b101",
    "1_000", "1e3", "1.0", "1.", ".inf", "-.inf", ".nan", ".NaN", "1:30", "190:20:30", "2024-01-01",
    "2024-01-01 10:00:00", "2024-1-1", "12:", "^gpu-00(0[1-9]|[12][0-9]|3[0-2])$", "app.kubernetes.io/name",
    "$(VAR)", "${VAR}", "a\tb", "\ta", "a\nb", "a\n", "\n", "a\n\nb\n", " a\nb", "é", "naïve", "a\u2028b", "\x85",
    "\x00", "\x7f", "\ufeff", "😀", "a" * 127, "a" * 128, "a" * 129, "a " * 600, "x" * 1024, "x" * 1025,
    "x" * 5000, "a " * 3000,
    # multi-line: literal blocks (with `-` without a final break), or the cases libyaml writes otherwise
    "a\nb\n", "a\n b", "a\n\n\nb", "a \nb", "a\nb ", "a\n\n", "\na", "a\n\tb", "a\r\nb", "é\nb", "---\n...\n",
    "#!/bin/sh\n- a\n: b\n'q' \"d\"\n", "key: value\n  nested: [1, 2]\n", "x\n" * 300, ("line " * 30 + "\n") * 20,
]
SCALARS = (st.sampled_from(TRICKY) | st.text(max_size=12) | st.text("ab :#-'\"\n\t?{}[],&*!|>%@`.~=<0", max_size=10)
           | st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True))
KEYS = st.sampled_from(TRICKY) | st.text(max_size=8) | st.integers(-2, 2) | st.booleans() | st.none()
DOCUMENTS = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4)
                         | st.dictionaries(KEYS, inner, max_size=4), max_leaves=25)


@pytest.mark.parametrize("text", TRICKY)
def test_each_tricky_string_as_value_key_and_item(text):
    for document in ({"k": text}, {text: 1}, {text: {text: [text]}}, [text, {"a": [text, [text]]}], [[text]]):
        assert yamlio.dump(document) == yamlio.c_dump(document)


def test_shapes_and_shared_containers():
    shared = {"path": "/healthz", "port": 8080}
    documents = [
        {}, [], {"a": {}}, {"a": []}, [{}], [[]], [[[1, [2]]], {"a": [{"b": [{}]}]}],
        {"metadata": {"name": "x", "labels": {"a": "b"}}, "spec": {"members": [{"type": "Node", "n": 1}]}},
        {"liveness": {"httpGet": shared}, "readiness": {"httpGet": shared}},   # PyYAML writes an anchor
        {"a": [shared, shared]}, [1.5, 2, None, True], {"x": 1.0},
        {"deep": [[[[[[[[{"a": [[["b"]]]}]]]]]]]]},
        "plain", 3, None,
    ]
    for document in documents:
        assert yamlio.dump(document) == yamlio.c_dump(document)


def test_other_python_values_are_left_to_the_c_dumper():
    """A set, bytes, a tuple or an object: written as the C dumper writes it, or refused as it refuses."""
    for document in ({"a": object()}, {"a": (1, 2)}, [{"a": {1, 2}}], {"a": b"x"}):
        try:
            expected = yamlio.c_dump(document)
        except Exception as exc:   # noqa: BLE001 - whatever PyYAML raises, dump raises the same
            with pytest.raises(type(exc)):
                yamlio.dump(document)
        else:
            assert yamlio.dump(document) == expected


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(DOCUMENTS)
def test_random_documents_match_the_c_dumper(document):
    assert yamlio.dump(document) == yamlio.c_dump(document)
