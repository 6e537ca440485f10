"""`upstream-admission` runs upstream's Go-only webhook checks (the registry, modules/upstream/registry.py)
on each object as the API server meets it on CREATE: status dropped, mutating defaults applied, and
only the webhooks the Volcano chart release registers for the object's namespace."""
from __future__ import annotations

import copy

from modules.semantics.created import as_created
from modules.upstream.chain import mutate
from modules.upstream.cluster import Cluster
from modules.upstream.install import CHART_DEFAULT_ADMISSIONS, install_of
from modules.upstream.volcano.queue import validate_queue
from policies.admission.webhook_check import cluster_of, judge
from policies.framework import CheckContext
from policies.runner import PolicySettings, run_rules
from policies.rules import BY_ID

RULE = BY_ID["upstream-admission"]
RUNS = BY_ID["volcano-cronjob-runs"]
CONTAINER = {"name": "main", "image": "registry.example.com/train:1.0",
             "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}
JOB = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "j", "namespace": "training"},
       "spec": {"queue": "research", "tasks": [{"name": "w", "replicas": 2,
                                                "template": {"spec": {"containers": [CONTAINER]}}}]}}
QUEUE = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "research"},
         "spec": {"weight": 1}}
FLOW = {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow",
        "metadata": {"name": "f", "namespace": "training"},
        "spec": {"flows": [{"name": "a", "dependsOn": {"targets": ["b"]}},
                           {"name": "b", "dependsOn": {"targets": ["a"]}}]}}


def release(**custom):
    return {"apiVersion": "helm.sh/v3", "kind": "Release",
            "metadata": {"name": "volcano", "namespace": "volcano-system"},
            "spec": {"chart": "volcano", "values": {"custom": custom}}}


def webhook_findings(objects):
    return [v for v in run_rules(objects, CheckContext(manifests=objects), PolicySettings(), [RULE])
            if v.level == "mandatory" and ("admission webhook" in v.message or "built-in validation" in v.message)]


def test_a_valid_job_in_a_known_queue_is_admitted():
    assert webhook_findings([JOB, QUEUE]) == []


def test_a_task_mount_naming_no_volume_is_refused_with_the_webhook_file_and_path():
    job = copy.deepcopy(JOB)
    job["spec"]["tasks"][0]["template"]["spec"]["containers"][0]["volumeMounts"] = [{"name": "data", "mountPath": "/d"}]
    [finding] = webhook_findings([job, QUEUE])
    assert finding.path.startswith("spec.tasks[0].template.spec.containers[0].volumeMounts[0]")
    assert "pkg/webhooks/admission/jobs/validate/admit_job.go" in finding.message
    assert "spec.task[0]." in finding.message and "Volcano's admission webhook rejects" in finding.message


def test_a_job_to_a_parent_queue_is_refused():
    child = {**QUEUE, "metadata": {"name": "child"}, "spec": {"weight": 1, "parent": "research"}}
    [finding] = webhook_findings([JOB, QUEUE, child])
    assert finding.path == "spec.queue" and "can only submit job to leaf queue" in finding.message


def test_a_queue_created_with_a_status_is_judged_without_it():
    closing = {**QUEUE, "status": {"state": "Closing"}}
    assert as_created(closing) == QUEUE
    assert webhook_findings([closing]) == []
    # The webhook itself, handed the status (as upstream's Go test does), refuses an unknown state;
    # on create the API server never hands it one.
    wrong = {**QUEUE, "status": {"state": "wrong"}}
    [error] = validate_queue(wrong, "CREATE", None, Cluster())
    assert error.field == "status.state"
    assert error.message() == 'requestBody.spec.state: Invalid value: "wrong": queue state must be in [Open Closed]'
    assert judge(wrong, Cluster(cluster_of([]))) == []


def test_mutation_defaults_are_applied_before_validation():
    job = copy.deepcopy(JOB)
    del job["spec"]["queue"]     # the job webhook's mutation sets `default`, which Volcano always has
    assert mutate(job)["spec"]["queue"] == "default"
    assert webhook_findings([job]) == []


def test_only_the_webhooks_the_chart_enables_count():
    assert install_of([]).admissions == CHART_DEFAULT_ADMISSIONS and install_of([]).assumed
    assert webhook_findings([FLOW]) == []          # jobflows/validate is off by default
    on = release(enabled_admissions="/jobs/validate, /jobflows/validate")
    assert install_of([on]).admissions == {"/jobs/validate", "/jobflows/validate"}
    [finding] = webhook_findings([FLOW, on])
    assert "jobflow Flow is not DAG" in finding.message
    off = release(admission_enable=False)
    assert install_of([off]).admissions == frozenset()
    cron = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "CronJob", "metadata": {"name": "c", "namespace": "t"},
            "spec": {"schedule": "61 * * * *", "jobTemplate": {"spec": JOB["spec"]}}}
    assert any("not a valid cron expression" in f.message for f in webhook_findings([cron, QUEUE]))
    assert webhook_findings([cron, QUEUE, off]) == []


