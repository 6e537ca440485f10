"""volcano-job-admission on a Volcano CronJob: Volcano v1.15.1's CronJob webhook
(pkg/webhooks/admission/cronjobs/validate/admit_cronjob.go validateCronjobSpec) checks only the
schedule and timeZone, so the CronJob is admitted; the job webhook (admit_job.go
validatePartitionPolicy) then refuses every Job the CronJob controller creates from it."""
from __future__ import annotations

from policies.framework import CheckContext
from policies.rules.volcano_admission import RULES

CHECK = RULES[0].check
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
    [(path, message)] = messages(cron)
    assert path == "spec.jobTemplate.spec.tasks[0].replicas"
    assert "rejects every Job this CronJob creates" in message
    assert "the CronJob itself is admitted" in message
    assert "job: nightly-<minutes>" in message   # cronjob getJobName: <name>-<scheduled minute>
