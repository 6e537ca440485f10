"""Config loading details: secure values, project discovery, Pulumi config parity, defaults."""
from __future__ import annotations

import shutil

from modules.core.config import build_stack, load_project, load_stack, pulumi_config_map, stack_schema
from modules.core.output import bundle_files
from modules.core.render import render
from modules.core.schema import apply_defaults, validate, validator_for
from tests.support.cli import ROOT, run


def project_with(tmp_path, text: str):
    shutil.copy(ROOT / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    (tmp_path / "stacks").mkdir()
    (tmp_path / "stacks" / "Pulumi.s.yaml").write_text(text)
    return tmp_path


def test_a_stack_with_only_a_fabric_renders(tmp_path):
    project = project_with(tmp_path, "config:\n  trainstack:fabric: {source: generated}\n")
    assert run("render", "s", "--project", str(project)).code == 0
    assert (project / "deploy" / "s" / "kustomization.yaml").is_file()


def test_schema_defaults_are_valid():
    schema = stack_schema()
    values = apply_defaults(schema, {"fabric": {"source": "generated"}})
    validate(schema, values, "x", lambda parts: ".".join(map(str, parts)))
    assert not list(validator_for(schema).iter_errors(values))


# Keywords whose verdict turns on which keys an object has (``required``: on the keys it names), or on
# the whole value at or below them, defaults included.
SENSITIVE_KEYWORDS = {"minProperties", "maxProperties", "dependentRequired", "dependentSchemas", "if", "then",
                      "else", "unevaluatedProperties", "unevaluatedItems", "propertyNames", "not", "oneOf", "anyOf",
                      "allOf", "uniqueItems", "enum", "const", "contains"}


def test_no_default_can_change_a_stack_verdict():
    """`build_stack` validates what the user wrote and fills in the defaults after: the verdict is
    the same as on the filled-in values while every default is valid where it goes, ``required``
    names no defaulted property, and no keyword that looks at keys or at whole values sits on a
    schema with a default at or below it."""
    checked = []

    def walk(node, path: str) -> bool:
        """Check ``node``; whether a default sits at or below it."""
        if isinstance(node, list):
            return any([walk(item, f"{path}[{i}]") for i, item in enumerate(node)])
        if not isinstance(node, dict):
            return False
        props = node.get("properties") if isinstance(node.get("properties"), dict) else {}
        defaulted = [k for k, sub in props.items() if isinstance(sub, dict) and "default" in sub]
        assert not set(defaulted) & set(node.get("required") or ()), path
        for key in defaulted:
            sub = props[key]
            assert not list(validator_for(sub).iter_errors(apply_defaults(sub, sub["default"]))), f"{path}.{key}"
            checked.append(f"{path}.{key}")
        below = any([walk(value, f"{path}.{key}") for key, value in node.items()]) or bool(defaulted)
        assert not (below and SENSITIVE_KEYWORDS & node.keys()), (path, sorted(SENSITIVE_KEYWORDS & node.keys()))
        return below

    walk(stack_schema(), "")
    assert len(checked) > 50   # the walk saw the modules' defaults


def test_secure_values_outside_trainstack_are_never_written(tmp_path):
    project = project_with(tmp_path, "config:\n  kubernetes:kubeconfig: {secure: v1:SECRETCIPHERTEXT}\n"
                                     "  trainstack:fabric: {source: generated}\n")
    stack = load_stack(load_project(project), "s")
    assert "kubernetes:kubeconfig" not in pulumi_config_map(stack)
    assert "SECRETCIPHERTEXT" not in repr(stack.other)
    files = bundle_files(render(stack), stack.file)
    assert not any(b"SECRETCIPHERTEXT" in data for data in files.values())


def test_commands_work_from_a_subfolder_and_with_project(tmp_path):
    result = run("validate", "dev", cwd=ROOT / "stacks" / "fabrics")
    assert result.code == 0 and "stacks/Pulumi.dev.yaml: valid" in result.out
    result = run("validate", "dev", "--project", str(ROOT), cwd=tmp_path)
    assert result.code == 0
    result = run("validate", "dev", cwd=tmp_path)
    assert result.code == 2 and "no Pulumi.yaml" in result.err


def test_project_config_defaults_apply_and_stack_overrides(tmp_path):
    project = project_with(tmp_path, "config:\n  trainstack:fabric: {source: generated}\n")
    pulumi_yaml = (project / "Pulumi.yaml").read_text()
    (project / "Pulumi.yaml").write_text(pulumi_yaml + "config:\n  trainstack:environment:\n    default: staging\n")
    load_project.cache_clear()
    stack = load_stack(load_project(project), "s")
    assert stack.environment == "staging"
    (project / "stacks" / "Pulumi.s.yaml").write_text("config:\n  trainstack:fabric: {source: generated}\n"
                                                      "  trainstack:environment: prod\n")
    assert load_stack(load_project(project), "s").environment == "prod"


def test_pulumi_config_map_round_trips():
    """What the CLI would hand the program parses back to the same configuration."""
    project = load_project(ROOT)
    for name in project.stacks():
        stack = load_stack(project, name)
        flat = pulumi_config_map(stack)
        import json

        decoded = {k: (v if k == "trainstack:environment" or not v.startswith(("{", "[")) else json.loads(v))
                   for k, v in flat.items()}
        again = build_stack(project, name, decoded, stack.file)
        assert again.values == stack.values
