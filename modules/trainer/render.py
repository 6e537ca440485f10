"""Kubeflow Trainer v2 (chart + the priorityclasses RBAC it lacks) or Training Operator v1 (overlay)."""
from __future__ import annotations

from modules.core import yamlio
from modules.core.bundle import ChartRelease, Overlay, Resource
from modules.core.context import RenderContext
from modules.volcano.render import SCHEDULER_NAME, release_ref as volcano_release

MODULE = "trainer"
CHART = "kubeflow-trainer"
REPOSITORY = "oci://ghcr.io/kubeflow/charts"
V2_SERVES = ("trainer.kubeflow.org", "jobset.x-k8s.io")
V1_SERVES = ("kubeflow.org",)
V1_OVERLAY = "training-operator"
V1_NAMESPACE = "kubeflow"            # the standalone overlay's namespace
V1_REPOSITORY = "https://github.com/kubeflow/trainer.git/manifests/overlays/standalone"
# Built-in runtimes of the 2.3 chart. Each must stay off: any one enables the installer hook,
# which runs `apk add kubectl` from the internet at install time.
BUILTIN_RUNTIMES = ("torchDistributed", "deepspeedDistributed", "mlxDistributed", "jaxDistributed",
                    "xgboostDistributed")
TORCHTUNE_RUNTIMES = ("llama3_2_1B", "llama3_2_3B", "qwen2_5_1_5B")
V2_ONLY = ("version", "releaseName", "namespace", "managerReplicas")


def api(ctx: RenderContext) -> str:
    return ctx.section(MODULE)["api"]


def chart_fullname(release: str, chart: str = CHART) -> str:
    """The chart's `trainer.fullname` helper: the release name if it contains the chart name,
    else `<release>-<chart>`, truncated to 63 characters."""
    name = release if chart in release else f"{release}-{chart}"
    return name[:63].rstrip("-")


def manager_service_account(release: str) -> str:
    return f"{chart_fullname(release)}-controller-manager"


def release_ref(ctx: RenderContext) -> str:
    """Bundle key of what serves the training API of this stack (release or overlay)."""
    cfg = ctx.section(MODULE)
    if cfg["api"] == "v1":
        return f"overlay/{V1_OVERLAY}"
    return f"release/{cfg['namespace']}/{cfg['releaseName']}"


def _check_options(ctx: RenderContext, cfg: dict) -> None:
    given = ctx.stack.given.get(MODULE) or {}
    if cfg["api"] == "v2":
        if cfg["elastic"]:
            raise ctx.error("trainer.elastic", "elastic training exists only with the v1 Training "
                            "Operator (trainer.api: v1); Trainer v2 has no elastic policy and no scale "
                            "subresource an HPA could target (kubeflow/trainer#2903)")
        if "v1" in given:
            raise ctx.error("trainer.v1", "these options configure the v1 Training Operator; set "
                            "trainer.api: v1 or remove them")
        if tuple(int(x) for x in cfg["version"].split(".")[:2]) != (2, 3):
            raise ctx.expected("trainer.version", "a 2.3.x chart: trainstack renders the Trainer 2.3 "
                               "API (v1alpha1 breaks on every minor release)", cfg["version"])
    else:
        for key in V2_ONLY:
            if key in given:
                raise ctx.error(f"trainer.{key}", "this option configures the Trainer v2 chart; with "
                                "trainer.api: v1 use trainer.v1 (or switch to api v2)")


def v2_values(cfg: dict) -> dict:
    runtimes: dict = {"defaultEnabled": False}
    runtimes.update({name: {"enabled": False} for name in BUILTIN_RUNTIMES})
    runtimes["torchtuneDistributed"] = {name: {"enabled": False} for name in TORCHTUNE_RUNTIMES}
    return {
        "image": {"tag": f"v{cfg['version']}"},       # never the chart's implicit tag resolution
        "jobset": {"install": True},                  # Trainer 2.3 needs JobSet 0.12 (the chart's dependency)
        "dataCache": {"enabled": False, "runtimes": {"torchDistributedWithCache": {"enabled": False}}},
        "runtimes": runtimes,
        "manager": {"replicas": cfg["managerReplicas"]},
        "webhook": {"failurePolicy": "Fail"},
    }


def priorityclass_rbac(ctx: RenderContext, cfg: dict) -> list[Resource]:
    """Trainer 2.3 validates a runtime's priorityClassName through a PriorityClass informer its
    ClusterRole does not cover, so such TrainJobs time out at admission (kubeflow/trainer#3918)."""
    account = manager_service_account(cfg["releaseName"])
    name = f"{account}-priorityclasses"
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": ctx.metadata(MODULE, name),
            "rules": [{"apiGroups": ["scheduling.k8s.io"], "resources": ["priorityclasses"],
                       "verbs": ["get", "list", "watch"]}]}
    binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
               "metadata": ctx.metadata(MODULE, name),
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
               "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": cfg["namespace"]}]}
    return [Resource(module=MODULE, obj=role),
            Resource(module=MODULE, obj=binding, depends_on=(f"ClusterRole/{name}",))]


def v1_overlay(ctx: RenderContext, cfg: dict) -> Overlay:
    v1 = cfg["v1"]
    args = [f"--gang-scheduler-name={SCHEDULER_NAME}"] + [f"--enable-scheme={s}" for s in v1["schemes"]]
    deployment_patch = [{"op": "add", "path": "/spec/template/spec/containers/0/args", "value": args}]
    kustomization = {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "resources": [f"{V1_REPOSITORY}?ref={v1['version']}"],
        "patches": [
            {"target": {"group": "apps", "version": "v1", "kind": "Deployment", "name": "training-operator"},
             "patch": yamlio.dump(deployment_patch)},
            {"target": {"group": "apiextensions.k8s.io", "version": "v1", "kind": "CustomResourceDefinition",
                        "name": "mpijobs.kubeflow.org"},
             "patch": yamlio.dump({"$patch": "delete", "apiVersion": "apiextensions.k8s.io/v1",
                             "kind": "CustomResourceDefinition", "metadata": {"name": "mpijobs.kubeflow.org"}})},
        ],
    }
    # The operator exits at start-up when the Volcano PodGroup CRD is missing.
    return Overlay(module=MODULE, name=V1_OVERLAY, kustomization=kustomization, namespace=V1_NAMESPACE,
                   depends_on=(volcano_release(ctx),), serves=V1_SERVES)


def render(ctx: RenderContext) -> list[Resource | ChartRelease | Overlay]:
    cfg = ctx.section(MODULE)
    _check_options(ctx, cfg)
    if cfg["api"] == "v1":
        return [v1_overlay(ctx, cfg)]
    # Trainer registers its PodGroup watch only if Volcano's CRD exists when it starts.
    release = ChartRelease(module=MODULE, name=cfg["releaseName"], chart=CHART, repository=REPOSITORY,
                           version=cfg["version"], namespace=cfg["namespace"], values=v2_values(cfg),
                           depends_on=(volcano_release(ctx),), serves=V2_SERVES)
    return [release, *priorityclass_rbac(ctx, cfg)]
