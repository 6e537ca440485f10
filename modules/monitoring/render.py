"""PrometheusRules per stack: one object per rule group, labelled for kube-prometheus-stack.

The groups are built once (``rule_groups``) as the plain ``groups:`` document that promtool reads;
each PrometheusRule's ``spec`` is one of those groups, unchanged. Thresholds come from the stack:
probe bandwidth from the fabric's per-tier links, claims from `trainstack:storage`, namespaces from
`trainstack:trainingNamespaces`, GPUs per task from the fabric's node pools.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from modules.autoscaling import render as autoscaling
from modules.core.bundle import Prerequisite, Resource
from modules.core.context import RenderContext
from modules.probe import render as probe
from modules.probe import measure

MODULE = "monitoring"
API_VERSION = "monitoring.coreos.com/v1"
# dcgm-exporter renamed Hostname to hostname (NVIDIA/dcgm-exporter #655); group by both.
GPU_LABELS = "Hostname, hostname, gpu, UUID, modelName"
NVLINK_SOFT = ("CRC_FLIT", "CRC_DATA", "REPLAY")   # DCGM_FI_DEV_NVLINK_<x>_ERROR_COUNT_TOTAL counters
BANDWIDTH_BOUND_BYTES = 256 << 20   # below this the peak busbw is latency-bound, not the link's
# Metrics volcano-controllers serves (pkg/controllers/metrics, job/state/metrics.go); the scheduler serves the rest.
VOLCANO_METRIC = re.compile(r"\bvolcano_[a-z_]+")
CONTROLLER_METRIC = re.compile(r"volcano_(queue_pod_group_|job_(completed|failed)_phase_count|controller_)")


@dataclass(frozen=True)
class Alert:
    """One Prometheus alert: its runbook page, severity and text."""
    page: str          # docs/runbooks/<page>.md
    severity: str
    summary: str
    description: str


ALERTS: dict[str, Alert] = {
    "FabricProbeBandwidthLow": Alert(
        "fabric-probe-bandwidth-low", "warning",
        "Fabric probe busbw on tier {{ $labels.tier }} is below its threshold",
        "The last probe of tier {{ $labels.tier }} peaked at {{ $value | printf \"%.1f\" }} GB/s busbw, below the "
        "threshold derived from the stack's link bandwidth. Jobs crossing this tier run slower."),
    "FabricProbeResultsStale": Alert(
        "fabric-probe-results-stale", "warning",
        "No recent fabric probe results for tier {{ $labels.tier }}",
        "The probe of tier {{ $labels.tier }} has not reported successfully within the expected interval; "
        "bandwidth alerts for it are blind."),
    "GPUXidCritical": Alert(
        "gpu-xid-critical", "critical",
        "GPU {{ $labels.gpu }} on {{ $labels.hostname }}{{ $labels.Hostname }} reported XID {{ $value }}",
        "The last XID of this GPU is one that needs the node drained and the GPU reset or replaced. The "
        "gauge holds the last XID code until another XID occurs, so the alert stays until the GPU is reset."),
    "GPUXidError": Alert(
        "gpu-xid-error", "warning",
        "GPU {{ $labels.gpu }} on {{ $labels.hostname }}{{ $labels.Hostname }} reported XID {{ $value }}",
        "A new XID appeared within the last hour. Codes outside the critical list are usually application "
        "faults (for example 13, 31, 43); repeated ones point at a bad job or a failing GPU."),
    "GPUNVLinkErrors": Alert(
        "gpu-nvlink-errors", "warning",
        "NVLink CRC/replay errors rising on GPU {{ $labels.gpu }} of {{ $labels.hostname }}{{ $labels.Hostname }}",
        "{{ $value | printf \"%.0f\" }} NVLink CRC or replay errors in 15 minutes. The link still works but "
        "retransmits; all-reduce bandwidth inside the node drops."),
    "GPUNVLinkRecoveryErrors": Alert(
        "gpu-nvlink-recovery-errors", "critical",
        "NVLink recovery errors on GPU {{ $labels.gpu }} of {{ $labels.hostname }}{{ $labels.Hostname }}",
        "An NVLink had to be recovered {{ $value | printf \"%.0f\" }} times in 15 minutes; NCCL jobs on this "
        "node are likely to hang or fail."),
    "VolcanoTasksUnschedulable": Alert(
        "volcano-tasks-unschedulable", "warning",
        "Volcano job {{ $labels.job_id }} has unschedulable tasks",
        "{{ $value }} tasks of job {{ $labels.job_id }} could not be scheduled for a while."),
    "VolcanoJobPendingOnTopology": Alert(
        "volcano-job-pending-on-topology", "warning",
        "Volcano job {{ $labels.job_id }} waits although the cluster has idle GPUs",
        "Job {{ $labels.job_id }} needs about {{ $value }} GPUs that are idle in the cluster, yet it stays "
        "unschedulable: the free GPUs are spread over HyperNodes its networkTopology (hard, highest tier "
        "allowed) does not let it span."),
    "TrainingPodRestarting": Alert(
        "training-pod-restarting", "warning",
        "Training pod {{ $labels.namespace }}/{{ $labels.pod }} keeps restarting",
        "{{ $value | printf \"%.0f\" }} container restarts recently. A gang-scheduled job usually restarts "
        "every rank when one fails (NCCL errors, OOM, a bad node)."),
    "TrainingClaimNearlyFull": Alert(
        "training-claim-nearly-full", "warning",
        "Claim {{ $labels.namespace }}/{{ $labels.persistentvolumeclaim }} is {{ $value | humanizePercentage }} full",
        "A shared training-data or checkpoint claim is nearly full; checkpoints will fail to write."),
}


def runbook_url_for(values: dict, alert: str) -> str:
    """``<runbookBaseUrl>/<page>.md`` for a stack's validated values."""
    return f"{values[MODULE]['runbookBaseUrl'].rstrip('/')}/{ALERTS[alert].page}.md"


