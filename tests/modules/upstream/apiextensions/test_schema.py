"""The schema port on its own: kube-openapi's wording and order, decoding (pruning, defaults,
nulls), list types, embedded resources, unknown fields by engine, and its bounds."""
from __future__ import annotations

import pytest

from modules.upstream import apiextensions
from modules.upstream.apiextensions import fieldvalidation, formats, prepare, pruning
from modules.upstream.apiextensions.gofmt import go_float


def errors(schema, obj):
    return [e.error() for e in apiextensions.validate_schema(prepare(schema), obj)]


JOB = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
    "minAvailable": {"type": "integer", "format": "int32"},
    "weight": {"type": "integer", "minimum": 1, "maximum": 65535, "default": 1},
    "mode": {"type": "string", "enum": ["hard", "soft"], "default": "hard"},
    "name": {"type": "string", "pattern": "^[a-z]+$", "maxLength": 5},
    "labels": {"type": "object", "additionalProperties": {"type": "string"}},
    "free": {"type": "object"},
    "kept": {"type": "object", "x-kubernetes-preserve-unknown-fields": True, "properties": {"x": {"type": "integer"}}},
    "env": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
            "items": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}}},
}}}}


def test_type_error_is_worded_as_the_api_server_words_it():
    assert errors(JOB, {"spec": {"minAvailable": "two"}}) == [
        'spec.minAvailable: Invalid value: "string": spec.minAvailable in body must be of type integer: "string"']


def test_bounds_enum_pattern_and_length_in_kube_openapi_order():
    got = errors(JOB, {"spec": {"weight": 70000, "mode": "medium", "name": "Toolong"}})
    assert got == ['spec.weight: Invalid value: 70000: spec.weight in body should be less than or equal to 65535',
                   'spec.mode: Unsupported value: "medium": supported values: "hard", "soft"',
                   'spec.name: Too long: may not be more than 5 bytes']
    assert errors(JOB, {"spec": {"name": "ab1"}}) == [
        "spec.name: Invalid value: \"ab1\": spec.name in body should match '^[a-z]+$'"]


def test_a_whole_float_passes_as_an_integer_and_floats_print_as_go_does():
    assert errors(JOB, {"spec": {"weight": 2.0}}) == []
    assert go_float(1e6) == "1e+06" and go_float(100000.0) == "100000" and go_float(0.9) == "0.9"


def test_admit_prunes_defaults_and_mutates_before_validating():
    def raise_zero(obj):   # a stand-in mutating webhook: weight 0 becomes 1 (Volcano's queue webhook)
        spec = obj["spec"]
        if spec.get("weight") == 0:
            spec["weight"] = 1
        return obj

    judged = apiextensions.admit({"spec": {"weight": 0, "bogus": 1, "free": {"a": 1}, "mode": None}}, prepare(JOB),
                                 raise_zero)
    assert judged.errors == []
    assert judged.stored["spec"] == {"weight": 1, "free": {}, "mode": "hard"}
    assert [(u.path, u.in_struct, u.apply_path) for u in judged.unknown] == [
        ("spec.bogus", True, ".spec.bogus"), ("spec.free.a", False, ".spec.free.a")]
    assert [e.error() for e in apiextensions.admit({"spec": {"weight": 0}}, prepare(JOB)).errors] == [
        "spec.weight: Invalid value: 0: spec.weight in body should be greater than or equal to 1"]


def test_a_type_error_is_not_hidden_by_a_mutation_that_defaults_the_field():
    judged = apiextensions.admit({"spec": {"minAvailable": "two"}}, prepare(JOB),
                                 lambda o: {**o, "spec": {**o["spec"], "minAvailable": 1}})
    assert [e.field for e in judged.errors] == ["spec.minAvailable"]


def test_preserve_unknown_fields_keeps_unknown_and_walks_declared():
    assert pruning.unknown_fields({"spec": {"kept": {"y": 1, "x": 2}}}, prepare(JOB)) == []
    assert pruning.unknown_fields({"spec": {"kept": {"x": 2}}, "metadata": {"nome": "a"}}, prepare(JOB)) == [
        "metadata.nome"]


