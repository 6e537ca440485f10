"""A ValidatingAdmissionPolicy's variables as the engine evaluates them: one reading of
``variables.<name>`` (``reads.variables_in``, CEL's space around the dot allowed) decides which
earlier variables an expression sees and which failed variable it carries; a failure is attributed
by the variable it happened in (the error's ``variable``), never by its text."""
from __future__ import annotations

from policies.admission import loader
from policies.admission.engine import Denial, EvalError, NotEvaluable, RuleSet, failed_variable
from policies.admission.loader import RuleSources
from tests.modules.core.hostile.cel_corpus import policy

QUEUE = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "q"},
         "spec": {"weight": 1}}


def _denials(tmp_path, monkeypatch, variables, validation):
    (tmp_path / "volcano").mkdir(exist_ok=True)
    (tmp_path / "volcano" / "p.yaml").write_text(policy(variables=variables, validations=[validation]))
    monkeypatch.setenv(loader.ENV_CACHE, str(tmp_path / "cache"))
    index = loader.load_index(RuleSources(tmp_path, None, "test"))
    return [o.message for o in RuleSet(index).evaluate(QUEUE) if isinstance(o, Denial)]


def test_a_variable_read_with_space_around_the_dot_sees_the_earlier_variable(tmp_path, monkeypatch):
    # weight 1: a = 1, b = 2, so `variables.b == 2` holds and `== 5` denies with the rule's message
    variables = [("a", "object.spec.weight"), ("b", "variables . a + 1")]
    assert _denials(tmp_path, monkeypatch, variables, "variables.b == 2") == []
    assert _denials(tmp_path, monkeypatch, variables, "variables.b == 5") == ["hostile"]


def test_a_failure_is_said_once_with_the_variable_it_happened_in(tmp_path, monkeypatch):
    variables = [("a", "object.spec.nope"), ("b", "variables.a + 1"), ("c", "variables.b + 1")]
    assert _denials(tmp_path, monkeypatch, variables, "variables.c == 5") == [
        "expression resulted in error: variable 'a': no such key: nope (failurePolicy Fail: the request is denied; "
        "upstream's message for this rule is \"hostile\")"]


def test_the_failed_variable_is_known_by_where_it_failed_not_by_its_words():
    own = EvalError("variable names are case-sensitive")   # a failure whose own words begin with "variable"
    said = failed_variable("variables.a > 0", {"a": own})
    assert isinstance(said, EvalError) and str(said) == "variable 'a': variable names are case-sensitive"
    carried = failed_variable("variables.b", {"b": said})
    assert str(carried) == str(said) and carried.variable == "a"
    missing = failed_variable("variables . a", {"a": NotEvaluable("Undefined variable or function 'f'")})
    assert isinstance(missing, NotEvaluable) and str(missing) == "variable 'a': Undefined variable or function 'f'"
    assert failed_variable("variables.z", {"a": own}) is None and failed_variable("true", {}) is None
