"""The pod-security matrix: every Baseline control is caught in every pod-template kind trainstack
knows, each Restricted control is advisory, and the allow-lists and opt-ins let real needs through.
Rules run in-process (runner.run_rules); the table (cases.yaml) covers the three runners."""
from __future__ import annotations

import copy

import pytest

from policies.framework import ADVISORY, MANDATORY, CheckContext
from policies.rules import BY_ID
from policies.runner import PolicySettings, parse_settings, run_rules

BASELINE, RESTRICTED = "pod-security-baseline", "pod-security-restricted"
IMAGE = "registry.example.com/train/llm:1.0.0"


def hardened() -> dict:
    """A pod template that passes both profiles (RDMA's IPC_LOCK included)."""
    return {"metadata": {"labels": {"app": "x"}},
            "spec": {"automountServiceAccountToken": False,
                     "securityContext": {"seccompProfile": {"type": "RuntimeDefault"}},
                     "containers": [{"name": "node", "image": IMAGE,
                                     "resources": {"requests": {"cpu": "1", "memory": "1Gi"}},
                                     "securityContext": {"allowPrivilegeEscalation": False,
                                                         "capabilities": {"drop": ["ALL"], "add": ["IPC_LOCK"]}}}]}}


def _container(t: dict) -> dict:
    return t["spec"]["containers"][0]


def _sc(t: dict) -> dict:
    return _container(t)["securityContext"]


# control -> (how to break it, the field path inside the pod template that must be reported)
BASELINE_CONTROLS = {
    "hostProcess": (lambda t: t["spec"]["securityContext"].update(windowsOptions={"hostProcess": True}),
                    "spec.securityContext.windowsOptions.hostProcess"),
    "hostNetwork": (lambda t: t["spec"].update(hostNetwork=True), "spec.hostNetwork"),
    "hostPID": (lambda t: t["spec"].update(hostPID=True), "spec.hostPID"),
    "hostIPC": (lambda t: t["spec"].update(hostIPC=True), "spec.hostIPC"),
    "privileged": (lambda t: _sc(t).update(privileged=True), "spec.containers[0].securityContext.privileged"),
    "capabilities": (lambda t: _sc(t)["capabilities"]["add"].append("SYS_ADMIN"),
                     "spec.containers[0].securityContext.capabilities.add[1]"),
    "hostPathVolumes": (lambda t: t["spec"].update(volumes=[{"name": "h", "hostPath": {"path": "/var/run"}}]),
                        "spec.volumes[0].hostPath"),
    "hostPorts": (lambda t: _container(t).update(ports=[{"containerPort": 80, "hostPort": 80}]),
                  "spec.containers[0].ports[0].hostPort"),
    "appArmorAnnotation": (lambda t: t["metadata"].update(
        annotations={"container.apparmor.security.beta.kubernetes.io/node": "unconfined"}),
        "metadata.annotations.container.apparmor.security.beta.kubernetes.io/node"),
    "appArmorProfile": (lambda t: _sc(t).update(appArmorProfile={"type": "Unconfined"}),
                        "spec.containers[0].securityContext.appArmorProfile.type"),
    "seLinux": (lambda t: t["spec"]["securityContext"].update(seLinuxOptions={"type": "spc_t"}),
                "spec.securityContext.seLinuxOptions.type"),
    "procMount": (lambda t: _sc(t).update(procMount="Unmasked"), "spec.containers[0].securityContext.procMount"),
    "seccomp": (lambda t: t["spec"]["securityContext"].update(seccompProfile={"type": "Unconfined"}),
                "spec.securityContext.seccompProfile.type"),
    "sysctls": (lambda t: t["spec"]["securityContext"].update(sysctls=[{"name": "kernel.msgmax", "value": "1"}]),
                "spec.securityContext.sysctls[0].name"),
}


def _deployment(kind: str):
    return lambda t: ({"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": "x", "namespace": "training"},
                       "spec": {"selector": {"matchLabels": {"app": "x"}}, "template": t}}, "spec.template")


def _volcano_job(t):
    return ({"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
             "metadata": {"name": "x", "namespace": "training"},
             "spec": {"schedulerName": "volcano", "minAvailable": 1,
                      "tasks": [{"name": "w", "replicas": 1, "template": t}]}}, "spec.tasks[0].template")


def _jobset_spec(t):
    return {"replicatedJobs": [{"name": "node", "template": {"spec": {"template": t}}}]}


