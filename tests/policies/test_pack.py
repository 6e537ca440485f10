"""The CrossGuard pack started as the engine starts it and driven over gRPC: what it lists, how it
reads the engine's property bags (floats, secrets, unknowns, Helm releases) and the stack context."""
from __future__ import annotations

import json

import pulumi
import pytest
from google.protobuf import struct_pb2
from pulumi.runtime.proto import analyzer_pb2 as apb

from modules.core.bundle import ChartRelease
from modules.core.config import load_project, load_stack, pulumi_config_map
from modules.core.errors import InputError
from policies.driver import Pack, EngineResource, analyze, manifest_resources, policy_config, stack_urn, urn
from policies.pack import manifest, plain, unknown_path
from policies.rules import BY_ID, RULES
from policies.runner import release_object
from tests.support.cli import ROOT

SECRET_SIG = "4dabf18193072939515e22adb298388d"
SECRET_VALUE = "1b47061264138c4ac30d75fd1eb44270"
UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"


def config_of(stack: str) -> dict[str, str]:
    return pulumi_config_map(load_stack(load_project(ROOT), stack))


@pytest.fixture(scope="module")
def pack():
    with Pack("prod", "trainstack", config_of("prod")) as running:
        yield running


def resource(obj: dict, stack: str = "prod") -> EngineResource:
    return manifest_resources([obj], stack, "trainstack", stack_urn(stack, "trainstack"))[0]


GPU = {"name": "w", "image": "registry.example.com/w:1.0",
       "resources": {"requests": {"cpu": "96", "memory": "900Gi", "nvidia.com/gpu": 8},
                     "limits": {"nvidia.com/gpu": 8}}}


def volcano_job(tier, pods=40) -> dict:
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
            "metadata": {"name": "j", "namespace": "training"},
            "spec": {"minAvailable": pods, "schedulerName": "volcano",
                     "networkTopology": {"mode": "hard", "highestTierAllowed": tier},
                     "tasks": [{"name": "w", "replicas": pods, "template": {"spec": {"containers": [GPU]}}}]}}


def test_lists_every_rule_with_its_level_kind_and_schema(pack):
    info = pack.info()
    assert [p.name for p in info.policies] == [r.id for r in RULES]
    for p in info.policies:
        rule = BY_ID[p.name]
        assert p.enforcementLevel == (apb.MANDATORY if rule.enforcement == "mandatory" else apb.ADVISORY)
        assert p.policy_type == (apb.POLICY_TYPE_STACK if rule.is_stack_rule else apb.POLICY_TYPE_RESOURCE)
        assert p.description == rule.description
        schema = dict(p.configSchema.properties) if p.HasField("configSchema") else {}
        assert set(schema) == set(rule.config_schema)
    assert info.name == "trainstack" and info.supportsConfig


def test_numbers_arrive_as_floats_and_still_count_as_integers(pack):
    pack.configure_stack("prod", config_of("prod"))
    outcome = analyze(pack, [resource(volcano_job(1))])        # Struct turns 1 and 40 into 1.0 and 40.0
    rules = {v.rule for v in outcome.violations}
    assert "topology-satisfiable" in rules and "topology-tier-exists" not in rules
    fits = analyze(pack, [resource(volcano_job(2))])
    assert "topology-satisfiable" not in {v.rule for v in fits.violations}


def test_secrets_are_unwrapped_and_unknowns_defer_to_the_update(pack):
    pack.configure_stack("prod", config_of("prod"))
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "nccl", "namespace": "training"},
          "data": {"NCCL_NTHREADS": {SECRET_SIG: SECRET_VALUE, "value": "4"}}}
    result = analyze(pack, [resource(cm)])
    assert [v.rule for v in result.violations if not v.is_note] == ["nccl-env-valid"]   # notes: upstream-admission
    assert "got '4'" in result.violations[0].message

    unknown = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "nccl", "namespace": "training"},
               "data": {"NCCL_NTHREADS": "4", "NCCL_SOCKET_IFNAME": UNKNOWN}}
    result = analyze(pack, [resource(unknown)])
    assert [v.level for v in result.violations if v.rule == "nccl-env-valid"] == ["advisory"]
    assert "can't be known during preview" in result.violations[0].message


