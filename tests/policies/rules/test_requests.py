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
