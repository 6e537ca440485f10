"""The Pulumi-native program: module components, Queue dependencies, per-module outputs, Pulumi
secrets (decrypted for the program, never written to deploy/), and a free stack name (`east`)."""
from __future__ import annotations

import json
import shutil

import pytest

from modules.core.bundle import queues_named
from modules.core.config import build_stack, load_project, load_stack, pulumi_config_map
from modules.core.errors import InputError
from modules.core.preview_engine import run_program
from modules.core.output import bundle_files
from modules.core.pulumi_adapter import component_type, module_outputs
from modules.core.render import render
from tests.support.cli import ROOT, run

CIPHERTEXT = "v1:AAAbbbCIPHERTEXTxyz"
PLAINTEXT = "wandb-key-PLAINTEXT-8f3a"


@pytest.fixture(scope="module")
def east(tmp_path_factory):
    """A copy of the project with `east`: the prod stack under another name, a production profile
    and one Pulumi secret."""
    root = tmp_path_factory.mktemp("east")
    shutil.copy(ROOT / "Pulumi.yaml", root / "Pulumi.yaml")
    shutil.copytree(ROOT / "stacks", root / "stacks")
    text = (ROOT / "stacks" / "Pulumi.prod.yaml").read_text()
    assert "  trainstack:environment: prod\n" in text
    text = text.replace("  trainstack:environment: prod\n",
                        "  trainstack:environment: east\n  trainstack:profile: production\n"
                        "  trainstack:secrets:\n  - name: wandb\n    data:\n"
                        f"      apiKey: {{secure: {CIPHERTEXT}}}\n")
    (root / "stacks" / "Pulumi.east.yaml").write_text(text)
    load_project.cache_clear()
    stack = load_stack(load_project(root), "east")
    return root, stack, render(stack)


@pytest.fixture(scope="module")
def east_program(east):
    """The program under mocks as `pulumi up -s east` runs it: the CLI hands the decrypted secret."""
    root, stack, _ = east
    config = pulumi_config_map(stack)
    secrets = json.loads(config["trainstack:secrets"])
    secrets[0]["data"]["apiKey"] = PLAINTEXT
    config["trainstack:secrets"] = json.dumps(secrets)
    outputs: dict = {}
    regs = run_program(root, "east", config, secret_keys=["trainstack:secrets"], outputs=outputs)
    return regs, outputs


def test_east_renders_and_checks_as_a_production_stack(east):
    root, stack, bundle = east
    assert stack.name == "east" and stack.environment == "east" and stack.production
    nccl = [r.obj for r in bundle.resources if r.kind == "ConfigMap" and r.name.startswith("nccl-")]
    assert nccl and all(cm["data"]["NCCL_DEBUG"] == "WARN" for cm in nccl)
    for command in ("validate", "render", "check"):
        result = run(command, "east", "--project", str(root))
        assert result.code == 0, (command, result.out, result.err)
    assert (root / "deploy" / "east" / "kustomization.yaml").is_file()


def test_profile_defaults_keep_the_old_environment_names(tmp_path):
    load_project.cache_clear()
    project = load_project(ROOT)
    fabric = {"trainstack:fabric": {"source": "generated"}}
    for environment, profile, debug in (("dev", "development", "INFO"), ("staging", "standard", "WARN"),
                                        ("prod", "production", "WARN"), ("east", "development", "INFO")):
        stack = build_stack(project, "x", {**fabric, "trainstack:environment": environment}, "x.yaml")
        assert stack.profile == profile and stack.production == (profile == "production")
        cms = [r.obj for r in render(stack).resources if r.kind == "ConfigMap" and r.name.startswith("nccl-")]
        assert cms[0]["data"]["NCCL_DEBUG"] == debug
    with pytest.raises(InputError, match=r"trainstack:environment: expected a Kubernetes name"):
        build_stack(project, "x", {**fabric, "trainstack:environment": "East Coast"}, "x.yaml")
    with pytest.raises(InputError, match=r'trainstack:profile: expected one of "development"'):
        build_stack(project, "x", {**fabric, "trainstack:profile": "prod"}, "x.yaml")


