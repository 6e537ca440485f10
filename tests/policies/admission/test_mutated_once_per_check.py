"""A check creates and mutates each object once (``webhook_check.Admitted``, held in the check's
context): the hand-over to the evaluating process, the Go webhook checks of `upstream-admission`,
the policies and CRD rules, and `volcano-job-admission` all meet the same mutated object; the Volcano
install and the cluster are read from the manifests once. Counted by calls, not time."""
from __future__ import annotations

import copy
from collections import Counter

import pytest

from modules.upstream import chain
from modules.upstream.install import CHART_DEFAULT_ADMISSIONS
from policies.admission import rules
from policies.admission import webhook_check
from policies.framework import CheckContext
from policies.runner import PolicySettings, run_rules
from policies.rules import RULES

CONTAINER = {"name": "main", "image": "registry.example.com/train:1.0",
             "resources": {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1Gi"}}}
POD = {"spec": {"restartPolicy": "Never", "containers": [CONTAINER]}}
NAMESPACE = {"apiVersion": "v1", "kind": "Namespace",
             "metadata": {"name": "training", "annotations": {"scheduling.volcano.sh/queue-name": "research"}}}
QUEUE = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "research"},
         "spec": {"weight": 1}}
JOB = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "j", "namespace": "training"},
       "spec": {"queue": "research", "tasks": [{"replicas": 2, "template": POD}]}}
PODGROUP = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
            "metadata": {"name": "pg", "namespace": "training"}, "spec": {"minMember": 1}}
CRONJOB = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "CronJob",
           "metadata": {"name": "nightly", "namespace": "training"},
           "spec": {"schedule": "0 3 * * *", "jobTemplate": {"spec": {"queue": "research",
                                                                      "tasks": [{"replicas": 1, "template": POD}]}}}}
# A chart release that registers the PodGroup mutating webhook besides the chart's defaults.
RELEASE = {"apiVersion": "helm.sh/v3", "kind": "Release",
           "metadata": {"name": "volcano", "namespace": "volcano-system"},
           "spec": {"chart": "volcano", "values": {"custom": {"enabled_admissions": ",".join(
               sorted(CHART_DEFAULT_ADMISSIONS | {"/podgroups/mutate"}))}}}}
OBJECTS = [NAMESPACE, QUEUE, JOB, PODGROUP, CRONJOB]


@pytest.fixture
def counted(monkeypatch):
    """Calls of ``chain.mutate`` (each creates its object with ``as_created`` first) per object, and
    of ``install_of``/``cluster_of`` per check. Every object counted is held, so no id is reused."""
    calls: Counter = Counter()
    held: list = []
    real_created, real_install, real_cluster = chain.as_created, webhook_check.install_of, webhook_check.cluster_of

    def created(obj):
        calls[id(obj)] += 1
        held.append(obj)
        return real_created(obj)

    def install(manifests):
        calls["install_of"] += 1
        return real_install(manifests)

    def cluster(manifests):
        calls["cluster_of"] += 1
        return real_cluster(manifests)

    monkeypatch.setattr(chain, "as_created", created)
    monkeypatch.setattr(webhook_check, "install_of", install)
    monkeypatch.setattr(webhook_check, "cluster_of", cluster)
    return calls


def _check(objects):
    return run_rules(objects, CheckContext(profile="standard"), PolicySettings(), RULES)


def test_each_object_is_mutated_once_per_check_and_the_install_and_cluster_read_once(counted):
    if not (rules().policies or rules().crds):
        pytest.skip("upstream's admission rules are not read (../shared/admission): nothing is handed over")
    objects = copy.deepcopy(OBJECTS)
    _check(objects)
    assert {o["kind"]: counted[id(o)] for o in objects} == {o["kind"]: 1 for o in objects}
    assert (counted["install_of"], counted["cluster_of"]) == (1, 1)
    objects = copy.deepcopy(OBJECTS)   # a second check mutates its own objects, once each
    _check(objects)
    assert {o["kind"]: counted[id(o)] for o in objects} == {o["kind"]: 1 for o in objects}
    assert (counted["install_of"], counted["cluster_of"]) == (2, 2)


def test_the_webhook_checks_and_the_policies_meet_the_same_mutated_object():
    """The Job's validating webhook and the policies get one object, with the task name the mutating
    webhook gave it (``default0``)."""
    admission = webhook_check.Admitted(copy.deepcopy(OBJECTS))
    job = copy.deepcopy(JOB)
    admission.judge(job, ("volcano",))
    first = admission.mutated(job)
    assert admission.admitted(job) is first and first["spec"]["tasks"][0]["name"] == "default0"
    assert job["spec"]["tasks"][0].get("name") is None   # the object as written is untouched


def test_a_mutation_that_fails_is_tried_once_and_said_to_each_caller(monkeypatch):
    """An odd object whose mutation raises: the webhook checks are not evaluated (the error raised to
    each that asks), the policies judge it as written; the mutation ran once."""
    tried: list = []

    def failing(obj, *args):
        tried.append(obj)
        raise ValueError("odd job")

    monkeypatch.setattr(webhook_check, "mutate", failing)
    admission = webhook_check.Admitted(copy.deepcopy(OBJECTS))
    job = copy.deepcopy(JOB)
    for _ in range(2):
        with pytest.raises(ValueError, match="odd job"):
            admission.judge(job, ("volcano",))
    assert admission.admitted(job) is job and len(tried) == 1


def test_a_namespace_kind_of_another_api_group_is_no_namespace_to_the_webhooks_or_the_policies():
    """The webhooks' cluster and the policies' namespaceObject are one list: core Namespaces only.
    A CRD's kind named Namespace does not move a PodGroup to its annotated queue."""
    impostor = {**NAMESPACE, "apiVersion": "example.com/v1"}
    podgroup = copy.deepcopy(PODGROUP)
    admission = webhook_check.Admitted([RELEASE, impostor, QUEUE, podgroup])
    assert admission.namespaces() == {} and admission.mutated(podgroup)["spec"].get("queue") is None
    admission = webhook_check.Admitted([RELEASE, NAMESPACE, QUEUE, podgroup])
    assert admission.namespaces() == {"training": NAMESPACE}
    assert admission.mutated(podgroup)["spec"]["queue"] == "research"
