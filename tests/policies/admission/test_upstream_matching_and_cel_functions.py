"""Upstream semantics the admission engine and its Kubernetes CEL functions must follow
(matching of policies and bindings, the format validators, quantity and string functions)."""
from __future__ import annotations

import pytest

from modules.upstream.cel import library as kf
from policies.admission.engine import Denial, EvalError, RuleSet, Scope, apply_patch, compile_expr
from policies.admission.loader import Index, RuleSources

QUEUE = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "q"}, "spec": {}}


def _policy(resources: list[str], binding: dict | None = None, bound: bool = True) -> dict:
    return {"kind": "ValidatingAdmissionPolicy", "name": "p", "source": "t.yaml", "release": "test",
            "failurePolicy": "Fail", "paramKind": None, "matchConditions": [], "variables": [], "mutations": [],
            "matchConstraints": {"resourceRules": [{"operations": ["CREATE"], "apiGroups": ["*"],
                                                    "apiVersions": ["*"], "resources": resources}]},
            "validations": [{"expression": "false", "message": "upstream says no"}],
            "bound": bound, "validationActions": ["Deny"], "bindingMatch": binding or {}}


def _denied(policy: dict, obj: dict = QUEUE) -> bool:
    ruleset = RuleSet(Index(policies=[policy], crds=[], location=RuleSources(None, None, "test"), missing=[]))
    return any(isinstance(o, Denial) for o in ruleset.evaluate(obj))


@pytest.mark.parametrize("resources, hits", [
    (["queues"], True), (["*"], True), (["*/*"], True), (["queues/*"], True),
    (["queues/status"], False), (["*/status"], False), (["jobs"], False),
])
def test_resource_rules_split_at_the_first_slash(resources, hits):
    """k8s.io/apiserver rules.Matcher: an entry is resource[/subresource]; a CREATE of the main
    resource has no subresource, so `*/*` and `queues/*` match it and `queues/status` does not."""
    assert _denied(_policy(resources)) is hits


def test_binding_selectors_apply_without_resource_rules():
    binding = {"objectSelector": {"matchLabels": {"team": "a"}}}
    assert not _denied(_policy(["queues"], binding))
    labelled = {**QUEUE, "metadata": {"name": "q", "labels": {"team": "a"}}}
    assert _denied(_policy(["queues"], binding), labelled)


def test_a_policy_without_a_binding_does_nothing():
    assert not _denied(_policy(["queues"], bound=False))


def _cel(expression: str):
    return Scope().run(compile_expr(expression))


@pytest.mark.parametrize("name", ["dns1123Label", "dns1123Subdomain", "dns1035Label", "qualifiedName", "labelValue"])
def test_format_validators_refuse_a_trailing_newline(name):
    """Go's `$` matches only at the end of the text; Python's also before a final newline."""
    assert _cel(f'format.{name}().validate("abc").hasValue()') is False
    assert _cel(f'format.{name}().validate("abc\\n").hasValue()') is True


def test_is_integer_is_true_only_where_as_integer_succeeds():
    assert _cel('quantity("5").isInteger()') is True
    assert _cel('quantity("9E").add(quantity("9E")).isInteger()') is False   # beyond int64: asInteger fails
    assert _cel('quantity("500m").isInteger()') is False


def test_index_of_with_a_start_beyond_the_string_is_an_error():
    assert kf.index_of("abc", "c", 3) == -1
    assert kf.index_of("abc", "c", 1) == 2
    with pytest.raises(IndexError):
        kf.index_of("abc", "c", 4)
    with pytest.raises(IndexError):
        kf.index_of("abc", "c", -1)


@pytest.mark.parametrize("op", [
    {"op": "replace", "path": "/spec/list/-1", "value": 9},     # RFC 6901 indexes have no sign
    {"op": "add", "path": "/spec/list/5", "value": 9},          # beyond the end
    {"op": "replace", "path": "/spec/missing", "value": 9},     # replace needs the target
    {"op": "remove", "path": "/spec/missing"},
    {"op": "add", "path": "/spec/list/01", "value": 9},         # no leading zero
    {"op": "add", "path": "/spec/none/x", "value": 9},          # no parent
])
def test_json_patch_refuses_what_rfc_6902_refuses(op):
    obj = {"spec": {"list": [1, 2]}}
    with pytest.raises(EvalError):
        apply_patch(obj, [op])


def test_json_patch_applies_what_rfc_6902_allows():
    obj = {"spec": {"list": [1, 2], "x": 1}}
    out = apply_patch(obj, [{"op": "add", "path": "/spec/list/2", "value": 3},
                            {"op": "add", "path": "/spec/list/0", "value": 0},
                            {"op": "remove", "path": "/spec/x"},
                            {"op": "test", "path": "/spec/list/3", "value": 3},
                            {"op": "replace", "path": "/spec/list/1", "value": 9}])
    assert out == {"spec": {"list": [0, 9, 2, 3]}} and obj == {"spec": {"list": [1, 2], "x": 1}}


@pytest.mark.parametrize("variable, kind", [
    ("object.spec.(", "not evaluated"),                         # does not compile here
    ("authorizer.requestResource.check('get').allowed()", "not evaluated"),
    ("object.spec.missing", "denied"),                            # a run-time error: failurePolicy Fail
])
def test_a_failed_variable_is_a_note_unless_it_failed_at_run_time(variable, kind):
    policy = {**_policy(["queues"]), "variables": [{"name": "v", "expression": variable}],
              "validations": [{"expression": "variables.v == 1", "message": "no"}]}
    ruleset = RuleSet(Index(policies=[policy], crds=[], location=RuleSources(None, None, "test"), missing=[]))
    outcomes = ruleset.evaluate(QUEUE)
    assert len(outcomes) == 1
    assert isinstance(outcomes[0], Denial) is (kind == "denied"), outcomes
    assert "variable 'v'" in (outcomes[0].message if kind == "denied" else outcomes[0].reason)
