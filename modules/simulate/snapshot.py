"""Read a cluster snapshot: the manifests ``kubectl get hypernodes,nodes,podgroups,pods -A -o yaml``
prints (List objects or plain documents, one file or a directory of them), so ``trainstack simulate``
can place the cluster's pending gangs without a stack.

* **Nodes** give the fabric's nodes with whatever they can allocate (``status.allocatable``, else
  ``capacity``): CPU and memory only, GPUs, any extended resource. Nodes with the same allocatable
  share a pool. Labels are kept for HyperNode label members and pods' ``nodeSelector``.
* **HyperNodes** (``topology.volcano.sh/v1alpha1``) become the switch tree: ``spec.tier``,
  ``spec.tierName``, members of type Node (exactMatch, regexMatch, labelMatch) or HyperNode
  (exactMatch, regexMatch). Leaves may sit at different tiers (mixed depth, as Volcano allows).
* **Pods**: a pod with ``spec.nodeName`` (not Succeeded/Failed) holds its requests on that node. A
  pending pod without a node is work to place, with its PodGroup
  (``scheduling.k8s.io/group-name`` annotation); the group's bound pods are its already-placed
  tasks (they count towards ``minMember``: Volcano's rescheduled case). A pending pod whose
  PodGroup is absent, or that names none, is not scheduled (``modules.semantics.session``); its
  job is listed with the reason. Every bound pod counts as usage, whatever its scheduler.
* **PodGroups** (``scheduling.volcano.sh/v1beta1``): ``minMember``, ``networkTopology``,
  ``subGroupPolicy`` (``matchLabelKeys``, ``subGroupSize``, ``networkTopology``), and the
  ``volcano.sh/job-allocated-hypernode`` annotation of a partly running job; ``status.phase``
  (a Pending one waits for the enqueue action) and Volcano's job order (priority, creation time,
  UID: ``modules.semantics.session``).
* **Volcano Jobs and TrainJobs** that no PodGroup in the snapshot belongs to are new submissions,
  read as ``--workloads`` reads them (TrainJobs against the snapshot's (Cluster)TrainingRuntimes).
* **Scheduler conf**: a ConfigMap with a ``volcano-scheduler.conf`` key (Volcano's own
  ``volcano-scheduler-configmap``), or the text given by the caller.

A pod's ``nodeSelector`` is held as one synthetic resource per label (``node-selector/KEY=VALUE``):
matching nodes offer plenty of it, a selecting pod asks one unit, so every capacity question the
simulator asks (HyperNode eligibility, node fit) respects the selector. Taints (NoSchedule,
NoExecute) and cordoned nodes work the same way: nodes without the taint (not cordoned) offer a
resource that a pod not tolerating it asks for. Affinity is not modelled.

Files are read, bounded, into the one model of the cluster (``model.py``: objects by kind, Nodes,
Pods, PodGroups, PriorityClasses, each read once), which the eviction what-if and ``drift`` share;
this module is placement's index of it (``snapshot_from_model``) and ``drift``'s (``fabric_of``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any, Iterable, Mapping

from modules.core.errors import InputError, listing, show
from modules.core.patterns import GoPattern, PatternError, compile_go
from modules.core.selectors import selector_matches, tolerates
from modules.fabric.model import Fabric, Link, Node, NodePool, Switch
from modules.semantics.hypernodes import regex_candidates
from modules.core.vocabulary.resource_names import scheduler_view
from modules.semantics.podspec import Reader
from modules.semantics.shapes import api_group
from modules.semantics.session import EPOCH, allocate_skips, job_order_key, unscheduled_reason
from modules.semantics.workloads import SubGroupSpec

from .model import ClusterModel, GroupObject, read_model
from .objects import NodeObject, object_meta
from .objects import read_objects  # noqa: F401  (simulate and its tests read files here)
from .jobs import TOP_NAME, Job, Partition, Pod, Topology
from .scheduler import SchedulerSettings, settings_from_conf
from .workloads import RUNTIME_KINDS, TRAINER_GROUP, gpu_count, runtimes_in, train_job, volcano_job

VOLCANO_SCHEDULER = "volcano"         # pending pods naming another schedulerName are not Volcano's to place
ALLOCATED_ANNOTATION = "volcano.sh/job-allocated-hypernode"
CONF_KEY = "volcano-scheduler.conf"
SELECTOR_PREFIX = "node-selector/"
VOLCANO_PODGROUPS = "scheduling.volcano.sh"   # the API group of the PodGroups Volcano reads
SELECTOR_AMOUNT = Decimal(2**40)         # more than any number of pods a node runs
TAINT_PREFIX = "node-untainted/"         # offered by nodes without the taint; asked by pods not tolerating it
SCHEDULABLE = "node-schedulable"         # offered by nodes not cordoned (spec.unschedulable)
GPU_SUFFIX = "/gpu"
# Links for the cost model when the snapshot has no probe results: the fabric schema's defaults.
DEFAULT_LINKS = {0: Link(370.0, 3.4), 1: Link(350.0, 14.0), 2: Link(350.0, 16.0), 3: Link(175.0, 18.0)}


@dataclass
class Snapshot:
    """A cluster as a snapshot shows it: the fabric, the jobs and what is already in use."""
    fabric: Fabric
    jobs: list[Job]
    usage: dict[str, dict[str, Decimal]]            # node -> requests of the pods bound to it
    settings: SchedulerSettings
    warnings: list[str] = field(default_factory=list)
    runtimes: dict = field(default_factory=dict)     # (Cluster)TrainingRuntimes, for TrainJobs given later
    releasing: dict[str, dict[str, Decimal]] = field(default_factory=dict)   # node -> requests of terminating
                                                     # pods (in usage; idle again soon: Volcano's futureIdle)


# --- taints and tolerations ----------------------------------------------------------------------

def taint_resource(taint: tuple[str, str, str]) -> str:
    key, value, effect = taint
    return f"{TAINT_PREFIX}{key}={value}:{effect}"


# --- the fabric -----------------------------------------------------------------------------------

def _pool(name: str, alloc: Mapping[str, Decimal]) -> NodePool:
    gpus = sorted(r for r in alloc if r.endswith(GPU_SUFFIX) and alloc[r] > 0)
    gpu = gpus[0] if gpus else "nvidia.com/gpu"
    others = {r: int(a) for r, a in alloc.items() if r not in ("cpu", "memory") and (not gpus or r != gpu)}
    return NodePool(name=name, match=re.compile(re.escape(name)), gpus=int(alloc.get(gpu, 0)) if gpus else 0,
                    gpu_resource=gpu, gpu_type=None, cpu_milli=int(alloc.get("cpu", Decimal(0)) * 1000),
                    memory_bytes=int(alloc.get("memory", Decimal(0))), resources=others)


def _members(doc: Reader, hn: dict, path: str) -> list[tuple[str, str, Any]]:
    spec = doc.get(hn, "spec", "", dict, "a HyperNode spec with tier and members")
    members = doc.get(spec, "members", "spec", list, "a list of members", [])
    out = []
    for i, member in enumerate(members):
        where = f"spec.members[{i}]"
        kind = doc.get(member, "type", where, str, "Node or HyperNode")
        if kind not in ("Node", "HyperNode"):
            raise doc.expected(f"{where}.type", "Node or HyperNode", kind)
        selector = doc.get(member, "selector", where, dict, "a selector (exactMatch, regexMatch or labelMatch)")
        if "exactMatch" in selector:
            out.append((kind, "exact", doc.get(selector["exactMatch"], "name", f"{where}.selector.exactMatch", str,
                                                "a name")))
        elif "regexMatch" in selector:
            pattern = doc.get(selector["regexMatch"], "pattern", f"{where}.selector.regexMatch", str, "a pattern")
            try:
                out.append((kind, "regex", compile_go(pattern)))
            except PatternError as exc:
                raise doc.error(f"{where}.selector.regexMatch.pattern",
                                f"the pattern {show(pattern, 80)} {exc}") from None
        elif "labelMatch" in selector:
            if kind != "Node":
                raise doc.error(f"{where}.selector", "labelMatch selects nodes only")
            out.append((kind, "label", doc.get(selector, "labelMatch", f"{where}.selector", dict, "a LabelSelector")))
        else:
            raise doc.error(f"{where}.selector", "expected exactMatch, regexMatch or labelMatch")
    return out


def _regex_members(pattern: GoPattern, in_order: list[str], position: dict[str, int]) -> list[str]:
    """Nodes a regexMatch member selects (Go's ``MatchString``: a match anywhere in the name), in
    snapshot order; an anchored pattern looks only at the names sharing its literal prefix."""
    return sorted((n for n in regex_candidates(in_order, pattern.pattern) if pattern.found_in(n)),
                  key=position.__getitem__)


def _label_members(selector: dict, node_names: list[str], labels_of: Mapping[str, dict],
                   by_label: dict) -> list[str]:
    """Nodes a labelMatch member selects, in snapshot order. With ``matchLabels`` only the nodes
    carrying its rarest pair are tested (``by_label``, built once: 512 leaves of 16,384 nodes are
    then 16,384 tests, not 8 million)."""
    pairs = selector.get("matchLabels") if isinstance(selector.get("matchLabels"), dict) else {}
    if not pairs or not all(isinstance(v, str) for v in pairs.values()):
        return [n for n in node_names if selector_matches(selector, labels_of[n])]
    if None not in by_label:
        by_label[None] = []          # built (a node may have no labels at all)
        for n in node_names:
            for key, value in labels_of[n].items():
                if isinstance(value, str):
                    by_label.setdefault((key, value), []).append(n)
    candidates = min((by_label.get((k, v), []) for k, v in pairs.items()), key=len)
    return [n for n in candidates if selector_matches(selector, labels_of[n])]


def _read_nodes(nodes: list[NodeObject], extra: Mapping[str, Mapping[str, Decimal]]
                ) -> tuple[dict[str, Node], dict[str, dict], dict[tuple, NodePool]]:
    """The nodes by name, their labels, and one pool per distinct allocatable."""
    pools: dict[tuple, NodePool] = {}
    by_name: dict[str, Node] = {}
    labels_of: dict[str, dict] = {}
    for node in nodes:
        alloc = dict(node.allocatable)
        alloc.update(extra.get(node.name, {}))
        key = tuple(sorted(alloc.items()))
        pool = pools.get(key)
        if pool is None:
            pool = pools[key] = _pool(f"pool-{len(pools) + 1}", alloc)
        by_name[node.name] = Node(node.name, None, pool, labels=dict(node.labels))
        labels_of[node.name] = node.labels
    return by_name, labels_of, pools


def _read_hypernodes(hypernodes: list[tuple[Reader, dict]]) -> dict[str, tuple[Reader, int, str | None, list]]:
    """HyperNode name -> (its reader, tier, tierName, members)."""
    specs: dict[str, tuple[Reader, int, str | None, list]] = {}
    for doc, obj in hypernodes:
        meta = doc.get(obj, "metadata", "", dict, "a mapping with name")
        name = doc.get(meta, "name", "metadata", str, "a HyperNode name")
        if name in specs:
            raise doc.error("metadata.name", f"HyperNode {name!r} appears twice")
        spec = doc.get(obj, "spec", "", dict, "a HyperNode spec with tier and members")
        tier = doc.integer(spec, "tier", "spec", 0, "an integer >= 0")
        tier_name = doc.get(spec, "tierName", "spec", str, "a tier name", None)
        specs[name] = (doc, tier, tier_name, _members(doc, obj, ""))
    return specs


def _place_nodes(doc: Reader, sw: Switch, chosen: list[str], by_name: dict[str, Node],
                 conflicts: list[tuple[str, str, str]] | None) -> None:
    """Hang the chosen nodes under leaf ``sw`` (a node already under another leaf: a conflict)."""
    for n in chosen:
        if by_name[n].leaf is not None and by_name[n].leaf != sw.name:
            why = f"a member of HyperNodes {by_name[n].leaf} and {sw.name}; Volcano needs one leaf per node"
            if conflicts is None:
                raise doc.error("spec.members", f"node {n!r} is {why}")
            conflicts.append(("Node", n, why))
            continue
        if by_name[n].leaf is None:
            by_name[n].leaf = sw.name
            sw.nodes.append(n)


def _place_children(doc: Reader, sw: Switch, tier: int, children: list[str], switches: dict[str, Switch],
                    specs: dict, conflicts: list[tuple[str, str, str]] | None) -> None:
    """Hang the chosen HyperNodes under ``sw`` (one under another parent: a conflict)."""
    for child in children:
        cs = switches[child]
        if cs.parent is not None and cs.parent != sw.name:
            why = f"a member of HyperNodes {cs.parent} and {sw.name}; a HyperNode has one parent"
            if conflicts is None:
                raise doc.error("spec.members", f"HyperNode {child!r} is {why}")
            conflicts.append(("HyperNode", child, why))
            continue
        if specs[child][1] >= tier:
            raise doc.error("spec.members", f"member HyperNode {child!r} (tier {specs[child][1]}) is "
                            f"not below {sw.name!r} (tier {tier})")
        if cs.parent is None:
            cs.parent = sw.name
            sw.children.append(child)


def build_fabric(shown: str, nodes: list[NodeObject], hypernodes: list[tuple[Reader, dict]],
                 extra: Mapping[str, Mapping[str, Decimal]],
                 conflicts: list[tuple[str, str, str]] | None = None) -> Fabric:
    """Nodes and HyperNodes as a ``Fabric``; ``extra`` adds synthetic resources per node (selectors).
    A node under two leaves, or a HyperNode under two parents, is an input error; with ``conflicts``
    given (``drift``, which reports the cluster as it is) it is recorded there instead, as
    ``(kind, name, why)``, and the first HyperNode keeps it."""
    by_name, labels_of, pools = _read_nodes(nodes, extra)
    specs = _read_hypernodes(hypernodes)
    switches: dict[str, Switch] = {}
    tier_names: dict[int, str] = {}
    for name, (doc, tier, tier_name, _) in specs.items():
        switches[name] = Switch(name=name, tier=tier, hypernode=name, where=doc.where)
        if tier_name:
            tier_names.setdefault(tier, tier_name)
    node_names = list(by_name)
    by_label: dict = {}      # (key, value) -> nodes carrying it, filled on the first labelMatch member
    position = {n: i for i, n in enumerate(node_names)}
    in_order = sorted(node_names)
    for name, (doc, tier, _, members) in specs.items():
        for kind, how, what in members:
            if kind == "Node":
                chosen = ([what] if what in by_name else []) if how == "exact" else (
                    _regex_members(what, in_order, position) if how == "regex" else
                    _label_members(what, node_names, labels_of, by_label))
                _place_nodes(doc, switches[name], chosen, by_name, conflicts)
            else:
                children = [what] if how == "exact" and what in specs else (
                    [c for c in specs if c != name and what.found_in(c)] if how == "regex" else [])
                _place_children(doc, switches[name], tier, children, switches, specs, conflicts)
    for sw in switches.values():
        if sw.nodes and sw.children:
            raise InputError(shown, sw.where, f"HyperNode {sw.name!r} has both node and HyperNode members; "
                              "the simulator needs nodes on leaves only")
    return Fabric(f"snapshot {shown}", tier_names, switches, by_name, {p.name: p for p in pools.values()},
                  mixed_depth=True, links=dict(DEFAULT_LINKS), file=shown, declared_in_stack=False)


# --- pods, PodGroups, jobs ------------------------------------------------------------------------

@dataclass
class _Group:
    """The pods of one PodGroup in a snapshot, pending and bound."""
    name: str
    namespace: str
    doc: Reader
    source: GroupObject | None           # the PodGroup; None: pods of a PodGroup not in the snapshot
    # name, labels, requests, selector
    pending: list[tuple[str, dict, dict[str, Decimal], dict]] = field(default_factory=list)
    bound: list[tuple[str, dict, str]] = field(default_factory=list)        # name, labels, node
    unscheduled: str | None = None       # why Volcano does not schedule it (no PodGroup)


def lowest_hypernode(fabric: Fabric, nodes: list[str]) -> str | None:
    """The lowest HyperNode holding every node (Volcano's recoverAllocatedHyperNode): the LCA of
    their leaves, the cluster-top when they share none; None when a node is in no snapshot."""
    if not nodes or any(n not in fabric.nodes for n in nodes):
        return None
    leaves = list(dict.fromkeys(fabric.nodes[n].leaf for n in nodes))
    if None in leaves:
        return TOP_NAME
    holder: Switch | None = fabric.switches[leaves[0]]
    for leaf in leaves[1:]:
        holder = fabric.lca(holder.name, leaf) if holder else None
    return holder.name if holder else TOP_NAME


def group_job(group: _Group, fabric: Fabric, gpu_resources: set[str], selector_resources: Mapping[tuple, str]) -> Job:
    """One PodGroup's pending pods as a Job; its bound pods are tasks already placed."""
    doc, obj = group.doc, group.source.obj if group.source else {}
    # The PodGroup as Volcano reads it (semantics); pods of an absent PodGroup: one pod each, unscheduled.
    workload = group.source.spec() if group.source else None
    label = f"{group.namespace}/{group.name}"
    pods: list[Pod] = []
    for name, _, requests, selector in group.pending:
        requests = dict(requests)
        for pair in sorted(selector.items()):
            requests[selector_resources[pair]] = Decimal(1)
        pods.append(Pod(f"{group.namespace}/{name}", requests, gpu_count(requests, gpu_resources)))
    min_member = workload.min_member if workload else 1
    topology = workload.topology if workload else None
    sub_groups = workload.sub_groups if workload else ()
    partitions, min_partitions, ready, recovered, taken_bound = _sub_jobs(sub_groups, group, fabric, topology)
    rest_bound = [node for i, (_, _, node) in enumerate(group.bound) if i not in taken_bound]
    if topology is not None and rest_bound:
        if (allocated := lowest_hypernode(fabric, rest_bound)):
            recovered.append(allocated)
    allocated_job = _allocated_job(fabric, obj, group, topology, recovered)
    # A PodGroup's minResources gate over the names Volcano's scheduler reads ({} without
    # minResources: Volcano checks only minMember).
    explicit = workload.explicit_min_resources if workload else None
    min_resources = scheduler_view(explicit) if explicit is not None else None
    return Job(label, "PodGroup", pods, min_member, topology, partitions, doc.where,
               running=len(group.bound), allocated_hypernode=allocated_job,
               running_nodes=tuple(node for _, _, node in group.bound), min_partitions=min_partitions,
               ready_partitions=ready, min_resources=min_resources)


def _sub_jobs(sub_groups: tuple[SubGroupSpec, ...], group: _Group, fabric: Fabric, topology: Topology | None
              ) -> tuple[list[Partition], dict[str, int], dict[str, int], list[str], set[int]]:
    """SubJobs: pods (pending and bound) grouped by the policy's matchLabelKeys values; a pod
    matching no policy stays in the job's default SubJob."""
    partitions: list[Partition] = []
    min_partitions: dict[str, int] = {}
    ready: dict[str, int] = {}
    taken_pending: set[int] = set()
    taken_bound: set[int] = set()
    recovered: list[str] = []           # the SubJobs' allocated HyperNodes, from their bound pods
    for policy in sub_groups:
        pname, size = policy.name, policy.size
        min_partitions[pname] = policy.min_sub_groups
        ptopo = policy.topology if policy.topology is not None else topology   # else the job's networkTopology

        def key(labels: dict, selector: Any = policy.label_selector, keys: tuple = policy.match_label_keys
                ) -> tuple | None:
            if isinstance(selector, dict) and not selector_matches(selector, labels):
                return None
            values = tuple(labels.get(k) for k in keys)
            return None if any(not v for v in values) else values

        pending: dict[tuple, list[int]] = {}
        bound: dict[tuple, list[str]] = {}
        for i, (_, labels, _, _) in enumerate(group.pending):
            if i not in taken_pending and (k := key(labels)) is not None:
                pending.setdefault(k, []).append(i)
                taken_pending.add(i)
        for i, (_, labels, node) in enumerate(group.bound):
            if i not in taken_bound and (k := key(labels)) is not None:
                bound.setdefault(k, []).append(node)
                taken_bound.add(i)
        for values in dict.fromkeys([*pending, *bound]):
            on = bound.get(values, [])
            allocated = lowest_hypernode(fabric, on) if ptopo is not None else None
            if allocated:
                recovered.append(allocated)
            if values not in pending:
                ready[pname] = ready.get(pname, 0) + (len(on) >= size)
                continue
            partitions.append(Partition(f"{pname}-{'-'.join(values)}" if values else pname, tuple(pending[values]),
                                        ptopo, min_available=size, running=len(on), allocated_hypernode=allocated,
                                        policy=pname))
    return partitions, min_partitions, ready, recovered, taken_bound


def _allocated_job(fabric: Fabric, obj: dict, group: _Group, topology: Topology | None,
                   recovered: list[str]) -> str | None:
    """The job's allocated HyperNode: recovered from its SubJobs' bound pods when it can be, else
    the annotation, which Volcano drops when no task runs or the HyperNode is gone."""
    annotated = ((obj.get("metadata") or {}).get("annotations") or {}).get(ALLOCATED_ANNOTATION) or None
    allocated_job = None
    if topology is not None:
        if recovered:
            allocated_job = recovered[0]
            for other in recovered[1:]:
                allocated_job = _lca_name(fabric, allocated_job, other)
        elif annotated and group.bound and annotated in fabric.switches:
            allocated_job = annotated
    return allocated_job


def _lca_name(fabric: Fabric, a: str, b: str) -> str:
    if TOP_NAME in (a, b):
        return TOP_NAME
    holder = fabric.lca(a, b)
    return holder.name if holder else TOP_NAME


def load_snapshot(path: Path, shown: str, conf_text: str | None = None) -> Snapshot:
    """A snapshot from a file or a directory of manifests (see the module doc)."""
    return snapshot_from_objects(read_objects(path, shown), shown, conf_text)


def load_cluster(path: Path, shown: str, conflicts: list[tuple[str, str, str]] | None = None
                 ) -> tuple[Fabric, list[tuple[Reader, dict]]]:
    """A snapshot's Nodes and HyperNodes only (``drift``): its fabric, built from the one model of
    the cluster (``model.py``) by the same builder as ``load_snapshot``, and the HyperNode objects
    as written (``conflicts``: see ``build_fabric``)."""
    return fabric_of(read_model(read_objects(path, shown), shown), conflicts)


def fabric_of(model: ClusterModel, conflicts: list[tuple[str, str, str]] | None = None
              ) -> tuple[Fabric, list[tuple[Reader, dict]]]:
    """The model's Nodes and HyperNodes as a fabric (nothing else read), and its HyperNode objects."""
    return build_fabric(model.shown, model.require_nodes(), model.hypernodes, {}, conflicts), model.hypernodes


def snapshot_from_objects(objects: Iterable[tuple[str, dict]], shown: str, conf_text: str | None = None) -> Snapshot:
    """A snapshot from (where, object) pairs; ``conf_text`` overrides any scheduler conf ConfigMap."""
    return snapshot_from_model(read_model(objects, shown), shown, conf_text)


def snapshot_from_model(model: ClusterModel, shown: str, conf_text: str | None = None) -> Snapshot:
    """Placement's index of the cluster model: the fabric with usage, the pending gangs as jobs."""
    warnings: list[str] = []
    nodes = model.require_nodes()
    settings = _scheduler_settings(model.kinds, shown, conf_text, warnings)
    # Pods: bound ones hold resources; pending ones are work, by PodGroup.
    groups: dict[str, _Group] = {g.uid: _Group(g.name, g.namespace, g.doc, g) for g in model.group_list}
    warnings += [f"{shown}: {doc.where}: a PodGroup of apiVersion {show(obj.get('apiVersion'))}, not Volcano's "
                 f"({VOLCANO_PODGROUPS}/v1beta1): Volcano does not read it, so its pods belong to no PodGroup it knows"
                 for doc, obj in model.of("PodGroup") if api_group(obj) != VOLCANO_PODGROUPS]
    taints_of, cordoned = _node_taints(nodes)
    every_taint = sorted(set().union(*taints_of.values())) if taints_of else []
    usage, selectors, other_scheduler, releasing = _read_pods(model, groups, every_taint, bool(cordoned), shown,
                                                             warnings)
    if other_scheduler:
        warnings.append(f"{shown}: {other_scheduler} pending pod(s) name a scheduler other than "
                        f"{VOLCANO_SCHEDULER!r}; not placed")
    # nodeSelector labels as synthetic resources offered by the matching nodes
    selector_resources = {pair: f"{SELECTOR_PREFIX}{pair[0]}={pair[1]}" for pair in sorted(selectors)}
    extra = _node_offers(nodes, selector_resources, every_taint, taints_of, cordoned)
    fabric = build_fabric(shown, nodes, model.hypernodes, extra)
    if not fabric.switches:
        warnings.append(f"{shown}: no HyperNode in the snapshot: every job is placed without topology")
    gpu_resources = {p.gpu_resource for p in fabric.pools.values()} | {"nvidia.com/gpu"}
    if fabric.switches:
        _warn_uncovered(fabric, shown, warnings)
    _cap_usage(fabric, usage, shown, warnings)
    jobs, runtimes = _snapshot_jobs(model, groups, fabric, gpu_resources, selector_resources, shown, settings)
    _warn_unknown_classes(model, groups, shown, warnings)
    return Snapshot(fabric, jobs, usage, settings, warnings, runtimes, releasing)


def _scheduler_settings(by_kind: dict, shown: str, conf_text: str | None, warnings: list[str]) -> SchedulerSettings:
    # One reader with the what-if (modules/semantics/scheduler_conf.py): the caller's text (the conf,
    # its ConfigMap or the chart's values), else the ConfigMap the scheduler mounts; a ConfigMap
    # holding a conf the scheduler does not mount is a warning, as it is a note in the what-if.
    from modules.semantics.scheduler_conf import from_objects, passed_over, read_conf_text
    objects = [obj for docs in by_kind.values() for _, obj in docs]
    found = read_conf_text(conf_text, "--scheduler-conf") if conf_text is not None else from_objects(objects, shown)
    if conf_text is None:
        warnings += [f"{shown}: {note}" for note in (found.notes if found is not None else passed_over(objects))]
    if found is None:
        return SchedulerSettings(source="baseline weights (no volcano-scheduler.conf ConfigMap in the snapshot)")
    return settings_from_conf(found.text, found.source)


def _node_taints(nodes: list[NodeObject]) -> tuple[dict[str, set[tuple[str, str, str]]], set[str]]:
    # Taints that keep pods off (NoSchedule, NoExecute) and cordoned nodes, per node.
    taints_of = {node.name: set(node.taints) for node in nodes if node.taints}
    return taints_of, {node.name for node in nodes if node.unschedulable}


def _read_pods(model: ClusterModel, groups: dict[str, _Group], every_taint: list, cordoned: bool, shown: str,
               warnings: list[str]) -> tuple[dict[str, dict[str, Decimal]], set[tuple[str, str]], int, dict]:
    usage: dict[str, dict[str, Decimal]] = {}
    selectors: set[tuple[str, str]] = set()
    other_scheduler = 0
    orphans: dict[tuple[str, str], _Group] = {}     # pending pods of no PodGroup in the snapshot
    releasing: dict[str, dict[str, Decimal]] = {}
    node_names = {node.name for node in model.nodes}
    for pod in model.pods:
        doc = pod.doc
        if pod.finished:
            continue
        name, namespace, labels, spec, node, group_name = pod.name, pod.namespace, pod.labels, pod.spec, pod.node, \
            pod.group
        requests = pod.requests()
        requests["pods"] = Decimal(1)          # a pod slot, against the node's allocatable pods
        source = model.group_of(pod)
        group = groups[source.uid] if source is not None else None
        if node:
            if node not in node_names:
                warnings.append(f"{shown}: {doc.where}: bound to node {node!r}, which is not in the snapshot; "
                                "it holds no resources (it still counts as a running task of its PodGroup)")
                if group is not None:
                    group.bound.append((name, labels, node))
                continue
            held = usage.setdefault(node, {})
            for r, amount in requests.items():
                held[r] = held.get(r, Decimal(0)) + amount
            if pod.deleting:                   # Releasing: idle once it is gone
                going = releasing.setdefault(node, {})
                for r, amount in requests.items():
                    going[r] = going.get(r, Decimal(0)) + amount
            if group is not None:
                group.bound.append((name, labels, node))
            continue
        scheduler = spec.get("schedulerName")
        if scheduler not in (None, VOLCANO_SCHEDULER):
            other_scheduler += 1               # another scheduler places it
            continue
        tolerations = doc.get(spec, "tolerations", "spec", list, "a list of tolerations", [])
        for taint in every_taint:
            if not any(tolerates(t, taint) for t in tolerations if isinstance(t, dict)):
                requests[taint_resource(taint)] = Decimal(1)
        if cordoned:
            requests[SCHEDULABLE] = Decimal(1)
        selector = doc.get(spec, "nodeSelector", "spec", dict, "a mapping of node labels", {})
        selectors.update((str(k), str(v)) for k, v in selector.items())
        if group is None:                      # Volcano schedules no pod outside a PodGroup it knows
            key = (namespace, group_name) if group_name else (namespace, f"pod:{name}")
            group = orphans.get(key)
            if group is None:
                group = orphans[key] = _Group(key[1], namespace, doc, None,
                                              unscheduled=unscheduled_reason(group_name, namespace, False))
        group.pending.append((name, labels, requests, selector))

    groups.update((f"{namespace}/{name}", group) for (namespace, name), group in orphans.items())
    return usage, selectors, other_scheduler, releasing


def _node_offers(nodes: list[NodeObject], selector_resources: dict, every_taint: list, taints_of: dict,
                 cordoned: set[str]) -> dict[str, dict[str, Decimal]]:
    extra: dict[str, dict[str, Decimal]] = {}
    for node in nodes:
        offers = extra.setdefault(node.name, {})
        for pair, resource in selector_resources.items():
            if node.labels.get(pair[0]) == pair[1]:
                offers[resource] = SELECTOR_AMOUNT
        for taint in every_taint:              # a node without the taint takes pods that do not tolerate it
            if taint not in taints_of.get(node.name, ()):
                offers[taint_resource(taint)] = SELECTOR_AMOUNT
        if cordoned and node.name not in cordoned:
            offers[SCHEDULABLE] = SELECTOR_AMOUNT
    return extra


def _cap_usage(fabric: Fabric, usage: dict, shown: str, warnings: list[str]) -> None:
    # Usage beyond a node's allocatable (a stale snapshot) is capped, with a warning.
    for node, held in usage.items():
        alloc = fabric.nodes[node].pool.allocatable()
        for r, amount in list(held.items()):
            if amount > alloc.get(r, Decimal(0)):
                if r in alloc:
                    warnings.append(f"{shown}: node {node}: pods request {amount} {r}, more than it can allocate "
                                    f"({alloc[r]}); counted as full")
                held[r] = alloc.get(r, Decimal(0))
            if held[r] == 0:
                del held[r]



UNCOVERED_NAMED = 20     # nodes named in the warning about nodes under no HyperNode


def _warn_unknown_classes(model: ClusterModel, groups: dict[str, _Group], shown: str, warnings: list[str]) -> None:
    # A pending job's PriorityClass missing from the snapshot: its priority falls to the default,
    # which reorders the jobs (kubectl get ... without priorityclasses).
    known = {str((o.get("metadata") or {}).get("name")) for _, o in model.of("PriorityClass")}
    named = {g.source.spec().priority_class for g in groups.values() if g.pending and g.source}
    unknown = sorted(n for n in named if n and n not in known)
    if unknown:
        warnings.append(f"{shown}: pending PodGroups name PriorityClass(es) not in the snapshot "
                        f"({', '.join(unknown[:UNCOVERED_NAMED])}): their jobs take the default priority; add "
                        "priorityclasses to the kubectl get for Volcano's job order")


def _warn_uncovered(fabric: Fabric, shown: str, warnings: list[str]) -> None:
    # Volcano reaches a node in no HyperNode only through the cluster-top: hard jobs never land there.
    loose = [n for n, node in fabric.nodes.items() if node.leaf is None]
    if loose:
        warnings.append(f"{shown}: {len(loose)} node(s) in no HyperNode: {listing(loose, UNCOVERED_NAMED)}; "
                        "Volcano reaches them only through the cluster-top, so jobs with a hard tier never use them")


def _snapshot_jobs(model: ClusterModel, groups: dict[str, _Group], fabric: Fabric, gpu_resources: set[str],
                   selector_resources: dict, shown: str, settings: SchedulerSettings) -> tuple[list[Job], dict]:
    """The PodGroups' jobs in Volcano's job order (``modules.semantics.session``), then the new
    submissions (Volcano Jobs and TrainJobs without a PodGroup) in file order."""
    ordered: list[tuple[tuple, Job]] = []
    owned: set[tuple[str, str]] = set()
    by_kind = model.kinds
    for group in groups.values():
        source = group.source
        owned.update(source.owners if source else ())
        if not group.pending:
            continue
        job = group_job(group, fabric, gpu_resources, selector_resources)
        job.unscheduled = group.unscheduled or allocate_skips(source.phase if source else None, settings.actions)
        key = job_order_key(settings.job_order, model.priority_of(source) if source else model.classes.default,
                            job.running >= job.min_available, source.created() if source else EPOCH,
                            f"{group.namespace}/{group.name}")
        ordered.append((key, job))
    ordered.sort(key=lambda pair: pair[0])
    jobs = [job for _, job in ordered]
    runtimes = runtimes_in(o for kind in RUNTIME_KINDS for _, o in by_kind.get(kind, []))
    priorities = model.classes.values      # the PriorityClasses' values, read once by the model
    for doc, obj in by_kind.get("Job", []):
        name, _, _, _ = object_meta(doc, obj)
        if ("Job", name) not in owned:
            jobs.append(volcano_job(doc, obj, gpu_resources, priorities))
    for doc, obj in by_kind.get("TrainJob", []):
        name, _, _, _ = object_meta(doc, obj)
        if ("TrainJob", name) not in owned and str(obj.get("apiVersion", "")).startswith(TRAINER_GROUP + "/"):
            jobs.append(train_job(doc, obj, runtimes, gpu_resources, "the snapshot"))
    seen: set[str] = set()
    for job in jobs:
        if job.name in seen:
            raise InputError(shown, job.where, f"job {job.name!r} appears twice")
        seen.add(job.name)
    return jobs, runtimes
