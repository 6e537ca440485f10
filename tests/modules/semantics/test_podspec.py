"""Pod requests in both views, strict and lenient reading."""
from decimal import Decimal

import pytest

from modules.core.errors import InputError
from modules.semantics.podspec import Reader, merge_resources, pod_requests

GI = 2**30


def c(name, requests=None, limits=None, **extra):
    return {"name": name, "resources": {k: v for k, v in (("requests", requests), ("limits", limits)) if v}, **extra}


def test_limits_stand_in_for_requests_in_the_fit_view_only():
    got = pod_requests(Reader(), {"containers": [c("a", {"memory": "1Gi"}, {"cpu": "4", "memory": "2Gi"})]}, "spec")
    assert got.fit == {"cpu": Decimal(4), "memory": Decimal(GI)}
    assert got.quota == {"memory": Decimal(GI)}


def test_init_containers_max_rule_sidecars_add_up_and_overhead_is_added():
    spec = {"initContainers": [c("sidecar", {"cpu": "1"}, restartPolicy="Always"), c("fetch", {"cpu": "6"})],
            "containers": [c("a", {"cpu": "2"}), c("b", {"cpu": "1"})],
            "overhead": {"cpu": "250m"}}
    got = pod_requests(Reader(), spec, "spec")
    # running: 2 + 1 + sidecar 1 = 4; init peak: fetch 6 beside the sidecar 1 = 7; plus overhead
    assert got.fit["cpu"] == Decimal("7.25") == got.quota["cpu"]


def test_strict_raises_lenient_records():
    spec = {"containers": [c("a", {"cpu": "lots", "memory": "1Gi"})]}
    with pytest.raises(InputError, match=r"spec.containers\[0\].resources.requests.cpu: expected a Kubernetes"):
        pod_requests(Reader("f.yaml", "document 1"), spec, "spec")
    lenient = Reader(strict=False)
    got = pod_requests(lenient, spec, "spec")
    assert got.fit == {"memory": Decimal(GI)}
    assert [p for p, _ in lenient.problems] == ["spec.containers[0].resources.requests.cpu"]


def test_resources_per_node_merges_key_by_key():
    base = {"requests": {"cpu": "8", "memory": "32Gi"}, "limits": {"memory": "32Gi"}}
    merged = merge_resources(base, {"requests": {"cpu": "48"}, "limits": {"nvidia.com/gpu": 8}})
    assert merged == {"requests": {"cpu": "48", "memory": "32Gi"}, "limits": {"memory": "32Gi", "nvidia.com/gpu": 8}}
    assert base["requests"]["cpu"] == "8"      # the runtime is not changed
