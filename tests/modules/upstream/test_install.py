"""What the Volcano chart release installs (modules/upstream/install.py) and which registered checks
it sends an object to (modules/upstream/registry.py), as volcano-sh/volcano v1.15.1's
installer/helm/chart/volcano/values.yaml and templates/webhooks.yaml register them."""
from __future__ import annotations

from modules.upstream.install import CHART_DEFAULT_ADMISSIONS, EVERY_WEBHOOK, install_of
from modules.upstream.registry import MUTATE, VALIDATE, checks


def release(namespace="volcano-system", **custom):
    return {"apiVersion": "helm.sh/v3", "kind": "Release", "metadata": {"name": "volcano", "namespace": namespace},
            "spec": {"chart": "volcano", "values": {"custom": custom}}}


def job(namespace):
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "j", "namespace": namespace}}


def test_the_release_says_what_is_installed():
    assert install_of([]).assumed and not install_of([]).vap
    assert install_of([]).admissions == CHART_DEFAULT_ADMISSIONS
    assert "/pods/validate" not in CHART_DEFAULT_ADMISSIONS and "/jobflows/validate" not in CHART_DEFAULT_ADMISSIONS
    stack = install_of([release("batch-system", vap_enable=True)])
    assert (stack.namespace, stack.vap, stack.assumed) == ("batch-system", True, "")
    assert install_of([release(admission_enable=False)]).admissions == frozenset()
    listed = install_of([release(enabled_admissions="/jobs/mutate, /pods/validate")])
    assert listed.admissions == {"/jobs/mutate", "/pods/validate"}


def test_namespaced_webhooks_leave_out_the_release_namespace_and_kube_system():
    install = install_of([release("batch-system")])
    names = {c.webhook for c in checks("batch.volcano.sh", "Job", VALIDATE, "CREATE", install, job("training"),
                                       ("volcano",))}
    assert names == {"validatejob.volcano.sh"}
    for namespace in ("batch-system", "kube-system"):
        assert checks("batch.volcano.sh", "Job", VALIDATE, "CREATE", install, job(namespace), ("volcano",)) == []
        assert checks("batch.volcano.sh", "Job", MUTATE, "CREATE", install, job(namespace)) == []
    # volcano-system is an ordinary namespace when the release lives elsewhere
    assert checks("batch.volcano.sh", "Job", VALIDATE, "CREATE", install, job("volcano-system"))


def test_the_hypernode_webhook_has_no_selector_and_the_table_runner_sees_every_webhook():
    hypernode = {"apiVersion": "topology.volcano.sh/v1alpha1", "kind": "HyperNode", "metadata": {"name": "h"}}
    assert checks("topology.volcano.sh", "HyperNode", VALIDATE, "UPDATE", install_of([]), hypernode)
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "volcano-system"}}
    assert not any(c.source == "volcano" for c in checks("", "Pod", VALIDATE, "CREATE", install_of([]), pod))
    assert any(c.source == "volcano" for c in checks("", "Pod", VALIDATE, "CREATE", EVERY_WEBHOOK, pod))


def test_operations_as_registered():
    """/jobs/mutate takes CREATE only; /jobs/validate CREATE and UPDATE; /podgroups/validate CREATE."""
    assert [c.name for c in checks("batch.volcano.sh", "Job", MUTATE, "UPDATE")] == []
    assert len(checks("batch.volcano.sh", "Job", VALIDATE, "UPDATE", sources=("volcano",))) == 1
    assert checks("scheduling.volcano.sh", "PodGroup", VALIDATE, "UPDATE", sources=("volcano",)) == []
