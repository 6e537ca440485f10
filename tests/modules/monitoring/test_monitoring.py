"""PrometheusRules: promtool checks every shipped stack's rules, and unit-tests every alert."""
from __future__ import annotations

import copy
import shutil

import pytest
import yaml

from modules.monitoring import render as monitoring
from tests.support import crds
from tests.support.cli import ROOT
from tests.support.observability import FIXTURE_PROJECT, FIXTURES, SHIPPED, bundle, rule_groups, run_promtool, stack, \
    write_rules

RUNBOOKS = ROOT / "docs" / "runbooks"


def rules_of(name, project=ROOT):
    return [r for g in rule_groups(bundle(name, project)) for r in g["rules"]]


# --- every shipped stack ------------------------------------------------------------------------

@pytest.mark.parametrize("name", SHIPPED)
def test_promtool_check_rules_passes_on_every_rendered_rule(name, tmp_path):
    for resource in bundle(name).resources:
        if resource.kind != "PrometheusRule":
            continue
        path = write_rules(tmp_path, resource.obj["spec"]["groups"], f"{resource.name}.rules.yml")
        result = run_promtool("check", "rules", path.name, cwd=tmp_path)
        assert result.returncode == 0, result.stdout + result.stderr
        assert "SUCCESS" in result.stdout


@pytest.mark.parametrize("name", SHIPPED)
def test_rules_are_selected_by_kube_prometheus_stack_and_validate(name):
    release = stack(name).values["monitoring"]["release"]
    rules = [r for r in bundle(name).resources if r.kind == "PrometheusRule"]
    assert rules
    names = [g["name"] for r in rules for g in r.obj["spec"]["groups"]]
    assert len(names) == len(set(names)), "group names must be unique (the CRD's list-map key)"
    for resource in rules:
        assert resource.obj["metadata"]["labels"]["release"] == release
        crds.validate_cr(resource.obj)


@pytest.mark.parametrize("name", SHIPPED)
def test_every_alert_has_severity_summary_and_an_existing_runbook(name):
    base = stack(name).values["monitoring"]["runbookBaseUrl"].rstrip("/")
    for rule in rules_of(name):
        assert rule["labels"]["severity"] in ("critical", "warning", "info"), rule
        assert rule["annotations"]["summary"].strip(), rule
        url = rule["annotations"]["runbook_url"]
        assert url.startswith(base + "/") and url.endswith(".md"), url
        page = RUNBOOKS / url[len(base) + 1:]
        assert page.is_file(), f"{rule['alert']}: runbook {page} does not exist"


def test_every_runbook_page_belongs_to_an_alert():
    pages = {p.stem for p in RUNBOOKS.glob("*.md")} - {"README"}
    assert pages == {a.page for a in monitoring.ALERTS.values()}


def test_stacks_differ_for_real():
    thresholds = {n: {r["labels"].get("tier"): r["expr"]
                      for r in rules_of(n) if r["alert"] == "FabricProbeBandwidthLow"}
                  for n in SHIPPED}
    assert len({str(sorted(t.items())) for t in thresholds.values()}) == len(SHIPPED)
    stale = {n: any(r["alert"] == "FabricProbeResultsStale" for r in rules_of(n)) for n in SHIPPED}
    assert stale == {n: bool(stack(n).values["probe"]["schedule"]) for n in SHIPPED}


