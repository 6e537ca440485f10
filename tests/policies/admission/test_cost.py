"""CEL cost by cel-go's model, decided when a policy or CRD is read (policies/admission/cost.py):
an expression sure to pass the API server's per-call limit on every object, a CRD rule past the
estimated-cost limit, and a list the `cel` library would have to copy past a million elements are
one line in the note and never evaluated per object; the verdict is arithmetic, the same on any
machine. Unit costs follow cel-go's interpreter/runtimecost.go (the expected floors below are worked
out by hand from it)."""
from __future__ import annotations

import pytest

from policies.admission import cost, loader
from policies.admission.engine import Denial, RuleSet
from policies.admission.loader import RuleSources
from tests.modules.core.hostile.cel_corpus import DOUBLING, NESTED, STRING_DOUBLING, crd, policy
from tests.support.admission import require_shared_dirs


@pytest.mark.parametrize("source, floor", [
    ("true", 0),
    ("object.spec.x", 1),                          # one attribute: the identifier's cost
    ("'abcdefghij' + 'abcdefghij'", 2),            # string concatenation: a tenth per character
    ("object.x in [1, 2, 3]", 4),                  # the attribute, then the list's size (a folded constant)
    ("[1, 2, 3].all(x, true)", 3),                 # every element visited: at least one per step
    ("[1, 2, 3].all(x, x > 1)", 2),                # may stop at the first: one step, 1 + (x: 1, > on an
                                                   # element of unknown size: 0)
    ("[1, 2, 3].map(x, x * 2)", 9),                # map visits all: 3 * (1 + (x: 1, *: 1))
    ("[object.a, 2]", 11),                         # a list that is not constant is built: 10 + 1
    ("object.a && [1, 2].all(x, true)", 1),        # && may stop after its left side
    ("'aaaa'.matches('^a+$')", 1),                 # (4 + 1) / 10 -> 1, times 4 / 4 -> 1
    ("cel.bind(x, [1, 2, 3].all(y, true), true)", 0),   # a binding costs only when read
])
def test_the_floor_follows_cel_gos_unit_costs(source, floor):
    assert cost.floor(source).cost == floor


def test_nested_comprehensions_over_literals_pass_the_per_call_limit():
    # seven levels of ten: 10 * (1 + 10 * (1 + ...)) = 11,111,110 on every object
    assert cost.floor(NESTED).cost == 11_111_110
    assert cost.floor(NESTED.replace("[0,1,2,3,4,5,6,7,8,9].all(g, true)", "true")).cost == 1_111_110


def test_doubling_variables_are_judged_where_they_first_pass_a_bound():
    # strings: each join costs a tenth of its length; the 21st variable's own call passes 1,000,000
    wrong = cost.policy_problem(STRING_DOUBLING, [("spec.validations[0].expression", "size(variables.s30) > 0")])
    assert wrong.startswith("variable 's21' costs at least 1,677,724 on every object")
    # lists: cel-go joins them in O(1), so the API server pays little; the library copies them
    wrong = cost.policy_problem(DOUBLING, [("spec.validations[0].expression", "size(variables.v30) > 0")])
    assert wrong.startswith("variable 'v18' builds a list of at least 1,048,576 elements")
    # a variable no expression reads is never evaluated (variables are lazy)
    assert cost.policy_problem(STRING_DOUBLING, [("spec.validations[0].expression", "true")]) is None
    assert cost.policy_problem(STRING_DOUBLING[:12], [("v", "size(variables.s11) > 0")]) is None


def test_object_fields_count_as_empty_so_a_floor_never_overstates():
    assert cost.floor("object.spec.items.all(a, object.spec.items.all(b, a == b))").cost == 1
    # the attribute, then (0 + 1) / 10 -> 1 times the pattern's 8 characters / 4 -> 2
    assert cost.floor("object.spec.name.matches('^[a-z]+$')").cost == 3


def test_no_upstream_rule_comes_near_a_cost_limit(tmp_path, monkeypatch):
    admission, crds = require_shared_dirs()
    monkeypatch.setenv(loader.ENV_CACHE, str(tmp_path))
    index = loader.load_index(loader.RuleSources(admission, crds, "test"))
    sources = [item[part] for policy in index.policies
               for key in ("matchConditions", "variables", "validations") for item in policy[key]
               for part in ("expression", "messageExpression") if item.get(part)]
    sources += [rule["rule"] for crd_rules in index.crds for rule in crd_rules["rules"]]
    floors = [cost.floor(s) for s in sources]
    assert len(sources) > 100 and None not in floors        # the parser reads every upstream expression
    assert max(f.cost for f in floors) < 1000
    assert not [m for m in index.missing if "costs at least" in m or "list of at least" in m]


