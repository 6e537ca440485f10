"""Rules never crash on odd shapes: any field of any table manifest replaced by any JSON-like value
(null, wrong scalar, list for a map, ...) still yields findings or nothing, never an exception."""
from __future__ import annotations

import copy

from hypothesis import HealthCheck, given, settings, strategies as st

from modules.core.config import load_project, load_stack
from modules.core.render import render
from policies.framework import CheckContext
from policies.runner import PolicySettings, bundle_objects, run_rules
from tests.support.cli import ROOT

from tests.policies.support import table

_, CASES = table()
MANIFESTS = [m for c in CASES for m in (c.manifests or [])]
STACK = load_stack(load_project(ROOT), "prod")
BUNDLE = render(STACK)
BASE = bundle_objects(BUNDLE)
BASE_AS_RENDERED = copy.deepcopy(BASE)

ODD = st.one_of(st.none(), st.booleans(), st.integers(-3, 10**6), st.floats(allow_nan=False), st.text(max_size=8),
                st.just([]), st.just({}), st.lists(st.integers(), max_size=2),
                st.dictionaries(st.text(max_size=4), st.integers(), max_size=2))


def paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for k, v in value.items():
            yield from paths(v, prefix + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from paths(v, prefix + (i,))


def replaced(obj, path, new):
    if not path:
        return new
    out = copy.deepcopy(obj)
    target = out
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = new
    return out


# Each run judges MUTATIONS_PER_RUN mutated objects (of distinct table manifests) together with the
# prod bundle, the way `check --manifests` judges a user's files with the rendered objects: the same
# 300 mutations as one object per run, but the rules go over the unchanged bundle 100 times, not 300
# (they dominate the cost), and the mutated objects also meet each other.
MUTATIONS_PER_RUN = 3


def mutation(data, index: int) -> dict:
    obj = MANIFESTS[index]
    all_paths = [p for p in paths(obj) if p[:1] not in (("apiVersion",), ("kind",)) and p]
    path = data.draw(st.sampled_from(all_paths))
    return replaced(obj, path, data.draw(ODD))


@settings(max_examples=300 // MUTATIONS_PER_RUN, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_rules_survive_any_field_replaced(data):
    indexes = data.draw(st.lists(st.integers(0, len(MANIFESTS) - 1), min_size=MUTATIONS_PER_RUN,
                                 max_size=MUTATIONS_PER_RUN, unique=True))
    mutated = [mutation(data, i) for i in indexes]
    before = copy.deepcopy(mutated)
    run_rules(BASE + mutated, CheckContext(stack=STACK, fabric=BUNDLE.fabric), PolicySettings())
    # No rule changes what it judges (the admission engine reuses what it keyed before the rules ran).
    assert mutated == before and BASE == BASE_AS_RENDERED


def test_rules_that_hand_work_elsewhere_run_last_and_report_in_rule_order():
    """A rule with ``prepare`` (upstream-admission's evaluating process) is evaluated after the
    others, so its process has their time to finish; the violations stay in rule order."""
    from policies.framework import Finding, Rule

    ran: list[str] = []

    def stack_rule(name: str):
        def check(objects, ctx):
            ran.append(name)
            yield Finding("spec", f"{name} found it", objects[0])
        return check

    def prepare(objects, ctx):
        ran.append("prepared")

    rules = [Rule(id=name, description="", why="", fix="", severity="low", enforcement="mandatory",
                  check_stack=stack_rule(name), prepare=prepare if name == "first" else None)
             for name in ("first", "second", "third")]
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "namespace": "y"}}
    violations = run_rules([obj], CheckContext(), PolicySettings(), rules=rules)
    assert ran == ["prepared", "second", "third", "first"]
    assert [v.rule for v in violations] == ["first", "second", "third"]
