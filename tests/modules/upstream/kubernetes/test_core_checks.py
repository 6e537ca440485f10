"""The core checks ported from kubernetes v1.35 ``pkg/apis/core/validation/validation.go`` (each case
names the upstream function): refused on upstream's field with upstream's whole message, the valid twin
admitted; and the PodValidationOptions that Volcano's job webhook passes (strict env var names)."""
from __future__ import annotations

import copy

import pytest

from modules.upstream.kubernetes.core_pod import validate_pod_template
from modules.upstream.kubernetes.pod_options import API_SERVER_CREATE, volcano_job_webhook
from modules.upstream.kubernetes.registry import validate_object

SYSCTL_REGEX = r"^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$"


def _pod(spec_extra: dict | None = None, container_extra: dict | None = None, annotations: dict | None = None) -> dict:
    container = {"name": "app", "image": "busybox:1.36", **(container_extra or {})}
    md = {"name": "p", "namespace": "default", **({"annotations": annotations} if annotations else {})}
    spec = {"containers": [container], **(spec_extra or {})}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec}


def _deployment(spec_extra: dict) -> dict:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": "d"}},
                     "template": {"metadata": {"labels": {"app": "d"}},
                                  "spec": {"containers": [{"name": "app", "image": "x"}], **spec_extra}}}}


def _sysctls(*names: str) -> dict:
    return {"securityContext": {"sysctls": [{"name": n, "value": "1"} for n in names]}}


def _errors(obj: dict) -> list[str]:
    return [e.error() for e in validate_object(obj)]


REFUSED = [
    # validateSysctls
    (_pod(_sysctls("net.core.somaxconn", "Kernel.msgmax")),
     [f'spec.securityContext.sysctls[1].name: Invalid value: "Kernel.msgmax": must have at most 253 characters and '
      f"match regex {SYSCTL_REGEX}"]),
    (_pod(_sysctls("kernel.msgmax", "kernel.msgmax")),
     ['spec.securityContext.sysctls[1].name: Duplicate value: "kernel.msgmax"']),
    (_pod({**_sysctls("net.ipv4.ip_local_port_range"), "hostNetwork": True}),
     ["spec.securityContext.sysctls[0].name: Invalid value: \"net.ipv4.ip_local_port_range\": may not be specified "
      "when 'hostNetwork' is true"]),
    (_deployment({**_sysctls("net/ipv4/tcp_syncookies"), "hostNetwork": True}),
     ["spec.template.spec.securityContext.sysctls[0].name: Invalid value: \"net/ipv4/tcp_syncookies\": may not be "
      "specified when 'hostNetwork' is true"]),
    (_pod({**_sysctls("kernel.shm_rmid_forced"), "hostIPC": True}),
     ["spec.securityContext.sysctls[0].name: Invalid value: \"kernel.shm_rmid_forced\": may not be specified when "
      "'hostIPC' is true"]),
    # ValidateSecurityContext
    (_pod(container_extra={"securityContext": {"allowPrivilegeEscalation": False,
                                               "capabilities": {"add": ["CAP_SYS_ADMIN"]}}}),
     ["spec.containers[0].securityContext: Invalid value: cannot set `allowPrivilegeEscalation` to false and "
      "`capabilities.Add` CAP_SYS_ADMIN"]),
    (_pod(container_extra={"securityContext": {"allowPrivilegeEscalation": False, "privileged": True}}),
     ["spec.containers[0].securityContext: Invalid value: cannot set `allowPrivilegeEscalation` to false and "
      "`privileged` to true"]),
    # validateResourceRequirements
    (_pod(container_extra={"resources": {"limits": {"hugepages-2Mi": "4Mi"}, "requests": {"hugepages-2Mi": "4Mi"}}}),
     ["spec.containers[0].resources: Forbidden: HugePages require cpu or memory"]),
    (_pod(container_extra={"resources": {"limits": {"hugepages-2Mi": "3Mi", "memory": "1Gi"}}}),
     ['spec.containers[0].resources.limits[hugepages-2Mi]: Invalid value: "3Mi": 3Mi is not positive integer multiple '
      "of hugepages-2Mi"]),
    # ValidatePodSpecificAnnotations (GetDeletionCostFromPodAnnotations)
    (_pod(annotations={"controller.kubernetes.io/pod-deletion-cost": "+5"}),
     ['metadata.annotations[controller.kubernetes.io/pod-deletion-cost]: Invalid value: "+5": must be a 32bit '
      "integer"]),
    (_pod(annotations={"controller.kubernetes.io/pod-deletion-cost": "2147483648"}),
     ['metadata.annotations[controller.kubernetes.io/pod-deletion-cost]: Invalid value: "2147483648": must be a 32bit '
      "integer"]),
    (_pod(annotations={"controller.kubernetes.io/pod-deletion-cost": "007"}),
     ['metadata.annotations[controller.kubernetes.io/pod-deletion-cost]: Invalid value: "007": must be a 32bit '
      "integer"]),
    # validateDataSource
    ({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "c", "namespace": "d"},
      "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}},
               "dataSource": {"kind": "ConfigMap", "name": "seed"}}},
     ["spec.dataSource: Invalid value: \"ConfigMap\": must be 'PersistentVolumeClaim' when referencing the default "
      "apiGroup"]),
    # validateSchedulingGates, ValidateHostAliases, validateHostUsers, ValidatePodCreate
    (_pod({"schedulingGates": [{"name": "example.com/wait"}, {"name": "example.com/wait"}], "nodeName": "n1"}),
     ['spec.schedulingGates[1]: Duplicate value: "example.com/wait"',
      "spec.nodeName: Forbidden: cannot be set until all schedulingGates have been cleared"]),
    (_pod({"hostAliases": [{"ip": "999.999.999.999", "hostnames": ["db.local"]}]}),
     ['spec.hostAliases[0].ip: Invalid value: "999.999.999.999": must be a valid IP address, (e.g. 10.9.8.7 or '
      "2001:db8::ffff)"]),
    (_pod({"hostUsers": False, "hostNetwork": True}),
     ["spec.hostNetwork: Forbidden: when `pod.Spec.HostUsers` is false"]),
    # validatePodResources (PodLevelResources, on by default in v1.35)
    (_pod({"resources": {"requests": {"cpu": "1"}}},
          {"resources": {"requests": {"cpu": "2"}}}),
     ['spec.resources.requests[cpu]: Invalid value: "1": must be greater than or equal to aggregate container '
      "requests of 2"]),
    (_pod({"resources": {"limits": {"cpu": "1", "nvidia.com/gpu": "1"}}}),
     ['spec.resources.limits[nvidia.com/gpu]: Unsupported value: "nvidia.com/gpu": supported values: "cpu", '
      '"memory"']),
]


