"""Objects the cluster refuses or admits for reasons trainstack once missed (CRD schemas, webhook
selectors, policies as installed, core validation), checked as a new user checks them: `trainstack
check prod --manifests FILE` (the prod stack installs Volcano's VAPs: vapEnable defaults to
true), the same on a copy of prod
with `vapEnable: false`, and `trainstack check --manifests FILE` outside any stack (the Volcano
v1.15.1 chart's defaults assumed: no VAPs). Each refused object names the rule and the cluster's own
words; each admitted one draws no admission finding.

One CLI run per install for all objects (each object has its own name), so the table stays cheap.
"""
from __future__ import annotations

import copy
import json
import shutil

import pytest
import yaml

from tests.support.admission import require_shared_dirs
from tests.support.cli import ROOT, run

SAFE_POD = {"automountServiceAccountToken": False,
            "securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
            "containers": [{"name": "w", "image": "registry.example.com/tools/app:1.4.2",
                            "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}},
                            "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}}]}


def vcjob(name: str, namespace: str = "research") -> dict:
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"minAvailable": 2, "schedulerName": "volcano", "queue": "research",
                     "tasks": [{"name": "worker", "replicas": 2,
                                "template": {"spec": {"restartPolicy": "Never", **copy.deepcopy(SAFE_POD)}}}]}}


def pod_spec(job: dict) -> dict:
    return job["spec"]["tasks"][0]["template"]["spec"]


def pod(name: str, annotations: dict | None = None) -> dict:
    md = {"name": name, "namespace": "research", **({"annotations": annotations} if annotations else {})}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": copy.deepcopy(SAFE_POD)}


def hypernode(name: str, member: str) -> dict:
    return {"apiVersion": "topology.volcano.sh/v1alpha1", "kind": "HyperNode", "metadata": {"name": name},
            "spec": {"tier": 1, "members": [{"type": "Node", "selector": {"exactMatch": {"name": member}}}]}}


def queue(name: str, **spec) -> dict:
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": name},
            "spec": {"weight": 1, "reclaimable": True, **spec}}


def _objects() -> dict[str, dict]:
    out: dict[str, dict] = {}
    job = vcjob("minavail-two")
    job["spec"]["minAvailable"] = "two"
    out["minavail-two"] = job
    job = vcjob("bogus-top")
    job["spec"]["bogusTop"] = 1
    out["bogus-top"] = job
    job = vcjob("in-release-ns", "volcano-system")
    job["spec"]["tasks"][0]["policies"] = [{"event": "PodEvicted", "action": "RestartJob"}]
    out["in-release-ns"] = job
    job = vcjob("unnamed-task")
    del job["spec"]["tasks"][0]["name"]
    out["unnamed-task"] = job
    out["hn-pattern"] = hypernode("hn-pattern", "Bad_Name!")
    job = vcjob("dup-ports")
    pod_spec(job)["containers"][0]["ports"] = [{"containerPort": 80, "protocol": "TCP"}] * 2
    out["dup-ports"] = job
    out["heavy"] = queue("heavy", weight=70000)
    job = vcjob("mode-bogus")
    job["spec"]["networkTopology"] = {"mode": "bogus", "highestTierAllowed": 1}
    out["mode-bogus"] = job
    job = vcjob("env-digit")
    pod_spec(job)["containers"][0]["env"] = [{"name": "1F1B_SCHEDULE", "value": "1"}]
    out["env-digit"] = job
    spec = copy.deepcopy(SAFE_POD)
    spec["containers"][0]["env"] = [{"name": "1F1B_SCHEDULE", "value": "1"}]
    out["env-digit-deploy"] = {"apiVersion": "apps/v1", "kind": "Deployment",
                               "metadata": {"name": "env-digit-deploy", "namespace": "research"},
                               "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "e"}},
                                        "template": {"metadata": {"labels": {"app": "e"}}, "spec": spec}}}
    job = vcjob("sysctl-hostnet")
    pod_spec(job)["hostNetwork"] = True
    pod_spec(job)["securityContext"]["sysctls"] = [{"name": "net.core.somaxconn", "value": "1024"}]
    out["sysctl-hostnet"] = job
    job = vcjob("cap-sys-admin")
    pod_spec(job)["containers"][0]["securityContext"]["capabilities"]["add"] = ["CAP_SYS_ADMIN"]
    out["cap-sys-admin"] = job
    hp = pod("hugepages-only")
    hp["spec"]["containers"][0]["resources"] = {"requests": {"hugepages-2Mi": "128Mi"},
                                                "limits": {"hugepages-2Mi": "128Mi"}}
    out["hugepages-only"] = hp
    out["deletion-cost"] = pod("deletion-cost", {"controller.kubernetes.io/pod-deletion-cost": "abc"})
    out["pvc-source"] = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                         "metadata": {"name": "pvc-source", "namespace": "research"},
                         "spec": {"accessModes": ["ReadWriteMany"], "resources": {"requests": {"storage": "1Gi"}},
                                  "storageClassName": "alicloud-nas", "dataSource": {"kind": "ConfigMap", "name": "x"}}}
    out["absent-runtime"] = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
                             "metadata": {"name": "absent-runtime", "namespace": "research"},
                             "spec": {"runtimeRef": {"name": "torch-not-rendered", "kind": "ClusterTrainingRuntime",
                                                     "apiGroup": "trainer.kubeflow.org"}}}
    out["half-gpu"] = queue("half-gpu", deserved={"nvidia.com/gpu": "1.5"})
    template = vcjob("x")["spec"]
    template["minAvailable"] = 5
    out["cron-bad-template"] = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "CronJob",
                                "metadata": {"name": "cron-bad-template", "namespace": "research"},
                                "spec": {"schedule": "0 * * * *", "jobTemplate": {"spec": template}}}
    out["hn-long"] = hypernode("hn-long", "n" * 70)
    jdb = pod("jdb-both", {"volcano.sh/jdb-min-available": "1", "volcano.sh/jdb-max-unavailable": "1"})
    jdb["spec"]["schedulerName"] = "volcano"
    out["jdb-both"] = jdb
    out["Alice_CSR"] = {"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
                        "metadata": {"name": "Alice_CSR"},
                        "spec": {"request": "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0K",
                                 "signerName": "kubernetes.io/kube-apiserver-client", "usages": ["client auth"]}}
    out["2001:db8::1"] = {"apiVersion": "networking.k8s.io/v1", "kind": "IPAddress",
                          "metadata": {"name": "2001:db8::1"},
                          "spec": {"parentRef": {"group": "", "resource": "services", "name": "s",
                                                 "namespace": "default"}}}
    out["rc-with-namespace"] = {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass",
                                "metadata": {"name": "rc-with-namespace", "namespace": "research"}, "handler": "runc"}
    return out


