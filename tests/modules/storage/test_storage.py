"""Shared NAS claims: retained by Pulumi and by GitOps pruning, bound to the class they name, and
one claim per name and namespace."""
from __future__ import annotations

import pytest

from modules.core.context import KEEP_ANNOTATIONS
from modules.core.errors import InputError
from modules.core.render import render
from tests.support.stacks import shipped_bundle, variant


def _storage(bundle):
    return [r for r in bundle.resources if r.module == "storage"]


def test_claims_survive_destroy_and_pruning():
    claims = [r for r in _storage(shipped_bundle("prod")) if r.kind == "PersistentVolumeClaim"]
    assert {(r.obj["metadata"]["namespace"], r.obj["metadata"]["name"]) for r in claims} == {
        ("training", "training-data"), ("training", "checkpoints"), ("research", "training-data")}
    for r in claims:
        assert r.retain, "pulumi destroy must not delete training data"
        assert KEEP_ANNOTATIONS.items() <= r.obj["metadata"]["annotations"].items()


def test_a_claim_may_opt_out_of_retention():
    claims = [{"name": "scratch", "size": "1Ti", "retain": False}]
    bundle = render(variant("dev", "scratch", storage={"claims": claims}))
    (claim,) = [r for r in _storage(bundle) if r.kind == "PersistentVolumeClaim"]
    assert not claim.retain and not claim.obj["metadata"].get("annotations")


def test_storage_class_is_created_first_and_keeps_data():
    resources = _storage(shipped_bundle("staging"))
    (sc,) = [r for r in resources if r.kind == "StorageClass"]
    assert sc.obj["reclaimPolicy"] == "Retain" and sc.obj["mountOptions"] == ["nfsvers=4.1", "nconnect=8"]
    for claim in (r for r in resources if r.kind == "PersistentVolumeClaim"):
        assert claim.obj["spec"]["storageClassName"] == "nas-staging"
        assert claim.depends_on == ("StorageClass/nas-staging",)


def test_claim_naming_another_class_does_not_wait_for_ours():
    bundle = render(variant("staging", "other", storage={"claims": [
        {"name": "fast", "size": "1Ti", "storageClass": "local-nvme"}]}, workloads={"trainJobs": []}))
    (claim,) = [r for r in _storage(bundle) if r.kind == "PersistentVolumeClaim"]
    assert claim.obj["spec"]["storageClassName"] == "local-nvme" and claim.depends_on == ()
    assert claim.obj["metadata"]["namespace"] == "training"   # the first training namespace


def test_same_claim_twice_in_a_namespace_is_refused():
    claims = [{"name": "data", "size": "1Ti"}, {"name": "data", "size": "2Ti"}]
    with pytest.raises(InputError) as caught:
        render(variant("dev", "twice", storage={"claims": claims}))
    assert caught.value.path.endswith("storage.claims[1].name") and "storage.claims[0]" in caught.value.message
