"""The Pulumi program under mocks: releases pinned, every custom resource waits for what serves it."""
import re

import pytest

from modules.core.config import pulumi_config_map
from modules.core.preview_engine import run_program
from modules.core.render import render
from tests.support.cli import ROOT

from tests.support.stacks import OUR_MODULES, STACKS, shipped, v1_bundle, v1_stack

RELEASE_TYPE = "kubernetes:helm.sh/v3:Release"
OVERLAY_TYPE = "kubernetes:kustomize/v2:Directory"
# API group -> the bundle key of what installs its CRDs and webhooks.
SERVERS = {
    "scheduling.volcano.sh": "release/volcano-system/volcano",
    "batch.volcano.sh": "release/volcano-system/volcano",
    "topology.volcano.sh": "release/volcano-system/volcano",
    "trainer.kubeflow.org": "release/kubeflow-system/kubeflow-trainer",
    "kubeflow.org": "overlay/training-operator",
}


def registrations(stack_name: str, config: dict) -> list:
    return run_program(ROOT, stack_name, config)


def check_registrations(regs, bundle):
    by_name = {r.name: r for r in regs}
    urn_of = {r.name: r.urn for r in regs}
    releases = [r for r in regs if r.type == RELEASE_TYPE]
    assert {r.name for r in releases} == {r.key for r in bundle.releases}
    for reg in releases:
        assert re.fullmatch(r"\d+\.\d+\.\d+", reg.inputs["version"]), reg.inputs["version"]
    for resource in bundle.resources:
        if resource.module in OUR_MODULES:      # typed classes too (PriorityClass, RBAC, Deployment)
            assert by_name[resource.key].inputs == resource.obj, resource.key
    checked = 0
    for resource in bundle.resources:
        group = resource.api_version.rpartition("/")[0]
        if group not in SERVERS:
            continue
        reg = by_name[resource.key]
        assert reg.inputs == resource.obj                       # registered exactly as rendered
        assert urn_of[SERVERS[group]] in reg.dependencies, (resource.key, reg.dependencies)
        checked += 1
    return checked


@pytest.mark.parametrize("name", STACKS)
def test_shipped_stack_under_mocks(name):
    stack = shipped(name)
    bundle = render(stack)
    regs = registrations(name, pulumi_config_map(stack))
    assert check_registrations(regs, bundle) >= len(bundle.resources) // 4
    volcano = next(r for r in regs if r.name == "release/volcano-system/volcano")
    assert volcano.inputs["chart"] == "volcano"
    assert volcano.inputs["repositoryOpts"]["repo"] == "https://volcano-sh.github.io/helm-charts"
    assert isinstance(volcano.inputs["values"]["custom"]["scheduler_config_override"], str)
    assert isinstance(volcano.inputs["values"]["custom"]["controller_config_override"], dict)
    trainer = next(r for r in regs if r.name == "release/kubeflow-system/kubeflow-trainer")
    assert trainer.inputs["chart"] == "oci://ghcr.io/kubeflow/charts/kubeflow-trainer"
    assert volcano.urn in trainer.dependencies


def test_v1_variant_under_mocks():
    regs = registrations("v1", pulumi_config_map(v1_stack()))
    bundle = v1_bundle()
    assert check_registrations(regs, bundle) > 0
    (overlay,) = [r for r in regs if r.type == OVERLAY_TYPE]
    assert overlay.name == "overlay/training-operator"
    volcano = next(r for r in regs if r.name == "release/volcano-system/volcano")
    assert volcano.urn in overlay.dependencies
    jobs = [r for r in regs if r.type == "kubernetes:kubeflow.org/v1:PyTorchJob"]
    assert len(jobs) == 2 and all(overlay.urn in j.dependencies for j in jobs)


def test_controller_owned_field_is_registered_with_ignore_changes():
    """The legacy stack's PyTorchJob keeps Worker replicas (its scale subresource needs them) and the
    program registers exactly that path as ignoreChanges, so `pulumi up` leaves the HPA's value."""
    stack = shipped("legacy")
    regs = registrations("legacy", pulumi_config_map(stack))
    ignored = {r.name: r.ignore_changes for r in regs if r.ignore_changes}
    assert ignored == {"PyTorchJob/training/llama-elastic": ["spec.pytorchReplicaSpecs.Worker.replicas"]}
    job = next(r for r in regs if r.name == "PyTorchJob/training/llama-elastic")
    assert job.inputs["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"] == 2
