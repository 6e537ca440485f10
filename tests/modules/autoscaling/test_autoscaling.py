"""HPAs and the prometheus-adapter rules that serve their metrics."""
from __future__ import annotations

import functools

import pytest
import yaml

from modules.autoscaling import render as autoscaling
from modules.core import yamlio
from modules.core.config import build_stack, load_project
from modules.core.errors import InputError
from modules.core.render import render
from tests.support import crds

from tests.support.observability import FIXTURE_PROJECT, FIXTURES, SHIPPED, bundle, promtool, run_promtool, stack


def autoscaling_stack(api: str = "v1", **overrides):
    """The fixture stack; ``api`` stands in for trainstack:trainer.api (owned by the operators module)."""
    given = dict(stack("autoscaling", FIXTURE_PROJECT).given)
    given.update(overrides)
    s = build_stack(load_project(FIXTURE_PROJECT), "autoscaling", {f"trainstack:{k}": v for k, v in given.items()},
                    "stacks/Pulumi.autoscaling.yaml")
    s.values["trainer"] = {**s.values.get("trainer", {}), "api": api}
    return s


@functools.lru_cache(maxsize=None)
def crd_scale_subresources() -> dict[tuple[str, str], bool]:
    """(apiVersion, kind) -> whether the upstream CRD declares a scale subresource."""
    out = {}
    for doc in crds.crd_documents():
        for v in doc["spec"]["versions"]:
            out[(f"{doc['spec']['group']}/{v['name']}", doc["spec"]["names"]["kind"])] = \
                "scale" in (v.get("subresources") or {})
    return out


def test_scalable_kinds_match_the_upstream_crds():
    known = crd_scale_subresources()
    assert known[("kubeflow.org/v1", "PyTorchJob")] is True
    for (api, kind), scalable in known.items():
        assert (autoscaling.SCALABLE.get(kind) == api) == scalable, (api, kind)
    assert known[("trainer.kubeflow.org/v1alpha1", "TrainJob")] is False


def every_hpa():
    for name in SHIPPED:
        for r in bundle(name).resources:
            if r.kind == "HorizontalPodAutoscaler":
                yield name, r.obj
    for r in render(autoscaling_stack()).resources:
        if r.kind == "HorizontalPodAutoscaler":
            yield "autoscaling", r.obj


def test_no_rendered_hpa_targets_a_kind_without_a_scale_subresource():
    hpas = list(every_hpa())
    assert {n for n, _ in hpas} >= {"staging", "prod", "autoscaling"}
    for name, obj in hpas:
        ref = obj["spec"]["scaleTargetRef"]
        core = ref["apiVersion"] in ("apps/v1",) and ref["kind"] in ("Deployment", "StatefulSet", "ReplicaSet")
        assert core or crd_scale_subresources().get((ref["apiVersion"], ref["kind"])), (name, ref)


def test_hpas_validate_and_their_metrics_are_served():
    for name, obj in every_hpa():
        crds.validate_core(obj)
        b = render(autoscaling_stack()) if name == "autoscaling" else bundle(name)
        (adapter,) = [r for r in b.releases if r.chart == "prometheus-adapter"]
        served = {r["name"]["as"]: kind for kind in ("custom", "external") for r in adapter.values["rules"][kind]}
        for metric in obj["spec"]["metrics"]:
            kind = metric["type"]
            spec = metric["pods" if kind == "Pods" else "external"]
            assert served.get(spec["metric"]["name"]) == ("custom" if kind == "Pods" else "external"), (name, metric)


def test_adapter_release_is_pinned():
    for name in SHIPPED:
        for release in bundle(name).releases:
            if release.chart == "prometheus-adapter":
                assert release.version == "5.3.0"
                assert release.repository == "https://prometheus-community.github.io/helm-charts"
                assert release.values["rules"]["default"] is False