def runbook_url(ctx: RenderContext, alert: str) -> str:
    return runbook_url_for(ctx.stack.values, alert)


def rule(ctx: RenderContext, alert: str, expr: str, for_: str, labels: dict | None = None) -> dict:
    meta = ALERTS[alert]
    return {
        "alert": alert,
        "expr": expr,
        "for": for_,
        "labels": {"severity": meta.severity, **ctx.section(MODULE)["labels"], **(labels or {})},
        "annotations": {"summary": meta.summary, "description": meta.description,
                        "runbook_url": runbook_url(ctx, alert)},
    }


def _regex(values) -> str:
    """An alternation of literal values inside a double-quoted PromQL string (RE2 escapes, then
    the string's own backslash escaping)."""
    def literal(value: str) -> str:
        return "".join("\\\\" + c if c in ".^$*+?()[]{}|\\" else c for c in value)
    return "|".join(literal(str(v)) for v in values)


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


# --- groups -------------------------------------------------------------------------------------

def probe_thresholds(ctx: RenderContext) -> dict[str, float]:
    """Tier name -> minimum peak busbw in GB/s (an override, else fraction x the link bandwidth)."""
    cfg = ctx.section(MODULE)["probe"]
    tiers = probe.probed_tiers(ctx)
    names = [t.name for t in probe.available_tiers(ctx.fabric)]
    for name in cfg["minBusbwGBps"]:
        if name not in names:
            raise ctx.expected(f"monitoring.probe.minBusbwGBps.{name}",
                               "a tier of the fabric: " + ", ".join(names), name)
    return {t.name: float(cfg["minBusbwGBps"].get(t.name, round(cfg["bandwidthFraction"]
                                                                  * ctx.fabric.link(t.number).bandwidth_gbps, 1)))
            for t in tiers}


def probe_group(ctx: RenderContext) -> dict | None:
    if not ctx.section("probe")["enabled"]:
        return None
    cfg = ctx.section(MODULE)["probe"]
    sizes = measure.parse_sizes(ctx.section("probe")["sizes"])
    if max(sizes) < BANDWIDTH_BOUND_BYTES:
        ctx.warn(f"{ctx.stack.file}: trainstack:probe.sizes: the largest size is {measure.format_size(max(sizes))}; "
                 f"the bandwidth alerts compare peak busbw, which small messages do not reach "
                 f"(probe up to 256MiB or more)")
    rules = []
    for tier, threshold in probe_thresholds(ctx).items():
        selector = f'{{collective="{cfg["collective"]}",tier={_quote(tier)}}}'
        rules.append(rule(ctx, "FabricProbeBandwidthLow",
                          f"max by (tier) (trainstack_probe_busbw_gbps{selector}) < {threshold:g}", cfg["for"],
                          {"tier": tier, "threshold_gbps": f"{threshold:g}"}))
    if ctx.section("probe")["schedule"]:
        stale = _seconds(cfg["staleAfter"])
        for tier in probe_thresholds(ctx):
            metric = f"trainstack_probe_last_success_timestamp_seconds{{tier={_quote(tier)}}}"
            rules.append(rule(ctx, "FabricProbeResultsStale", f"time() - max by (tier) ({metric}) > {stale}", "0m",
                              {"tier": tier, "reason": "stale"}))
            rules.append(rule(ctx, "FabricProbeResultsStale", f"absent({metric})", cfg["staleAfter"],
                              {"tier": tier, "reason": "missing"}))
    return {"name": "trainstack-fabric-probe", "rules": rules}