def test_helm_release_is_normalized_like_in_process(pack):
    """A Volcano release without the plugin, as the program registers it (helm.v3.Release inputs)."""
    pack.configure_stack("prod", config_of("prod"))
    conf = "actions: \"enqueue, allocate, backfill\"\ntiers:\n- plugins: [{name: gang}, {name: predicates}]\n"
    props = {"chart": "volcano", "version": "1.15.1", "name": "volcano", "namespace": "volcano-system",
             "repositoryOpts": {"repo": "https://volcano-sh.github.io/helm-charts"}, "compat": "true",
             "values": {"custom": {"scheduler_config_override": conf}}}
    release = EngineResource(type="kubernetes:helm.sh/v3:Release", name="release/volcano-system/volcano",
                       urn=urn("prod", "trainstack", "kubernetes:helm.sh/v3:Release", "release/volcano-system/volcano"),
                       properties=props)
    outcome = analyze(pack, [release, resource(volcano_job(2))])
    hits = [v for v in outcome.violations if v.rule == "scheduler-plugin-enabled"]
    assert len(hits) == 1 and hits[0].resource == "helm.sh/v3/Release/volcano-system/volcano"
    assert hits[0].path == "spec.values.custom.scheduler_config_override"


def test_configure_stack_switches_the_stack_context(pack):
    debug = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "n", "namespace": "training"},
             "data": {"NCCL_DEBUG": "INFO"}}
    pack.stack, pack.config = "dev", config_of("dev")
    assert [v for v in analyze(pack, [resource(debug, "dev")]).violations if not v.is_note] == []
    pack.stack, pack.config = "prod", config_of("prod")
    assert [v.rule for v in analyze(pack, [resource(debug)]).violations if not v.is_note] == ["nccl-debug-production"]


def test_every_policy_is_configured_and_a_disabled_one_is_silent(pack):
    pack.configure_stack("prod", config_of("prod"))
    job = volcano_job(1)
    job["spec"]["tasks"][0]["template"]["spec"]["containers"][0]["image"] = "img:latest"
    outcome = analyze(pack, [resource(job)], {"image-pinned": "disabled", "topology-satisfiable": "advisory"})
    levels = {v.rule: v.level for v in outcome.violations}
    assert "image-pinned" not in levels and levels["topology-satisfiable"] == "advisory"


def test_policy_config_is_validated_against_the_schemas(pack):
    info = pack.info()
    config = policy_config(info, {"all": "advisory", "requests-required": {"allowLimitsAsRequests": True}})
    assert set(config) == {r.id for r in RULES} and {lvl for lvl, _ in config.values()} == {"advisory"}
    assert config["requests-required"][1] == {"allowLimitsAsRequests": True}
    assert config["image-pinned"][1] == {"exemptImages": [], "requireDigest": False}   # schema defaults filled in
    for bad, where in (({"image-pinned": {"exemptImages": "x"}}, "image-pinned.exemptImages"),
                       ({"image-pinnned": "advisory"}, "image-pinnned"),
                       ({"rbac-no-wildcards": "warn"}, "rbac-no-wildcards.enforcementLevel"),
                       ({"requests-required": {"nope": 1}}, "requests-required")):
        with pytest.raises(InputError) as err:
            policy_config(info, bad, "policies/config.x.json")
        assert err.value.path == where


def test_pack_reads_the_stack_from_the_environment_or_the_stack_file():
    debug = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "n", "namespace": "training"},
             "data": {"NCCL_DEBUG": "TRACE"}}
    request = apb.AnalyzeRequest(type="kubernetes:core/v1:ConfigMap", name="n",
                                 urn=urn("prod", "trainstack", "kubernetes:core/v1:ConfigMap", "n"))
    props = struct_pb2.Struct()
    props.update(debug)
    request.properties.CopyFrom(props)
    # No ConfigureStack at all and no trainstack config: the pack falls back to stacks/Pulumi.prod.yaml.
    with Pack("prod", "trainstack", {}) as bare:
        bare.configure({p.name: (("mandatory" if p.enforcementLevel else "advisory"), {})
                        for p in bare.info().policies})
        names = [d.policyName for d in bare.stub.Analyze(request).diagnostics]
        process = bare.process
    assert names == ["nccl-debug-production"]
    assert process.poll() is not None, "the pack process must be terminated"


def test_release_normalization_matches_what_the_program_registers():
    """helm.v3.Release inputs, captured under mocks, normalize to runner.release_object."""
    from modules.core.pulumi_adapter import register_release

    captured = {}

    class Mocks(pulumi.runtime.Mocks):
        def new_resource(self, args):
            captured[args.typ] = plain(dict(args.inputs))
            return f"{args.name}-id", dict(args.inputs)

        def call(self, args):
            return {}

    for release in (ChartRelease(module="volcano", name="volcano", chart="volcano", version="1.15.1",
                                 repository="https://volcano-sh.github.io/helm-charts", namespace="volcano-system",
                                 values={"custom": {"scheduler_name": "volcano"}}),
                    ChartRelease(module="trainer", name="kubeflow-trainer", chart="kubeflow-trainer", version="2.3.0",
                                 repository="oci://ghcr.io/kubeflow/charts", namespace="kubeflow-system",
                                 values={"jobset": {"install": True}})):
        captured.clear()
        pulumi.runtime.set_mocks(Mocks(), project="trainstack", stack="dev", preview=True)
        pulumi.runtime.test(lambda: register_release(release, pulumi.ResourceOptions()))()
        props = captured["kubernetes:helm.sh/v3:Release"]
        assert manifest("kubernetes:helm.sh/v3:Release", props, release.key) == release_object(release)


