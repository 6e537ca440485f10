"""Our own cases for the Volcano webhook checks that upstream's tables do not pin down (the tables
themselves run in tests/policies/admission/test_upstream_tables.py)."""
from __future__ import annotations

import pytest

from modules.upstream.cluster import Cluster
from modules.upstream.volcano import cronjob, job, jobflow, pod, queue
from modules.upstream.volcano.registry import CHECKS
from modules.upstream.volcano.fixes import FIXES


@pytest.mark.parametrize("schedule, valid", [
    ("*/5 * * * *", True), ("0 1 * * mon-fri", True), ("0 0 1 jan,jul *", True), ("@daily", True),
    ("@every 1h30m", True), ("15 2-4/1 * * 0", True),
    ("60 * * * *", False), ("* * * *", False), ("0 0 0 * *", False), ("@fortnightly", False), ("5-1 * * * *", False),
    ("*/0 * * * *", False), ("@every soon", False),
])
def test_cron_schedules_as_robfig_parse_standard(schedule, valid):
    assert cronjob.cron_schedule_valid(schedule) is valid


@pytest.mark.parametrize("name, problem", [
    ("nightly", None), ("a" * 52, None),
    ("a" * 53, "cronJob name must be no more than 52 characters"), ("-bad", 'invalid cronJob name "-bad"'),
])
def test_cronjob_names_leave_room_for_the_job_suffix(name, problem):
    got = cronjob.cronjob_name_problem(name)
    assert (got is None) if problem is None else problem in got


@pytest.mark.parametrize("annotations, message", [
    ({"volcano.sh/jdb-min-available": "2"}, None),
    ({"volcano.sh/jdb-max-unavailable": "50%"}, None),
    ({"volcano.sh/jdb-min-available": "0"},
     'invalid value <"0"> for volcano.sh/jdb-min-available, it must be a positive integer'),
    ({"volcano.sh/jdb-max-unavailable": "100%"},
     'invalid value <"100%"> for volcano.sh/jdb-max-unavailable, it must be a valid percentage which between '
     '1% ~ 99%'),
    ({"volcano.sh/jdb-min-available": "1", "volcano.sh/jdb-max-unavailable": "10%"},
     "not allow configure multiple annotations <[volcano.sh/jdb-min-available volcano.sh/jdb-max-unavailable]> at "
     "same time"),
    # strconv.Atoi: one sign, ASCII digits only
    ({"volcano.sh/jdb-min-available": "+500"}, None),
    ({"volcano.sh/jdb-min-available": " 5"},
     'invalid value strconv.Atoi: parsing " 5": invalid syntax for volcano.sh/jdb-min-available'),
    ({"volcano.sh/jdb-min-available": "\uff15"},
     'invalid value strconv.Atoi: parsing "\uff15": invalid syntax for volcano.sh/jdb-min-available'),
    ({"volcano.sh/jdb-min-available": "-3"},
     'invalid value <"-3"> for volcano.sh/jdb-min-available, it must be a positive integer'),
    ({"volcano.sh/jdb-max-unavailable": "+50%"}, None),
    ({"volcano.sh/jdb-max-unavailable": "99999999999999999999%"},
     'invalid value strconv.Atoi: parsing "99999999999999999999": value out of range for '
     'volcano.sh/jdb-max-unavailable'),
])
def test_pod_disruption_budget_annotations(annotations, message):
    manifest = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "annotations": annotations},
                "spec": {"schedulerName": "volcano"}}
    got = [e.message() for e in pod.validate_pod(manifest)]
    assert got == ([] if message is None else [message])
    assert pod.validate_pod({**manifest, "spec": {"schedulerName": "default-scheduler"}}) == []


def test_job_queue_lookups_are_skipped_when_the_cluster_is_unknown():
    manifest = {"metadata": {"name": "j"}, "spec": {"queue": "elsewhere", "tasks": [
        {"name": "t", "replicas": 1, "template": {"spec": {"containers": [{"name": "c", "image": "i:1"}]}}}]}}
    assert job.validate_job(manifest, "CREATE", None, Cluster(known=False)) == []
    [error] = job.validate_job(manifest, "CREATE", None, Cluster())
    assert (error.field, error.origin) == ("spec.queue", "job.queue-not-found")
    assert error.message() == 'unable to find job queue: queue.scheduling.volcano.sh "elsewhere" not found'


def _queue(**spec):
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "q"}, "spec": spec}


