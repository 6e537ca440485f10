"""How Volcano's eviction actions choose victims through the scheduler conf's tiers (Volcano
v1.15.1, ``pkg/scheduler/framework/session_plugins.go``): one model of the tier walk that the
volcano renderer (where the share-aware plugin goes), the ``scheduler-plugin-enabled`` rule (a conf
whose walk never reaches a share-aware plugin) and the simulator's eviction model read.

The walk, the same for ``Preemptable`` (preempt), ``Reclaimable`` (reclaim) and ``UnifiedEvictable``
(gangpreempt, gangreclaim): tiers in order; in a tier every plugin that registered a victim filter
for the walk (and, for preempt and reclaim, has ``enablePreemptable`` / ``enableReclaimable`` unset
or true) filters the candidates; the victims are the intersection of what they return; a plugin
returning nothing empties the tier's answer and the walk moves to the next tier; the first tier
with victims decides and later tiers are never asked. So a share-aware plugin (capacity, proportion)
protects queues below their deserved or guarantee only when it sits in the tier that decides.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

from modules.core.vocabulary.go import parse_bool

from .session import conf_actions
from .shapes import as_dict, as_list

PREEMPT, RECLAIM, GANG_PREEMPT, GANG_RECLAIM = "preempt", "reclaim", "gangpreempt", "gangreclaim"
EVICTION_ACTIONS = (PREEMPT, RECLAIM, GANG_PREEMPT, GANG_RECLAIM)
GANG_EVICTION = (GANG_PREEMPT, GANG_RECLAIM)
# Walks that take victims from other queues: the ones queue shares must gate.
CROSS_QUEUE = (RECLAIM, GANG_RECLAIM)

# The session function each action walks.
WALK = {PREEMPT: "Preemptable", RECLAIM: "Reclaimable", GANG_PREEMPT: "UnifiedEvictable",
        GANG_RECLAIM: "UnifiedEvictable"}
# The plugin flag gating the walk (UnifiedEvictable has none: every registered plugin takes part).
FLAG = {PREEMPT: "enablePreemptable", RECLAIM: "enableReclaimable"}
# Plugins that register a victim filter for each walk (AddPreemptableFn, AddReclaimableFn,
# AddUnifiedEvictableFn in v1.15.1's plugins; drf's reclaim filter only with its hierarchy on).
FILTERS = {
    PREEMPT: ("conformance", "gang", "priority", "drf", "tdm", "pdb", "cdp", "extender"),
    RECLAIM: ("conformance", "gang", "capacity", "proportion", "drf", "pdb", "cdp", "extender"),
    GANG_PREEMPT: ("conformance", "gang", "priority", "capacity"),
    GANG_RECLAIM: ("conformance", "gang", "priority", "capacity"),
}
# Plugins whose filter keeps queues at their deserved / guarantee, per cross-queue walk
# (proportion registers no UnifiedEvictable filter).
SHARE_AWARE = {RECLAIM: ("capacity", "proportion"), GANG_RECLAIM: ("capacity",)}


def _enabled(plugin: dict, action: str) -> bool:
    flag = FLAG.get(action)
    if flag is None:
        return True
    value = plugin.get(flag)
    return value is None or value is True


def _takes_part(plugin: dict, action: str) -> bool:
    name = plugin.get("name")
    if name not in FILTERS[action] or not _enabled(plugin, action):
        return False
    if name == "drf" and action == RECLAIM:
        return plugin.get("enableHierarchy") is True
    return True


def tiers_of(conf: dict) -> list[list[dict]]:
    """The conf's tiers as lists of plugin entries (mappings only)."""
    return [[p for p in as_list(as_dict(t).get("plugins")) if isinstance(p, dict)] for t in as_list(conf.get("tiers"))]


def actions_of(conf: dict) -> list[str]:
    """The conf's actions, in order (``session.conf_actions``)."""
    return list(conf_actions(conf))


def filters_by_tier(conf: dict, action: str) -> list[list[str]]:
    """Per tier, the plugins that filter victims for ``action``'s walk."""
    return [[str(p["name"]) for p in tier if _takes_part(p, action)] for tier in tiers_of(conf)]


@dataclass(frozen=True)
class Reach:
    """Where an action's walk decides when its first filtering tier returns victims."""

    action: str
    tier: int | None            # index of the deciding tier; None when no plugin filters
    plugins: tuple[str, ...]    # the deciding tier's filters
    share_aware: tuple[str, ...]  # share-aware plugins in the deciding tier
    skipped: tuple[tuple[int, str], ...]  # (tier, plugin): share-aware filters in later tiers, never asked

    def describe(self) -> str:
        """The walk in words, for messages and reports."""
        if self.tier is None:
            return f"{WALK[self.action]} ({self.action}): no tier lists a plugin that filters victims"
        said = (f"{WALK[self.action]} ({self.action}) walks the tiers in order and stops at the first whose "
                f"plugins return victims: tier {self.tier + 1} ({', '.join(self.plugins)})")
        if self.skipped:
            later = ", ".join(f"{name} in tier {t + 1}" for t, name in self.skipped)
            said += f" lets every non-critical candidate through, so {later} is never asked"
        return said


