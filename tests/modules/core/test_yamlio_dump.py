"""``yamlio.dump_each`` (one dumper for many documents) writes what ``dump`` writes per object."""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from modules.core import yamlio

SHARED = {"x": 1}
# What a lone document writes differently from a document in a stream: a kept final line break
# (``|+``: the lone document ends with ``...``), roots that are no mapping, empty roots; and
# anchors, which restart at id001 in every document.
EDGES = [
    {"a": "x\n\n"}, {"a": "x\n\n", "b": 1}, {"a": "\n"}, {"a": ["x\n\n"]}, {"a": {"b": "y\n\n\n"}},
    {"a": "x\n"}, {"a": "plain"}, {"a": ""}, {"a": None}, {"a": "..."}, {"a": "---"}, {"k": "x\n \n"},
    {}, [], "a scalar", "x\n\n", None, 3, ["x\n\n"], {"a": SHARED, "b": SHARED}, {"a": SHARED, "b": SHARED},
    {"é": "ü ☃ \u2028 x"}, {"a": "\ufeff"}, {"a": "x" * 5000 + " " + "y" * 5000}, {"a": [1, 2.5, True, None]},
]


def test_dump_each_writes_what_dump_writes_for_the_edges():
    assert list(yamlio.dump_each(EDGES)) == [yamlio.dump(obj) for obj in EDGES]
    assert list(yamlio.dump_each(EDGES[::-1])) == [yamlio.dump(obj) for obj in EDGES[::-1]]


_text = st.text(alphabet=st.sampled_from("ab :#-|>+\n\t'\"é."), max_size=12)
_values = st.recursive(st.none() | st.booleans() | st.integers() | _text,
                       lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
                       max_leaves=12)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_values, max_size=6))
def test_dump_each_writes_what_dump_writes(objs):
    assert list(yamlio.dump_each(objs)) == [yamlio.dump(obj) for obj in objs]