def gpu_group(ctx: RenderContext) -> dict | None:
    cfg = ctx.section(MODULE)["gpu"]
    if not cfg["enabled"]:
        return None
    xid = "DCGM_FI_DEV_XID_ERRORS"
    critical = " or ".join(f"{xid} == {code}" for code in sorted(cfg["criticalXids"]))
    # increase() drops the metric name; tag each counter so their series stay distinct before summing
    nvlink_soft = " or ".join(f'label_replace(increase(DCGM_FI_DEV_NVLINK_{c}_ERROR_COUNT_TOTAL[15m]), '
                              f'"counter", "{c.lower()}", "", "")' for c in NVLINK_SOFT)
    return {"name": "trainstack-gpu", "rules": [
        # The XID field is a gauge holding the last XID code, not a count.
        rule(ctx, "GPUXidCritical", f"max by ({GPU_LABELS}) ({critical})", "0m"),
        rule(ctx, "GPUXidError",
             f"max by ({GPU_LABELS}) ({xid} > 0 and changes({xid}[1h]) > 0 unless ({critical}))", "0m"),
        rule(ctx, "GPUNVLinkErrors", f'sum by ({GPU_LABELS}) ({nvlink_soft}) > {cfg["nvlinkErrorsPer15m"]}', "0m"),
        rule(ctx, "GPUNVLinkRecoveryErrors",
             f"sum by ({GPU_LABELS}) (increase(DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL[15m])) > 0", "0m"),
    ]}


def gpu_resource_label(resource: str) -> str:
    """kube-state-metrics sanitises resource names: nvidia.com/gpu -> nvidia_com_gpu."""
    return re.sub(r"[^a-zA-Z0-9_]", "_", resource)


def scheduling_group(ctx: RenderContext) -> dict:
    cfg = ctx.section(MODULE)["scheduling"]
    pools = [p for p in ctx.fabric.pools.values() if p.gpus]
    rules = [rule(ctx, "VolcanoTasksUnschedulable",
                  "sum by (job_id) (volcano_unschedule_task_count) > 0", cfg["unschedulableFor"])]
    if pools:
        per_task = cfg["gpusPerTask"] or max(p.gpus for p in pools)
        resources = sorted({gpu_resource_label(p.gpu_resource) for p in pools})
        res = f'resource=~"{_regex(resources)}"' if len(resources) > 1 else f'resource="{resources[0]}"'
        # `or vector(0)`: with no GPU pod running the requests sum is empty, and so would be the alert.
        idle = (f"sum(kube_node_status_allocatable{{{res}}}) - (sum(kube_pod_container_resource_requests{{{res}}}"
                f' and on (namespace, pod) (kube_pod_status_phase{{phase="Running"}} == 1)) or vector(0))')
        rules.append(rule(ctx, "VolcanoJobPendingOnTopology",
                          f"(sum by (job_id) (volcano_unschedule_task_count) > 0) * {per_task}"
                          f" <= on () group_left () ({idle})", cfg["topologyPendingFor"]))
    return {"name": "trainstack-scheduling", "rules": rules}


def training_group(ctx: RenderContext) -> dict:
    cfg = ctx.section(MODULE)["training"]
    namespaces = ctx.stack.values["trainingNamespaces"]
    rules = [rule(ctx, "TrainingPodRestarting",
                  f'sum by (namespace, pod) (increase(kube_pod_container_status_restarts_total'
                  f'{{namespace=~"{_regex(namespaces)}"}}'
                  f'[{cfg["restartWindow"]}])) >= {cfg["restarts"]}', "0m")]
    claims = shared_claims(ctx)
    if claims:
        def select(metric: str) -> str:
            parts = [f'{metric}{{namespace="{ns}",persistentvolumeclaim=~"{_regex(names)}"}}'
                     for ns, names in claims.items()]
            # kubelets on every node mounting a claim report it; take one value per claim
            return f"max by (namespace, persistentvolumeclaim) ({' or '.join(parts)})"
        rules.append(rule(ctx, "TrainingClaimNearlyFull",
                          f"{select('kubelet_volume_stats_used_bytes')}"
                          f" / {select('kubelet_volume_stats_capacity_bytes')}"
                          f" > {cfg['claimFullRatio']:g}", "15m"))
    return {"name": "trainstack-training", "rules": rules}


