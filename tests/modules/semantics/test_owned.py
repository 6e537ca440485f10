"""The table of controller-owned fields: scale paths read from the CRDs, webhook fields that the
mutation code really writes, and the render pass that leaves an HPA's field to the HPA."""
from __future__ import annotations

import copy
import re

from modules.autoscaling.render import SCALABLE
from modules.core.bundle import OWNED_ANNOTATION, owned_paths
from modules.semantics import owned
from policies.rules.autoscaling import SCALABLE as RULE_SCALABLE
from tests.support import crds
from tests.support.stacks import shipped_bundle


def test_scale_data_is_what_the_crds_declare():
    """scale_subresources.yaml is the extraction of every CRD's scale subresource, nothing added."""
    from modules.core import yamlio

    vendored = yamlio.load_file(owned.SCALE_DATA, "scale_subresources.yaml")
    assert vendored == owned.crd_scale_entries(crds.require_crds())
    assert {(e["group"], e["kind"]) for e in vendored} == {("kubeflow.org", "PyTorchJob")}


def test_every_accepted_scale_target_has_its_field():
    fields = owned.scale_fields()
    for kind, api_version in SCALABLE.items():
        assert (api_version.rpartition("/")[0], kind) in fields, kind
    for group, kinds in RULE_SCALABLE.items():
        for kind in kinds:
            assert (group, kind) in fields, (group, kind)
    job = fields[("kubeflow.org", "PyTorchJob")]
    assert job.path == "spec.pytorchReplicaSpecs.Worker.replicas" and job.required
    assert job.pointer == "/spec/pytorchReplicaSpecs/Worker/replicas"
    assert not fields[("apps", "Deployment")].required


def test_every_scale_field_names_its_writer_and_source():
    for f in owned.scale_fields().values():
        assert f.writer and re.match(r"^[\w.-]+/[\w.-]+ v\d", f.source), f


def _objects() -> list[dict]:
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "serve", "namespace": "t"},
                  "spec": {"replicas": 3, "template": {}}}
    job = {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": "lm", "namespace": "t"},
           "spec": {"pytorchReplicaSpecs": {"Worker": {"replicas": 2}}}}

    def hpa(kind, api, name):
        return {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
                "metadata": {"name": f"{name}-hpa", "namespace": "t"},
                "spec": {"scaleTargetRef": {"apiVersion": api, "kind": kind, "name": name}, "maxReplicas": 8}}
    other = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "serve", "namespace": "elsewhere"},
             "spec": {"replicas": 3}}
    return [deployment, job, other, hpa("Deployment", "apps/v1", "serve"), hpa("PyTorchJob", "kubeflow.org/v1", "lm")]


def test_settle_drops_or_records_the_scaled_field():
    objects = _objects()
    settled = owned.settle_scaled(objects)
    assert [(s.scaled.target["kind"], s.kept) for s in settled] == [("Deployment", False), ("PyTorchJob", True)]
    deployment, job, other = objects[:3]
    assert "replicas" not in deployment["spec"]
    assert other["spec"]["replicas"] == 3                       # another namespace: not the HPA's target
    assert job["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"] == 2
    assert owned_paths(job) == ["spec.pytorchReplicaSpecs.Worker.replicas"]
    again = copy.deepcopy(objects)
    assert [s.kept for s in owned.settle_scaled(again)] == [True] and again == objects   # idempotent


