"""Rule behaviour the fixture table does not reach through user manifests: chart releases, label-defined
fabrics, the stack's trainer API, and the helpers the rules share."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from modules.core.config import load_project, load_stack
from modules.core.patterns import go_error, go_problem
from modules.core.render import render
from policies.framework import CheckContext
from policies.runner import PolicySettings, bundle_objects, run_rules
from modules.semantics.volcano import Tiers, discovery_tiers, tiers_of
from modules.semantics.workloads import Gang, PodSet, gang_of
from policies.rules.topology import fitting_domain
from tests.support.cli import ROOT

GOOD_CONF = ("actions: \"enqueue, allocate, backfill\"\ntiers:\n- plugins:\n  - {name: gang}\n"
             "  - name: network-topology-aware\n    arguments: {weight: 10}\n")
GPU = {"name": "w", "image": "registry.example.com/w:1.0",
       "resources": {"requests": {"cpu": "96", "memory": "900Gi", "nvidia.com/gpu": 8},
                     "limits": {"nvidia.com/gpu": 8}}}


def stack_context(name: str = "prod"):
    stack = load_stack(load_project(ROOT), name)
    bundle = render(stack)
    return stack, bundle


def violations(objects: list[dict], stack: str = "prod", fabric=None, stack_values: dict | None = None,
               keep_bundle: bool = True):
    config, bundle = stack_context(stack)
    if stack_values is not None:
        config = SimpleNamespace(values={**config.values, **stack_values}, production=config.production)
    base = bundle_objects(bundle) if keep_bundle else []
    return run_rules(base + objects, CheckContext(stack=config, fabric=fabric or bundle.fabric), PolicySettings())


def rules_of(found) -> set[str]:
    return {v.rule for v in found if not v.is_note}


def release(values: dict, name: str = "volcano") -> dict:
    return {"apiVersion": "helm.sh/v3", "kind": "Release", "metadata": {"name": name, "namespace": "volcano-system"},
            "spec": {"chart": "volcano", "repository": "https://volcano-sh.github.io/helm-charts",
                     "version": "1.15.1", "values": values}}


def job(tier=1, pods=8, **spec) -> dict:
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
            "metadata": {"name": "j", "namespace": "training"},
            "spec": {"minAvailable": pods, "networkTopology": {"mode": "hard", "highestTierAllowed": tier},
                     "tasks": [{"name": "w", "replicas": pods, "template": {"spec": {"containers": [GPU]}}}], **spec}}


# --- Volcano chart releases -------------------------------------------------------------------

def test_release_with_empty_override_uses_the_chart_default_without_the_plugin():
    found = violations([release({"custom": {"scheduler_config_override": ""}}), job()])
    hits = [v for v in found if v.rule == "scheduler-plugin-enabled"]
    assert len(hits) == 1 and hits[0].resource == "helm.sh/v3/Release/volcano-system/volcano"
    assert "chart's default config/volcano-scheduler.conf" in hits[0].message


def test_release_with_the_ci_conf_or_an_override_listing_the_plugin_passes():
    assert "scheduler-plugin-enabled" not in rules_of(violations(
        [release({"basic": {"scheduler_config_file": "config/volcano-scheduler-ci.conf"}}), job()]))
    assert "scheduler-plugin-enabled" not in rules_of(violations(
        [release({"custom": {"scheduler_config_override": GOOD_CONF}}), job()]))


def test_a_users_scheduler_configmap_replaces_the_releases():
    user_conf = {"apiVersion": "v1", "kind": "ConfigMap",
                 "metadata": {"name": "volcano-scheduler-configmap", "namespace": "volcano-system"},
                 "data": {"volcano-scheduler.conf": "actions: \"allocate\"\ntiers: [{plugins: [{name: gang}]}]\n"}}
    found = violations([release({"custom": {"scheduler_config_override": GOOD_CONF}}), user_conf, job()])
    hits = [v for v in found if v.rule == "scheduler-plugin-enabled"]
    assert [v.resource for v in hits] == ["v1/ConfigMap/volcano-system/volcano-scheduler-configmap"]


def test_no_scheduler_configuration_at_all_is_a_note_not_a_pass_or_a_failure():
    found = violations([job()], keep_bundle=False)
    notes = [v for v in found if v.rule == "scheduler-plugin-enabled"]
    assert notes and all(v.is_note for v in notes)


def test_release_values_typed_and_pinned():
    bad = release({"custom": {"scheduler_config_override": {"actions": "allocate"},
                              "controller_config_override": "networkTopologyDiscovery: []"},
                   "basic": {"image_tag_version": "latest"}})
    found = [v for v in violations([bad]) if v.resource == "helm.sh/v3/Release/volcano-system/volcano"]
    messages = {v.rule: v.message for v in found}
    assert "must be a mapping" in " ".join(v.message for v in found if v.rule == "scheduler-args-typed")
    assert "it must be a YAML string" in " ".join(v.message for v in found if v.rule == "scheduler-args-typed")
    assert "image-pinned" in messages and "spec.values.basic.image_tag_version" in messages["image-pinned"]


def test_unknown_action_and_unlisted_weighted_resource():
    conf = ("actions: \"enqueue, allocate, bogus\"\ntiers:\n- plugins:\n  - name: network-topology-aware\n"
            "    arguments: {weight: 0, hypernode.binpack.resources: cpu, "
            "hypernode.binpack.resources.nvidia.com/gpu: 5}\n")
    found = [v.message for v in violations([release({"custom": {"scheduler_config_override": conf}})])
             if v.rule == "scheduler-args-typed"]
    assert any("unknown action(s) bogus" in m for m in found)
    assert any("zeroes every HyperNode score" in m for m in found)
    assert any("does not list" in m for m in found)


def test_custom_scheduler_name_comes_from_the_release():
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "training"},
                  "spec": {"template": {"metadata": {"annotations": {"scheduling.volcano.sh/queue-name": "q"}},
                                        "spec": {"schedulerName": "volcano", "containers": [GPU]}}}}
    found = violations([release({"custom": {"scheduler_name": "vc-scheduler"}}), deployment])
    hits = [v for v in found if v.rule == "scheduler-name-volcano"]
    assert hits and "schedulerName: vc-scheduler" in hits[0].message


# --- fabrics and discovery --------------------------------------------------------------------

LABEL_DISCOVERY = [{"source": "label", "enabled": True, "config": {"networkTopologyTypes": {"gpu-fabric": [
    {"nodeLabel": "example.com/spine"}, {"nodeLabel": "example.com/leaf"}, {"nodeLabel": "kubernetes.io/hostname"}]}}}]


def label_fabric():
    return SimpleNamespace(switches={}, nodes={}, discovery=LABEL_DISCOVERY, tiers=[], tier_names={}, pools={})


def test_discovery_tiers_are_numbered_bottom_up_with_label_keys_as_names():
    assert list(discovery_tiers(LABEL_DISCOVERY)) == [(1, "example.com/leaf", "label discovery"),
                                                       (2, "example.com/spine", "label discovery")]
    assert list(discovery_tiers([{**LABEL_DISCOVERY[0], "enabled": False}])) == []
    tiers = tiers_of([], label_fabric())
    assert tiers.tier_of("example.com/leaf") == 1 and tiers.highest == 2


def test_label_defined_fabric_checks_tier_names_but_says_it_cannot_check_capacity():
    named = job(pods=512)
    named["spec"]["networkTopology"] = {"mode": "hard", "highestTierName": "example.com/leaf"}
    found = violations([named, release({"custom": {"scheduler_config_override": GOOD_CONF}})],
                       fabric=label_fabric(), keep_bundle=False)
    assert "topology-tier-exists" not in rules_of(found)
    notes = [v for v in found if v.rule == "topology-satisfiable"]
    assert notes and all(v.is_note for v in notes) and "label-defined" in notes[0].message
    wrong = job()
    wrong["spec"]["networkTopology"] = {"mode": "hard", "highestTierName": "leaf"}
    found = violations([wrong], fabric=label_fabric(), keep_bundle=False)
    assert "topology-tier-exists" in rules_of(found)


def test_label_discovery_over_a_static_fabric_is_flagged_on_the_release():
    values = {"custom": {"scheduler_config_override": GOOD_CONF,
                         "controller_config_override": {"networkTopologyDiscovery": LABEL_DISCOVERY}}}
    found = [v for v in violations([release(values)]) if v.rule == "topology-source-exclusive"]
    assert len(found) == 1 and found[0].resource == "helm.sh/v3/Release/volcano-system/volcano"
    ufm = {"custom": {"controller_config_override": {"networkTopologyDiscovery": [
        {"source": "ufm", "enabled": True,
         "credentials": {"secretRef": {"name": "ufm", "namespace": "volcano-system"}}}]}}}
    assert "topology-source-exclusive" in rules_of(violations([release(ufm)]))


def test_a_managed_hypernode_labelled_as_discovered_would_be_deleted():
    hn = {"apiVersion": "topology.volcano.sh/v1alpha1", "kind": "HyperNode",
          "metadata": {"name": "region", "labels": {"volcano.sh/network-topology-source": "label"}},
          "spec": {"tier": 4, "members": [{"type": "HyperNode", "selector": {"exactMatch": {"name": "core"}}}]}}
    values = {"custom": {"controller_config_override": {"networkTopologyDiscovery": LABEL_DISCOVERY}}}
    found = [v.message for v in violations([hn, release(values)]) if v.rule == "topology-source-exclusive"]
    assert any("the discoverer deletes every HyperNode with that label" in m for m in found)


def test_re2_compatibility():
    assert go_problem("^gpu-0[0-7][0-9]$") is None
    assert "lookaround" in go_problem("^gpu-(?!0)")
    assert "backreferences" in go_problem("(a)\\1")
    assert "does not compile" in go_problem("gpu-[0-9")


@pytest.mark.parametrize("pattern, error", [
    ("gpu-node-[0-9+", "error parsing regexp: missing closing ]: `[0-9+`"),
    ("gpu(a", "error parsing regexp: missing closing ): `gpu(a`"),
    ("gpu)a", "error parsing regexp: unexpected ): `gpu)a`"),
    ("*gpu", "error parsing regexp: missing argument to repetition operator: `*`"),
    ("a**", "error parsing regexp: invalid nested repetition operator: `**`"),
    ("[z-a]", "error parsing regexp: invalid character class range: `z-a`"),
    ("a\\q", "error parsing regexp: invalid escape sequence: `\\q`"),
    ("^gpu-(?!0)", "error parsing regexp: invalid or unsupported Perl syntax: `(?!`"),
    ("(a)\\1", "error parsing regexp: invalid escape sequence: `\\1`"),
    ("^gpu-0[0-7][0-9]$", None),
])
def test_go_regexp_errors_are_worded_as_go_words_them(pattern, error):
    """Volcano's hypernode webhook quotes regexp.Compile's error: `error parsing regexp: <code>: `<expr>``."""
    assert go_error(pattern) == error


# --- capacity ---------------------------------------------------------------------------------

def test_mixed_gang_packs_small_pods_beside_big_ones():
    _, bundle = stack_context("prod")
    fabric = bundle.fabric
    launcher = {"cpu": fabric.pools["h100"].allocatable()["cpu"] / 100}
    worker = {k: v for k, v in fabric.pools["h100"].allocatable().items()}   # a whole node
    worker["cpu"] = worker["cpu"] - launcher["cpu"]
    fits = Gang((PodSet(32, worker, "w"), PodSet(1, launcher, "l")), "test")
    assert fitting_domain(fabric, fits, 1) == ("leaf-01", 1)
    too_big = Gang((PodSet(32, worker, "w"), PodSet(1, {"cpu": launcher["cpu"] * 2}, "l")), "test")
    assert fitting_domain(fabric, too_big, 1) is None and fitting_domain(fabric, too_big, 2)[1] == 2


def test_gang_sizes():
    assert gang_of(job(pods=8), []).pods == 8
    no_min = job(pods=8)
    del no_min["spec"]["minAvailable"]
    assert gang_of(no_min, []).pods == 8
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {
        "name": "d", "annotations": {"scheduling.volcano.sh/group-min-member": "6"}},
        "spec": {"replicas": 4, "template": {"spec": {"containers": [GPU]}}}}
    assert gang_of(deployment, []).pods == 6
    assert gang_of({"apiVersion": "v1", "kind": "ConfigMap"}, []) is None


# --- the stack's trainer API and elastic PyTorchJobs --------------------------------------------

PYTORCHJOB = {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
              "metadata": {"name": "elastic", "namespace": "training"},
              "spec": {"elasticPolicy": {"minReplicas": 2, "maxReplicas": 4, "rdzvBackend": "c10d"},
                       "pytorchReplicaSpecs": {"Worker": {"replicas": 2, "template": {"spec": {"containers": [
                           {**GPU, "name": "pytorch"}]}}}}}}


def hpa(low, high):
    return {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "elastic", "namespace": "training"},
            "spec": {"scaleTargetRef": {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "name": "elastic"},
                     "minReplicas": low, "maxReplicas": high}}


@pytest.mark.parametrize("low,high,fragment", [(2, 4, None), (1, 4, "elasticPolicy.minReplicas 2"),
                                               (2, 8, "elasticPolicy.maxReplicas 4")])
def test_hpa_on_an_elastic_pytorchjob(low, high, fragment):
    found = [v.message for v in violations([PYTORCHJOB, hpa(low, high)], stack_values={"trainer": {"api": "v1"}})
             if v.rule == "hpa-target-scalable"]
    assert (not found) if fragment is None else any(fragment in m for m in found)


def test_hpa_on_a_pytorchjob_in_a_trainer_v2_stack():
    found = [v.message for v in violations([PYTORCHJOB, hpa(2, 4)], stack_values={"trainer": {"api": "v2"}})
             if v.rule == "hpa-target-scalable"]
    assert found and "trainstack:trainer.api v2" in found[0]


def test_exemptions_from_settings():
    daemonset = {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "cni", "namespace": "kube-system"},
                 "spec": {"template": {"spec": {"hostNetwork": True, "dnsPolicy": "ClusterFirstWithHostNet",
                                                "containers": [GPU]}}}}
    assert "host-network-opt-in" not in rules_of(violations([daemonset]))
    aggregated = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "agg"},
                  "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"x": "y"}}]}, "rules": []}
    assert "rbac-no-wildcards" not in rules_of(violations([aggregated]))


def test_tiers_helper_reports_known_names():
    tiers = Tiers()
    tiers.add(1, "leaf", "x")
    tiers.add(2, "spine", "x")
    assert tiers.describe() == "leaf (tier 1), spine (tier 2)" and tiers.tier_of("spine") == 2


def test_scripts_in_configmaps_flag_quoted_literals_not_code():
    from policies.rules.security import _secret_in

    assert _secret_in("launch.py", 'x = 1\nself.token = read_token(path)\n') is None
    assert "API_TOKEN" in _secret_in("launch.py", 'x = 1\nAPI_TOKEN = "s3cr3t-value"\n')
    assert "API_TOKEN" in _secret_in("app.env", "x=1\nAPI_TOKEN=s3cr3t-value\n")


def test_regex_candidates_are_exact_for_anchored_literal_prefixes():
    import re

    from policies.rules.hypernodes import Inventory

    inventory = Inventory({name: {} for name in ["gpu-0001", "gpu-0002", "gpu-0101", "xyz-1", "agpu-0001", "gpu"]})
    for pattern in ["^gpu-00(0[1-9])$", "^gpu-0", "gpu-00", "^g?pu", "^gpu-0001|xyz", "^(gpu|xyz)-", "^gpu*"]:
        compiled = re.compile(pattern)
        everywhere = {n for n in inventory if compiled.search(n)}
        assert {n for n in inventory.candidates(pattern) if compiled.search(n)} == everywhere, pattern
