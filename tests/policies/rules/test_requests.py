"""requests-required says what a limits-only container means: node fit counts the limit (the API
server defaults the Pod's request from it), the PodGroup's minResources does not."""
from policies.framework import CheckContext
from policies.rules.requests import RULES

RULE = RULES[0]


def findings(container: dict, config: dict | None = None) -> list[str]:
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "t"},
                  "spec": {"template": {"spec": {"containers": [container]}}}}
    ctx = CheckContext(config=config or {"allowLimitsAsRequests": False})
    return [f.message for f in RULE.check(deployment, ctx)]


def test_limits_only_names_both_views():
    [message] = findings({"name": "c", "resources": {"limits": {"cpu": "4", "memory": "8Gi"}}})
    assert "sets a cpu and memory limit but no request" in message
    assert "node fit counts it" in message and "minResources" in message
    assert "count no cpu and memory for this pod" in message


def test_no_requests_at_all_keeps_the_plain_message():
    [message] = findings({"name": "c", "resources": {"requests": {"memory": "8Gi"}}})
    assert "sets no cpu request" in message and "limit" not in message.split("Set resources")[0]


def test_limits_accepted_when_allowed():
    assert findings({"name": "c", "resources": {"limits": {"cpu": "4", "memory": "8Gi"}}},
                    {"allowLimitsAsRequests": True}) == []


def test_gpu_only_pod_is_best_effort_to_the_kubelet_but_allocated_by_volcano():
    # Volcano v1.15.1 Resource.IsEmpty counts scalar resources: a GPU-only task is not empty to it.
    [message] = findings({"name": "c", "resources": {"requests": {"nvidia.com/gpu": 8},
                                                     "limits": {"nvidia.com/gpu": 8}}})
    assert "BestEffort to the kubelet" in message and "evicted under node pressure" in message
    assert "Volcano still allocates them" in message and "nvidia.com/gpu" in message
    assert "skips" not in message


def test_pod_requesting_nothing_is_empty_to_volcano_too():
    [message] = findings({"name": "c"})
    assert "Resource.IsEmpty" in message and "skips them (only backfill places them)" in message