def test_plain_and_unknown_helpers():
    assert plain({"a": [1.0, 2.5, {"b": 3.0}], "c": True}) == {"a": [1, 2.5, {"b": 3}], "c": True}
    assert unknown_path({"spec": {"x": [1, UNKNOWN]}}) == "spec.x[1]"
    assert unknown_path({"spec": {"x": 1}}) is None
    assert manifest("pulumi:providers:kubernetes", {}) is None
    assert manifest("kubernetes:helm.sh/v4:Chart", {"chart": "x"}) is None
    assert manifest("kubernetes:core/v1:ConfigMap", {"metadata": {"name": "a"}})["apiVersion"] == "v1"
    assert manifest("kubernetes:batch.volcano.sh/v1alpha1:Job", {})["apiVersion"] == "batch.volcano.sh/v1alpha1"
    assert json.dumps(plain({"n": 1.0})) == '{"n": 1}'


def test_one_pack_process_serves_independent_runs_without_leftovers(pack):
    """A driver may reuse one pack process: what one run analyzed must not count in the next."""
    discovery = {"apiVersion": "v1", "kind": "ConfigMap",
                 "metadata": {"name": "volcano-controller-configmap", "namespace": "volcano-system"},
                 "data": {"volcano-controller.conf": json.dumps({"networkTopologyDiscovery": [{
                     "source": "label", "enabled": True, "config": {"networkTopologyTypes": {"gpu": [
                         {"nodeLabel": "example.com/spine"}, {"nodeLabel": "example.com/leaf"},
                         {"nodeLabel": "kubernetes.io/hostname"}]}}}]})}}
    leaf = {"apiVersion": "topology.volcano.sh/v1alpha1", "kind": "HyperNode", "metadata": {"name": "extra-leaf"},
            "spec": {"tier": 1, "tierName": "leaf",
                     "members": [{"type": "Node", "selector": {"exactMatch": {"name": "gpu-0001"}}}]}}
    pack.configure_stack("prod", config_of("prod"))
    levels = policy_config(pack.info())
    for run, obj in ((1, discovery), (2, leaf)):   # Configure, Analyze, AnalyzeStack: as the engine runs one preview
        pack.configure(levels)
        pack.analyze(resource(obj))
        names = {d.policyName for d in pack.analyze_stack([resource(obj)]).diagnostics}
        # run 1: discovery next to the stack's HyperNodes; run 2 must not still see run 1's ConfigMap
        assert ("topology-source-exclusive" in names) == (run == 1), (run, names)


def test_one_call_decodes_each_properties_message_once():
    """The SDK decodes a resource's properties for every policy; within one Analyze/AnalyzeStack
    call the pack hands each policy the same decoded bag, and outside a call nothing is shared."""
    from policies import pack as pack_module

    calls = []
    decode = pack_module._decoded_once(lambda value, *args: calls.append((value, args)) or {"of": value})
    message, other = object(), object()
    assert decode(message) is not decode(message)   # outside a call: decoded each time
    handler = pack_module._one_call(lambda self, request, context: (
        decode(request), decode(request), decode(request, True), decode(other)))
    first, again, flagged, different = handler(None, message, None)
    assert first is again and flagged is not first and different["of"] is other
    assert calls == [(message, ()), (message, ()), (message, ()), (message, (True,)), (other, ())]
    assert decode(message) is not first   # the call's cache is gone with the call


