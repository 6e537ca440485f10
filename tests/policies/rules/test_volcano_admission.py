"""volcano-job-admission refuses a Volcano Job whose partitions the job webhook (admit_job.go
validatePartitionPolicy) refuses; volcano-cronjob-runs says, as advice, that a Volcano CronJob whose
template it refuses is admitted (its webhook, admit_cronjob.go validateCronjobSpec, checks only the
schedule and timeZone) and that every Job the CronJob controller creates from it would be refused."""
from __future__ import annotations

from policies.framework import ADVISORY, MANDATORY, CheckContext
from policies.rules.volcano_admission import RULES

CHECK, RUNS = RULES[0].check, RULES[1].check
TASK = {"name": "w", "replicas": 6, "partitionPolicy": {"totalPartitions": 2, "partitionSize": 4},
        "template": {"spec": {"containers": [{"name": "c", "image": "i"}]}}}


def messages(obj):
    return [(f.path, f.message) for f in CHECK(obj, CheckContext())]


def test_a_job_is_refused_at_creation():
    job = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "j"},
           "spec": {"tasks": [TASK]}}
    [(path, message)] = messages(job)
    assert path == "spec.tasks[0].replicas" and "Volcano's job webhook rejects it" in message


def test_a_cronjob_is_admitted_and_each_job_it_creates_refused():
    cron = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "CronJob", "metadata": {"name": "nightly"},
            "spec": {"schedule": "0 1 * * *", "jobTemplate": {"spec": {"tasks": [TASK]}}}}
    assert messages(cron) == []                       # volcano-job-admission judges Jobs only
    [finding] = RUNS(cron, CheckContext())
    assert finding.path == "spec.jobTemplate.spec.tasks[0].replicas"
    assert "the CronJob is admitted" in finding.message and "each run would fail" in finding.message
    assert "job: nightly-<minutes>" in finding.message   # cronjob getJobName: <name>-<scheduled minute>
    assert "make replicas a multiple of partitionSize" in finding.message
    assert (RULES[0].enforcement, RULES[1].enforcement) == (MANDATORY, ADVISORY)


def test_a_job_in_the_release_namespace_is_not_sent_to_the_job_webhook():
    job = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
           "metadata": {"name": "j", "namespace": "volcano-system"}, "spec": {"tasks": [TASK]}}
    assert messages(job) == []
