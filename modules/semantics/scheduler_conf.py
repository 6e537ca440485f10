"""The Volcano scheduler and controller configuration in effect: the chart release's values or a
user ConfigMap that replaces the one the release renders. Rules and the simulator read it here.
Facts: reference/volcano.md §3-4.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Iterator

from modules.core import yamlio
from modules.core.errors import InputError

from .shapes import as_dict, as_list, is_kind, meta

SCHEDULER_CONF_KEY = "volcano-scheduler.conf"
CONTROLLER_CONF_KEY = "volcano-controller.conf"


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


def conf_in_effect(objects: Iterable[dict]) -> SchedulerConf | None:
    """The scheduler conf Volcano runs with: a user ConfigMap holding ``volcano-scheduler.conf``
    (named ``<release>-scheduler-configmap`` it replaces the release's own), else the release's
    ``custom.scheduler_config_override``, else the chart default (``text`` None); None when nothing
    installs Volcano."""
    objects = list(objects)
    confs = scheduler_confs(objects)
    for release in (o for o in objects if is_volcano_release(o)):
        replaced = f"{meta(release).get('name')}-scheduler-configmap"
        for conf in confs:
            if conf.obj is release or (not is_volcano_release(conf.obj) and meta(conf.obj).get("name") == replaced
                                       and _same_namespace(meta(conf.obj).get("namespace"),
                                                           meta(release).get("namespace"))):
                return conf
    return confs[0] if confs else None


def parse_conf(text: Any) -> tuple[dict | None, str | None]:
    """``(conf, None)`` or ``(None, what is wrong)`` for a scheduler/controller conf string."""
    if isinstance(text, dict):
        return None, "is a mapping, but the chart writes it verbatim into the ConfigMap: it must be a YAML string"
    if not isinstance(text, str):
        return None, f"is a {type(text).__name__}, expected a YAML string"
    try:   # yamlio's bounds: nesting, aliases, integers of at most 30 digits
        conf = yamlio.loads(text, "the conf")
    except InputError as exc:
        where = f" ({exc.path})" if exc.path.startswith("line") else ""
        return None, f"is not valid YAML{where}: {exc.message.removeprefix('invalid YAML: ')}"
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