@pytest.mark.parametrize("name", SHIPPED)
def test_bandwidth_thresholds_fire_below_and_stay_quiet_above(name, tmp_path):
    """Per stack, derived from its own thresholds: 90% of a tier's floor fires, 110% does not."""
    thresholds = {r["labels"]["tier"]: float(r["labels"]["threshold_gbps"])
                  for r in rules_of(name) if r["alert"] == "FabricProbeBandwidthLow"}
    assert thresholds
    collective = stack(name).values["monitoring"]["probe"]["collective"]
    tiers = sorted(thresholds)
    low, high = tiers[0], tiers[1:]
    series = [{"series": f'trainstack_probe_busbw_gbps{{tier="{low}",collective="{collective}",bytes="1073741824"}}',
               "values": f"{thresholds[low] * 0.9:g}x30"}]
    series += [{"series": f'trainstack_probe_busbw_gbps{{tier="{t}",collective="{collective}",bytes="1073741824"}}',
                "values": f"{thresholds[t] * 1.1:g}x30"} for t in high]
    groups = [g for g in rule_groups(bundle(name)) if g["name"] == "trainstack-fabric-probe"]
    write_rules(tmp_path, groups)
    fire = {"rule_files": ["alerts.rules.yml"], "evaluation_interval": "1m", "tests": [{
        "interval": "1m", "input_series": series,
        "alert_rule_test": [{"eval_time": "20m", "alertname": "FabricProbeBandwidthLow", "exp_alerts": [{
            "exp_labels": {**stack(name).values["monitoring"]["labels"], "severity": "warning", "tier": low,
                           "threshold_gbps": f"{thresholds[low]:g}"},
            "exp_annotations": {"summary": f"Fabric probe busbw on tier {low} is below its threshold",
                                "description": monitoring.ALERTS["FabricProbeBandwidthLow"].description
                                .replace("{{ $labels.tier }}", low)
                                .replace('{{ $value | printf "%.1f" }}', f"{thresholds[low] * 0.9:.1f}"),
                                "runbook_url": monitoring.runbook_url_for(stack(name).values,
                                                                          "FabricProbeBandwidthLow")},
        }]}]}]}
    (tmp_path / "bw.test.yml").write_text(yaml.safe_dump(fire, sort_keys=False))
    result = run_promtool("test", "rules", "bw.test.yml", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


# --- unit tests of every alert (fixtures/alerts.test.yml) ---------------------------------------

@pytest.fixture(scope="module")
def unit_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("alerts")
    write_rules(folder, rule_groups(bundle("alerts", FIXTURE_PROJECT)))
    shutil.copy(FIXTURES / "alerts.test.yml", folder / "alerts.test.yml")
    return folder


def test_promtool_unit_tests_pass(unit_dir):
    result = run_promtool("test", "rules", "alerts.test.yml", cwd=unit_dir)
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_alert_is_tested_firing_and_quiet():
    spec = yaml.safe_load((FIXTURES / "alerts.test.yml").read_text())
    fires, quiet = set(), set()
    for case in spec["tests"]:
        for check in case["alert_rule_test"]:
            (fires if check["exp_alerts"] else quiet).add(check["alertname"])
    assert fires == set(monitoring.ALERTS) and quiet == set(monitoring.ALERTS)
    rendered = {r["alert"] for r in rules_of("alerts", FIXTURE_PROJECT)}
    assert rendered == set(monitoring.ALERTS), "the fixture stack renders every alert"


def test_negative_controls_fail(unit_dir):
    """Expecting silence where an alert fires must fail: the tests really observe the alerts."""
    spec = yaml.safe_load((unit_dir / "alerts.test.yml").read_text())
    mutated = 0
    for i, case in enumerate(spec["tests"]):
        for j, check in enumerate(case["alert_rule_test"]):
            if not check["exp_alerts"]:
                continue
            wrong = copy.deepcopy(spec)
            wrong["tests"] = [copy.deepcopy(case)]
            wrong["tests"][0]["alert_rule_test"] = [dict(check, exp_alerts=[])]
            (unit_dir / "wrong.test.yml").write_text(yaml.safe_dump(wrong))
            result = run_promtool("test", "rules", "wrong.test.yml", cwd=unit_dir)
            assert result.returncode != 0, f"{case['name']}: {check['alertname']} at {check['eval_time']}"
            assert check["alertname"] in result.stdout + result.stderr
            mutated += 1
    assert mutated >= len(monitoring.ALERTS)


# --- configuration ------------------------------------------------------------------------------

def test_threshold_override_must_name_a_probed_tier():
    from modules.core.errors import InputError
    from modules.core.config import build_stack, load_project
    from modules.core.render import render

    project = load_project(FIXTURE_PROJECT)
    base = dict(stack("alerts", FIXTURE_PROJECT).given)
    flat = {f"trainstack:{k}": v for k, v in base.items()}
    flat["trainstack:monitoring"] = {"probe": {"minBusbwGBps": {"core": 10}}}
    with pytest.raises(InputError) as err:
        render(build_stack(project, "alerts", flat, "stacks/Pulumi.alerts.yaml"))
    assert "trainstack:monitoring.probe.minBusbwGBps.core" in str(err.value)
    assert "a tier of the fabric: node, leaf, spine" in str(err.value)


def test_claim_names_are_escaped_for_promql():
    assert monitoring._regex(["data.v2", "ckpt"]) == "data\\\\.v2|ckpt"


# --- every alert can fire: its metrics are scraped ------------------------------------------------

def _metrics_of(expr: str) -> set[str]:
    import re
    return set(re.findall(r"\b((?:DCGM_|volcano_)[A-Za-z0-9_]+)", expr))


@pytest.mark.parametrize("name", SHIPPED)
def test_every_alerts_exporter_is_scraped_by_a_selected_monitor(name):
    """Volcano's scheduler Service carries only prometheus.io annotations, which kube-prometheus-stack
    ignores, and dcgm-exporter's default CSV leaves the NVLink counters commented out: the bundle
    brings a ServiceMonitor for each and the counters CSV the GPU alerts read."""
    b = bundle(name)
    values = stack(name).values
    release = values["monitoring"]["release"]
    monitors = {r.name: r.obj for r in b.resources if r.kind == "ServiceMonitor"}
    used = set().union(*(_metrics_of(r["expr"]) for r in rules_of(name)))
    for obj in monitors.values():
        assert obj["metadata"]["labels"]["release"] == release
        crds.validate_cr(obj)
    if any(m.startswith("volcano_") for m in used):
        volcano = monitors["volcano-scheduler"]["spec"]
        assert volcano["namespaceSelector"] == {"matchNames": [values["volcano"]["namespace"]]}
        # the chart's templates/scheduler.yaml: Service label app=volcano-scheduler, port "metrics" (8080)
        assert volcano["selector"] == {"matchLabels": {"app": "volcano-scheduler"}}
        assert volcano["endpoints"][0]["port"] == "metrics"
    dcgm = {m for m in used if m.startswith("DCGM_")}
    if dcgm:
        exporter = monitors["dcgm-exporter"]["spec"]
        assert exporter["endpoints"][0]["honorLabels"] == values["autoscaling"]["adapter"]["dcgmHonorLabels"]
        (cm,) = [r.obj for r in b.resources if r.kind == "ConfigMap" and r.name == "trainstack-dcgm-metrics"]
        assert cm["metadata"]["namespace"] == exporter["namespaceSelector"]["matchNames"][0]
        fields = {line.split(",")[0] for line in cm["data"]["dcgm-metrics.csv"].splitlines()
                  if line and not line.startswith("#")}
        assert dcgm <= fields, dcgm - fields
        assert "DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL" in fields
    assert any(p.crd == "servicemonitors.monitoring.coreos.com" for p in b.prerequisites) == bool(monitors)


def test_monitors_validate_and_a_broken_one_does_not():
    crds.require_crds()
    import jsonschema
    monitor = [r.obj for r in bundle("prod").resources if r.kind == "ServiceMonitor"][0]
    broken = copy.deepcopy(monitor)
    del broken["spec"]["selector"]   # required by the ServiceMonitor CRD
    with pytest.raises(jsonschema.ValidationError):
        crds.validate_cr(broken)


def test_prod_deploy_has_the_monitors():
    folder = ROOT / "deploy" / "prod" / "monitoring"
    kinds = {(d["kind"], d["metadata"]["name"]) for d in (yaml.safe_load(p.read_text()) for p in folder.glob("*.yaml"))}
    assert {("ServiceMonitor", "volcano-scheduler"), ("ServiceMonitor", "dcgm-exporter"),
            ("ConfigMap", "trainstack-dcgm-metrics")} <= kinds