def test_fixture_stack_renders_the_expected_hpas_and_adapter_rules():
    b = render(autoscaling_stack())
    (adapter,) = [r for r in b.releases if r.chart == "prometheus-adapter"]
    got = {"hpas": [r.obj for r in b.resources if r.kind == "HorizontalPodAutoscaler"],
           "adapter": {"name": adapter.name, "chart": adapter.chart, "repository": adapter.repository,
                       "version": adapter.version, "namespace": adapter.namespace, "values": adapter.values}}
    expected = yamlio.load_file(FIXTURES / "autoscaling.expected.yaml", "autoscaling.expected.yaml")
    assert got == expected


def test_shipped_stacks_show_hpas_only_where_valid():
    counts = {n: len([r for r in bundle(n).resources if r.kind == "HorizontalPodAutoscaler"]) for n in SHIPPED}
    assert counts["dev"] == 0 and counts["staging"] >= 1 and counts["prod"] >= 2
    assert not any(r.chart == "prometheus-adapter" for r in bundle("dev").releases)


# --- the adapter's queries, expanded the way the adapter expands them, evaluated by promtool --------

def expand(query: str, series: str, matchers: str, group_by: str) -> str:
    return (query.replace("<<.Series>>", series).replace("<<.LabelMatchers>>", matchers)
            .replace("<<.GroupBy>>", group_by))