def test_a_server_side_apply_names_map_list_items_by_their_keys():
    judged = apiextensions.admit({"spec": {"env": [{"name": "A", "bogus": 1}], "labels": {"x": "y"}}}, prepare(JOB))
    assert [(u.path, u.apply_path) for u in judged.unknown] == [("spec.env[0].bogus", '.spec.env[name="A"].bogus')]


def test_duplicate_map_list_key_is_a_duplicate_value():
    judged = apiextensions.admit({"spec": {"env": [{"name": "A"}, {"name": "A"}]}}, prepare(JOB))
    assert [e.error() for e in judged.errors] == [
        'spec.env[1]: Duplicate value: map[string]interface {}{"name":"A"}']


def test_unknown_field_level_follows_the_engine():
    kubectl, pulumi, flux = (fieldvalidation.ENGINES[k] for k in ("kubectl", "pulumi", "flux"))
    assert fieldvalidation.outcome(kubectl, "spec.bogusTop", True, "ns", "j", "g/v1, Kind=Job") == (
        "refused", 'strict decoding error: unknown field "spec.bogusTop"')
    assert fieldvalidation.outcome(pulumi, "spec.bogusTop", True, "ns", "j", "g/v1, Kind=Job") == (
        "pruned", 'unknown field "spec.bogusTop"')
    assert fieldvalidation.outcome(flux, "spec.bogusTop", True, "ns", "j", "g/v1, Kind=Job") == (
        "refused", "failed to create typed patch object (ns/j; g/v1, Kind=Job): .spec.bogusTop: field not declared "
                   "in schema")
    assert fieldvalidation.outcome(flux, "spec.free.a", False, "ns", "j", "g/v1, Kind=Job")[0] == "pruned"
    assert fieldvalidation.engine_for(None, in_stack=False).key == "kubectl"
    assert fieldvalidation.engine_for("none", in_stack=True).key == "pulumi"


def test_unsupported_formats_are_dropped_and_supported_ones_checked():
    schema = {"type": "object", "properties": {"a": {"type": "string", "format": "int32"},
                                               "b": {"type": "string", "format": "date-time"}}}
    assert errors(schema, {"a": "x", "b": "2024-01-02T03:04:05Z"}) == []
    assert errors(schema, {"b": "yesterday"}) == [
        'b: Invalid value: "yesterday": b in body must be of type date-time: "yesterday"']
    assert formats.valid("ipv4", "10.0.0.1") and not formats.valid("ipv4", "10.0.0")
    assert formats.valid("cidr", "10.0.0.0/8") and not formats.valid("cidr", "10.0.0.0/33")


def test_hostile_input_ends_quickly():
    deep: dict = {}
    node = deep
    for _ in range(200):
        node["a"] = {}
        node = node["a"]
    with pytest.raises(apiextensions.LimitError):
        apiextensions.admit({"spec": deep}, prepare(JOB))
    with pytest.raises(apiextensions.LimitError):
        prepare(_deep_schema(200))
    # Go's regexp semantics through RE2 (linear time): a backtracking engine would not return here.
    schema = {"type": "object", "properties": {"s": {"type": "string", "pattern": "^(a+)+$"}}}
    assert errors(schema, {"s": "a" * 50_000 + "!"}) == [
        "s: Invalid value: \"" + "a" * 50_000 + "!\": s in body should match '^(a+)+$'"]
    assert errors(schema, {"s": "a" * 50_000}) == []


def _deep_schema(depth: int) -> dict:
    schema: dict = {"type": "object"}
    node = schema
    for _ in range(depth):
        node["properties"] = {"a": {"type": "object"}}
        node = node["properties"]["a"]
    return schema


