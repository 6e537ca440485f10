"""HPAs on custom and external metrics, and the prometheus-adapter rules that serve those metrics.

Only kinds with a scale subresource can be scaled: Deployments, StatefulSets, ReplicaSets and, with
Training Operator v1 (`trainstack:trainer.api: v1`), PyTorchJobs (the subresource scales the Worker
replicas). A Kubeflow Trainer v2 TrainJob has none, nor do TFJob, MPIJob, XGBoostJob, JobSet or
Volcano Jobs: an HPA aimed at one is an InputError, since the HPA would only ever report
FailedGetScale.
"""
from __future__ import annotations

from dataclasses import dataclass

from modules.core.bundle import ChartRelease, Resource
from modules.core.context import RenderContext
from modules.probe.render import available_tiers
from modules.semantics.owned import settle_scaled

MODULE = "autoscaling"
CHART = "prometheus-adapter"

# kind -> apiVersion of the kinds whose scale subresource an HPA can drive.
SCALABLE = {"Deployment": "apps/v1", "StatefulSet": "apps/v1", "ReplicaSet": "apps/v1", "PyTorchJob": "kubeflow.org/v1"}
WHY_NOT = {
    "TrainJob": "a Kubeflow Trainer v2 TrainJob has no scale subresource, so no HPA can scale it; use an elastic "
                "PyTorchJob with Training Operator v1 (trainstack:trainer.api v1) or scale a Deployment",
    "JobSet": "a JobSet has no scale subresource",
    "TFJob": "a TFJob has no scale subresource (of the Training Operator v1 jobs only PyTorchJob has one)",
    "MPIJob": "an MPIJob has no scale subresource (of the Training Operator v1 jobs only PyTorchJob has one)",
    "XGBoostJob": "an XGBoostJob has no scale subresource (of the Training Operator v1 jobs only PyTorchJob has one)",
    "Job": "a Job (batch or Volcano) has no scale subresource; gangs are fixed-size",
}


@dataclass(frozen=True)
class Metric:
    """One metric the adapter serves: its HPA type, source series and the adapter rule."""

    type: str             # Pods (custom.metrics.k8s.io) or External (external.metrics.k8s.io)
    series: str           # the Prometheus metric behind it
    query: str            # the adapter's metricsQuery (a Go template with << >> delimiters)
    about: str
    labels: tuple[str, ...] = ()   # External: the series' labels a selector may name
    required: str = ""             # External: the label a selector must name (the query keeps one series per value)


METRICS: dict[str, Metric] = {
    "gpu_utilization": Metric(
        "Pods", "DCGM_FI_DEV_GPU_UTIL", "avg(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)",
        "GPU utilisation in percent, averaged over each pod's GPUs (dcgm-exporter with pod mapping)."),
    "vllm_requests_waiting": Metric(
        "Pods", "vllm:num_requests_waiting", "sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)",
        "Requests queued in each vLLM server pod (the inference backlog)."),
    "volcano_pending_podgroups": Metric(
        "External", "volcano_queue_pod_group_pending_count",
        "sum(<<.Series>>{<<.LabelMatchers>>}) by (queue_name)",
        "PodGroups pending in a Volcano queue (select one with queue_name).", labels=("queue_name",)),
    "fabric_busbw_gbps": Metric(
        "External", "trainstack_probe_busbw_gbps",
        'max(<<.Series>>{collective="all_reduce",<<.LabelMatchers>>}) by (tier)',
        "Peak all_reduce busbw of the last fabric probe of a tier (select one with tier).", labels=("tier",),
        required="tier"),
}


def adapter_rule(ctx: RenderContext, name: str) -> dict:
    """The prometheus-adapter rule serving ``name`` (docs/config.md of kubernetes-sigs/prometheus-adapter)."""
    metric = METRICS[name]
    if metric.type == "Pods":
        exported = name == "gpu_utilization" and not ctx.section(MODULE)["adapter"]["dcgmHonorLabels"]
        ns, pod = ("exported_namespace", "exported_pod") if exported else ("namespace", "pod")
        return {"seriesQuery": f'{{__name__="{metric.series}",{ns}!="",{pod}!=""}}',
                "resources": {"overrides": {ns: {"resource": "namespace"}, pod: {"resource": "pod"}}},
                "name": {"matches": f"^{_re(metric.series)}$", "as": name},
                "metricsQuery": metric.query}
    return {"seriesQuery": f'{{__name__="{metric.series}"}}',
            "resources": {"namespaced": False},
            "name": {"matches": f"^{_re(metric.series)}$", "as": name},
            "metricsQuery": metric.query}


def _re(text: str) -> str:
    return "".join("\\" + c if c in ".^$*+?()[]{}|\\" else c for c in text)


def _quantity(value) -> str:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value)


