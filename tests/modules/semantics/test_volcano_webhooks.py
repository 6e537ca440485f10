"""Our own cases for the Volcano webhook checks that upstream's tables do not pin down (the tables
themselves run in tests/policies/admission/test_upstream_tables.py)."""
from __future__ import annotations

import pytest

from modules.upstream.volcano import webhooks as vw


@pytest.mark.parametrize("schedule, valid", [
    ("*/5 * * * *", True), ("0 1 * * mon-fri", True), ("0 0 1 jan,jul *", True), ("@daily", True),
    ("@every 1h30m", True), ("15 2-4/1 * * 0", True),
    ("60 * * * *", False), ("* * * *", False), ("0 0 0 * *", False), ("@fortnightly", False), ("5-1 * * * *", False),
    ("*/0 * * * *", False), ("@every soon", False),
])
def test_cron_schedules_as_robfig_parse_standard(schedule, valid):
    assert vw.cron_schedule_valid(schedule) is valid


@pytest.mark.parametrize("name, problem", [
    ("nightly", None), ("a" * 52, None),
    ("a" * 53, "cronJob name must be no more than 52 characters"), ("-bad", "invalid cronJob name '-bad'"),
])
def test_cronjob_names_leave_room_for_the_job_suffix(name, problem):
    got = vw.cronjob_name_problem(name)
    assert (got is None) if problem is None else problem in got


@pytest.mark.parametrize("annotations, message", [
    ({"volcano.sh/jdb-min-available": "2"}, None),
    ({"volcano.sh/jdb-max-unavailable": "50%"}, None),
    ({"volcano.sh/jdb-min-available": "0"}, "it must be a positive integer"),
    ({"volcano.sh/jdb-max-unavailable": "100%"}, "between 1% ~ 99%"),
    ({"volcano.sh/jdb-min-available": "1", "volcano.sh/jdb-max-unavailable": "10%"}, "at same time"),
])
def test_pod_disruption_budget_annotations(annotations, message):
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "annotations": annotations},
           "spec": {"schedulerName": "volcano"}}
    got = vw.validate_pod(pod)
    assert (got == []) if message is None else message in got[0][1]
    assert vw.validate_pod({**pod, "spec": {"schedulerName": "default-scheduler"}}) == []


def test_job_queue_lookups_are_skipped_when_the_cluster_is_unknown():
    job = {"metadata": {"name": "j"}, "spec": {"queue": "elsewhere", "tasks": [
        {"name": "t", "replicas": 1, "template": {"spec": {"containers": [{"name": "c", "image": "i:1"}]}}}]}}
    assert vw.validate_job_create(job, lambda kind, name: None, lambda: [], cluster_known=False) == []
    [(path, message)] = vw.validate_job_create(job, lambda kind, name: None, lambda: [])
    assert path == "spec.queue"
    assert 'unable to find job queue: queue.scheduling.volcano.sh "elsewhere" not found' in message


def test_tasks_dag():
    def task(name, *deps):
        return {"name": name, **({"dependsOn": {"name": list(deps)}} if deps else {})}
    assert vw.tasks_form_dag([task("a"), task("b", "a"), task("c", "a", "b")])
    assert not vw.tasks_form_dag([task("a", "b"), task("b", "a")])


def test_dag_checks_count_as_upstream_and_never_recurse():
    def task(name, *deps):
        return {"name": name, "dependsOn": {"name": list(deps)}}
    # topoSort adds one in-degree per listed name but removes each edge once: a repeated name never
    # clears, so upstream calls such a job cyclic.
    assert not vw.tasks_form_dag([{"name": "a"}, task("b", "a", "a")])
    assert not vw.tasks_form_dag([task("a", ["odd"]), {"name": "b"}])      # odd shapes: no crash
    chain = {"metadata": {"name": "f"}, "spec": {"flows": [{"name": f"f{i}", "dependsOn": {"targets": [f"f{i + 1}"]}}
                                                        for i in range(20000)] + [{"name": "f20000"}]}}
    assert vw.validate_jobflow(chain) == []
    chain["spec"]["flows"][-1]["dependsOn"] = {"targets": ["f0"]}
    assert vw.validate_jobflow(chain) == [("spec.flows", "jobflow Flow is not DAG")]