def test_adapter_queries_compute_what_the_hpas_expect(tmp_path):
    rules = next(r for r in render(autoscaling_stack()).releases if r.chart == "prometheus-adapter").values["rules"]
    by_name = {r["name"]["as"]: r for kind in ("custom", "external") for r in rules[kind]}
    gpu = by_name["gpu_utilization"]
    vllm = by_name["vllm_requests_waiting"]
    pending = by_name["volcano_pending_podgroups"]
    busbw = by_name["fabric_busbw_gbps"]
    tests = {"rule_files": [], "evaluation_interval": "1m", "tests": [{
        "interval": "1m",
        "input_series": [
            # dcgm-exporter with honorLabels false: the workload's labels are exported_*
            {"series": 'DCGM_FI_DEV_GPU_UTIL{exported_namespace="training",exported_pod="llama-worker-0",'
                        'gpu="0",namespace="gpu-operator",pod="dcgm-x"}', "values": "60x5"},
            {"series": 'DCGM_FI_DEV_GPU_UTIL{exported_namespace="training",exported_pod="llama-worker-0",'
                        'gpu="1",namespace="gpu-operator",pod="dcgm-x"}', "values": "80x5"},
            {"series": 'DCGM_FI_DEV_GPU_UTIL{exported_namespace="training",exported_pod="llama-worker-1",'
                        'gpu="0",namespace="gpu-operator",pod="dcgm-y"}', "values": "30x5"},
            {"series": 'vllm:num_requests_waiting{namespace="inference",pod="llm-0",model_name="m"}', "values": "7x5"},
            {"series": 'volcano_queue_pod_group_pending_count{queue_name="default",namespace="volcano-system"}',
             "values": "3x5"},
            {"series": 'volcano_queue_pod_group_pending_count{queue_name="research",namespace="volcano-system"}',
             "values": "9x5"},
            {"series": 'trainstack_probe_busbw_gbps{tier="spine",collective="all_reduce",bytes="1048576"}',
             "values": "20x5"},
            {"series": 'trainstack_probe_busbw_gbps{tier="spine",collective="all_reduce",bytes="1073741824"}',
             "values": "310x5"},
            {"series": 'trainstack_probe_busbw_gbps{tier="spine",collective="all_gather",bytes="1073741824"}',
             "values": "330x5"},
        ],
        "promql_expr_test": [
            {"expr": expand(gpu["metricsQuery"], "DCGM_FI_DEV_GPU_UTIL",
                            'exported_namespace="training",exported_pod=~"llama-worker-0|llama-worker-1"',
                            "exported_pod"),
             "eval_time": "2m",
             "exp_samples": [{"labels": '{exported_pod="llama-worker-0"}', "value": 70},
                             {"labels": '{exported_pod="llama-worker-1"}', "value": 30}]},
            {"expr": expand(vllm["metricsQuery"], "vllm:num_requests_waiting",
                            'namespace="inference",pod=~"llm-0"', "pod"),
             "eval_time": "2m", "exp_samples": [{"labels": '{pod="llm-0"}', "value": 7}]},
            {"expr": expand(pending["metricsQuery"], "volcano_queue_pod_group_pending_count",
                            'queue_name="default"', ""),
             "eval_time": "2m", "exp_samples": [{"labels": '{queue_name="default"}', "value": 3}]},
            {"expr": expand(busbw["metricsQuery"], "trainstack_probe_busbw_gbps", 'tier="spine"', ""),
             "eval_time": "2m", "exp_samples": [{"labels": '{tier="spine"}', "value": 310}]},
            # an HPA without a selector: the adapter expands no matchers
            {"expr": expand(busbw["metricsQuery"], "trainstack_probe_busbw_gbps", "", ""),
             "eval_time": "2m", "exp_samples": [{"labels": '{tier="spine"}', "value": 310}]},
        ]}]}
    promtool()
    (tmp_path / "adapter.test.yml").write_text(yaml.safe_dump(tests, sort_keys=False))
    result = run_promtool("test", "rules", "adapter.test.yml", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


# --- mistakes -----------------------------------------------------------------------------------

def hpa(kind="Deployment", target="x", **extra):
    return {"namespace": "training", "target": {"kind": kind, "name": target}, "maxReplicas": 4,
            "metrics": [{"name": "gpu_utilization", "averageValue": 80}], **extra}


@pytest.mark.parametrize("item, api, path, words", [
    (hpa("TrainJob", "llama"), "v2", "trainstack:autoscaling.hpas[0].target.kind", "TrainJob has no scale subresource"),
    (hpa("TrainJob", "llama"), "v1", "trainstack:autoscaling.hpas[0].target.kind", "no HPA can scale it"),
    (hpa("PyTorchJob", "llama"), "v2", "trainstack:autoscaling.hpas[0].target.kind", "trainstack:trainer.api v1"),
    (hpa("MPIJob"), "v1", "trainstack:autoscaling.hpas[0].target.kind", "only PyTorchJob has one"),
    (hpa("JobSet"), "v1", "trainstack:autoscaling.hpas[0].target.kind", "JobSet has no scale subresource"),
    (hpa("PyTorchJob", "llama", name="llama"), "v1", "trainstack:autoscaling.hpas[0].name", "Training Operator owns"),
    (hpa(minReplicas=5), "v1", "trainstack:autoscaling.hpas[0].minReplicas", "at most maxReplicas"),
    (hpa(metrics=[{"name": "gpu_utilization", "value": 80}]), "v1",
     "trainstack:autoscaling.hpas[0].metrics[0].value", "averageValue"),
    (hpa(metrics=[{"name": "volcano_pending_podgroups"}]), "v1",
     "trainstack:autoscaling.hpas[0].metrics[0]", "exactly one of averageValue or value"),
    (hpa(metrics=[{"name": "gpu_utilization", "averageValue": 1, "selector": {"a": "b"}}]), "v1",
     "trainstack:autoscaling.hpas[0].metrics[0].selector", "Pods metric"),
])
def test_mistakes_are_config_errors_naming_the_path(item, api, path, words):
    with pytest.raises(InputError) as err:
        render(autoscaling_stack(api, autoscaling={"hpas": [item]}))
    assert path in str(err.value) and words in str(err.value)


def test_two_hpas_on_one_target_are_refused():
    with pytest.raises(InputError) as err:
        render(autoscaling_stack(autoscaling={"hpas": [hpa(name="a"), hpa(name="b")]}))
    assert "trainstack:autoscaling.hpas[1].target" in str(err.value) and "one HPA per target" in str(err.value)


def test_unknown_metric_is_a_schema_error():
    with pytest.raises(InputError) as err:
        render(autoscaling_stack(autoscaling={"hpas": [hpa(metrics=[{"name": "cpu", "averageValue": 1}])]}))
    assert "trainstack:autoscaling.hpas[0].metrics[0].name" in str(err.value) and "gpu_utilization" in str(err.value)
