"""Every custom resource validates against its upstream CRD; our core kinds against Kubernetes."""
import re

import pytest

from tests.support.crds import is_custom, require_crds, validate_core, validate_cr

from tests.support.stacks import STACKS, of_kind, ours, shipped_bundle, v1_bundle

BUNDLES = {name: (lambda n=name: shipped_bundle(n)) for name in STACKS}
BUNDLES["v1"] = v1_bundle
RFC1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")   # TrainJob CEL rule (pruned by our validator)


@pytest.mark.parametrize("name", sorted(BUNDLES))
def test_custom_resources_match_upstream_crds(name):
    require_crds()
    bundle = BUNDLES[name]()
    kinds = set()
    for resource in bundle.resources:
        if is_custom(resource.obj):
            validate_cr(resource.obj)
            kinds.add(resource.kind)
    expected = {"Queue", "HyperNode", "Job"} | ({"PyTorchJob"} if name == "v1" else
                                                {"ClusterTrainingRuntime", "TrainJob"})
    if name == "prod":
        expected.add("PodGroup")
    if name == "dev":
        expected -= {"Job"}
    assert expected <= kinds


@pytest.mark.parametrize("name", sorted(BUNDLES))
def test_our_core_objects_are_valid_kubernetes(name):
    bundle = BUNDLES[name]()
    core = [r.obj for r in ours(bundle) if not is_custom(r.obj)]
    assert core, "expected RBAC, PriorityClasses or Deployments"
    for obj in core:
        validate_core(obj)


@pytest.mark.parametrize("name", STACKS)
def test_trainjob_names_pass_trainers_cel_rule(name):
    for job in of_kind(shipped_bundle(name), "TrainJob"):
        assert RFC1035.match(job["metadata"]["name"]) and len(job["metadata"]["name"]) <= 63


def test_validator_rejects_a_quoted_tier():
    """The CRD check is real: a quoted tier is not the integer the runtime CRD wants."""
    require_crds()
    import jsonschema

    runtime = of_kind(shipped_bundle("prod"), "ClusterTrainingRuntime")[0]
    broken = {**runtime, "spec": {**runtime["spec"], "podGroupPolicy": {"volcano": {"networkTopology": {
        "mode": "hard", "highestTierAllowed": "1"}}}}}
    with pytest.raises(jsonschema.ValidationError):
        validate_cr(broken)
