"""kube-openapi's schema validator as apiextensions-apiserver runs it on a custom resource, built on
the ``jsonschema`` library: jsonschema walks the schema and the object (descending into
``properties``, ``additionalProperties``, ``items`` and the ``anyOf``/``allOf``/``oneOf``/``not``
branches and keeping each error's path); the keywords are ours, because Kubernetes' meaning and
wording of each differ from the JSON-Schema drafts (``nullable``, ``x-kubernetes-int-or-string``,
Go's regexp, the formats apiextensions supports, a float that is a whole number passing as an
integer).

Upstream (kubernetes/kube-openapi at 589584f1c912, the version apiextensions-apiserver v0.35.0
pins; ``pkg/validation/validate``): ``SchemaValidator.Validate`` runs, in this order, the type
validator (``type.go``), the ``anyOf``/``oneOf``/``allOf``/``not`` validator (``schema_props.go``),
the string validator (``maxLength``, ``minLength``, ``pattern``: the first failure only), the
format validator, the number validator (``multipleOf``, ``minimum``, ``maximum``), the slice
validator (items first, then ``minItems``, ``maxItems``, ``uniqueItems``), the common validator
(``enum``) and the object validator (``minProperties``, ``maxProperties``, the properties, then
``required``). A null value meets only the type and enum checks. The order is kept here through
jsonschema's ``applicable_validators``.

apiextensions turns each kube-openapi error into a ``field.Error``
(``pkg/apiserver/validation/validation.go`` ``kubeOpenAPIResultToFieldErrors``): required ->
``Required``; enum -> ``NotSupported`` (values as strings, others as JSON); maxLength ->
``TooLong``; maxItems and maxProperties -> ``TooMany``; a type error -> ``TypeInvalid`` with the
value's type name as the value; everything else -> ``Invalid`` with kube-openapi's message; the
``anyOf``/``allOf``/``oneOf``/``not`` summaries are not field errors there and land on the nil path
(printed ``<nil>``) with an empty value.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field as dc_field
from typing import Any, Callable, Iterator

from jsonschema import ValidationError, validators

from modules.core.patterns import PatternError, compile_go, go_error
from modules.upstream import field as fe
from modules.upstream.field import FieldError

from . import formats
from .gofmt import go_number, go_quote, printed

NIL_PATH = "<nil>"    # how a nil *field.Path prints


@dataclass
class Issue:
    """One kube-openapi error before apiextensions turns it into a field.Error."""

    code: str   # required, enum, too_long, max_items, max_props, type, invalid, composite
    value: Any = ""
    text: Callable[[str], str] = lambda name: ""   # kube-openapi's message for the error's path name
    values: list = dc_field(default_factory=list)
    limit: int = -1


def _fail(issue: Issue, *path: Any) -> ValidationError:
    error = ValidationError("kube-openapi", path=path)
    error.k8s = issue   # type: ignore[attr-defined]
    return error


def kind_of(value: Any) -> str:
    """The JSON type name kube-openapi gives a decoded value (``schemaInfoForType``)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _go_format_of(value: Any) -> str:
    """The Go format kube-openapi infers for a non-string value (int64, float64 or none)."""
    return {"integer": "int64", "number": "float64"}.get(kind_of(value), "")


def _type_error(type_name: str, found: Any) -> Issue:
    """``errors.InvalidType``: the value is the found type (or format) name, quoted in the message."""
    return Issue("type", found, lambda name: f"{name} in body must be of type {type_name}: {go_quote(found)}")


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


# -- the keywords, in kube-openapi's order ------------------------------------------------------------

def _type(validator, schema: dict, instance: Any, _schema: dict) -> Iterator[ValidationError]:
    types, fmt = schema.get("type") or [], schema.get("format") or ""
    if not types and not fmt:
        return
    if instance is None:
        if types and "null" not in types and not schema.get("nullable"):
            yield _fail(_type_error(",".join(types), "null"))
        return
    found = kind_of(instance)
    float_int = found == "number" and float(instance).is_integer() and "integer" in types
    int_float = found == "integer" and "number" in types
    if not isinstance(instance, (str, list)) and fmt and not (found in types or float_int or int_float):
        yield _fail(_type_error(fmt, _go_format_of(instance)))
        return
    if "number" not in types and "integer" not in types and fmt and isinstance(instance, (str, list)):
        return
    if not (found in types or float_int or int_float):
        yield _fail(_type_error(",".join(types), found))


