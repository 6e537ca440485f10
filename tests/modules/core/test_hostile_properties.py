"""Hypothesis properties over hostile input: generated stack files, manifests and stack
names that are deep, aliased, huge, oddly typed or oddly named. Every command ends with exit 0, 1
or 2 and at most one line of error, never a traceback or an internal error, and nothing outside
the output folder changes. Cheap on purpose (few examples, small inputs); the bounded-subprocess
corpus in test_hostile.py holds the expensive cases."""
from __future__ import annotations

import json
import os
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.modules.core.test_hostile import snapshot
from tests.support.cli import run

PULUMI_YAML = "name: trainstack\nstackConfigDir: stacks\n"
FABRIC = "  trainstack:fabric: {source: generated}\n"
SETTINGS = settings(max_examples=12, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
KEYS = ["trainstack:volcano", "trainstack:nccl", "trainstack:storage", "trainstack:fabric", "trainstack:probe",
        "trainstack:workloads", "trainstack:bogus", "kubernetes:context", "name", "claims", "size", "<<"]
ODD_SCALARS = st.sampled_from([
    "9" * 40, "-" + "9" * 40, ".nan", ".inf", "-.inf", "0x" + "f" * 40, "1e999", "'\\x00'", '"\\x1b[31m"',
    "~", "!!binary aGVsbG8=", "!!python/object:os.system x", "&a x", "*missing", "9e99Ei", "''", "'a b'",
    "'" + "x" * 300 + "'", "https://u:pw@h", "[]", "{}", "true", "2001-01-01"])


def _scalar() -> st.SearchStrategy[str]:
    return ODD_SCALARS | st.integers(-10**6, 10**6).map(str) | st.text(
        st.characters(blacklist_categories=("Cs",)), max_size=12).map(json.dumps)


def _yaml(depth: int) -> st.SearchStrategy[str]:
    """A YAML flow value as text: nested lists and maps, anchors and aliases, odd scalars."""
    return st.recursive(
        _scalar(),
        lambda inner: st.lists(inner, max_size=3).map(lambda xs: "[" + ", ".join(xs) + "]")
        | st.lists(st.tuples(st.sampled_from(KEYS), inner), max_size=3).map(
            lambda kv: "{" + ", ".join(f"{json.dumps(k)}: {v}" for k, v in kv) + "}")
        | st.tuples(st.sampled_from(["a", "b"]), inner).map(lambda t: f"&{t[0]} {t[1]}")
        | st.sampled_from(["*a", "*b"])
        | st.integers(depth, depth * 20).map(lambda n: "[" * n + "]" * n),
        max_leaves=8)


def _project(root: Path, stack_text: str, extra: dict | None = None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "Pulumi.yaml").write_text(PULUMI_YAML)
    (root / "stacks").mkdir(exist_ok=True)
    (root / "stacks" / "Pulumi.t.yaml").write_text(stack_text)
    for rel, text in (extra or {}).items():
        (root / rel).write_text(text)
    return root


def _assert_clean(result, root: Path, before: dict) -> None:
    assert result.code in (0, 1, 2), (result.code, result.err[-500:])
    assert "Traceback" not in result.err and "please report" not in result.err, result.err[-500:]
    assert len([line for line in result.err.splitlines() if line.startswith("error:")]) <= 1
    assert snapshot(root) == before


@SETTINGS
@given(key=st.sampled_from(KEYS), value=_yaml(5))
def test_hostile_stack_values(tmp_path_factory, key, value):
    root = _project(tmp_path_factory.mktemp("stack"), "config:\n" + FABRIC + f"  {json.dumps(key)}: {value}\n")
    before = snapshot(root)
    for command in ("validate", "render"):
        _assert_clean(run(command, "t", "--project", str(root)), root, before)


@SETTINGS
@given(document=_yaml(5), kind=_scalar())
def test_hostile_manifests(tmp_path_factory, document, kind):
    manifest = f"apiVersion: v1\nkind: {kind}\nmetadata: {{name: x}}\nspec: {document}\n---\n{document}\n"
    root = _project(tmp_path_factory.mktemp("manifest"), "config:\n" + FABRIC, {"m.yaml": manifest})
    before = snapshot(root)
    _assert_clean(run("check", "t", "--project", str(root), "--manifests", str(root / "m.yaml")), root, before)


@SETTINGS
@given(name=st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), min_size=1, max_size=30)
       | st.sampled_from([".", "..", "a/b", "../x", "/etc", "t/../t", "T", "t.", "-t", "con", "a" * 300]))
def test_hostile_stack_names(tmp_path_factory, name):
    base = tmp_path_factory.mktemp("names")
    root = _project(base / "p", "config:\n" + FABRIC)
    (base / "outside").mkdir()
    (base / "outside" / "keep.txt").write_text("keep")
    before = snapshot(base, skip="out")
    for command in (["render", name, "--out", str(base / "out")], ["validate", name], ["fabric", name]):
        result = run(*command, "--project", str(root))
        _assert_clean(result, base, before)
    written = [p for p in (base / "out").rglob("*")] if (base / "out").exists() else []
    assert all(os.path.commonpath([p, base / "out" / "t"]) == str(base / "out" / "t") for p in written), written