def test_a_parent_queue_is_judged_before_its_children_exist():
    parent = {**QUEUE, "spec": {"weight": 1, "capability": {"cpu": "10"}}}
    child = {**QUEUE, "metadata": {"name": "child"}, "spec": {"weight": 1, "parent": "research",
                                                               "capability": {"cpu": "20"}}}
    [finding] = webhook_findings([parent, child])
    assert finding.resource.endswith("Queue/child") and finding.path == "spec.capability.cpu"
    assert "exceeds its ancestor's capability=10" in finding.message


def test_each_volcano_refusal_in_the_tables_has_a_fix():
    """Every error our Volcano checks give on upstream's tables has a code with a concrete fix."""
    from modules.upstream.registry import VALIDATE, checks
    from modules.upstream.fixes import fix_for
    from policies.admission.upstream_tables import fixture_files, load_fixture

    seen = 0
    for _, path in fixture_files(("volcano",)):
        for case in load_fixture(path)["cases"]:
            obj = case["object"]
            cluster = Cluster(tuple(case.get("cluster") or ()), case.get("cluster_known", True),
                              dict(case.get("settings") or {}))
            for check in checks(str(obj["apiVersion"]).rpartition("/")[0], obj["kind"], VALIDATE,
                                case["operation"], sources=("volcano",)):
                for error in check.fn(obj, case["operation"], case.get("old_object"), cluster):
                    assert fix_for(error), (case["name"], error)
                    seen += 1
    assert seen > 50


def test_a_cronjob_is_admitted_and_each_run_is_judged_by_the_job_webhook():
    task = copy.deepcopy(JOB["spec"]["tasks"][0])
    task["template"]["spec"]["containers"][0]["volumeMounts"] = [{"name": "data", "mountPath": "/d"}]
    cron = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "CronJob",
            "metadata": {"name": "nightly", "namespace": "training"},
            "spec": {"schedule": "0 1 * * *", "jobTemplate": {"spec": {"queue": "research", "tasks": [task]}}}}
    assert webhook_findings([cron, QUEUE]) == []    # upstream-admission: the CronJob itself is admitted
    objects = [cron, QUEUE]
    [finding] = run_rules(objects, CheckContext(manifests=objects), PolicySettings(), [RUNS])
    assert finding.level == "advisory"
    assert finding.path == "spec.jobTemplate.spec.tasks[0].template.spec.containers[0].volumeMounts[0].name"
    assert "the CronJob is admitted" in finding.message and "each run would fail" in finding.message
    assert "admit_job.go" in finding.message
    long_name = {**cron, "metadata": {"name": "n" * 52, "namespace": "training"},
                 "spec": {**cron["spec"], "jobTemplate": {"spec": JOB["spec"]}}}
    # <52 characters>-<8-digit minute>-<task>-<index> is longer than 63: every pod name is refused
    objects = [long_name, QUEUE]
    runs = run_rules(objects, CheckContext(manifests=objects), PolicySettings(), [RUNS])
    assert any("create pod with name" in f.message for f in runs)


def test_a_job_in_the_release_or_system_namespace_is_not_sent_to_the_job_webhooks():
    """templates/webhooks.yaml: /jobs/mutate and /jobs/validate select namespaces NotIn [release
    namespace, kube-system]."""
    job = copy.deepcopy(JOB)
    job["spec"]["policies"] = [{"event": "PodFailed", "action": "NoSuchAction"}]
    assert webhook_findings([job, QUEUE, release()])
    for namespace in ("volcano-system", "kube-system"):
        elsewhere = {**job, "metadata": {"name": "j", "namespace": namespace}}
        assert webhook_findings([elsewhere, QUEUE, release()]) == []


def test_a_missing_queue_is_missing_only_when_the_manifests_are_a_whole_stack():
    orphan = {**QUEUE, "metadata": {"name": "orphan"}, "spec": {"weight": 1, "parent": "nowhere"}}
    job = {**JOB, "spec": {**JOB["spec"], "queue": "elsewhere"}}
    assert webhook_findings([orphan, job]) == []        # bare manifests: the cluster may hold them
    found = {f.resource.rsplit("/", 1)[-1]: f for f in webhook_findings([orphan, job, release()])}
    assert 'failed to get parent queue nowhere of queue orphan' in found["orphan"].message
    assert 'unable to find job queue: queue.scheduling.volcano.sh "elsewhere" not found' in found["j"].message
    assert "create the queue it names first" in found["j"].message