def _branches(validator, schema: dict, instance: Any, _schema: dict) -> Iterator[ValidationError]:
    """``schemaPropsValidator``: anyOf, oneOf, allOf, not (each branch on the same path); a null
    value meets only the type and enum checks (``SchemaValidator.Validate``), not these."""
    if instance is None:
        return
    if schema.get("anyOf"):
        results = [list(validator.descend(instance, sub)) for sub in schema["anyOf"]]
        if all(results):
            yield _fail(Issue("composite", "", lambda name: f"{go_quote(name)} must validate at least one schema "
                                                             "(anyOf)"))
            yield from results[0]
    if schema.get("oneOf"):
        results = [list(validator.descend(instance, sub)) for sub in schema["oneOf"]]
        passed = sum(1 for r in results if not r)
        if passed != 1:
            extra = "Found none valid" if passed == 0 else f"Found {passed} valid alternatives"
            yield _fail(Issue("composite", "", lambda name: f"{go_quote(name)} must validate one and only one "
                                                             f"schema (oneOf). {extra}"))
            if passed == 0:
                yield from results[0]
    if schema.get("allOf"):
        results = [list(validator.descend(instance, sub)) for sub in schema["allOf"]]
        for result in results:
            yield from result
        passed = sum(1 for r in results if not r)
        if passed != len(results):
            extra = ". None validated" if passed == 0 else ""
            yield _fail(Issue("composite", "", lambda name: f"{go_quote(name)} must validate all the schemas "
                                                             f"(allOf){extra}"))
    if isinstance(schema.get("not"), dict) and not list(validator.descend(instance, schema["not"])):
        yield _fail(Issue("composite", "", lambda name: f"{go_quote(name)} must not validate the schema (not)"))


def _string(validator, schema: dict, instance: Any, _schema: dict) -> Iterator[ValidationError]:
    if not isinstance(instance, str):
        return
    length = len(instance)
    if schema.get("maxLength") is not None and length > schema["maxLength"]:
        limit = schema["maxLength"]
        yield _fail(Issue("too_long", instance, lambda name: f"{name} in body should be at most {limit} chars long",
                          limit=limit))
        return
    if schema.get("minLength") is not None and length < schema["minLength"]:
        limit = schema["minLength"]
        yield _fail(Issue("invalid", instance, lambda name: f"{name} in body should be at least {limit} chars long"))
        return
    pattern = schema.get("pattern")
    if pattern:
        try:
            matched = compile_go(pattern).found_in(instance)
        except PatternError:
            shown = f"{pattern}, but pattern is invalid: {go_error(pattern)}"
            yield _fail(Issue("invalid", instance, lambda name: f"{name} in body should match '{shown}'"))
            return
        if not matched:
            yield _fail(Issue("invalid", instance, lambda name: f"{name} in body should match '{pattern}'"))


def _format(validator, schema: dict, instance: Any, _schema: dict) -> Iterator[ValidationError]:
    fmt = schema.get("format")
    if fmt and isinstance(instance, str) and not formats.valid(schema["x-format"], instance):
        yield _fail(Issue("type", instance, lambda name: f"{name} in body must be of type {fmt}: {go_quote(instance)}"))


def _bound(instance: Any, bound: float) -> str:
    """The bound as the message prints it: ``int64(bound)`` against an integer, a float64 otherwise."""
    return str(int(bound)) if isinstance(instance, int) else go_number(float(bound))


def _number(validator, schema: dict, instance: Any, _schema: dict) -> Iterator[ValidationError]:
    if not _is_number(instance):
        return
    factor = schema.get("multipleOf")
    if factor is not None and _is_number(factor):
        if factor <= 0:
            yield _fail(Issue("invalid", factor, lambda name: f"factor MultipleOf declared for {name} must be "
                                                               f"positive: {go_number(factor)}"))
        elif not _multiple(instance, factor):
            shown = _bound(instance, factor)
            yield _fail(Issue("invalid", instance, lambda name: f"{name} in body should be a multiple of {shown}"))
    for key, exclusive_key, below in (("minimum", "exclusiveMinimum", True), ("maximum", "exclusiveMaximum", False)):
        bound = schema.get(key)
        if bound is None or not _is_number(bound):
            continue
        limit = int(bound) if isinstance(instance, int) else float(bound)
        exclusive = bool(schema.get(exclusive_key))
        if below:
            broken = instance <= limit if exclusive else instance < limit
            words = "greater than" if exclusive else "greater than or equal to"
        else:
            broken = instance >= limit if exclusive else instance > limit
            words = "less than" if exclusive else "less than or equal to"
        if broken:
            shown = _bound(instance, bound)
            yield _fail(Issue("invalid", instance, lambda name, w=words, s=shown: f"{name} in body should be {w} {s}"))


def _multiple(value: float, factor: float) -> bool:
    if isinstance(value, int) and isinstance(factor, int) or (isinstance(value, int) and float(factor).is_integer()):
        return value % int(factor) == 0
    ratio = value * (1 / factor) if factor < 1 else value / factor
    return float(ratio).is_integer()


def _size_bounds(schema: dict, size: int, unit: str, over: str) -> Iterator[ValidationError]:
    """``min<unit>``/``max<unit>`` (``Items`` of an array, ``Properties`` of an object); ``over`` codes
    the too-many error."""
    low, high, noun = schema.get(f"min{unit}"), schema.get(f"max{unit}"), unit.lower()
    if low is not None and size < low:
        yield _fail(Issue("invalid", size, lambda name: f"{name} in body should have at least {low} {noun}"))
    if high is not None and size > high:
        yield _fail(Issue(over, size, lambda name: f"{name} in body should have at most {high} {noun}", limit=high))


