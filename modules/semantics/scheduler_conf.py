"""The Volcano scheduler and controller configuration in effect: the chart release's values or a
user ConfigMap that replaces the one the release renders. Rules and the simulator read it here.
Facts: Volcano v1.15.1's scheduler configuration and its network-topology-aware plugin.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Iterator

import yaml

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
    try:
        conf = yamlio.safe_load(text, "the conf")
    except InputError as err:   # beyond the bounds every YAML reader keeps (depth, aliases, integers)
        return None, f"is not valid YAML: {err.message}"
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


# --- the conf a scheduler runs, from any documented input ------------------------------------
# One reader for `simulate`'s placement and its what-if (`--scheduler-conf`, a snapshot's
# ConfigMaps, a stack's release): the raw conf, the ConfigMap's YAML, a List of objects, or the
# chart's values file.

CHART_TAG = "v1.15.1"
# The chart's own conf at the pinned tag (installer/helm/chart/volcano/config/volcano-scheduler.conf),
# which the release's ConfigMap holds when custom.scheduler_config_override is unset.
CHART_DEFAULT_CONF = """actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
    enablePreemptable: false
  - name: conformance
- plugins:
  - name: overcommit
  - name: drf
    enablePreemptable: false
  - name: predicates
  - name: proportion
  - name: nodeorder
  - name: binpack
