"""nccl-ifname-pod-network reads envFrom prefixes; pod-security-baseline lets allowedHostPaths
"/" allow every path."""
from __future__ import annotations

from policies.framework import CheckContext
from policies.rules import BY_ID
from policies.rules.pod_security import baseline_hits

NCCL = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "nccl", "namespace": "t"},
        "data": {"NCCL_SOCKET_IFNAME": "=bond0", "SOCKET_IFNAME": "=bond0"}}


def _pod(env_from: list[dict]) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "t"},
            "spec": {"containers": [{"name": "c", "image": "x:1", "envFrom": env_from}]}}


def _ifname_findings(pod: dict) -> list[str]:
    rule = BY_ID["nccl-ifname-pod-network"]
    return [f.path for f in rule.check(pod, CheckContext(manifests=[NCCL, pod], config={"podInterfaces": []}))]


def test_envfrom_prefix_names_the_variable():
    """envFrom names each key prefix + key (Kubernetes EnvFromSource.prefix)."""
    hit = ["spec.containers[0].envFrom[0].configMapRef.name"]
    assert _ifname_findings(_pod([{"configMapRef": {"name": "nccl"}}])) == hit
    # With a prefix the host name lands in APP_NCCL_SOCKET_IFNAME: NCCL never reads it.
    assert _ifname_findings(_pod([{"prefix": "APP_", "configMapRef": {"name": "nccl"}}])) == []
    # NCCL_ + SOCKET_IFNAME is NCCL_SOCKET_IFNAME.
    assert _ifname_findings(_pod([{"prefix": "NCCL_", "configMapRef": {"name": "nccl"}}])) == hit


def test_allowed_host_path_root_allows_every_path():
    template = {"spec": {"volumes": [{"name": "v", "hostPath": {"path": "/var/log"}}]}}
    assert [h.control for h in baseline_hits({}, template, {"allowedHostPaths": ["/"]})] == []
    assert [h.control for h in baseline_hits({}, template, {"allowedHostPaths": ["/var/lo"]})] == ["hostPathVolumes"]
    assert [h.control for h in baseline_hits({}, template, {"allowedHostPaths": ["/var/"]})] == []
