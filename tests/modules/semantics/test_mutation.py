"""An object as the API server stores it at CREATE (modules/upstream/volcano/mutation.py). Upstream's own
mutation tables run in tests/policies/admission/test_upstream_tables.py; these are our cases."""
from __future__ import annotations

from modules.upstream.volcano.mutation import as_created, mutate, mutate_volcano_job, mutate_volcano_podgroup
from modules.semantics.workloads import gang_of

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


def test_mutate_applies_only_the_enabled_webhooks():
    assert mutate(JOB, frozenset({"/jobs/validate"})) == JOB
    assert mutate(JOB)["spec"]["queue"] == "default"


def test_podgroup_moves_to_its_namespaces_queue():
    pg = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
          "metadata": {"name": "p", "namespace": "team"}, "spec": {"minMember": 1}}
    ns = {"apiVersion": "v1", "kind": "Namespace",
          "metadata": {"name": "team", "annotations": {"scheduling.volcano.sh/queue-name": "research"}}}
    assert mutate_volcano_podgroup(pg, {"team": ns})["spec"]["queue"] == "research"
    assert mutate_volcano_podgroup({**pg, "spec": {"queue": "other"}}, {"team": ns})["spec"]["queue"] == "other"