def test_mechanisms():
    objects = _objects()
    job, field = objects[1], owned.scale_fields()[("kubeflow.org", "PyTorchJob")]
    assert not owned.delivered_without_fight(job, field, objects)
    job["metadata"]["annotations"] = {OWNED_ANNOTATION: field.path}
    assert not owned.delivered_without_fight(job, field, objects)   # a user's object: the record alone is not enough
    job["metadata"]["labels"] = {"app.kubernetes.io/managed-by": "trainstack"}
    assert owned.delivered_without_fight(job, field, objects)
    del job["metadata"]["labels"]
    job["metadata"]["annotations"] = {owned.FLUX_SSA: "Merge"}      # Merge still applies the manifest's fields
    assert not owned.delivered_without_fight(job, field, objects, "flux")
    job["metadata"]["annotations"] = {owned.FLUX_SSA: "IfNotPresent"}
    assert owned.delivered_without_fight(job, field, objects, "flux")
    assert not owned.delivered_without_fight(job, field, objects, "argocd")
    app = {"apiVersion": "argoproj.io/v1alpha1", "kind": "Application", "metadata": {"name": "a"},
           "spec": {"ignoreDifferences": [{"group": "kubeflow.org", "kind": "PyTorchJob", "name": "lm",
                                           "jsonPointers": ["/spec/pytorchReplicaSpecs"]}],
                    "syncPolicy": {"syncOptions": ["ServerSideApply=true"]}}}
    assert not owned.argocd_ignores(job, field, [app])              # ignored in the diff, reset by the sync
    app["spec"]["syncPolicy"]["syncOptions"].append(owned.ARGOCD_RESPECT)
    assert owned.argocd_ignores(job, field, [app])                  # a parent pointer covers the field
    app["spec"]["ignoreDifferences"][0]["name"] = "other"
    assert not owned.argocd_ignores(job, field, [app])


def test_argocd_ignore_entries_as_its_normalizer_reads_them():
    # util/argo/normalizers/diff_normalizer.go: group and kind are globs, an empty name or namespace
    # matches any, and jqPathExpressions delete what they select just as jsonPointers do
    objects = _objects()
    job, field = objects[1], owned.scale_fields()[("kubeflow.org", "PyTorchJob")]

    def app(**entry):
        return {"apiVersion": "argoproj.io/v1alpha1", "kind": "Application", "metadata": {"name": "a"},
                "spec": {"ignoreDifferences": [entry], "syncPolicy": {"syncOptions": [owned.ARGOCD_RESPECT]}}}
    path = ["/spec/pytorchReplicaSpecs/Worker/replicas"]
    assert owned.argocd_ignores(job, field, [app(group="*", kind="PyTorchJob", jsonPointers=path)])
    assert owned.argocd_ignores(job, field, [app(group="kubeflow.org", kind="*Job", name="", namespace="",
                                                 jsonPointers=path)])
    assert not owned.argocd_ignores(job, field, [app(group="apps", kind="*", jsonPointers=path)])
    for jq in (".spec.pytorchReplicaSpecs.Worker.replicas", " .spec.pytorchReplicaSpecs ", ".spec"):
        assert owned.argocd_ignores(job, field, [app(group="kubeflow.org", kind="PyTorchJob", jqPathExpressions=[jq])])
    for jq in (".spec.pytorchReplicaSpecs.Worker.template", ".spec.pytorchReplicaSpecs.Work", ".metadata"):
        assert not owned.argocd_ignores(job, field, [app(group="kubeflow.org", kind="PyTorchJob",
                                                         jqPathExpressions=[jq])])
    deployment = objects[0]
    replicas = owned.scale_fields()[("apps", "Deployment")]
    assert owned.argocd_ignores(deployment, replicas, [app(group="apps", kind="Deployment",
                                                           jqPathExpressions=[".spec.replicas"])])


def test_legacy_bundle_keeps_the_worker_replicas_recorded():
    bundle = shipped_bundle("legacy")
    job = next(r.obj for r in bundle.resources if r.kind == "PyTorchJob")
    assert job["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"] == 2
    assert owned_paths(job) == ["spec.pytorchReplicaSpecs.Worker.replicas"]


def test_pointer_keeps_an_annotation_key_whole_and_escapes_its_slash():
    """RFC 6901: ``volcano.sh/hierarchy`` is one key, its ``/`` written ``~1`` (Argo CD jsonPointers)."""
    field = owned.OwnedField("scheduling.volcano.sh", "Queue", "metadata.annotations.volcano.sh/hierarchy",
                             "volcano", "test")
    assert field.pointer == "/metadata/annotations/volcano.sh~1hierarchy"
    assert owned.OwnedField("apps", "Deployment", "spec.replicas", "hpa", "test").pointer == "/spec/replicas"