def test_a_hostile_schema_loses_keywords_of_the_wrong_shape_instead_of_misreading_them():
    schema = prepare({"type": "object", "required": "name", "properties": {
        "a": {"type": "string", "enum": "xyz", "maxLength": -1, "pattern": 5},
        "b": {"type": "string", "pattern": "(?=lookahead)"}}})
    assert "required" not in schema and set(schema["properties"]["a"]) == {"type"}
    assert errors(schema, {"a": "q"}) == []
    # a pattern Go's regexp refuses is reported as the API server reports it, not raised
    assert errors(schema, {"b": "x"}) == [
        "b: Invalid value: \"x\": b in body should match '(?=lookahead), but pattern is invalid: error parsing "
        "regexp: invalid or unsupported Perl syntax: `(?=`'"]


def test_every_kube_openapi_message_reads_as_its_template():
    """kube-openapi pkg/validation/errors/schema.go's templates, as apiextensions wraps them."""
    schema = {"type": "object", "properties": {
        "s": {"type": "string", "minLength": 3},
        "l": {"type": "array", "minItems": 2},
        "o": {"type": "object", "minProperties": 1},
        "x": {"type": "number", "minimum": 1.5, "exclusiveMinimum": True},
        "y": {"type": "integer", "maximum": 10, "exclusiveMaximum": True},
        "m": {"type": "integer", "multipleOf": 4},
        "f": {"type": "number", "multipleOf": 0.5},
        "d": {"type": "string", "format": "date"},
        "i": {"type": "string", "format": "ipv4"},   # a number where a formatted string belongs
    }}
    assert errors(schema, {"s": "ab", "l": [1], "o": {}, "x": 1.5, "y": 10, "m": 6, "f": 0.7, "d": "2024-13-01",
                           "i": 5}) == [
        's: Invalid value: "ab": s in body should be at least 3 chars long',
        "l: Invalid value: 1: l in body should have at least 2 items",
        "o: Invalid value: 0: o in body should have at least 1 properties",
        "x: Invalid value: 1.5: x in body should be greater than 1.5",
        "y: Invalid value: 10: y in body should be less than 10",
        "m: Invalid value: 6: m in body should be a multiple of 4",
        "f: Invalid value: 0.7: f in body should be a multiple of 0.5",
        'd: Invalid value: "2024-13-01": d in body must be of type date: "2024-13-01"',
        'i: Invalid value: "int64": i in body must be of type ipv4: "int64"',
    ]


def test_a_crd_folder_with_hostile_files_loads_what_it_can_and_says_what_it_skipped(tmp_path):
    from modules.upstream.apiextensions import crds

    def crd(kind: str, schema: dict) -> str:
        import yaml

        return yaml.safe_dump({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                               "metadata": {"name": f"{kind.lower()}s.example.com"},
                               "spec": {"group": "example.com", "names": {"kind": kind, "plural": f"{kind.lower()}s"},
                                        "versions": [{"name": "v1", "served": True, "storage": True,
                                                      "schema": {"openAPIV3Schema": schema}}]}})

    (tmp_path / "good.yaml").write_text(crd("Good", {"type": "object"}))
    deep: dict = {"type": "array"}
    node = deep
    for _ in range(70):   # 70 schema levels in about 80 YAML levels (within yamlio's 100)
        node["items"] = {"type": "array"}
        node = node["items"]
    (tmp_path / "deep.yaml").write_text(crd("Deep", deep))
    (tmp_path / "broken.yaml").write_text("kind: CustomResourceDefinition\nspec: [unclosed\n")
    result = crds.read_folder(tmp_path)
    assert set(result.by_gvk) == {"example.com/v1/Good"}
    assert any("deep.yaml" in p and "deeper than 64" in p for p in result.problems)
    assert any(p.startswith("broken.yaml: not read") for p in result.problems)


@pytest.mark.parametrize("text, ok", [("fe80::1", True), ("fe80::1%eth0", False), ("2001:db8::1", True)])
def test_ipv6_format_reads_as_go_parse_ip_without_a_zone(text, ok):
    """kube-openapi's ipv6 format is Go's net.ParseIP with a colon: an IPv6 zone is no address
    (Python's ipaddress would take one); one reader, the vocabulary's sloppy_ip, decides."""
    assert formats.valid("ipv6", text) is ok