def hpa_metric(ctx: RenderContext, where: str, item: dict) -> dict:
    metric = METRICS[item["name"]]
    given = [k for k in ("averageValue", "value") if k in item]
    if len(given) != 1:
        raise ctx.error(where, f"expected exactly one of averageValue or value for metric {item['name']}")
    kind = given[0]
    if metric.type == "Pods":
        if kind != "averageValue":
            raise ctx.error(f"{where}.value",
                            f"{item['name']} is a Pods metric: expected averageValue (per pod), not value")
        if item["selector"]:
            raise ctx.error(f"{where}.selector", f"{item['name']} is a Pods metric; the HPA selects its pods, "
                            "expected no selector")
        return {"type": "Pods", "pods": {"metric": {"name": item["name"]},
                                         "target": {"type": "AverageValue", "averageValue": _quantity(item[kind])}}}
    target = {"type": "Value", "value": _quantity(item[kind])} if kind == "value" else \
        {"type": "AverageValue", "averageValue": _quantity(item[kind])}
    _check_selector(ctx, f"{where}.selector", item["name"], item["selector"])
    spec_metric: dict = {"name": item["name"]}
    if item["selector"]:
        spec_metric["selector"] = {"matchLabels": dict(sorted(item["selector"].items()))}
    return {"type": "External", "external": {"metric": spec_metric, "target": target}}


def _check_selector(ctx: RenderContext, where: str, name: str, selector: dict) -> None:
    """An External metric's selector must name labels its series carry: the adapter adds them to the
    query, finds no series otherwise, and the HPA reports FailedGetExternalMetric. The HPA adds up
    every series it gets, so a metric kept per label value (busbw per tier) needs that label selected."""
    metric = METRICS[name]
    unknown = sorted(set(selector) - set(metric.labels))
    if unknown:
        raise ctx.error(where, f"expected only {', '.join(metric.labels)} (the labels of {metric.series}) for "
                        f"{name}, got {', '.join(unknown)}: the adapter would find no series")
    if metric.required and metric.required not in selector:
        raise ctx.error(where, f"expected a {metric.required} selector for {name}: the adapter returns one series "
                        f"per {metric.required} and the HPA would add them up")
    if name == "fabric_busbw_gbps":
        tiers = [t.name for t in available_tiers(ctx.fabric)]
        if selector["tier"] not in tiers:
            raise ctx.expected(f"{where}.tier", "a tier the probe labels its results with: " + ", ".join(tiers),
                               selector["tier"])


def scale_target(ctx: RenderContext, where: str, target: dict) -> dict:
    kind = target["kind"]
    if kind not in SCALABLE:
        reason = WHY_NOT.get(kind, f"kind {kind} has no scale subresource trainstack knows of")
        raise ctx.error(f"{where}.kind", f"{reason}; an HPA can target Deployment, StatefulSet, ReplicaSet, "
                        "or PyTorchJob with Training Operator v1", rule="hpa-target-scalable")
    if kind == "PyTorchJob":
        api = ctx.stack.values.get("trainer", {}).get("api", "v2")
        if api != "v1":
            raise ctx.error(f"{where}.kind", f"a PyTorchJob needs Training Operator v1 (trainstack:trainer.api v1); "
                            f"this stack uses Kubeflow Trainer {api}, whose TrainJobs have no scale subresource",
                            rule="hpa-target-scalable")
    return {"apiVersion": SCALABLE[kind], "kind": kind, "name": target["name"]}


def elastic_bounds(ctx: RenderContext, where: str, item: dict) -> None:
    """An HPA on a PyTorchJob this stack renders scales inside the job's elastic bounds: the rule
    hpa-target-scalable requires the same of manifests, so `check` never refuses what render accepts."""
    target = item["target"]
    jobs = (ctx.stack.values.get("workloads") or {}).get("pyTorchJobs") or []
    found = [(j, job) for j, job in enumerate(jobs) if job["name"] == target["name"]
             and job["namespace"] == item["namespace"]]
    if not found:
        return   # a job submitted later: nothing to compare with
    j, job = found[0]
    elastic = job.get("elastic")
    if not elastic:
        raise ctx.error(f"{where}.target.name", f"PyTorchJob {job['name']!r} (workloads.pyTorchJobs[{j}]) is not "
                        "elastic: changing its workers restarts torchrun with a fixed world size; set its elastic "
                        "bounds or drop the HPA", rule="hpa-target-scalable")
    if item["minReplicas"] < elastic["minReplicas"]:
        raise ctx.error(f"{where}.minReplicas", f"expected at least the job's elastic.minReplicas "
                        f"({elastic['minReplicas']}), got {item['minReplicas']}: the rendezvous waits for that "
                        "many workers", rule="hpa-target-scalable")
    if item["maxReplicas"] > elastic["maxReplicas"]:
        raise ctx.error(f"{where}.maxReplicas", f"expected at most the job's elastic.maxReplicas "
                        f"({elastic['maxReplicas']}), got {item['maxReplicas']}: the rendezvous refuses workers "
                        "beyond it", rule="hpa-target-scalable")