@pytest.mark.parametrize("spec, messages", [
    ({"deserved": {"nvidia.com/gpu": "2"}, "capability": {"nvidia.com/gpu": "4"}}, []),
    ({"deserved": {"nvidia.com/gpu": "1.5"}},
     ['requestBody.spec.deserved.nvidia.com/gpu: Invalid value: "1500m": must be an integer']),
    ({"capability": {"example.com/fpga": "500m", "cpu": "1.5"}},
     ['requestBody.spec.capability.example.com/fpga: Invalid value: "500m": must be an integer']),
    ({"guarantee": {"resource": {"nvidia.com/gpu": "0.5"}}, "deserved": {"nvidia.com/gpu": "1"}},
     ['requestBody.spec.guarantee.resource.nvidia.com/gpu: Invalid value: "500m": must be an integer']),
    ({"capability": {"pods": "2.5", "kubernetes.io/thing": "0.5"}},   # pods is an integer resource too
     ['requestBody.spec.capability.pods: Invalid value: "2500m": must be an integer']),
])
def test_queue_extended_resources_must_be_whole_numbers(spec, messages):
    """ValidateResourceQuantityValue: an integer resource (an extended resource or a quota count)
    has a milli-value that is a multiple of 1000; cpu, memory and kubernetes.io/ names may be fractional."""
    got = queue.validate_queue(_queue(**spec), "CREATE", None, Cluster())
    assert [e.message() for e in got] == messages
    assert all(e.origin == "queue.quantity-not-integer" for e in got)


def test_every_volcano_refusal_code_has_a_fix_and_no_fix_is_orphaned():
    import inspect
    import re

    source = "".join(inspect.getsource(m) for m in {inspect.getmodule(c.fn) for c in CHECKS})
    from modules.upstream.volcano import partitions
    codes = set(re.findall(r'"((?:job|queue|podgroup|hypernode|cronjob|jobflow|pod)\.[a-z.-]+)"', source))
    codes |= partitions.CODES
    assert codes - set(FIXES) == set()
    assert set(FIXES) - codes == set()


def test_tasks_dag():
    def task(name, *deps):
        return {"name": name, **({"dependsOn": {"name": list(deps)}} if deps else {})}
    assert job.tasks_form_dag([task("a"), task("b", "a"), task("c", "a", "b")])
    assert not job.tasks_form_dag([task("a", "b"), task("b", "a")])


def test_dag_checks_count_as_upstream_and_never_recurse():
    def task(name, *deps):
        return {"name": name, "dependsOn": {"name": list(deps)}}
    # topoSort adds one in-degree per listed name but removes each edge once: a repeated name never
    # clears, so upstream calls such a job cyclic.
    assert not job.tasks_form_dag([{"name": "a"}, task("b", "a", "a")])
    assert not job.tasks_form_dag([task("a", ["odd"]), {"name": "b"}])      # odd shapes: no crash
    chain = {"metadata": {"name": "f"}, "spec": {"flows": [{"name": f"f{i}", "dependsOn": {"targets": [f"f{i + 1}"]}}
                                                        for i in range(20000)] + [{"name": "f20000"}]}}
    assert jobflow.validate_jobflow(chain) == []
    chain["spec"]["flows"][-1]["dependsOn"] = {"targets": ["f0"]}
    [error] = jobflow.validate_jobflow(chain)
    assert (error.field, error.origin, error.message()) == ("spec.flows", "jobflow.not-dag", "jobflow Flow is not DAG")


def test_a_task_template_error_is_quoted_as_the_job_webhook_joins_it():
    manifest = {"metadata": {"name": "j"}, "spec": {"queue": "q", "tasks": [
        {"name": "t", "replicas": 1, "template": {"spec": {"containers": [
            {"name": "c", "image": "i:1", "volumeMounts": [{"name": "data", "mountPath": "/d"}]}]}}}]}}
    [error] = job.validate_job(manifest, "CREATE", None, Cluster(known=False))
    assert (error.origin, error.field) == ("job.pod-template",
                                           "spec.tasks[0].template.spec.containers[0].volumeMounts[0].name")
    assert error.message() == 'spec.task[0].template.spec.containers[0].volumeMounts[0].name: Not found: "data"'


@pytest.mark.parametrize("metadata", [
    {"name": ["a"]},                                                       # a name of another type
    {"name": "q", "annotations": {"volcano.sh/hierarchy": 5, "volcano.sh/hierarchy-weights": "1/1"}},
    {"name": "q", "annotations": {"volcano.sh/hierarchy": "root/q", "volcano.sh/hierarchy-weights": ["1", "1"]}},
])
def test_a_queue_of_shapes_that_never_decode_is_judged_without_raising(metadata):
    # The API server refuses such an object when it decodes it, before any webhook; the port must
    # still answer (the rules and simulate judge whatever they are handed) rather than raise.
    from modules.upstream.chain import admit
    from modules.upstream.cluster import Cluster, as_applied

    queue = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": metadata,
             "spec": {"weight": 1}}
    mutated, refused = admit(queue, cluster=Cluster(as_applied([]), True))
    assert mutated["kind"] == "Queue" and isinstance(refused, list)