def test_every_object_is_a_child_of_its_module_component(east, east_program):
    _, stack, bundle = east
    regs, _ = east_program
    by_name = {r.name: r for r in regs}
    components = {r.name: r for r in regs if r.type.startswith("trainstack:index:")}
    assert set(components) == {i.module for i in bundle.items} | {"core"}
    assert components["volcano"].type == component_type("volcano") == "trainstack:index:Volcano"
    stack_urn = "urn:pulumi:east::trainstack::pulumi:pulumi:Stack::trainstack-east"
    for reg in regs:
        if reg.type.startswith("trainstack:index:") or reg.type.startswith("pulumi:providers:"):
            assert reg.parent == stack_urn, reg.name
        else:   # objects, chart releases, overlays, prerequisites and secrets alike
            assert reg.parent in {c.urn for c in components.values()}, reg.name
    for release in bundle.releases:
        assert by_name[release.key].parent == components[release.module].urn
    # stacks created before the components keep their resources: each child is aliased to the root
    for item in bundle.items:
        reg = by_name[item.key]
        assert reg.read or {"spec": {"noParent": True}} in reg.aliases, (item.key, reg.aliases)


def test_objects_that_name_a_queue_wait_for_it(east, east_program):
    _, _, bundle = east
    regs, _ = east_program
    urn = {r.name: r.urn for r in regs}
    users = 0
    for resource in bundle.resources:
        for queue in queues_named(resource.obj):
            if f"Queue/{queue}" in urn and resource.kind != "Queue":
                assert urn[f"Queue/{queue}"] in next(r for r in regs if r.name == resource.key).dependencies
                users += 1
    probes = [r for r in bundle.resources if r.module == "probe" and r.kind == "Job"]
    assert users >= len(probes) + 1    # the fabric probes too, which did not depend on their Queue before


def test_stack_and_component_outputs_per_module(east, east_program):
    _, _, bundle = east
    regs, outputs = east_program
    expected = module_outputs(bundle)
    hyper = sum(1 for r in bundle.resources if r.kind == "HyperNode")
    assert hyper > 0 and expected["fabric"]["hyperNodes"] == hyper
    assert expected["volcano"]["charts"]["volcano"].startswith("volcano@")
    assert "volcano-system" in expected["volcano"]["namespaces"]
    stack = outputs["urn:pulumi:east::trainstack::pulumi:pulumi:Stack::trainstack-east"]
    assert stack["hyperNodes"] == hyper
    assert stack["charts"] == {r.name: r.version for r in bundle.releases}
    assert stack["modules"]["fabric"]["hyperNodes"] == hyper
    volcano = next(r for r in regs if r.name == "volcano" and r.type == "trainstack:index:Volcano")
    assert volcano.outputs == expected["volcano"]


def test_secret_is_created_from_the_decrypted_value_and_kept_secret(east_program):
    regs, _ = east_program
    (secret,) = [r for r in regs if r.type == "kubernetes:core/v1:Secret"]
    assert secret.name == "Secret/training/wandb"
    assert secret.parent.endswith("trainstack:index:Core::core")
    string_data = secret.inputs["stringData"]
    assert string_data["4dabf18193072939515e22adb298388d"] == "1b47061264138c4ac30d75fd1eb44270"   # a secret
    assert string_data["value"] == {"apiKey": PLAINTEXT}
    assert any(d.endswith("Namespace::Namespace/training") for d in secret.dependencies)