def converges(ctx: RenderContext, where: str, item: dict, metrics: list[dict]) -> None:
    """The targets must be able to converge (modules/autoscaling/convergence.py, on the HPA model):
    the rule hpa-converges refuses the same in manifests."""
    from .convergence import problems   # it reads this module's catalogue
    spec = {"minReplicas": item["minReplicas"], "maxReplicas": item["maxReplicas"], "metrics": metrics}
    for problem in problems({"spec": spec}):
        raise ctx.error(f"{where}.metrics[{problem.index}].{problem.field}", problem.message, rule="hpa-converges")


def hpa(ctx: RenderContext, i: int, item: dict) -> dict:
    where = f"autoscaling.hpas[{i}]"
    target = scale_target(ctx, f"{where}.target", item["target"])
    if item["minReplicas"] > item["maxReplicas"]:
        raise ctx.error(f"{where}.minReplicas", f"expected at most maxReplicas ({item['maxReplicas']}), "
                        f"got {item['minReplicas']}", rule="kubernetes-api-validation")
    if target["kind"] == "PyTorchJob":
        elastic_bounds(ctx, where, item)
    metrics = [hpa_metric(ctx, f"{where}.metrics[{j}]", m) for j, m in enumerate(item["metrics"])]
    converges(ctx, where, item, metrics)
    scale_down: dict = {"stabilizationWindowSeconds": item["scaleDownStabilizationSeconds"]}
    annotations = None
    if target["kind"] == "PyTorchJob":
        # Every scale-down restarts the elastic workers (kubeflow/trainer#1509): one worker at a time.
        scale_down["policies"] = [{"type": "Pods", "value": 1, "periodSeconds": 300}]
        annotations = {"trainstack.io/elastic-note": "the PyTorchJob must not set elasticPolicy.metrics: the "
                       "Training Operator would create a second HPA named after the job"}
    elastic = target["kind"] == "PyTorchJob"
    name = item.get("name") or (f"{target['name']}-hpa" if elastic else target["name"])
    if elastic and name == target["name"]:
        raise ctx.error(f"{where}.name", f"expected a name other than the job's ({name}): the Training Operator "
                        "owns an HPA named like the job when elasticPolicy.metrics is set")
    return {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": ctx.metadata(MODULE, name, item["namespace"], annotations=annotations),
            "spec": {"scaleTargetRef": target, "minReplicas": item["minReplicas"],
                     "maxReplicas": item["maxReplicas"], "metrics": metrics,
                     "behavior": {"scaleDown": scale_down}}}


def used_metrics(ctx: RenderContext) -> list[str]:
    names = {m["name"] for item in ctx.section(MODULE)["hpas"] for m in item["metrics"]}
    return [name for name in METRICS if name in names]


def adapter_values(ctx: RenderContext) -> dict:
    cfg = ctx.section(MODULE)["adapter"]
    used = used_metrics(ctx)
    return {
        "prometheus": {"url": cfg["prometheusUrl"], "port": cfg["prometheusPort"]},
        "rules": {
            "default": False,   # serve only what the HPAs use, not every container metric
            "custom": [adapter_rule(ctx, n) for n in used if METRICS[n].type == "Pods"],
            "external": [adapter_rule(ctx, n) for n in used if METRICS[n].type == "External"],
        },
    }


def finish(ctx: RenderContext, bundle) -> None:
    """Core's hook once the Bundle is built: an object an HPA of this stack scales leaves the scaled
    field to the HPA. Deployments, StatefulSets and ReplicaSets are rendered without spec.replicas
    (the API server defaults it to 1 and the HPA raises it to minReplicas at once); a custom
    resource whose scale subresource needs the field (a PyTorchJob's Worker replicas) keeps it,
    recorded in trainstack.io/controller-owned for the Pulumi program and the GitOps engine."""
    settle_scaled([resource.obj for resource in bundle.resources])


def render(ctx: RenderContext) -> list:
    cfg = ctx.section(MODULE)
    out: list = []
    targets: dict[tuple, int] = {}
    for i, item in enumerate(cfg["hpas"]):
        obj = hpa(ctx, i, item)
        key = (item["namespace"], obj["spec"]["scaleTargetRef"]["kind"], obj["spec"]["scaleTargetRef"]["name"])
        if key in targets:   # two HPAs on one target fight over its replica count
            raise ctx.error(f"autoscaling.hpas[{i}].target", f"{key[1]} {key[0]}/{key[2]} is already scaled by "
                            f"autoscaling.hpas[{targets[key]}]; one HPA per target")
        targets[key] = i
        out.append(Resource(MODULE, obj))
    if out and cfg["adapter"]["install"]:
        adapter = cfg["adapter"]
        out.append(ChartRelease(module=MODULE, name=adapter["name"], chart=CHART, repository=adapter["repository"],
                                version=adapter["version"], namespace=adapter["namespace"],
                                values=adapter_values(ctx)))
    return out
