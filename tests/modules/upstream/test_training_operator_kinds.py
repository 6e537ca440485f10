"""The Training Operator's kinds live in one table (modules/upstream/training_operator/kinds.py): the
pod-template walk and the webhook port read the same replica-specs field for each kind."""
from __future__ import annotations

from modules.semantics.shapes import pod_templates
from modules.upstream.registry import all_checks
from modules.semantics.training_kinds import TABLE, WEBHOOK_KINDS


def test_every_kind_s_replica_templates_are_walked_at_its_table_field():
    for kind in TABLE.values():
        job = {"apiVersion": "kubeflow.org/v1", "kind": kind.kind,
               "spec": {kind.specs: {"Worker": {"template": {"spec": {"containers": [{"name": kind.container}]}}}}}}
        assert [path for path, _ in pod_templates(job)] == [f"spec.{kind.specs}.Worker.template"], kind.kind


def test_the_registry_serves_the_kinds_with_a_webhook_and_not_mpijob():
    registered = [c.kind for c in all_checks() if c.source == "training-operator"]
    assert registered == list(WEBHOOK_KINDS) == ["PyTorchJob", "TFJob", "XGBoostJob", "JAXJob", "PaddleJob"]
    assert "MPIJob" in TABLE and "MPIJob" not in WEBHOOK_KINDS