def test_a_secure_value_never_reaches_deploy(east):
    root, stack, bundle = east
    assert not any(r.kind == "Secret" for r in bundle.resources)
    assert any("Secret training/wandb" in w and "deploy/ does not contain it" in w for w in bundle.warnings)
    written = [p.read_bytes() for p in (root / "deploy" / "east").rglob("*") if p.is_file()] or \
        list(bundle_files(bundle, stack.file).values())
    assert written and not any(CIPHERTEXT.encode() in data or b"apiKey" in data for data in written)
    # the program's own view (decrypted by the CLI) renders the same files: the plaintext stays out
    flat = {k: json.loads(v) if v[:1] in "[{" else v for k, v in pulumi_config_map(stack).items()}
    flat["trainstack:secrets"][0]["data"]["apiKey"] = PLAINTEXT
    decrypted = build_stack(stack.project, "east", flat, stack.file, secret_keys=["trainstack:secrets"])
    assert PLAINTEXT not in repr(decrypted.values)
    files = bundle_files(render(decrypted), stack.file)
    assert files == bundle_files(bundle, stack.file)
    assert not any(PLAINTEXT.encode() in data for data in files.values())


def test_plain_or_misplaced_secure_values_are_refused():
    load_project.cache_clear()
    project = load_project(ROOT)
    fabric = {"trainstack:fabric": {"source": "generated"}}
    with pytest.raises(InputError) as err:
        build_stack(project, "x", {**fabric, "trainstack:secrets": [{"name": "s", "data": {"k": "hunter2"}}]}, "x.yaml")
    assert "trainstack:secrets[0].data.k: expected a secure value" in str(err.value)
    assert "hunter2" not in str(err.value) and "pulumi config set --secret --path" in str(err.value)
    with pytest.raises(InputError, match=r"trainstack:nccl.debug: secure values are never decrypted"):
        build_stack(project, "x", {**fabric, "trainstack:nccl": {"debug": {"secure": CIPHERTEXT}}}, "x.yaml")
    with pytest.raises(InputError, match=r"trainstack:nccl: secure values are never decrypted"):
        build_stack(project, "x", {**fabric, "trainstack:nccl": '{"debug": "WARN"}'}, "x.yaml",
                    secret_keys=["trainstack:nccl"])


def test_the_policy_pack_takes_the_decrypted_secrets_the_engine_hands_it(east):
    from policies.pack import load_context

    root, stack, _ = east
    config = pulumi_config_map(stack)
    secrets = json.loads(config["trainstack:secrets"])
    secrets[0]["data"]["apiKey"] = PLAINTEXT           # as in PULUMI_CONFIG under the CLI
    config["trainstack:secrets"] = json.dumps(secrets)
    context = load_context("east", config, root)
    assert not context.problem and context.stack.production
    assert PLAINTEXT not in json.dumps(context.bundle)


def _registered(regs) -> list[tuple]:
    """What the program registered (under mocks the order changes from run to run)."""
    return sorted((r.urn, r.type, r.name, json.dumps([r.inputs, r.outputs], sort_keys=True), sorted(r.dependencies),
                   r.parent) for r in regs)


def test_the_program_reuses_a_render_of_the_same_stack_and_only_that(east, monkeypatch):
    """`trainstack preview` has rendered the stack already: the program takes that bundle when its
    own stack is the same (render is pure) and registers exactly what a fresh render registers."""
    from modules.core import program

    stack = load_stack(load_project(ROOT), "dev")
    config = pulumi_config_map(stack)
    fresh = _registered(run_program(ROOT, "dev", config))
    renders = []
    monkeypatch.setattr(program, "render", lambda s: renders.append(s.name) or render(s))
    assert _registered(run_program(ROOT, "dev", config, rendered=(stack, render(stack)))) == fresh
    assert renders == []
    # the program's stack differs from the caller's (the CLI hands the decrypted secret): render again
    root, east_stack, east_bundle = east
    config = pulumi_config_map(east_stack)
    secrets = json.loads(config["trainstack:secrets"])
    secrets[0]["data"]["apiKey"] = PLAINTEXT
    config["trainstack:secrets"] = json.dumps(secrets)
    run_program(root, "east", config, secret_keys=["trainstack:secrets"], rendered=(east_stack, east_bundle))
    assert renders == ["east"]
