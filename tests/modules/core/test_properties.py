"""Property tests: no configuration, however odd, crashes the renderer with anything but InputError."""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from modules.core import yamlio
from modules.core.config import build_stack, load_project, stack_schema
from modules.core.errors import InputError
from modules.core.render import render
from tests.support.cli import ROOT

PROJECT = load_project(ROOT)

JUNK = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 10) | st.floats(allow_nan=False, allow_infinity=False, width=16)
    | st.sampled_from(["", "x", "500GB", "-1", "1Gi", "{n}", "[1-3]", "gpu-[01-04]", "ring", "^", "a b"]),
    lambda inner: (st.lists(inner, max_size=3)
                   | st.dictionaries(st.sampled_from(["a", "name", "tier", "x"]), inner, max_size=3)),
    max_leaves=6)

SAMPLE_STRINGS = ["gpu-{n:03d}", "leaf-{leaf}", "500Gi", "4", "250m", "team-a", "mlx5_0", "=eth0", "WARN", "x", ".*"]


def like(schema: dict, depth: int = 0) -> st.SearchStrategy:
    """Values shaped like the schema most of the time, junk some of the time."""
    if depth > 5:
        return JUNK
    options = []
    if "enum" in schema:
        options.append(st.sampled_from(schema["enum"]))
    if "default" in schema:
        options.append(st.just(schema["default"]))
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind]
    if "integer" in kinds or "number" in kinds:
        lo = schema.get("minimum", -2)
        options.append(st.integers(int(lo) - 1, int(lo) + 6))
    if "string" in kinds and "enum" not in schema:
        options.append(st.sampled_from(SAMPLE_STRINGS))
    if "boolean" in kinds:
        options.append(st.booleans())
    if "array" in kinds and isinstance(schema.get("items"), dict):
        options.append(st.lists(like(schema["items"], depth + 1), max_size=3))
    if "object" in kinds and "properties" in schema:
        props, required = schema["properties"], set(schema.get("required", ()))
        options.append(st.fixed_dictionaries({k: like(v, depth + 1) for k, v in props.items() if k in required},
                                             optional={k: like(v, depth + 1) for k, v in props.items()
                                                       if k not in required}))
    if "object" in kinds and isinstance(schema.get("additionalProperties"), dict):
        options.append(st.dictionaries(st.sampled_from(["a", "b", "NCCL_DEBUG"]),
                                       like(schema["additionalProperties"], depth + 1), max_size=2))
    if not options:
        return JUNK
    shaped = st.one_of(*options)
    # Mostly well-shaped values, so rendering goes deep; now and then junk at any level.
    return st.integers(0, 14).flatmap(lambda i: JUNK if i == 0 else shaped)


_SCHEMA = stack_schema()
CONFIGS = st.fixed_dictionaries(
    {"fabric": like(_SCHEMA["properties"]["fabric"], 1)},
    optional={k: like(v, 1) for k, v in _SCHEMA["properties"].items() if k != "fabric"})


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(CONFIGS)
def test_random_configs_render_or_raise_config_error(values):
    flat = {f"trainstack:{k}": v for k, v in values.items()} if isinstance(values, dict) else {"trainstack:x": values}
    try:
        render(build_stack(PROJECT, "h", flat, "stacks/Pulumi.h.yaml"))
    except InputError as err:
        assert str(err).startswith("stacks/") and "\n" not in str(err)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_arbitrary_text_parses_or_raises_config_error(text):
    try:
        yamlio.loads(text, "f.yaml")
    except InputError as err:
        assert str(err).startswith("f.yaml")
