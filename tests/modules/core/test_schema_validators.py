"""The stack-schema validator cache is keyed by the schema's content, not by the identity of the
dict: equal schemas share a validator, a changed schema gets its own, whatever ids Python hands out."""
from __future__ import annotations

import copy

from modules.core.config import stack_schema
from modules.core.schema import validator_for


def test_equal_schemas_share_one_validator_and_a_changed_one_gets_its_own():
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    first = validator_for(schema)
    assert validator_for(copy.deepcopy(schema)) is first
    schema["properties"]["n"]["type"] = "string"          # the caller changes its dict afterwards
    assert not list(first.iter_errors({"n": 1}))          # the cached validator judges the old content
    changed = validator_for(schema)
    assert changed is not first and list(changed.iter_errors({"n": 1}))


def test_the_stack_schema_s_verdict_does_not_depend_on_which_copy_is_passed():
    schema = stack_schema()
    assert validator_for(copy.deepcopy(schema)) is validator_for(schema)
