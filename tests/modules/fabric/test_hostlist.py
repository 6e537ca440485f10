"""Host lists both ways, and the leaf regex: it matches exactly its range (checked with ``re``)."""
from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from modules.fabric.hostlist import HostlistError, NumberedRange, compress, expand, numbered_range


def test_expand():
    assert expand("I[21-22]") == ["I21", "I22"]
    assert expand("[1101-1102]") == ["1101", "1102"]
    assert expand("gpu-[08-10]") == ["gpu-08", "gpu-09", "gpu-10"]
    assert expand("r[1-2]n[1,3]") == ["r1n1", "r1n3", "r2n1", "r2n3"]
    assert expand("plain") == ["plain"]
    for bad in ("n[2-1]", "n[1-2", "n[a]", ""):
        with pytest.raises(HostlistError):
            expand(bad)


def test_compress_and_numbered_range():
    names = expand("node[0028-0030]") + ["node0032"] + expand("node[0034-0036]")
    assert compress(names) == ["node[0028-0030]", "node0032", "node[0034-0036]"]
    assert numbered_range(names) is None
    assert numbered_range(expand("srv11[01-08]")) == NumberedRange("srv", 4, "", 1101, 1108)
    assert numbered_range(["gpu-1", "gpu-10"]) is None
    assert numbered_range(["a.x1.y", "a.x2.y"]).regex() == r"^a\.x[12]\.y$"
    assert numbered_range(["gpu-03", "gpu-01", "gpu-02"]).expression() == "gpu-[01-03]"


@settings(max_examples=300, deadline=None)
@given(width=st.integers(1, 5), data=st.data())
def test_regex_matches_exactly_the_range(width, data):
    top = 10 ** width - 1
    lo = data.draw(st.integers(0, top))
    hi = data.draw(st.integers(lo, top))
    rng = NumberedRange("gpu-", width, ".rack", lo, hi)
    rx = re.compile(rng.regex())
    probes = {lo, hi, max(lo - 1, 0), min(hi + 1, top), 0, top} | set(data.draw(st.lists(st.integers(0, top))))
    for number in probes:
        name = f"gpu-{number:0{width}d}.rack"
        assert bool(rx.search(name)) == (lo <= number <= hi), (rng, name)
    assert not rx.search(f"gpu-{lo:0{width + 1}d}.rack") and not rx.search(f"xgpu-{lo:0{width}d}.rack")
    assert list(rng.names()) == expand(rng.expression())


def test_single_range_agrees_with_expand():
    from modules.fabric.hostlist import single_range

    for expr in ("gpu-[0001-0032]", "n[1-9]", "[1101-1102]", "rack[07-12].dc", "x[5-5]"):
        assert list(single_range(expr).names()) == expand(expr)
    for expr in ("n[1-10]", "n[5-2]", "n[1,3]", "a[1-2]b[3-4]", "plain"):
        assert single_range(expr) is None


PATTERNS = ["gpu-{n:04d}", "gpu-{n:05d}", "{n}", "node{n:d}", "gpu{n:3}", "gpu2{n:03d}", "n{n:04d}-x1", "a.{n:02d}.b",
            "gpu-{n:04d}-{{x}}", "{pod}-{n:03d}", "{n}-{n}", "{i:02d}", "gpu-{n:+d}", "gpu-{n:x}", "gpu-{n!s}",
            "gpu-{n:,}", "{leaf}", "gpu-{n:010d}", "gpu-{n", "gpu-}{n}"]


@settings(max_examples=300, deadline=None)
@given(pattern=st.sampled_from(PATTERNS), lo=st.integers(1, 12000), size=st.integers(1, 40))
def test_pattern_range_is_what_numbered_range_finds_in_the_names(pattern, lo, size):
    """The generated source takes a leaf's range from its name pattern: the same range (and so the
    same regexMatch) that ``numbered_range`` finds in the names the pattern makes."""
    from modules.fabric.hostlist import number_pattern, pattern_range

    parts = number_pattern(pattern)
    if parts is None:
        return
    prefix, spec, suffix = parts
    names = [pattern.format(n=n) for n in range(lo, lo + size)]
    assert [prefix + format(n, spec) + suffix for n in range(lo, lo + size)] == names
    found = pattern_range(prefix, spec, suffix, lo, lo + size - 1)
    if found is not None:   # None: the source builds the names one by one and render looks at them
        assert list(found.names()) == names
        assert size == 1 or found == numbered_range(names)
    elif spec in ("", "d", "04d") and prefix.isalpha() and not any(c.isdigit() for c in suffix) \
            and lo >= 1000 and len(str(lo)) == len(str(lo + size - 1)):
        raise AssertionError(f"{pattern} from {lo}: a plain range was not recognised")


def test_number_pattern_takes_only_one_plain_decimal_n():
    from modules.fabric.hostlist import number_pattern

    assert number_pattern("gpu-{n:04d}") == ("gpu-", "04d", "")
    assert number_pattern("a{{b}}{n}c") == ("a{b}", "", "c")
    for pattern in ("{pod}-{n:03d}", "{n}-{n}", "{i:02d}", "gpu-{n:+d}", "gpu-{n:x}", "gpu-{n!s}", "gpu-{n:,}",
                    "gpu-{n", "gpu-}{n}", "plain"):
        assert number_pattern(pattern) is None, pattern