"""
CHART_DEFAULT_SOURCE = f"the Volcano chart's default volcano-scheduler.conf ({CHART_TAG})"
HELM_RELEASE = "meta.helm.sh/release-name"
HELM_NAMESPACE = "meta.helm.sh/release-namespace"
DEFAULT_RELEASE, DEFAULT_NAMESPACE = "volcano", "volcano-system"
CONF_FLAG = "--scheduler-conf="


@dataclass(frozen=True)
class ConfRead:
    """A scheduler conf read from an input: the parsed conf, its text, where it came from, and what
    was passed over on the way (ConfigMaps the scheduler does not mount)."""

    conf: dict
    text: str
    source: str
    notes: tuple[str, ...] = ()


def require_runnable(conf: Any, shown: str, path: str) -> dict:
    """The conf when Volcano could run it: a mapping with at least one action and one tier that
    lists a plugin; otherwise an input error (a conf of nothing is never an answer)."""
    if not isinstance(conf, dict):
        raise InputError(shown, path, "expected a scheduler conf (a mapping with actions and tiers)")
    actions = conf.get("actions")
    if not isinstance(actions, str) or not [a for a in actions.split(",") if a.strip()]:
        raise InputError(shown, f"{path}: actions", "expected a comma-separated string of actions such as "
                         f"\"enqueue, allocate, backfill\", got {actions!r}")
    if not any(True for _ in conf_plugins(conf)):
        raise InputError(shown, f"{path}: tiers", "expected tiers with plugins (- plugins: [{name: priority}, ...]); "
                         "this conf lists none")
    return conf


def _parsed(text: Any, shown: str, path: str) -> dict:
    conf, problem = parse_conf(text)
    if conf is None:
        raise InputError(shown, path, f"the scheduler configuration {problem}")
    return require_runnable(conf, shown, path)


def _configmap_text(cm: dict, shown: str, where: str) -> str:
    text = as_dict(cm.get("data")).get(SCHEDULER_CONF_KEY)
    if not isinstance(text, str):
        raise InputError(shown, where, f"the ConfigMap has no {SCHEDULER_CONF_KEY} key")
    return text


def _name_of(obj: dict) -> str:
    m = meta(obj)
    return f"{m.get('namespace')}/{m.get('name')}" if m.get("namespace") else str(m.get("name"))


def _mounted_by_deployments(objects: list[dict]) -> list[tuple[Any, str]]:
    """(namespace, ConfigMap name) of every configMap volume of a Deployment whose container runs
    with ``--scheduler-conf`` (the vc-scheduler): what the scheduler actually reads."""
    out = []
    for obj in objects:
        if not is_kind(obj, "Deployment", "apps"):
            continue
        pod = as_dict(as_dict(as_dict(obj.get("spec")).get("template")).get("spec"))
        args = [str(a) for c in as_list(pod.get("containers")) for a in as_list(as_dict(c).get("args"))
                + as_list(as_dict(c).get("command"))]
        if not any(a.startswith(CONF_FLAG) or a == CONF_FLAG.rstrip("=") for a in args):
            continue
        for volume in as_list(pod.get("volumes")):
            name = as_dict(as_dict(volume).get("configMap")).get("name")
            if isinstance(name, str):
                out.append((meta(obj).get("namespace"), name))
    return out


def mounted_conf(objects: Iterable[dict]) -> tuple[dict | None, list[str]]:
    """The ConfigMap holding ``volcano-scheduler.conf`` that the scheduler mounts, and notes on the
    ones passed over. In order: the ConfigMap a vc-scheduler Deployment among the objects mounts;
    ``<release>-scheduler-configmap`` in its release's namespace (Helm's release annotations);
    the default release's ``volcano-scheduler-configmap`` (in volcano-system first); any other
    ``*-scheduler-configmap``. Others (a ``...-backup`` copy) are never read."""
    objects = [o for o in objects if isinstance(o, dict)]
    cms = [o for o in objects if is_kind(o, "ConfigMap", "") and SCHEDULER_CONF_KEY in as_dict(o.get("data"))]
    chosen: dict | None = None
    for namespace, name in _mounted_by_deployments(objects):
        chosen = next((c for c in cms if meta(c).get("name") == name
                       and _same_namespace(meta(c).get("namespace"), namespace)), None)
        if chosen is not None:
            break
    if chosen is None:
        chosen = next((c for c in cms if annotations_of(c).get(HELM_RELEASE)
                       and meta(c).get("name") == f"{annotations_of(c)[HELM_RELEASE]}-scheduler-configmap"
                       and _same_namespace(meta(c).get("namespace"), annotations_of(c).get(HELM_NAMESPACE))), None)
    if chosen is None:
        default = [c for c in cms if meta(c).get("name") == f"{DEFAULT_RELEASE}-scheduler-configmap"]
        default.sort(key=lambda c: meta(c).get("namespace") != DEFAULT_NAMESPACE)
        chosen = default[0] if default else None
    if chosen is None:
        chosen = next((c for c in cms if str(meta(c).get("name", "")).endswith("-scheduler-configmap")), None)
    notes = [f"ConfigMap {_name_of(c)} holds a {SCHEDULER_CONF_KEY} that the scheduler does not mount; not read"
             + (f" (the scheduler's is {_name_of(chosen)})" if chosen is not None else "")
             for c in cms if c is not chosen]
    return chosen, notes


def passed_over(objects: Iterable[dict]) -> tuple[str, ...]:
    """The notes on ConfigMaps holding a conf the scheduler does not mount (``mounted_conf``), for a
    caller that found no conf to read among ``objects``: a copy the scheduler never reads is said,
    not silently left out."""
    return tuple(mounted_conf(objects)[1])


def annotations_of(obj: dict) -> dict:
    return as_dict(meta(obj).get("annotations"))


def _values_conf(values: dict, shown: str, path: str) -> tuple[dict, str, str]:
    override = as_dict(values.get("custom")).get("scheduler_config_override")
    if override not in (None, ""):
        return _parsed(override, shown, f"{path}custom.scheduler_config_override"), str(override), \
            f"custom.scheduler_config_override of {shown}"
    conf_file = str(as_dict(values.get("basic")).get("scheduler_config_file") or "config/volcano-scheduler.conf")
    if conf_file != "config/volcano-scheduler.conf":
        raise InputError(shown, f"{path}basic.scheduler_config_file", f"only the chart's default conf file "
                         f"(config/volcano-scheduler.conf) is known here, got {conf_file!r}; give the conf itself")
    default = chart_default()
    return default.conf, default.text, default.source


def read_conf_text(text: str, shown: str) -> ConfRead:
    """``--scheduler-conf FILE``: the conf itself, the ``volcano-scheduler-configmap`` ConfigMap's
    YAML (``kubectl get configmap -o yaml``), a List holding it (the mounted one is taken), or the
    chart's values file (``custom.scheduler_config_override``, else the chart's default conf)."""
    try:
        parsed = yamlio.safe_load(text, shown)
    except yaml.YAMLError:
        parsed = None            # parse_conf says where
    if isinstance(parsed, dict) and parsed.get("kind") == "ConfigMap":
        conf_text = _configmap_text(parsed, shown, "data")
        return ConfRead(_parsed(conf_text, shown, f"data.{SCHEDULER_CONF_KEY}"), conf_text,
                        f"ConfigMap {_name_of(parsed)} in {shown}")
    if isinstance(parsed, dict) and parsed.get("kind") == "List":
        items = [i for i in as_list(parsed.get("items")) if isinstance(i, dict)]
        found = from_objects(items, shown)
        if found is None:
            raise InputError(shown, "items", f"no ConfigMap holding {SCHEDULER_CONF_KEY}")
        return found
    if isinstance(parsed, dict) and "actions" not in parsed and "tiers" not in parsed \
            and ("custom" in parsed or "basic" in parsed):
        conf, conf_text, source = _values_conf(parsed, shown, "")
        return ConfRead(conf, conf_text, source)
    return ConfRead(_parsed(text, shown, SCHEDULER_CONF_KEY), text, shown)


def from_objects(objects: Iterable[dict], shown: str) -> ConfRead | None:
    """The conf among a snapshot's (or a stack's) objects: a Volcano release's (or the ConfigMap
    replacing it), else the ConfigMap the scheduler mounts; None when there is none. A conf that
    does not parse or runs nothing is an input error naming the object."""
    objects = [o for o in objects if isinstance(o, dict)]
    if any(is_volcano_release(o) for o in objects):
        found = conf_in_effect(objects)
        if found is not None:
            where = f"{shown}: {found.obj.get('kind')} {_name_of(found.obj)}"
            if found.uses_default:
                if found.default_conf not in ("", "config/volcano-scheduler.conf"):
                    raise InputError(where, "spec.values.basic.scheduler_config_file",
                                     f"only the chart's default conf file is known here, got {found.default_conf!r}")
                return chart_default()
            return ConfRead(_parsed(found.text, where, found.path), str(found.text),
                            f"{found.path} of {found.obj.get('kind')} {_name_of(found.obj)}")
    chosen, notes = mounted_conf(objects)
    if chosen is None:
        return None
    where = f"{shown}: ConfigMap {_name_of(chosen)}"
    conf_text = _configmap_text(chosen, where, "data")
    return ConfRead(_parsed(conf_text, where, f"data.{SCHEDULER_CONF_KEY}"), conf_text,
                    f"ConfigMap {_name_of(chosen)}", tuple(notes))


def chart_default() -> ConfRead:
    """The Volcano chart's own conf at the pinned tag (``config/volcano-scheduler.conf``)."""
    return ConfRead(yaml.safe_load(CHART_DEFAULT_CONF), CHART_DEFAULT_CONF, CHART_DEFAULT_SOURCE)