def shared_claims(ctx: RenderContext) -> dict[str, list[str]]:
    """Namespace -> names of the stack's shared claims (training data, checkpoints)."""
    out: dict[str, list[str]] = {}
    default_ns = ctx.stack.values["trainingNamespaces"][0]
    for claim in ctx.section("storage")["claims"]:
        if claim.get("shared", True):
            out.setdefault(claim.get("namespace") or default_ns, []).append(claim["name"])
    return {ns: sorted(names) for ns, names in sorted(out.items())}


def rule_groups(ctx: RenderContext) -> list[dict]:
    """The ``groups:`` document: what the PrometheusRules hold and what promtool checks."""
    groups = [probe_group(ctx), gpu_group(ctx), scheduling_group(ctx), training_group(ctx)]
    return [g for g in groups if g and g["rules"]]


def _seconds(duration: str) -> int:
    units = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "y": 31536000}
    return int(sum(int(n) * units[u] for n, u in re.findall(r"([0-9]+)(ms|[smhdwy])", duration)))


# kube-prometheus-stack (prometheus-operator) serves PrometheusRules; trainstack does not install the
# cluster's Prometheus, so the rules wait on the CRD being there instead of on a release.
PROMETHEUS_RULES_CRD = Prerequisite(MODULE, crd="prometheusrules.monitoring.coreos.com",
                                    installed_by="kube-prometheus-stack (prometheus-operator)",
                                    serves=("monitoring.coreos.com",))


SERVICE_MONITORS_CRD = Prerequisite(MODULE, crd="servicemonitors.monitoring.coreos.com",
                                    installed_by="kube-prometheus-stack (prometheus-operator)")