OBJECTS = _objects()

# (object, rule, message fragment) for each refusal; "prod" and "novap" are the stack runs, "alone" the
# run outside a stack. An object absent from a column is admitted there (no admission finding).
REFUSED = {
    "minavail-two": ("crd-schema", 'spec.minAvailable: Invalid value: "string": spec.minAvailable in body must be '
                                   'of type integer: "string"'),
    "hn-pattern": ("crd-schema", 'spec.members[0].selector.exactMatch.name: Invalid value: "Bad_Name!": '
                                 "spec.members[0].selector.exactMatch.name in body should match"),
    "dup-ports": ("crd-schema", "spec.tasks[0].template.spec.containers[0].ports[1]: Duplicate value:"),
    "heavy": ("crd-schema", "spec.weight: Invalid value: 70000: spec.weight in body should be less than or equal "
                            "to 65535"),
    "mode-bogus": ("crd-schema", 'spec.networkTopology.mode: Unsupported value: "bogus": supported values: "hard", '
                                 '"soft"'),
    "env-digit": ("upstream-admission", 'spec.task[0].template.spec.containers[0].env[0].name: Invalid value: '
                                        '"1F1B_SCHEDULE": a valid environment variable name must consist of'),
    "sysctl-hostnet": ("upstream-admission", "spec.task[0].template.spec.securityContext.sysctls[0].name: Invalid "
                                             "value: \"net.core.somaxconn\": may not be specified when 'hostNetwork' "
                                             "is true"),
    "cap-sys-admin": ("upstream-admission", "cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` "
                                            "CAP_SYS_ADMIN"),
    "hugepages-only": ("kubernetes-api-validation", "Forbidden: HugePages require cpu or memory"),
    "deletion-cost": ("kubernetes-api-validation", 'Invalid value: "abc": must be a 32bit integer'),
    "pvc-source": ("kubernetes-api-validation", "Invalid value: \"ConfigMap\": must be 'PersistentVolumeClaim' when "
                                                "referencing the default apiGroup"),
    "half-gpu": ("upstream-admission", 'requestBody.spec.deserved.nvidia.com/gpu: Invalid value: "1500m": must be an '
                                       "integer"),
    "cron-bad-template": ("volcano-cronjob-runs", "the CronJob is admitted (its webhook checks only schedule, time "
                                                  "zone and name), but each run would fail"),
}
STACK_ONLY = {   # the stack knows its runtimes; outside one, a note says the runtime is not among the objects
    "absent-runtime": ("trainer-admission", "specified clusterTrainingRuntime must be created before the TrainJob "
                                            "is created"),
}
VAPS_ONLY = {    # prod installs Volcano's VAPs (vapEnable defaults to true); the chart's default does not
    "hn-long": ("upstream-admission", "Volcano ValidatingAdmissionPolicy 'hypernode-validation-policy'"),
    "jdb-both": ("upstream-admission", "not allow configure multiple annotations at same time"),
}
UNKNOWN_FIELD = {   # the engine's field validation: prod syncs with Flux (server-side apply), alone kubectl
    "prod": ".spec.bogusTop: field not declared in schema",
    "novap": ".spec.bogusTop: field not declared in schema",
    "alone": 'strict decoding error: unknown field "spec.bogusTop"',
}
ADMISSION_RULES = {"crd-schema", "crd-unknown-fields", "upstream-admission", "kubernetes-api-validation",
                   "trainer-admission", "volcano-job-admission", "training-operator-admission", "volcano-cronjob-runs"}