def test_the_loader_names_such_a_policy_once_and_never_evaluates_it(tmp_path, monkeypatch):
    (tmp_path / "volcano").mkdir()
    (tmp_path / "crds").mkdir()
    (tmp_path / "volcano" / "p.yaml").write_text(policy(variables=STRING_DOUBLING,
                                                        validations=["size(variables.s30) > 0"]))
    (tmp_path / "volcano" / "ok.yaml").write_text(policy(validations=["false"], name="fine"))
    (tmp_path / "crds" / "queues.yaml").write_text(crd(NESTED))
    monkeypatch.setenv(loader.ENV_CACHE, str(tmp_path / "cache"))
    index = loader.load_index(RuleSources(tmp_path, tmp_path / "crds", "test"))
    assert [p["name"] for p in index.policies] == ["fine"] and index.crds == []
    [said] = [m for m in index.missing if "hostile" in m]
    assert said == ("volcano/p.yaml: document 1: ValidatingAdmissionPolicy 'hostile' not evaluated: variable 's21' "
                    "costs at least 1,677,724 on every object by cel-go's cost model, over the API server's per-call "
                    "CEL cost limit (1,000,000): every evaluation fails (with failurePolicy Fail, every matching "
                    "object is denied)")
    [refused] = [m for m in index.missing if "queues.yaml" in m]
    assert "the API server refuses the CRD" in refused and "(the API server refuses it)" not in refused
    queue = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "q"},
             "spec": {"weight": 1}}
    outcomes = RuleSet(index).evaluate(queue)
    assert ["'fine'" in o.source for o in outcomes if isinstance(o, Denial)] == [True]


def _judge(tmp_path, monkeypatch, validation: str, spec: dict):
    (tmp_path / "volcano").mkdir(exist_ok=True)
    (tmp_path / "volcano" / "p.yaml").write_text(policy(validations=[validation]))
    monkeypatch.setenv(loader.ENV_CACHE, str(tmp_path / "cache"))
    index = loader.load_index(RuleSources(tmp_path, None, "test"))
    assert [p["name"] for p in index.policies] == ["hostile"]     # nothing to judge before the object
    queue = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "q"},
             "spec": {"weight": 1, **spec}}
    [denial] = [o for o in RuleSet(index).evaluate(queue) if isinstance(o, Denial)]
    return denial.message


def test_a_cost_that_depends_on_the_object_is_judged_per_call_with_its_sizes(tmp_path, monkeypatch):
    # 300 ** 3 steps on this object: past the per-call limit by arithmetic, before the library runs
    loop = "object.spec.items.all(a, object.spec.items.all(b, object.spec.items.all(c, true)))"
    assert cost.floor(loop).cost == 1
    said = _judge(tmp_path, monkeypatch, loop, {"items": list(range(300))})
    assert "operation cancelled: actual cost limit exceeded" in said
    assert cost.Calls().over_limit(loop, {"object": {"spec": {"items": list(range(90))}}}) is None   # 729,000


def test_what_the_floor_cannot_count_in_time_is_left_to_the_safety_net(tmp_path, monkeypatch):
    # each element's body differs: counted element by element, past MAX_VISITS there is no verdict,
    # and the evaluating child's CPU-time and memory budget stops it
    loop = "object.spec.names.map(n, object.spec.names.filter(m, m == n))"
    names = ["x" * 50] * 2000
    assert cost.Calls().over_limit(loop, {"object": {"spec": {"names": names}}}) is None
    assert "ran out of the" in _judge(tmp_path, monkeypatch, loop, {"names": names})


def test_sizes_past_a_floats_range_are_counted_in_integers():
    # 1,200 doublings: sizes of 2**1200 characters; the verdict is still the 21st variable's
    chain = [("s0", "'abcdefgh'")] + [(f"s{i}", f"variables.s{i - 1} + variables.s{i - 1}") for i in range(1, 1200)]
    assert cost.policy_problem(chain, [("v", "size(variables.s1199) > 0")]).startswith("variable 's21' costs")
    assert cost.floor("variables.s1199 == 'x'", {"s1199": cost.Floor(0, 8 * 2**1199)}).cost == 2


def test_a_per_call_floor_with_the_inputs_counts_their_sizes():
    calls = cost.Calls()
    big = {"spec": {"name": "a" * 4_000_000}}
    # (4,000,000 + 1) / 10 * 400 / 4: a long pattern over a long string, on this object only
    assert calls.over_limit("object.spec.name.matches('" + "a" * 400 + "')", {"object": big}) is not None
    assert calls.over_limit("object.spec.name.matches('" + "a" * 400 + "')", {"object": {"spec": {"name": "a"}}}) \
        is None
    # an element's fields are its own: 3 tasks of 1,000 containers, every container visited by map
    tasks = {"spec": {"tasks": [{"containers": list(range(1000))}] * 3}}
    assert cost.Calls().over_limit("object.spec.tasks.map(t, t.containers.map(c, c))", {"object": tasks}) is None
    # 1,100 tasks: 1,100 * (1 + 1,000 * (1 + 0)) = 1,101,100, counted in 1,100 steps (the inner body
    # does not name its element, so its 1,000 steps are one multiplication)
    tasks["spec"]["tasks"] = [{"containers": list(range(1000))}] * 1100
    assert cost.Calls().over_limit("object.spec.tasks.map(t, t.containers.map(c, 1))", {"object": tasks}) is not None


