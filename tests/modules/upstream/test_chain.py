"""An object as the admission chain hands it to validation (modules/upstream/chain.py): created, then
mutated by the webhooks the install registers, in the API server's order. Upstream's own mutation
tables run in tests/policies/admission/test_upstream_tables.py; these are our cases."""
from __future__ import annotations

from modules.semantics.workloads import gang_of
from modules.semantics.created import as_created
from modules.upstream.chain import mutate, refusals
from modules.upstream.cluster import Cluster
from modules.upstream.install import CHART_DEFAULT_ADMISSIONS, Install
from modules.upstream.volcano.mutation import mutate_volcano_job
from modules.upstream.volcano.podgroup import mutate_podgroup

JOB = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "j"},
       "spec": {"plugins": {"pytorch": ["--master=m"]},
                "tasks": [{"replicas": 8, "partitionPolicy": {"totalPartitions": 2, "partitionSize": 4,
                                                              "minPartitions": 1}},
                          {"name": "w", "replicas": 2, "minAvailable": 1,
                           "template": {"spec": {"hostNetwork": True}}}]}}


def test_job_defaults_as_the_job_webhook_sets_them():
    spec = mutate_volcano_job(JOB)["spec"]
    assert (spec["queue"], spec["schedulerName"], spec["maxRetry"]) == ("default", "volcano", 3)
    assert [t["name"] for t in spec["tasks"]] == ["default0", "w"]
    assert [t["minAvailable"] for t in spec["tasks"]] == [4, 1]   # minPartitions x partitionSize; own
    assert spec["minAvailable"] == 5                               # the defaulted task values, summed
    assert spec["tasks"][1]["template"]["spec"]["dnsPolicy"] == "ClusterFirstWithHostNet"
    assert spec["plugins"] == {"pytorch": ["--master=m"], "svc": []}
    assert "queue" not in JOB["spec"]                              # the input is never changed
    assert gang_of(JOB, [JOB]).pods == spec["minAvailable"]        # the rules' and simulator's gang agrees


def test_status_is_dropped_only_for_status_subresource_kinds():
    queue = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "q"},
             "status": {"state": "Closing"}}
    assert "status" not in as_created(queue)
    odd = {"apiVersion": "example.com/v1", "kind": "Thing", "status": {"x": 1}}
    assert as_created(odd) is odd


def test_mutate_applies_only_the_registered_webhooks():
    assert mutate(JOB, Install(frozenset({"/jobs/validate"}))) == JOB
    assert mutate(JOB)["spec"]["queue"] == "default"


def test_mutating_webhooks_skip_the_release_and_system_namespaces():
    for namespace in ("volcano-system", "kube-system"):
        job = {**JOB, "metadata": {"name": "j", "namespace": namespace}}
        assert mutate(job) == job
    assert mutate(JOB, Install(namespace="batch-system"))["spec"]["queue"] == "default"
    moved = {**JOB, "metadata": {"name": "j", "namespace": "batch-system"}}
    assert mutate(moved, Install(namespace="batch-system")) == moved


def test_validation_sees_the_mutated_object():
    # An unnamed task is default0 by the time /jobs/validate runs: no duplicate "" names, no
    # missing-queue refusal for the default queue the mutation sets.
    job = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "j", "namespace": "t"},
           "spec": {"tasks": [{"replicas": 1, "template": {"spec": {"containers": [{"name": "c", "image": "i:1"}]}}},
                              {"replicas": 1, "template": {"spec": {"containers": [{"name": "c", "image": "i:1"}]}}}]}}
    queue = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "default"},
             "status": {"state": "Open"}}
    assert refusals(job, cluster=Cluster((queue,))) == []
    unmutated = Install(CHART_DEFAULT_ADMISSIONS - {"/jobs/mutate"})
    codes = [e.origin for _, e in refusals(job, unmutated, Cluster((queue,)))]
    # task 0's PodTemplate has no name (validateTaskTemplate), task 1 repeats "" (and the loop stops)
    assert codes == ["job.pod-template-name", "job.duplicate-task-name", "job.queue-not-found"]


def test_the_podgroup_mutation_runs_where_the_chart_enables_it():
    pg = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
          "metadata": {"name": "p", "namespace": "team"}, "spec": {"minMember": 1}}
    ns = {"apiVersion": "v1", "kind": "Namespace",
          "metadata": {"name": "team", "annotations": {"scheduling.volcano.sh/queue-name": "research"}}}
    cluster = Cluster((ns,))
    assert mutate(pg, cluster=cluster) == pg                     # off in the chart's defaults
    enabled = Install(CHART_DEFAULT_ADMISSIONS | {"/podgroups/mutate"})
    assert mutate(pg, enabled, cluster)["spec"]["queue"] == "research"


def test_podgroup_moves_to_its_namespaces_queue():
    pg = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
          "metadata": {"name": "p", "namespace": "team"}, "spec": {"minMember": 1}}
    ns = {"apiVersion": "v1", "kind": "Namespace",
          "metadata": {"name": "team", "annotations": {"scheduling.volcano.sh/queue-name": "research"}}}
    cluster = Cluster((ns,))
    assert mutate_podgroup(pg, "CREATE", None, cluster)["spec"]["queue"] == "research"
    assert mutate_podgroup({**pg, "spec": {"queue": "other"}}, "CREATE", None, cluster)["spec"]["queue"] == "other"
