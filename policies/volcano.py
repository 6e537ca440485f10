"""What the rules need to know about Volcano: where topology constraints live on each kind, the
scheduler and controller configuration (from the chart release or a user's ConfigMap), and which
tiers exist (from the fabric, HyperNodes or label discovery). Facts: reference/volcano.md.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator

import yaml

from .framework import as_dict, as_int, as_list, is_kind, meta, pod_templates

SCHEDULING = "scheduling.volcano.sh"
BATCH = "batch.volcano.sh"
TOPOLOGY = "topology.volcano.sh"
TRAINER = "trainer.kubeflow.org"
NTA = "network-topology-aware"
SCHEDULER_CONF_KEY = "volcano-scheduler.conf"
CONTROLLER_CONF_KEY = "volcano-controller.conf"
MODE_ANNOTATION = "volcano.sh/network-topology-mode"
TIER_ANNOTATION = "volcano.sh/network-topology-highest-tier"
MIN_MEMBER_ANNOTATION = "scheduling.volcano.sh/group-min-member"
SOURCE_LABEL = "volcano.sh/network-topology-source"
RUNTIME_KINDS = ("ClusterTrainingRuntime", "TrainingRuntime")


# --- topology constraints -------------------------------------------------------------------

@dataclass(frozen=True)
class Constraint:
    """One network-topology setting on an object, as written."""

    path: str            # the networkTopology field (or the pod template's annotations)
    scope: str           # job | partition | subgroup | runtime | pod annotations
    mode: str            # hard | soft (anything else counts as hard, as Volcano does)
    tier: Any = None     # highestTierAllowed as written (an int when valid)
    tier_name: Any = None
    tier_path: str = ""  # where the tier is set (for messages)
    name_path: str = ""
    implicit_tier: bool = False   # the runtime CRD defaults highestTierAllowed to 1
    origin: str = ""     # set when inherited, e.g. a TrainJob's runtime: "ClusterTrainingRuntime 'x' at <path>"

    @property
    def hard(self) -> bool:
        return self.mode != "soft"

    @property
    def sets_tier(self) -> bool:
        return self.tier is not None or self.tier_name is not None


def _from_network_topology(nt: dict, path: str, scope: str, implicit_tier: int | None = None) -> Constraint:
    mode = nt.get("mode", "hard")
    tier = nt.get("highestTierAllowed")
    name = nt.get("highestTierName")
    implicit = False
    if tier is None and name is None and implicit_tier is not None:
        tier, implicit = implicit_tier, True
    return Constraint(path=path, scope=scope, mode=str(mode), tier=as_int(tier) if as_int(tier) is not None else tier,
                      tier_name=name, tier_path=f"{path}.highestTierAllowed", name_path=f"{path}.highestTierName",
                      implicit_tier=implicit)


def annotation_tier(value: Any) -> Any:
    """Pod annotations are strings: ``"2"`` is tier 2; anything else is kept as written."""
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            return value
    return as_int(value) if as_int(value) is not None else value


def constraints(obj: dict) -> list[Constraint]:
    """Every topology constraint an object carries, job-level first."""
    spec = as_dict(obj.get("spec"))
    out: list[Constraint] = []
    if is_kind(obj, "Job", BATCH):
        if isinstance(spec.get("networkTopology"), dict):
            out.append(_from_network_topology(spec["networkTopology"], "spec.networkTopology", "job"))
        for i, task in enumerate(as_list(spec.get("tasks"))):
            nt = as_dict(as_dict(as_dict(task).get("partitionPolicy")).get("networkTopology"))
            if nt or isinstance(as_dict(as_dict(task).get("partitionPolicy")).get("networkTopology"), dict):
                out.append(_from_network_topology(nt, f"spec.tasks[{i}].partitionPolicy.networkTopology",
                                                  "partition"))
    elif is_kind(obj, "PodGroup", SCHEDULING):
        if isinstance(spec.get("networkTopology"), dict):
            out.append(_from_network_topology(spec["networkTopology"], "spec.networkTopology", "job"))
        for i, group in enumerate(as_list(spec.get("subGroupPolicy"))):
            if isinstance(as_dict(group).get("networkTopology"), dict):
                out.append(_from_network_topology(group["networkTopology"],
                                                  f"spec.subGroupPolicy[{i}].networkTopology", "subgroup"))
    elif obj.get("kind") in RUNTIME_KINDS:
        nt = as_dict(as_dict(spec.get("podGroupPolicy")).get("volcano")).get("networkTopology")
        if isinstance(nt, dict):   # the CRD stores {} and {mode: soft} with highestTierAllowed: 1
            out.append(_from_network_topology(nt, "spec.podGroupPolicy.volcano.networkTopology", "runtime",
                                              implicit_tier=1))
    for template_path, template in pod_templates(obj):
        notes = as_dict(as_dict(template.get("metadata")).get("annotations"))
        if MODE_ANNOTATION in notes or TIER_ANNOTATION in notes:
            mode = str(notes.get(MODE_ANNOTATION, "hard"))
            base = f"{template_path}.metadata.annotations" if template_path else "metadata.annotations"
            out.append(Constraint(
                path=base, scope="pod annotations", mode=mode if mode in ("hard", "soft") else "hard",
                tier=annotation_tier(notes[TIER_ANNOTATION]) if TIER_ANNOTATION in notes else None,
                tier_path=f"{base}[{TIER_ANNOTATION}]"))
    return out


def uses_volcano_gang(obj: dict) -> bool:
    """Runtimes whose pods form a Volcano PodGroup (Trainer's Volcano plugin)."""
    spec = as_dict(obj.get("spec"))
    return obj.get("kind") in RUNTIME_KINDS and isinstance(as_dict(spec.get("podGroupPolicy")).get("volcano"), dict)


# --- tiers ------------------------------------------------------------------------------------

@dataclass
class Tiers:
    """The tiers Volcano will know: numbers and tierName -> tier(s), with where they came from."""

    numbers: set[int] = field(default_factory=set)
    names: dict[str, set[int]] = field(default_factory=dict)
    sources: list[str] = field(default_factory=list)

    def add(self, tier: int, name: str | None, source: str) -> None:
        self.numbers.add(tier)
        if name:
            self.names.setdefault(name, set()).add(tier)
        if source not in self.sources:
            self.sources.append(source)

    @property
    def known(self) -> bool:
        return bool(self.numbers)

    @property
    def lowest(self) -> int:
        return min(self.numbers)

    @property
    def highest(self) -> int:
        return max(self.numbers)

    def tier_of(self, name: str) -> int | None:
        found = self.names.get(name)
        return max(found) if found else None   # Volcano keeps one; two are reported by hypernode-tree-valid

    def describe(self) -> str:
        named = ", ".join(f"{n} (tier {'/'.join(map(str, sorted(t)))})"
                          for n, t in sorted(self.names.items(), key=lambda kv: (min(kv[1]), kv[0])))
        return named or ", ".join(f"tier {t}" for t in sorted(self.numbers))


def discovery_tiers(entries: Iterable[dict]) -> Iterator[tuple[int, str | None, str]]:
    """Tiers that label/UFM discovery will create: ``(tier, tierName, source)``.

    The label discoverer drops the last (node-level) label and numbers the rest bottom-up from 1;
    each HyperNode's tierName is the label key. UFM creates leaf (tier 1) and spine (tier 2) HyperNodes.
    """
    for entry in enabled_sources(entries):
        source = entry.get("source")
        if source == "ufm":
            yield 1, None, "UFM discovery"
            yield 2, None, "UFM discovery"
        elif source == "label":
            types = as_dict(as_dict(entry.get("config")).get("networkTopologyTypes"))
            for levels in types.values():
                keys = [as_dict(level).get("nodeLabel") for level in as_list(levels)]
                keys = [k for k in keys if isinstance(k, str)]
                for tier, key in enumerate(reversed(keys[:-1]), start=1):
                    yield tier, key, "label discovery"


def tiers_of(objects: Iterable[dict], fabric: Any = None) -> Tiers:
    tiers = Tiers()
    if fabric is not None and getattr(fabric, "switches", None):
        for tier in fabric.tiers:
            tiers.add(tier, fabric.tier_names.get(tier), "the stack's fabric")
    objects = list(objects)
    for obj in objects:
        if is_kind(obj, "HyperNode", TOPOLOGY):
            spec = as_dict(obj.get("spec"))
            tier = as_int(spec.get("tier"))
            if tier is not None:
                name = spec.get("tierName")
                tiers.add(tier, name if isinstance(name, str) else None, "HyperNodes")
    for _, _, entries in discovery_configs(objects, fabric):
        for tier, name, source in discovery_tiers(entries):
            tiers.add(tier, name, source)
    return tiers


# --- scheduler and controller configuration ---------------------------------------------------

def is_volcano_release(obj: dict) -> bool:
    if obj.get("kind") != "Release" or not str(obj.get("apiVersion", "")).startswith("helm.sh/"):
        return False
    chart = str(as_dict(obj.get("spec")).get("chart", ""))
    return chart.rstrip("/").rsplit("/", 1)[-1] == "volcano"


def release_values(obj: dict) -> dict:
    return as_dict(as_dict(obj.get("spec")).get("values"))


def _same_namespace(a: Any, b: Any) -> bool:
    return not a or not b or a == b


@dataclass(frozen=True)
class SchedulerConf:
    """One scheduler configuration Volcano would load."""

    obj: dict
    path: str                 # field holding the conf text
    text: Any                 # the conf as written; None when the chart default is used
    default_conf: str = ""    # which chart default applies when text is None

    @property
    def uses_default(self) -> bool:
        return self.text is None


def scheduler_confs(objects: Iterable[dict]) -> list[SchedulerConf]:
    """Scheduler configurations from Volcano chart releases and from ConfigMaps holding
    ``volcano-scheduler.conf``. A ConfigMap named ``<release>-scheduler-configmap`` replaces the
    one the release renders (it is the same object)."""
    objects = list(objects)
    configmaps = [o for o in objects if is_kind(o, "ConfigMap", "")
                  and SCHEDULER_CONF_KEY in as_dict(o.get("data"))]
    out: list[SchedulerConf] = []
    for obj in objects:
        if not is_volcano_release(obj):
            continue
        name, namespace = meta(obj).get("name"), meta(obj).get("namespace")
        if any(meta(cm).get("name") == f"{name}-scheduler-configmap"
               and _same_namespace(meta(cm).get("namespace"), namespace) for cm in configmaps):
            continue
        custom = as_dict(release_values(obj).get("custom"))
        text = custom.get("scheduler_config_override")
        if text in (None, ""):
            conf_file = str(as_dict(release_values(obj).get("basic")).get("scheduler_config_file", ""))
            out.append(SchedulerConf(obj, "spec.values.custom.scheduler_config_override", None,
                                     conf_file or "config/volcano-scheduler.conf"))
        else:
            out.append(SchedulerConf(obj, "spec.values.custom.scheduler_config_override", text))
    for cm in configmaps:
        out.append(SchedulerConf(cm, f"data.{SCHEDULER_CONF_KEY}", cm["data"][SCHEDULER_CONF_KEY]))
    return out


def parse_conf(text: Any) -> tuple[dict | None, str | None]:
    """``(conf, None)`` or ``(None, what is wrong)`` for a scheduler/controller conf string."""
    if isinstance(text, dict):
        return None, "is a mapping, but the chart writes it verbatim into the ConfigMap: it must be a YAML string"
    if not isinstance(text, str):
        return None, f"is a {type(text).__name__}, expected a YAML string"
    try:
        conf = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        problem = getattr(exc, "problem", None) or "invalid YAML"
        return None, f"is not valid YAML{where}: {problem}"
    if not isinstance(conf, dict):
        return None, "does not hold a mapping with actions and tiers"
    return conf, None


def conf_plugins(conf: dict) -> Iterator[tuple[str, dict]]:
    """``(path inside the conf, plugin)`` for every plugin of every tier."""
    for t, tier in enumerate(as_list(conf.get("tiers"))):
        for p, plugin in enumerate(as_list(as_dict(tier).get("plugins"))):
            if isinstance(plugin, dict):
                yield f"tiers[{t}].plugins[{p}]", plugin


def has_plugin(conf: dict, name: str) -> bool:
    return any(plugin.get("name") == name for _, plugin in conf_plugins(conf))


def discovery_configs(objects: Iterable[dict], fabric: Any = None) -> list[tuple[dict | None, str, list]]:
    """``(object, path, networkTopologyDiscovery entries)`` from releases, controller ConfigMaps
    and the fabric (label-defined fabrics configure discovery instead of rendering HyperNodes)."""
    out: list[tuple[dict | None, str, list]] = []
    seen_release_conf = False
    for obj in objects:
        if is_volcano_release(obj):
            override = as_dict(release_values(obj).get("custom")).get("controller_config_override")
            entries = as_dict(override).get("networkTopologyDiscovery")
            if isinstance(entries, list):
                out.append((obj, "spec.values.custom.controller_config_override.networkTopologyDiscovery", entries))
                seen_release_conf = True
        elif is_kind(obj, "ConfigMap", "") and CONTROLLER_CONF_KEY in as_dict(obj.get("data")):
            conf, _ = parse_conf(obj["data"][CONTROLLER_CONF_KEY])
            entries = as_dict(conf).get("networkTopologyDiscovery")
            if isinstance(entries, list):
                out.append((obj, f"data.{CONTROLLER_CONF_KEY}", entries))
    discovery = getattr(fabric, "discovery", None) if fabric is not None else None
    if isinstance(discovery, list) and discovery and not seen_release_conf:
        # The fabric's own entries are what the stack intends to run: enabled unless it says otherwise.
        out.append((None, "trainstack:fabric", [{"enabled": True, **as_dict(e)} for e in discovery]))
    return out


def enabled_sources(entries: Iterable[dict]) -> list[dict]:
    """Discovery entries Volcano acts on (``enabled`` must be true)."""
    return [e for e in map(as_dict, entries) if e.get("enabled") is True or str(e.get("enabled")).lower() == "true"]


def expected_scheduler_name(objects: Iterable[dict]) -> str:
    """The name pods must use: the chart's custom.scheduler_name (default volcano)."""
    for obj in objects:
        if is_volcano_release(obj):
            name = as_dict(release_values(obj).get("custom")).get("scheduler_name")
            if isinstance(name, str) and name:
                return name
    return "volcano"