@pytest.mark.parametrize("source", ["object.spec.tasks.all(t, t.replicas > 0)", "object.spec.tasks.map(t, t)",
                                    "object.spec.tasks.exists(t, true)", "object.spec.tasks.filter(t, t.x in [1])"])
def test_empty_and_odd_inputs_give_no_verdict_rather_than_a_fault(source):
    calls = cost.Calls()
    for spec in ({"tasks": []}, {"tasks": {}}, {"tasks": None}, {"tasks": [None, 1, "x", {"replicas": "3"}]}, {}):
        assert calls.over_limit(source, {"object": {"spec": spec}}) is None
        assert cost._Coster({}, {"object": {"spec": spec}}).floor(cost.parse(source)).cost < 20


def test_per_call_floors_never_charge_more_than_cel_go():
    calls = cost._Coster
    labels = {f"k{i}": "v" for i in range(5000)}
    values = {"object": {"metadata": {"labels": labels, "name": "a"}, "spec": {"items": list(range(300))}}}
    # a map's `in` is one look-up (cel-go's InMap), a list's a search (InList)
    assert calls({}, values).floor(cost.parse("'k1' in object.metadata.labels")).cost == 2
    assert calls({}, values).floor(cost.parse("1 in object.spec.items")).cost == 301
    # startsWith is charged on the receiver at run time, on the prefix by the estimator: the smaller
    assert calls({}, values).floor(cost.parse("object.metadata.name.startsWith('" + "x" * 900 + "')")).cost == 2
    # a Kubernetes library function may cost 0 at run time: counted as 0
    assert calls({}, values).floor(cost.parse("object.spec.items.map(i, quantity('1'))")).cost == 301


def test_the_per_object_budget_adds_up_each_call_on_the_object():
    """RuntimeCELCostBudget (10,000,000) is the policy's on one object: calls each under the per-call
    limit (729,000 apiece) pass it at the 14th (13 x 729,000 = 9,477,000; 14 x = 10,206,000), and a
    new budget (the next policy, or the next object) starts from nothing."""
    loop = "object.spec.items.all(a, object.spec.items.all(b, object.spec.items.all(c, true)))"
    values = {"object": {"spec": {"items": list(range(90))}}}
    calls = cost.Calls()
    said = [calls.over_limit(loop, values) for _ in range(14)]
    assert said[:13] == [None] * 13
    assert said[13].startswith("validation failed due to running out of cost budget, no further validation rules "
                               "will be run")
    calls.new_budget()
    assert calls.over_limit(loop, values) is None


def test_a_crd_rule_past_a_limit_is_worded_for_that_limit_whole():
    """Past the static estimate the API server refuses the CRD; between the per-call limit and it,
    every evaluation fails. Whole messages."""
    assert cost.rule_problem({"rule": NESTED}) == (
        "the rule costs at least 11,111,110 on every object by cel-go's cost model, over the API server's "
        "estimated cost limit for a CRD rule (10,000,000): the API server refuses the CRD")
    lighter = NESTED.replace("[0,1,2,3,4,5,6,7,8,9].all(g, true)", "true")
    assert cost.rule_problem({"rule": "true", "messageExpression": lighter}) == (
        "the messageExpression costs at least 1,111,110 on every object by cel-go's cost model, over the API "
        "server's per-call CEL cost limit (1,000,000): every evaluation fails (with failurePolicy Fail, every "
        "matching object is denied)")
    assert cost.rule_problem({"rule": "self.x > 0"}) is None


def test_the_cost_floor_and_a_findings_fields_reach_the_same_variables():
    """One walk over a policy's variables (reads.variables_reached) serves the cost floors, the
    fields a denial names and the variables an expression needs: through other variables, each
    once, with CEL's optional space around the dot; a variable nothing reads is not reached."""
    from policies.admission import reads

    variables = {"items": "object.spec.items", "more": "variables . items + [1]", "loop": "variables.loop",
                 "unread": "object.spec.other"}
    assert reads.variables_reached(["size(variables.more) > 0 && variables.loop"], variables) == [
        "loop", "more", "items"]
    assert reads.fields_read("size(variables.more) > 0", variables) == ("spec.items",)
    doubling = [("s0", "'abcdefgh'")] + [(f"s{i}", f"variables . s{i - 1} + variables.s{i - 1}") for i in range(1, 30)]
    assert cost.policy_problem(doubling, [("v", "size(variables.s29) > 0")]).startswith("variable 's21' costs")
