"""Trainer v2 (chart + RBAC) and Training Operator v1 (overlay), and which options go with which."""
import pytest
import yaml

from modules.core.errors import InputError
from modules.core.render import render
from modules.trainer import render as trainer

from tests.support.stacks import DELETE, STACKS, of_kind, shipped_bundle, v1_bundle, variant


def trainer_release(bundle):
    (release,) = [r for r in bundle.releases if r.name == "kubeflow-trainer"]
    return release


@pytest.mark.parametrize("name", STACKS)
def test_v2_chart_is_pinned_with_jobset_and_no_runtime_installer(name):
    release = trainer_release(shipped_bundle(name))
    assert release.chart_ref == "oci://ghcr.io/kubeflow/charts/kubeflow-trainer"
    assert release.version == "2.3.0"
    values = release.values
    assert values["image"]["tag"] == "v2.3.0"
    assert values["jobset"] == {"install": True}
    runtimes = values["runtimes"]
    assert runtimes["defaultEnabled"] is False
    flags = [v["enabled"] for k, v in runtimes.items() if isinstance(v, dict) and "enabled" in v]
    flags += [v["enabled"] for v in runtimes["torchtuneDistributed"].values()]
    flags.append(values["dataCache"]["runtimes"]["torchDistributedWithCache"]["enabled"])
    assert flags and not any(flags)
    assert set(release.serves) == {"trainer.kubeflow.org", "jobset.x-k8s.io"}
    # Trainer watches Volcano PodGroups only if their CRD exists when it starts.
    assert release.depends_on == ("release/volcano-system/volcano",)


@pytest.mark.parametrize("name", STACKS)
def test_priorityclasses_rbac_binds_the_managers_service_account(name):
    bundle = shipped_bundle(name)
    (role,) = of_kind(bundle, "ClusterRole")
    (binding,) = of_kind(bundle, "ClusterRoleBinding")
    assert role["rules"] == [{"apiGroups": ["scheduling.k8s.io"], "resources": ["priorityclasses"],
                              "verbs": ["get", "list", "watch"]}]
    assert binding["roleRef"]["name"] == role["metadata"]["name"]
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "kubeflow-trainer-controller-manager",
                                    "namespace": "kubeflow-system"}]


@pytest.mark.parametrize("release, account", [
    ("kubeflow-trainer", "kubeflow-trainer-controller-manager"),
    ("trainer", "trainer-kubeflow-trainer-controller-manager"),
    ("my-kubeflow-trainer-prod", "my-kubeflow-trainer-prod-controller-manager"),
])
def test_service_account_follows_the_charts_fullname_helper(release, account):
    assert trainer.manager_service_account(release) == account
    bundle = render(variant("dev", trainer={"releaseName": release}))
    (binding,) = of_kind(bundle, "ClusterRoleBinding")
    assert binding["subjects"][0]["name"] == account


def test_v1_overlay_is_pinned_and_gang_scheduled_by_volcano():
    bundle = v1_bundle()
    assert not [r for r in bundle.releases if r.chart == "kubeflow-trainer"]
    assert not of_kind(bundle, "ClusterTrainingRuntime") and not of_kind(bundle, "ClusterRole")
    (overlay,) = bundle.overlays
    assert overlay.serves == ("kubeflow.org",)
    assert overlay.depends_on == ("release/volcano-system/volcano",)
    kustomization = overlay.kustomization
    assert kustomization["resources"] == [
        "https://github.com/kubeflow/trainer.git/manifests/overlays/standalone?ref=v1.9.4"]
    deployment_patch, crd_patch = kustomization["patches"]
    assert deployment_patch["target"]["name"] == "training-operator"
    (op,) = yaml.safe_load(deployment_patch["patch"])
    assert op["path"] == "/spec/template/spec/containers/0/args"
    assert "--gang-scheduler-name=volcano" in op["value"] and "--enable-scheme=pytorchjob" in op["value"]
    assert yaml.safe_load(crd_patch["patch"])["$patch"] == "delete"


@pytest.mark.parametrize("sections, path, words", [
    ({"trainer": {"elastic": True}}, "trainer.elastic", "only with the v1 Training Operator"),
    ({"trainer": {"v1": {"version": "v1.9.4"}}}, "trainer.v1", "configure the v1 Training Operator"),
    ({"trainer": {"version": "2.2.1"}}, "trainer.version", "a 2.3.x chart"),
    ({"trainer": {"version": "2.3"}}, "trainer.version", "an exact chart version"),
    ({"trainer": {"api": "v1", "version": "2.3.0"}, "runtimes": DELETE, "workloads": DELETE},
     "trainer.version", "configures the Trainer v2 chart"),
    ({"trainer": {"api": "v1", "version": DELETE}}, "runtimes", "need Kubeflow Trainer v2"),
    ({"trainer": {"api": "v1", "version": DELETE}, "runtimes": DELETE}, "workloads.trainJobs",
     "TrainJobs need Kubeflow Trainer v2"),
    ({"trainer": {"api": "v1", "version": DELETE, "v1": {"schemes": ["mpijob"]}}, "runtimes": DELETE},
     "trainer.v1.schemes[0]", "one of"),
    ({"trainer": {"api": "v3"}}, "trainer.api", 'one of "v2", "v1"'),
])
def test_option_combinations_per_version(sections, path, words):
    with pytest.raises(InputError) as err:
        render(variant("dev", **sections))
    assert err.value.path == f"trainstack:{path}" and words in err.value.message, str(err.value)


def test_v1_overlay_is_written_for_gitops():
    from modules.core.output import bundle_files

    files = bundle_files(v1_bundle(), "stacks/Pulumi.v1.yaml")
    written = yaml.safe_load(files["overlays/training-operator/kustomization.yaml"])
    assert written == v1_bundle().overlays[0].kustomization
    assert "overlays/training-operator" in yaml.safe_load(files["kustomization.yaml"])["resources"]
