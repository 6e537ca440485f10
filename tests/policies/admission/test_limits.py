"""The API server's CEL limits, checked on the text before the library parses it
(policies/admission/limits.py): what counts toward the parse depth, what does not (string literals,
comments), and that no upstream rule comes near the limit."""
from __future__ import annotations

import pytest

from policies.admission import limits, loader
from tests.support.admission import require_shared_dirs


@pytest.mark.parametrize("source, depth", [
    ("true", 0),
    ("1 + 2", 1),
    ("a.b.c", 2),
    ("a && b && c", 0),                      # logical chains are balanced: no depth
    ("f(a.b, c.d)", 2),                      # arguments are siblings
    ("((a))", 2),
    ("x ? y : z", 1),
    ("'a.b.c+d' == \"(((\"", 1),             # operators and brackets inside strings do not count
    ("r'\\\\' + '''x''' + 1", 2),            # raw and triple-quoted strings end where CEL says
    ("a // comment ((((( + + +\n + b", 1),
    ("1.5e+3 + 2", 1),                       # a number's dot and exponent sign are not operators
])
def test_depth(source, depth):
    assert limits.depth(source) == depth


def test_over_the_limits():
    assert "nests deeper than 250" in limits.problem("+".join(["1"] * 252))
    assert "nests deeper than 250" in limits.problem("has(object" + ".a" * 251 + ")")
    assert "nests deeper than 250" in limits.problem("[" * 251 + "]" * 251)
    assert "100001 characters" in limits.problem("a" * 100_001)
    assert limits.problem("+".join(["1"] * 200)) is None


def test_no_upstream_rule_comes_near_the_limit(tmp_path, monkeypatch):
    admission, crds = require_shared_dirs()
    monkeypatch.setenv(loader.ENV_CACHE, str(tmp_path))
    index = loader.load_index(loader.RuleSources(admission, crds, "test"))
    sources = [item[part] for policy in index.policies
               for key in ("matchConditions", "variables", "validations") for item in policy[key]
               for part in ("expression", "messageExpression") if item.get(part)]
    sources += [rule[part] for crd in index.crds for rule in crd["rules"] for part in ("rule", "messageExpression")
                if rule.get(part)]
    assert len(sources) > 100
    assert max(limits.depth(s) for s in sources) < limits.MAX_DEPTH // 10
    assert not [m for m in index.missing if "nests deeper" in m or "characters long" in m]
