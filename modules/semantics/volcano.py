"""What Volcano makes of objects: where topology constraints live on each kind, and which
tiers exist (from the fabric, HyperNodes or label discovery). Facts: Volcano v1.15.1.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator

from .scheduler_conf import discovery_configs, enabled_sources
from .shapes import as_dict, as_int, as_list, is_kind, pod_templates

SCHEDULING = "scheduling.volcano.sh"
BATCH = "batch.volcano.sh"
TOPOLOGY = "topology.volcano.sh"
TRAINER = "trainer.kubeflow.org"
NTA = "network-topology-aware"
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

    def as_stored(self) -> tuple[str, Any, Any]:
        """``(mode, highestTierAllowed, highestTierName)`` as the API server stores it: Trainer v2.3's
        runtime CRD has no highestTierName (pruned) and defaults highestTierAllowed to 1."""
        if self.scope == "runtime":
            return self.mode, (self.tier if self.tier is not None and not self.implicit_tier else 1), None
        return self.mode, self.tier, self.tier_name


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


JOB_SCOPES = ("job", "runtime", "pod annotations")


def effective_constraints(obj: dict, objects: Iterable[dict]) -> list[Constraint]:
    """An object's constraints; a TrainJob inherits its runtime's (it cannot set its own), found
    among ``objects`` (none when the runtime is not there). The one reading of every workload's
    topology: the rules (``topology-*``) and the simulator both take it from here."""
    if obj.get("kind") == "TrainJob":
        from .workloads import find_runtime   # workloads imports this module
        runtime = find_runtime(obj, objects)
        if runtime is None:
            return []
        name = f"{runtime.get('kind')} {as_dict(runtime.get('metadata')).get('name')!r}"
        return [dataclasses.replace(c, path="spec.runtimeRef", origin=f"{name} at {c.path}")
                for c in constraints(runtime)]
    return constraints(obj)


def job_constraint(found: Iterable[Constraint]) -> Constraint | None:
    """The job-level constraint among an object's (its own, its runtime's, or its pods'
    ``volcano.sh/network-topology-*`` annotations, which Volcano's PodGroup controller copies to
    the PodGroup it creates)."""
    return next((c for c in found if c.scope in JOB_SCOPES), None)


def enforced_spec(c: Constraint | None) -> tuple[str, int | None, str | None] | None:
    """``(mode, highestTierAllowed, highestTierName)`` as the PodGroup carries it (None: no
    networkTopology). A mode other than soft is hard; a tier that is not an integer is no tier
    (Volcano ignores it); a runtime's highestTierName is pruned by Trainer's CRD."""
    if c is None:
        return None
    mode, tier, name = c.as_stored()
    tier = tier if isinstance(tier, int) and not isinstance(tier, bool) else None
    name = name if isinstance(name, str) and name else None
    return ("soft" if mode == "soft" else "hard"), tier, name


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

