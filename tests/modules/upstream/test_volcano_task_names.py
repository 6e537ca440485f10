"""The job webhook validates each task's pod template as a PodTemplate named after the task.

volcano-sh/volcano v1.15.1 pkg/webhooks/admission/jobs/validate/admit_job.go, validateTaskTemplate:
``k8score.PodTemplate{ObjectMeta: {Name: task.Name, Namespace: job.Namespace}, Template: ...}``
passed to ``ValidatePodTemplate``, which runs ``ValidateObjectMeta(..., ValidatePodName, ...)``
(kubernetes v1.35 pkg/apis/core/validation/validation.go): the name must be a DNS-1123 subdomain, and
a missing one is "name or generateName is required". The errors are joined after ``spec.task[<i>].``.
Upstream's admit_job_test.go has no case for it (ours: the name a qualified-name pod check admits).
"""
from __future__ import annotations

import pytest

from modules.upstream.cluster import Cluster
from modules.upstream.volcano import job

SUBDOMAIN = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
             "must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
             "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")


def _job(task_name):
    task = {"replicas": 1, "template": {"spec": {"containers": [{"name": "c", "image": "i:1"}]}}}
    if task_name is not None:
        task["name"] = task_name
    return {"metadata": {"name": "j", "namespace": "t"}, "spec": {"queue": "q", "tasks": [task]}}


@pytest.mark.parametrize("name, message", [
    # `j-Worker-0` and `j-task_a-0` are qualified names: only the PodTemplate name check refuses them
    ("Worker", f'spec.task[0].metadata.name: Invalid value: "Worker": {SUBDOMAIN}'),
    ("task_a", f'spec.task[0].metadata.name: Invalid value: "task_a": {SUBDOMAIN}'),
    # reached only where /jobs/validate is registered and /jobs/mutate (which names it default0) is not
    (None, "spec.task[0].metadata.name: Required value: name or generateName is required"),
])
def test_task_name_is_validated_as_a_pod_template_name(name, message):
    errors = [e for e in job.validate_job(_job(name), "CREATE", None, Cluster(known=False))
              if e.origin == "job.pod-template-name"]
    assert [(e.field, e.message()) for e in errors] == [("spec.tasks[0].name", message)]


@pytest.mark.parametrize("name", ["worker", "master.0", "t-1"])
def test_subdomain_task_names_pass(name):
    assert job.validate_job(_job(name), "CREATE", None, Cluster(known=False)) == []