# kind -> object carrying the template, and the template's path in it
KINDS = {
    "Pod": lambda t: ({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x", "namespace": "training"}, **t},
                      ""),
    "Deployment": _deployment("Deployment"),
    "StatefulSet": _deployment("StatefulSet"),
    "DaemonSet": _deployment("DaemonSet"),
    "ReplicaSet": _deployment("ReplicaSet"),
    "Job": lambda t: ({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "x", "namespace": "training"},
                       "spec": {"template": t}}, "spec.template"),
    "CronJob": lambda t: ({"apiVersion": "batch/v1", "kind": "CronJob",
                           "metadata": {"name": "x", "namespace": "training"},
                           "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": t}}}},
                          "spec.jobTemplate.spec.template"),
    "VolcanoJob": _volcano_job,
    "VolcanoCronJob": lambda t: ({"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "CronJob",
                                  "metadata": {"name": "x", "namespace": "training"},
                                  "spec": {"schedule": "* * * * *",
                                           "jobTemplate": {"spec": _volcano_job(t)[0]["spec"]}}},
                                 "spec.jobTemplate.spec.tasks[0].template"),
    "JobTemplate": lambda t: ({"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobTemplate",
                               "metadata": {"name": "x", "namespace": "training"}, "spec": _volcano_job(t)[0]["spec"]},
                              "spec.tasks[0].template"),
    "ClusterTrainingRuntime": lambda t: ({"apiVersion": "trainer.kubeflow.org/v1alpha1",
                                          "kind": "ClusterTrainingRuntime", "metadata": {"name": "x"},
                                          "spec": {"template": {"spec": _jobset_spec(t)}}},
                                         "spec.template.spec.replicatedJobs[0].template.spec.template"),
    "TrainingRuntime": lambda t: ({"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainingRuntime",
                                   "metadata": {"name": "x", "namespace": "training"},
                                   "spec": {"template": {"spec": _jobset_spec(t)}}},
                                  "spec.template.spec.replicatedJobs[0].template.spec.template"),
    "JobSet": lambda t: ({"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
                          "metadata": {"name": "x", "namespace": "training"}, "spec": _jobset_spec(t)},
                         "spec.replicatedJobs[0].template.spec.template"),
    "PyTorchJob": lambda t: ({"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
                              "metadata": {"name": "x", "namespace": "training"},
                              "spec": {"pytorchReplicaSpecs": {"Worker": {"replicas": 1, "template": t}}}},
                             "spec.pytorchReplicaSpecs.Worker.template"),
    "MPIJob": lambda t: ({"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
                          "metadata": {"name": "x", "namespace": "training"},
                          "spec": {"mpiReplicaSpecs": {"Launcher": {"replicas": 1, "template": t}}}},
                         "spec.mpiReplicaSpecs.Launcher.template"),
}


def findings(objects: list[dict], rule: str, config: dict | None = None) -> list:
    settings = PolicySettings(configs={rule: config} if config else {})
    return [v for v in run_rules(objects, CheckContext(), settings, rules=[BY_ID[rule]]) if not v.is_note]


def test_hardened_template_passes_everywhere():
    for kind, build in KINDS.items():
        obj, _ = build(hardened())
        assert findings([obj], BASELINE) == [], kind
        assert findings([obj], RESTRICTED) == [], kind


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("control", sorted(BASELINE_CONTROLS))
def test_baseline_control_caught_in_every_kind(kind, control):
    template = hardened()
    breaks, local = BASELINE_CONTROLS[control]
    breaks(template)
    obj, base = KINDS[kind](template)
    hits = findings([obj], BASELINE)
    expected = f"{base}.{local}" if base else local
    assert [v.path for v in hits] == [expected], (kind, control, [v.message for v in hits])
    assert hits[0].level == MANDATORY
    assert hits[0].message.startswith(f"{hits[0].resource} at {expected}: Pod Security Standards Baseline")


RESTRICTED_CONTROLS = {
    "allowPrivilegeEscalation": (lambda t: _sc(t).pop("allowPrivilegeEscalation"),
                                 "spec.containers[0].securityContext.allowPrivilegeEscalation"),
    "dropAll": (lambda t: _sc(t)["capabilities"].pop("drop"), "spec.containers[0].securityContext.capabilities.drop"),
    "addedCapability": (lambda t: _sc(t)["capabilities"]["add"].append("CHOWN"),
                        "spec.containers[0].securityContext.capabilities.add[1]"),
    "seccompProfile": (lambda t: t["spec"].pop("securityContext"),
                       "spec.containers[0].securityContext.seccompProfile"),
    "serviceAccountToken": (lambda t: t["spec"].pop("automountServiceAccountToken"),
                            "spec.automountServiceAccountToken"),
}