# dcgm-exporter counters: the DCGM field names and Prometheus types of the exporter's default CSV,
# plus the NVLink error counters the GPU alerts read, which that CSV leaves commented out. The help
# texts are ours (the exporter publishes each field's help as the metric's HELP line).
DCGM_COUNTERS = (
    ("DCGM_FI_DEV_SM_CLOCK", "gauge", "Streaming multiprocessor clock, MHz."),
    ("DCGM_FI_DEV_MEM_CLOCK", "gauge", "GPU memory clock, MHz."),
    ("DCGM_FI_DEV_MEMORY_TEMP", "gauge", "GPU memory temperature, degrees Celsius."),
    ("DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU die temperature, degrees Celsius."),
    ("DCGM_FI_DEV_POWER_USAGE", "gauge", "Power the board draws now, watts."),
    ("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "counter", "Energy used since the driver loaded, millijoules."),
    ("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "counter", "PCIe packets the link had to resend, since boot."),
    ("DCGM_FI_DEV_GPU_UTIL", "gauge", "Share of time a kernel ran on the GPU, percent."),
    ("DCGM_FI_DEV_MEM_COPY_UTIL", "gauge", "Share of time GPU memory was read or written, percent."),
    ("DCGM_FI_DEV_ENC_UTIL", "gauge", "Video encoder busy time, percent."),
    ("DCGM_FI_DEV_DEC_UTIL", "gauge", "Video decoder busy time, percent."),
    ("DCGM_FI_DEV_XID_ERRORS", "gauge", "Code of the most recent XID error the driver reported."),
    ("DCGM_FI_DEV_FB_FREE", "gauge", "GPU memory not in use, MiB."),
    ("DCGM_FI_DEV_FB_USED", "gauge", "GPU memory in use, MiB."),
    ("DCGM_FI_DEV_FB_RESERVED", "gauge", "GPU memory the driver holds back, MiB."),
    ("DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", "counter", "NVLink traffic summed over every lane."),
    *((f"DCGM_FI_DEV_NVLINK_{c}_ERROR_COUNT_TOTAL", "counter", f"NVLink {c.lower()} errors, summed over links.")
      for c in (*NVLINK_SOFT, "RECOVERY")),
    ("DCGM_FI_DEV_VGPU_LICENSE_STATUS", "gauge", "Whether the vGPU licence is valid."),
    ("DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "counter", "Memory rows remapped after uncorrectable errors."),
    ("DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", "counter", "Memory rows remapped after correctable errors."),
    ("DCGM_FI_DEV_ROW_REMAP_FAILURE", "gauge", "1 when a memory row could not be remapped."),
    ("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "gauge", "Fraction of time the graphics or compute engine was busy."),
    ("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "gauge", "Fraction of cycles the tensor cores were busy."),
    ("DCGM_FI_PROF_DRAM_ACTIVE", "gauge", "Fraction of cycles the memory interface moved data."),
    ("DCGM_FI_PROF_PCIE_TX_BYTES", "gauge", "PCIe bytes sent per second."),
    ("DCGM_FI_PROF_PCIE_RX_BYTES", "gauge", "PCIe bytes received per second."),
    ("DCGM_FI_DRIVER_VERSION", "label", "NVIDIA driver version, as a label."),
)


def dcgm_counters_csv() -> str:
    lines = ["# DCGM field, Prometheus metric type, help (rendered by trainstack: the exporter's default",
             "# counters plus the NVLink error counters its alerts read)"]
    return "\n".join(lines + [f"{f}, {t}, {h}" for f, t, h in DCGM_COUNTERS]) + "\n"


def _monitor(ctx: RenderContext, name: str, namespace: str, selector: dict, endpoint: dict) -> Resource:
    cfg = ctx.section(MODULE)
    meta = ctx.metadata(MODULE, name, cfg["namespace"], labels={"release": cfg["release"]})
    spec = {"namespaceSelector": {"matchNames": [namespace]}, "selector": {"matchLabels": dict(selector)},
            "endpoints": [endpoint]}
    return Resource(MODULE, {"apiVersion": API_VERSION, "kind": "ServiceMonitor", "metadata": meta, "spec": spec})


def monitors(ctx: RenderContext, groups: list[dict]) -> list[Resource]:
    """The monitors the rendered alerts' metrics need (alerts on metrics nobody scrapes never fire)."""
    cfg = ctx.section(MODULE)["scrape"]
    text = " ".join(r["expr"] for g in groups for r in g["rules"])
    # The HPAs' metrics reach the adapter through the same Prometheus.
    text += " " + " ".join(autoscaling.METRICS[name].series for name in autoscaling.used_metrics(ctx))
    volcano_metrics = set(VOLCANO_METRIC.findall(text))
    from_controllers = {m for m in volcano_metrics if CONTROLLER_METRIC.match(m)}
    out = []
    namespace = ctx.section("volcano")["namespace"]
    if cfg["volcanoScheduler"] and volcano_metrics - from_controllers:
        out.append(_monitor(ctx, "volcano-scheduler", namespace, {"app": "volcano-scheduler"},
                            {"port": "metrics", "path": "/metrics", "interval": "30s"}))
    if cfg["volcanoControllers"] and from_controllers:
        out.append(_monitor(ctx, "volcano-controllers", namespace, {"app": "volcano-controller"},
                            {"port": "metrics", "path": "/metrics", "interval": "30s"}))
    dcgm = cfg["dcgmExporter"]
    if "DCGM_" in text:
        if dcgm["serviceMonitor"]:
            honor = bool(ctx.section("autoscaling")["adapter"]["dcgmHonorLabels"])
            out.append(_monitor(ctx, "dcgm-exporter", dcgm["namespace"], dcgm["selector"],
                                {"port": dcgm["port"], "path": "/metrics", "interval": "30s", "honorLabels": honor}))
        if dcgm["countersConfigMap"]:
            meta = ctx.metadata(MODULE, dcgm["countersConfigMap"], dcgm["namespace"])
            out.append(Resource(MODULE, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta,
                                         "data": {"dcgm-metrics.csv": dcgm_counters_csv()}}))
    return out


def render(ctx: RenderContext) -> list[Resource | Prerequisite]:
    cfg = ctx.section(MODULE)
    if not cfg["enabled"]:
        return []
    out: list[Resource | Prerequisite] = [PROMETHEUS_RULES_CRD]
    groups = rule_groups(ctx)
    for group in groups:
        meta = ctx.metadata(MODULE, group["name"], cfg["namespace"], labels={"release": cfg["release"]})
        out.append(Resource(MODULE, {"apiVersion": API_VERSION, "kind": "PrometheusRule", "metadata": meta,
                                     "spec": {"groups": [group]}}))
    extra = monitors(ctx, groups)
    if any(r.kind == "ServiceMonitor" for r in extra):
        out.append(SERVICE_MONITORS_CRD)
    return out + extra