def _slice(validator, schema: dict, instance: Any, _schema: dict) -> Iterator[ValidationError]:
    if not isinstance(instance, list):
        return
    items = schema.get("items")
    if isinstance(items, dict):
        for index, item in enumerate(instance):
            yield from validator.descend(item, items, path=index)
    size = len(instance)
    yield from _size_bounds(schema, size, "Items", "max_items")
    if schema.get("uniqueItems") and len({json.dumps(v, sort_keys=True) for v in instance}) != size:
        yield _fail(Issue("invalid", "", lambda name: f"{name} in body shouldn't contain duplicates"))


def _enum(validator, schema: dict, instance: Any, _schema: dict) -> Iterator[ValidationError]:
    values = schema.get("enum")
    if not values or any(_enum_match(instance, v) for v in values):
        return
    yield _fail(Issue("enum", instance, lambda name: f"{name} in body should be one of {values}", values=list(values)))


def _enum_match(data: Any, allowed: Any) -> bool:
    """``reflect.DeepEqual`` after Go's conversion of the value to the enum entry's type."""
    if data is None or allowed is None:
        return False
    if isinstance(allowed, bool) or isinstance(data, bool):
        return isinstance(allowed, bool) and isinstance(data, bool) and data == allowed
    if isinstance(allowed, (int, float)) and _is_number(data):
        return (int(data) if isinstance(allowed, int) else float(data)) == allowed
    if isinstance(allowed, str) and isinstance(data, int):   # Go converts an integer to a one-rune string
        return (chr(data) if 0 <= data <= 0x10FFFF and not 0xD800 <= data <= 0xDFFF else "\ufffd") == allowed
    return type(data) is type(allowed) and data == allowed


def _object(validator, schema: dict, instance: Any, _schema: dict) -> Iterator[ValidationError]:
    if not isinstance(instance, dict):
        return
    yield from _size_bounds(schema, len(instance), "Properties", "max_props")
    properties = schema.get("properties") or {}
    extra = schema.get("additionalProperties")
    for key, value in instance.items():
        if key in properties:
            yield from validator.descend(value, properties[key], path=key)
        elif extra is False:
            yield _fail(Issue("invalid", key, lambda name, k=key: f"{name}.{k} in body is a forbidden property"))
        elif isinstance(extra, dict):
            yield from validator.descend(value, extra, path=key)
    for key in schema.get("required") or ():
        if key not in instance:
            yield _fail(Issue("required", "", lambda name: f"{name} in body is required"), key)


ORDER = (("$type", _type), ("$branches", _branches), ("$string", _string), ("$format", _format),
         ("$number", _number), ("$slice", _slice), ("$enum", _enum), ("$object", _object))


def _applicable(schema: Any) -> list[tuple[str, Any]]:
    return [(keyword, schema) for keyword, _ in ORDER] if isinstance(schema, dict) else []


KubeOpenAPI = validators.create(meta_schema={"$id": "trainstack:kube-openapi-structural"},
                                validators=dict(ORDER), applicable_validators=_applicable)


def path_name(path) -> str:
    """kube-openapi's path name: ``a.b[0].c`` (a map key joined with a dot, as a property is)."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out = f"{out}.{part}" if out else str(part)
    return out


def to_field_error(error: ValidationError, root: str = "") -> FieldError:
    """``kubeOpenAPIResultToFieldErrors`` for one error (``root``: the field path validated)."""
    issue: Issue = error.k8s   # type: ignore[attr-defined]
    name = path_name(error.absolute_path)
    where = ".".join(p for p in (root, name) if p) or (root or NIL_PATH)
    if issue.code == "composite":
        return fe.invalid(root or NIL_PATH, "", issue.text(name))
    text = issue.text(name)
    if issue.code == "required":
        return fe.required(where)
    if issue.code == "enum":
        shown = [v if isinstance(v, str) else json.dumps(v, separators=(",", ":")) for v in issue.values]
        return fe.not_supported(where, printed(issue.value), shown)
    if issue.code == "too_long":
        return fe.too_long(where, issue.limit)
    if issue.code in ("max_items", "max_props"):
        return fe.too_many(where, issue.value, issue.limit)
    if issue.code == "type":
        return fe.type_invalid(where, printed(issue.value), text)
    return fe.invalid(where, printed(issue.value), text)


def is_type_error(error: FieldError) -> bool:
    """Whether ``error`` is one of kube-openapi's type errors (apimachinery's ``TypeInvalid``: a wrong
    JSON type or a string not in its format)."""
    return error.type is fe.ErrorType.TYPE_INVALID


def validate(schema: dict, instance: Any, root: str = "") -> list[FieldError]:
    """The field errors of ``instance`` against a prepared schema (``structural.prepare``)."""
    return [to_field_error(error, root) for error in KubeOpenAPI(schema).iter_errors(instance)]