@pytest.mark.parametrize("control", sorted(RESTRICTED_CONTROLS))
def test_restricted_controls_are_advisory(control):
    assert BY_ID[RESTRICTED].enforcement == ADVISORY
    template = hardened()
    breaks, local = RESTRICTED_CONTROLS[control]
    breaks(template)
    obj, base = KINDS["VolcanoJob"](template)
    hits = findings([obj], RESTRICTED)
    assert [(v.path, v.level) for v in hits] == [(f"{base}.{local}", ADVISORY)]
    assert findings([obj], BASELINE) == []   # none of them is a Baseline control


def test_run_as_non_root_on_request_and_dedicated_service_account():
    template = hardened()
    obj, base = KINDS["Deployment"](template)
    assert findings([obj], RESTRICTED) == []
    hits = findings([obj], RESTRICTED, {"requireRunAsNonRoot": True})
    assert [v.path for v in hits] == [f"{base}.spec.containers[0].securityContext.runAsNonRoot"]
    template["spec"]["securityContext"]["runAsNonRoot"] = True
    assert findings([obj], RESTRICTED, {"requireRunAsNonRoot": True}) == []
    # a pod that names its own service account keeps the token (it talks to the API server)
    template["spec"].pop("automountServiceAccountToken")
    assert len(findings([obj], RESTRICTED)) == 1
    template["spec"]["serviceAccountName"] = "launcher"
    assert findings([obj], RESTRICTED) == []


def test_allow_lists_and_opt_ins():
    template = hardened()
    template["spec"]["volumes"] = [{"name": "ib", "hostPath": {"path": "/dev/infiniband/uverbs0"}}]
    _container(template)["ports"] = [{"containerPort": 9100, "hostPort": 9100}]
    _sc(template)["capabilities"]["add"].append("SYS_RESOURCE")
    template["spec"]["securityContext"]["sysctls"] = [{"name": "net.core.somaxconn", "value": "1024"},
                                                      {"name": "net.ipv4.tcp_syncookies", "value": "1"}]
    obj, _ = KINDS["JobSet"](template)
    assert {v.path.rsplit(".", 1)[-1] for v in findings([obj], BASELINE)} == {"hostPath", "hostPort", "add[1]",
                                                                              "name"}
    allowed = {"allowedHostPaths": ["/dev/infiniband"], "allowedHostPorts": [9100],
               "allowedCapabilities": ["IPC_LOCK", "SYS_RESOURCE"],
               "allowedSysctls": ["net.core.somaxconn", "net.ipv4.tcp_syncookies"]}
    assert findings([obj], BASELINE, allowed) == []
    # a prefix is a folder, not a string prefix
    template["spec"]["volumes"][0]["hostPath"]["path"] = "/dev/infinibandX"
    assert len(findings([obj], BASELINE, allowed)) == 1
    assert findings([obj], BASELINE, {**allowed, "skipControls": ["hostPathVolumes"]}) == []


def test_host_network_allowed_by_its_opt_in_and_exempt_namespaces():
    template = hardened()
    template["spec"].update(hostNetwork=True, dnsPolicy="ClusterFirstWithHostNet")
    obj, _ = KINDS["ClusterTrainingRuntime"](template)
    assert len(findings([obj], BASELINE)) == 1
    obj["metadata"]["annotations"] = {"trainstack.io/host-network": "true"}
    assert findings([obj], BASELINE) == []
    assert len(findings([obj], BASELINE, {"hostNetworkOptIn": False})) == 1
    template["spec"]["hostPID"] = True       # the opt-in is for the network only
    assert [v.path.rsplit(".", 1)[-1] for v in findings([obj], BASELINE)] == ["hostPID"]
    pod, _ = KINDS["Pod"](copy.deepcopy(template))
    pod["metadata"]["namespace"] = "kube-system"
    assert findings([pod], BASELINE) == []


