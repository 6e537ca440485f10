"""crd-schema and crd-unknown-fields on the pinned upstream CRDs (../shared/crds): every CRD loads,
the objects the API server refuses by schema are refused with its words, the ones its mutating
webhooks fix are admitted, and unknown fields are reported at the level of the engine's request."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from modules.upstream.apiextensions import crds
from policies.framework import CheckContext, Finding
from policies.rules import admission, crd_schema
from tests.support.admission import require_shared_dirs

SCHEMA, UNKNOWN = crd_schema.RULES


@pytest.fixture(scope="module", autouse=True)
def shared():
    return require_shared_dirs()


def findings(rule, obj, ctx=None):
    ctx = ctx or CheckContext(manifests=[obj])
    return [(f.path, f.message) for f in rule.check(obj, ctx) if isinstance(f, Finding)]


def job(**spec):
    base = {"schedulerName": "volcano", "queue": "default", "tasks": [{"name": "worker", "replicas": 1, "template": {
        "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox:1.36"}]}}}]}
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "j", "namespace": "team-a"},
            "spec": {**base, **spec}}


def queue(weight):
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "q"},
            "spec": {"weight": weight}}


def test_every_pinned_crd_loads_with_its_served_versions(shared):
    _, folder = shared
    result = crds.read_folder(folder)
    assert result.problems == []
    files = {p.relative_to(folder).as_posix() for p in folder.rglob("*.yaml") if "CustomResourceDefinition" in
             p.read_text(encoding="utf-8")}
    assert {entry["source"] for entry in result.by_gvk.values()} == files
    for key in ("batch.volcano.sh/v1alpha1/Job", "scheduling.volcano.sh/v1beta1/Queue",
                "topology.volcano.sh/v1alpha1/HyperNode", "trainer.kubeflow.org/v1alpha1/TrainJob",
                "jobset.x-k8s.io/v1alpha2/JobSet", "kubeflow.org/v1/PyTorchJob"):
        assert result.by_gvk[key]["schema"]["type"] == ["object"], key


def test_hypernode_exact_match_name_breaking_the_pattern_is_refused():
    hn = {"apiVersion": "topology.volcano.sh/v1alpha1", "kind": "HyperNode", "metadata": {"name": "hn"},
          "spec": {"tier": 1, "members": [{"type": "Node", "selector": {"exactMatch": {"name": "Node_A"}}}]}}
    [(path, message)] = findings(SCHEMA, hn)
    assert path == "spec.members[0].selector.exactMatch.name"
    assert "Invalid value: \"Node_A\": spec.members[0].selector.exactMatch.name in body should match '^[a-z0-9]" \
        in message


def test_duplicate_key_of_a_map_list_is_refused():
    obj = job()
    obj["spec"]["tasks"][0]["template"]["spec"]["containers"][0]["env"] = [{"name": "A", "value": "1"},
                                                                           {"name": "A", "value": "2"}]
    [(path, message)] = findings(SCHEMA, obj)
    assert path == "spec.tasks[0].template.spec.containers[0].env[1]"
    assert 'Duplicate value: map[string]interface {}{"name":"A"}' in message


def test_queue_weight_above_65535_is_refused_and_zero_is_raised_by_the_webhook():
    [(path, message)] = findings(SCHEMA, queue(70000))
    assert path == "spec.weight" and "spec.weight in body should be less than or equal to 65535" in message
    assert findings(SCHEMA, queue(0)) == []   # the queue webhook makes it 1 before validation


def test_network_topology_mode_outside_its_enum_is_refused():
    [(path, message)] = findings(SCHEMA, job(networkTopology={"mode": "medium"}))
    assert path == "spec.networkTopology.mode"
    assert 'Unsupported value: "medium": supported values: "hard", "soft"' in message


def test_min_available_two_is_refused_by_the_schema_not_by_an_admission_policy():
    obj = job(minAvailable="two")
    [(path, message)] = findings(SCHEMA, obj)
    assert path == "spec.minAvailable"
    assert ('"spec.minAvailable: Invalid value: "string": spec.minAvailable in body must be of type integer: '
            '"string""') in message
    ctx = CheckContext(manifests=[obj])
    upstream = [f for f in admission.RULES[0].check_stack([obj], ctx) if isinstance(f, Finding)]
    assert upstream == []   # validating admission never sees an object its schema refuses


def test_unknown_fields_are_refused_under_kubectl_and_flux_and_pruned_with_a_warning_under_pulumi():
    obj = job(bogusTop=1)
    runtime = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "ClusterTrainingRuntime",
               "metadata": {"name": "old"}, "spec": {"mlPolicy": {"numNodes": 1, "torch": {"numProcPerNode": "auto"}},
                                                     "template": {"spec": {"replicatedJobs": []}}}}
    [(path, message)] = findings(SCHEMA, obj)   # no stack: kubectl apply, Strict
    assert path == "spec.bogusTop" and '"strict decoding error: unknown field "spec.bogusTop""' in message
    assert findings(UNKNOWN, obj) == []
    assert [p for p, _ in findings(SCHEMA, runtime)] == ["spec.mlPolicy.torch.numProcPerNode"]

    def in_stack(engine):
        stack = SimpleNamespace(values={"gitops": {"engine": engine}}, production=True)
        return CheckContext(stack=stack, manifests=[obj])

    [(path, message)] = findings(SCHEMA, obj, in_stack("flux"))
    assert path == "spec.bogusTop" and ".spec.bogusTop: field not declared in schema" in message
    assert findings(SCHEMA, obj, in_stack("none")) == []
    [(path, message)] = findings(UNKNOWN, obj, in_stack("none"))
    assert path == "spec.bogusTop" and "drops it" in message and 'unknown field "spec.bogusTop"' in message
    assert [p for p, _ in findings(UNKNOWN, runtime, in_stack("none"))] == ["spec.mlPolicy.torch.numProcPerNode"]


def test_status_is_dropped_only_where_the_crd_has_the_status_subresource():
    assert findings(SCHEMA, {**queue(2), "status": {"state": 5}}) == []   # Queue: status subresource
    app = {"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
           "metadata": {"name": "a", "namespace": "argocd"},
           "spec": {"project": "default", "source": {"repoURL": "https://x", "path": "p"},
                    "destination": {"server": "https://kubernetes.default.svc"}},
           "status": {"sync": {"status": 5}}}
    assert [p for p, _ in findings(SCHEMA, app)] == ["status.sync.status"]   # no subresource: validated


def test_a_kind_in_a_version_its_crd_does_not_serve_has_no_resource():
    obj = {**job(), "apiVersion": "batch.volcano.sh/v1beta1"}
    [(path, message)] = findings(SCHEMA, obj)
    assert path == "apiVersion"
    assert 'no matches for kind "Job" in version "batch.volcano.sh/v1beta1"' in message
    assert "serves batch.volcano.sh/v1alpha1" in message
    ctx = CheckContext(manifests=[obj])
    assert [f for f in admission.RULES[0].check_stack([obj], ctx) if isinstance(f, Finding)] == []