@pytest.mark.parametrize("obj, errors", REFUSED, ids=range(len(REFUSED)))
def test_refused_on_upstreams_field_with_upstreams_whole_message(obj, errors):
    assert _errors(obj) == errors


ADMITTED = [
    _pod(_sysctls("net.core.somaxconn", "kernel.msgmax")),
    _pod({**_sysctls("kernel.msgmax"), "hostNetwork": True}),          # an IPC sysctl on the host network
    _pod(container_extra={"securityContext": {"allowPrivilegeEscalation": False,
                                              "capabilities": {"add": ["SYS_ADMIN"]}}}),   # upstream's literal
    _pod(container_extra={"resources": {"limits": {"hugepages-2Mi": "4Mi", "memory": "1Gi"}}}),
    _pod(annotations={"controller.kubernetes.io/pod-deletion-cost": "-2147483648"}),
    _pod(annotations={"controller.kubernetes.io/pod-deletion-cost": "0"}),
    {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "c", "namespace": "d"},
     "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}},
              "dataSource": {"apiGroup": "snapshot.storage.k8s.io", "kind": "VolumeSnapshot", "name": "s"}}},
    _pod({"resources": {"requests": {"cpu": "2"}, "limits": {"cpu": "4"}}}, {"resources": {"requests": {"cpu": "2"}}}),
    # upstream's TestValidatePodDNSConfig admits a non-canonical IPv6 nameserver
    _pod({"dnsConfig": {"nameservers": ["FE80::0202:B3FF:FE1E:8329"]}}),
]


@pytest.mark.parametrize("obj", ADMITTED, ids=range(len(ADMITTED)))
def test_the_valid_twins_are_admitted(obj):
    assert _errors(obj) == []


TASK = {"spec": {"containers": [{"name": "trainer", "image": "x", "env": [{"name": "1F1B_SCHEDULE", "value": "1"}]}],
                 "restartPolicy": "OnFailure"}}


def test_volcanos_job_webhook_refuses_an_env_name_a_deployment_admits():
    volcano = validate_pod_template(copy.deepcopy(TASK), "spec.tasks[0].template", options=volcano_job_webhook(True))
    assert [e.field for e in volcano] == ["spec.tasks[0].template.spec.containers[0].env[0].name"]
    assert volcano[0].message().startswith('Invalid value: "1F1B_SCHEDULE": a valid environment variable name must '
                                           "consist of alphabetic characters")
    assert validate_pod_template(copy.deepcopy(TASK), "spec.template", options=API_SERVER_CREATE) == []
    deployment = _deployment({})
    deployment["spec"]["template"]["spec"]["containers"][0]["env"] = [{"name": "1F1B_SCHEDULE", "value": "1"}]
    assert _errors(deployment) == []


def test_pod_level_resources_are_judged_only_with_the_gate():
    over = {"spec": {"resources": {"requests": {"cpu": "1"}},
                     "containers": [{"name": "a", "image": "x", "resources": {"requests": {"cpu": "2"}}}]}}
    assert validate_pod_template(copy.deepcopy(over), "t", options=volcano_job_webhook(False)) == []
    assert [e.field for e in validate_pod_template(over, "t", options=volcano_job_webhook(True))] == [
        "t.spec.resources.requests[cpu]"]