def resource(obj: dict) -> str:
    md = obj["metadata"]
    return "/".join(p for p in (obj["apiVersion"], obj["kind"], md.get("namespace"), md["name"]) if p)


@pytest.fixture(scope="module")
def reports(tmp_path_factory) -> dict[str, list[dict]]:
    admission, _ = require_shared_dirs()
    folder = tmp_path_factory.mktemp("cluster-objects")
    manifests = folder / "objects.yaml"
    manifests.write_text(yaml.safe_dump_all(list(OBJECTS.values()), sort_keys=False))
    project = folder / "project"
    project.mkdir()
    shutil.copy(ROOT / "Pulumi.yaml", project / "Pulumi.yaml")
    shutil.copytree(ROOT / "stacks", project / "stacks")
    shutil.copytree(ROOT / "policies", project / "policies", ignore=shutil.ignore_patterns("__pycache__", "*.py"))
    prod = yaml.safe_load((project / "stacks" / "Pulumi.prod.yaml").read_text())
    prod["config"]["trainstack:volcano"]["vapEnable"] = False
    (project / "stacks" / "Pulumi.novap.yaml").write_text(yaml.safe_dump(prod, sort_keys=False))
    out = {}
    for label, args in (("prod", ["prod"]), ("novap", ["novap"]), ("alone", [])):
        result = run("check", *args, "--project", str(project), "--manifests", str(manifests),
                     "--admission-dir", str(admission), "--format", "json", cwd=project)
        assert result.code == 1, result.err
        [stack] = json.loads(result.out)["stacks"].values()
        out[label] = stack["violations"]
    return out


def _expected(label: str) -> dict[str, tuple[str, str]]:
    out = dict(REFUSED)
    if label != "alone":
        out.update(STACK_ONLY)
    if label == "prod":
        out.update(VAPS_ONLY)
    return out


@pytest.mark.parametrize("label", ["prod", "novap", "alone"])
@pytest.mark.parametrize("name", sorted(OBJECTS))
def test_object_is_refused_or_admitted_as_the_cluster_does(reports, label, name):
    found = [v for v in reports[label] if v["resource"] == resource(OBJECTS[name]) and v["rule"] in ADMISSION_RULES]
    if name == "bogus-top":
        assert [(v["rule"], v["level"]) for v in found] == [("crd-schema", "mandatory")]
        assert UNKNOWN_FIELD[label] in found[0]["message"]
        return
    expected = _expected(label).get(name)
    if expected is None:
        assert found == [], f"{name} is admitted by the cluster ({label})"
        return
    rule, fragment = expected
    assert {v["rule"] for v in found} == {rule}, found
    assert any(fragment in v["message"] for v in found), [v["message"] for v in found]


def test_the_cronjob_finding_is_advice_unless_the_profile_raises_it(reports):
    """volcano-cronjob-runs is advisory; policies/config.prod.json makes every rule mandatory."""
    def level(label):
        return {v["level"] for v in reports[label] if v["rule"] == "volcano-cronjob-runs"}
    assert level("alone") == {"advisory"} and level("prod") == {"mandatory"}