def test_trainjob_is_judged_after_its_runtime_patches():
    runtime, _ = KINDS["ClusterTrainingRuntime"](hardened())
    runtime["metadata"]["name"] = "torch"
    patch = {"metadata": {"annotations": {"container.apparmor.security.beta.kubernetes.io/node": "unconfined"}},
             "spec": {"volumes": [{"name": "h", "hostPath": {"path": "/"}}],
                      "securityContext": {"sysctls": [{"name": "kernel.msgmax", "value": "1"}]},
                      "containers": [{"name": "node", "securityContext": {"privileged": True}}]}}
    trainjob = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
                "metadata": {"name": "llm", "namespace": "training"},
                "spec": {"runtimeRef": {"name": "torch"}, "runtimePatches": [{"manager": "me", "trainingRuntimeSpec": {
                    "template": {"spec": {"replicatedJobs": [{"name": "node", "template": {"spec": {
                        "template": patch}}}]}}}}]}}
    hits = findings([runtime, trainjob], BASELINE)
    base = "spec.runtimePatches[0].trainingRuntimeSpec.template.spec.replicatedJobs[0].template.spec.template"
    assert sorted(v.path for v in hits) == sorted([
        f"{base}.metadata.annotations.container.apparmor.security.beta.kubernetes.io/node",
        f"{base}.spec.volumes[0].hostPath", f"{base}.spec.securityContext.sysctls[0].name",
        f"{base}.spec.containers[0].securityContext.privileged"])
    assert all(v.resource.endswith("TrainJob/training/llm") for v in hits)
    # the patch keeps the runtime's hardening: nothing for Restricted on the TrainJob
    assert findings([runtime, trainjob], RESTRICTED) == []
    # Trainer v2.0-2.2's podTemplateOverrides
    trainjob["spec"] = {"runtimeRef": {"name": "torch"}, "podTemplateOverrides": [
        {"targetJobs": [{"name": "node"}], "spec": {"volumes": [{"name": "h", "hostPath": {"path": "/"}}]}}]}
    assert [v.path for v in findings([runtime, trainjob], BASELINE)] == [
        "spec.podTemplateOverrides[0].spec.volumes[0].hostPath"]


def test_thresholds_are_validated_per_stack():
    settings = parse_settings({BASELINE: {"allowedHostPaths": ["/dev/infiniband"], "allowedHostPorts": [9100]},
                               RESTRICTED: {"enforcementLevel": "mandatory", "requireRunAsNonRoot": True}}, "x.json")
    assert settings.config(BY_ID[BASELINE])["allowedCapabilities"][-1] == "IPC_LOCK"
    with pytest.raises(Exception, match="allowedHostPorts"):
        parse_settings({BASELINE: {"allowedHostPorts": ["80"]}}, "x.json")


@pytest.mark.parametrize("kind", ["VolcanoCronJob", "JobTemplate"])
def test_every_pod_template_rule_covers_volcano_cronjob_and_jobtemplate(kind):
    template = hardened()
    container = _container(template)
    container["image"] = "busybox:latest"
    container.pop("resources")
    template["spec"]["schedulerName"] = "default-scheduler"
    obj, base = KINDS[kind](template)
    assert [v.path for v in findings([obj], "image-pinned")] == [f"{base}.spec.containers[0].image"]
    assert [v.path for v in findings([obj], "requests-required")] == [f"{base}.spec"]   # BestEffort
    assert [v.path for v in findings([obj], "scheduler-name-volcano")] == [f"{base}.spec.schedulerName"]
    job_spec = obj["spec"]["jobTemplate"]["spec"] if kind == "VolcanoCronJob" else obj["spec"]
    job_spec["schedulerName"] = "other"
    where = "spec.jobTemplate.spec.schedulerName" if kind == "VolcanoCronJob" else "spec.schedulerName"
    assert where in [v.path for v in findings([obj], "scheduler-name-volcano")]


def test_a_trainjob_is_not_blamed_for_what_its_runtime_lacks():
    template = hardened()
    _sc(template).pop("allowPrivilegeEscalation")
    runtime, base = KINDS["ClusterTrainingRuntime"](template)
    runtime["metadata"]["name"] = "torch"
    trainjob = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
                "metadata": {"name": "llm", "namespace": "training"},
                "spec": {"runtimeRef": {"name": "torch"}, "podTemplateOverrides": [
                    {"targetJobs": [{"name": "node"}],
                     "spec": {"containers": [{"name": "node", "securityContext": {"readOnlyRootFilesystem": True}}]}}]}}
    hits = findings([runtime, trainjob], RESTRICTED)
    assert [v.resource.split("/")[-1] for v in hits] == ["torch"]
    trainjob["spec"]["podTemplateOverrides"][0]["spec"]["containers"][0]["securityContext"] = {
        "allowPrivilegeEscalation": True}
    hits = findings([runtime, trainjob], RESTRICTED)
    assert sorted(v.path for v in hits) == sorted([
        f"{base}.spec.containers[0].securityContext.allowPrivilegeEscalation",
        "spec.podTemplateOverrides[0].spec.containers[0].securityContext.allowPrivilegeEscalation"])