def test_a_run_decodes_each_properties_message_once():
    """A resource's properties come in its Analyze and again in AnalyzeStack (another message
    object, the same bytes): decoded once per run, and made a manifest once. Other bytes are
    decoded anew; when the run ends (or a new one starts) nothing is shared any more."""
    from google.protobuf import struct_pb2

    from policies import pack as pack_module

    def struct(**fields) -> struct_pb2.Struct:
        out = struct_pb2.Struct()
        out.update(fields)
        return out

    calls = []
    decode = pack_module._decoded_once(lambda value, *args: calls.append(value) or {"n": len(calls)})
    options = pack_module._per_request(lambda self, request: calls.append(request) or {"of": request})
    call = pack_module._one_call(lambda self, requests, context: [
        (decode(m), options(None, m), pack_module._manifest_once("kubernetes:core/v1:ConfigMap", decode(m), "c", "u"))
        for m in requests])
    pack_module.STATE.forget()
    try:
        (first, opts, obj), = call(None, [struct(a=1)], None)
        (again, opts_again, obj_again), (other, _, _) = call(None, [struct(a=1), struct(a=2)], None)
        assert again is first and obj_again is obj and other is not first
        assert opts_again is not opts   # a request's own reading is shared within its call only
        assert len([c for c in calls if isinstance(c, struct_pb2.Struct)]) == 5   # 2 decodes, 3 readings
        pack_module.STATE.forget()   # the run is over
        (after, _, obj_after), = call(None, [struct(a=1)], None)
        assert after is not first and obj_after is not obj
    finally:
        pack_module.STATE.forget()


def test_stack_policies_of_one_call_share_the_context():
    """Every stack policy of an AnalyzeStack judges the same manifests: the objects they may consult
    besides them are gathered once per call (and anew in the next call)."""
    from policies import pack as pack_module

    judged = [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "ml"}}]
    call = pack_module._one_call(lambda self, objects, context: (pack_module._context_once(objects),
                                                                  pack_module._context_once(objects)))
    first, again = call(None, judged, None)
    assert first is again and first == pack_module.STATE.context_for(judged)
    assert call(None, judged, None)[0] is not first
    assert pack_module._context_once(judged) is not pack_module._context_once(judged)   # outside a call


def _config_map(name: str) -> EngineResource:
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "ml"}, "data": {}}
    return EngineResource(type="kubernetes:core/v1:ConfigMap", name=f"ConfigMap/ml/{name}",
                          urn=urn("dev", "trainstack", "kubernetes:core/v1:ConfigMap", name), properties=obj)


def test_preview_analyzes_in_the_bundle_order_whatever_the_program_registers_first():
    """Under mocks the program registers as its outputs resolve; the Analyze requests follow the
    bundle's order (the Stack first, what the bundle does not hold last), so the report does too."""
    from policies.commands import in_bundle_order

    a, b, c = (_config_map(n) for n in "abc")
    stack = EngineResource(type="pulumi:pulumi:Stack", name="trainstack-dev", urn=stack_urn("dev", "trainstack"),
                           properties={}, custom=False)
    provider = EngineResource(type="pulumi:providers:kubernetes", name="kubernetes",
                              urn=urn("dev", "trainstack", "pulumi:providers:kubernetes", "kubernetes"), properties={})
    ordered = in_bundle_order([c, provider, a, stack, b], [r.properties for r in (a, b, c)])
    assert [r.name for r in ordered] == [stack.name, a.name, b.name, c.name, provider.name]


def test_the_pack_hands_its_stack_to_upstream_admission_when_it_boots(monkeypatch):
    """`prime` (what the pack runs when it builds the stack) hands the stack's objects to the
    evaluating child without waiting (nothing is read back then); the rule's next evaluation reads
    those outcomes in one trip and makes none of its own for them, with the same findings as a rule
    that evaluates everything itself."""
    from policies.admission import rules
    from policies.framework import CheckContext
    from policies.rules import BY_ID
    from policies.rules import admission as rule_module
    from policies.runner import bundle_objects, evaluate
    from tests.support.admission import admission_env, require_shared_dirs
    from tests.support.stacks import shipped, shipped_bundle

    admission, crds = require_shared_dirs()
    with admission_env(admission, crds):
        ruleset = rules()
        trips, sent = [], []
        isolated, send = ruleset._isolated, ruleset._worker().send
        monkeypatch.setattr(ruleset, "_isolated", lambda targets: trips.append(len(targets)) or isolated(targets))
        bundle = shipped_bundle("prod")
        objects = bundle_objects(bundle)

        def findings():
            ctx = CheckContext(stack=shipped("prod"), fabric=bundle.fabric)
            outcome = evaluate(BY_ID["upstream-admission"], objects, ctx)
            return [(obj and obj.get("kind"), item) for obj, item in outcome]

        ruleset._memo.clear()
        expected = findings()   # the rule evaluating every object itself
        assert trips
        ruleset._memo.clear()
        trips.clear()
        monkeypatch.setattr(ruleset._worker(), "send", lambda request: sent.append(len(request)) or send(request))
        rule_module.prime(objects)
        assert sent and not trips and not ruleset._memo   # handed over, nothing waited for
        assert findings() == expected
        assert trips == sent   # the outcomes of what was handed over, read back in one trip, and no other