def reach(conf: dict, action: str) -> Reach:
    """The tier that decides ``action``'s victims whenever its filters let some through."""
    tiers = filters_by_tier(conf, action)
    share = SHARE_AWARE.get(action, ())
    for t, names in enumerate(tiers):
        if names:
            skipped = tuple((later, n) for later in range(t + 1, len(tiers)) for n in tiers[later] if n in share)
            return Reach(action, t, tuple(names), tuple(n for n in names if n in share), skipped)
    return Reach(action, None, (), (), ())


def unprotected(conf: dict) -> list[Reach]:
    """Cross-queue walks in the conf's actions whose deciding tier holds no share-aware plugin."""
    return [r for a in actions_of(conf) if a in CROSS_QUEUE
            for r in [reach(conf, a)] if r.tier is not None and not r.share_aware]


def first_filtering_tier(tiers: Sequence[Iterable[str]], actions: Iterable[str]) -> int:
    """Index of the first tier (plugin names) holding a victim filter of any of ``actions``: where a
    share-aware plugin must sit to be asked. 0 when none does."""
    wanted = [a for a in actions if a in FILTERS]
    for t, names in enumerate(tiers):
        if any(n in FILTERS[a] for a in wanted for n in names):
            return t
    return 0


# --- the walk at run time (the simulator) ------------------------------------------------------

Filter = Callable[[list[Any]], "list[Any] | None"]   # candidates -> victims; None abstains


@dataclass
class Decision:
    """What a tiered victim selection chose: the victims, and the tier and plugins that chose them."""
    victims: list[Any]
    tier: int | None            # the tier that decided; None when no tier returned victims
    plugins: tuple[str, ...]    # the plugins of that tier that filtered (did not abstain)


def walk(conf: dict, action: str, candidates: list[Any], filters: dict[str, Filter],
         key: Callable[[Any], Any] = id) -> Decision:
    """Run ``action``'s tier walk over ``candidates`` with the given per-plugin filters (plugins
    without one here are treated as not registered)."""
    return walk_tiers(filters_by_tier(conf, action), candidates, filters, key)


def walk_tiers(tiers: Sequence[Sequence[str]], candidates: list[Any], filters: dict[str, Filter],
               key: Callable[[Any], Any] = id) -> Decision:
    """The walk over tiers of plugin names: in a tier, the intersection of what the registered
    filters return (None abstains; an empty answer empties the tier's); the first tier with
    victims decides."""
    for t, names in enumerate(tiers):
        victims: list[Any] | None = None
        voters: list[str] = []
        for name in names:
            fn = filters.get(name)
            if fn is None:
                continue
            result = fn(candidates)
            if result is None:
                continue
            voters.append(name)
            if not result:
                victims = None
                break
            if victims is None:
                victims = list(result)
            else:
                keep = {key(r) for r in result}
                # an empty intersection is no answer yet: the next plugin of the tier starts afresh
                victims = [v for v in victims if key(v) in keep] or None
        if victims is not None:
            return Decision(victims, t, tuple(voters))
    return Decision([], None, ())


# --- the conf's configurations block (the actions' arguments) ---------------------------------
# Volcano v1.15.1 pkg/scheduler/framework/arguments.go (GetArgOfActionFromConf: the first entry of
# `configurations` whose name is the action; GetInt: a YAML int only; GetBool: a bool, or a string
# strconv.ParseBool reads) and actions/gangpreempt|gangreclaim (maxDomains: default 8, <= 0 falls
# back to 8; allowWholeBundle: default true).

DEFAULT_MAX_DOMAINS = 8


def action_arguments(conf: dict, action: str) -> dict:
    """The ``arguments`` of the first ``configurations`` entry naming ``action`` ({} when none)."""
    for entry in as_list(conf.get("configurations")):
        if as_dict(entry).get("name") == action:
            return as_dict(as_dict(entry).get("arguments"))
    return {}


def go_int(args: dict, key: str, default: int) -> int:
    value = args.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def go_bool(args: dict, key: str, default: bool) -> bool:
    value = args.get(key)
    if isinstance(value, bool):
        return value
    parsed = parse_bool(value)
    return default if parsed is None else parsed


@dataclass(frozen=True)
class GangArguments:
    """gangpreempt's / gangreclaim's arguments as the action reads them."""
    max_domains: int = DEFAULT_MAX_DOMAINS
    allow_whole_bundle: bool = True


def gang_arguments(conf: dict, action: str) -> GangArguments:
    args = action_arguments(conf, action)
    domains = go_int(args, "maxDomains", DEFAULT_MAX_DOMAINS)
    return GangArguments(domains if domains > 0 else DEFAULT_MAX_DOMAINS, go_bool(args, "allowWholeBundle", True))
