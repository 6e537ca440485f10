"""Three ways to place a sequence of gangs on a cluster.

* ``TopologyAware``: Volcano v1.15's allocate action with the network-topology-aware plugin
  (README, "What it models"). The effective constraint decides the gradient: HyperNodes grouped
  by tier, lowest first, up to the allowed tier (the virtual cluster-top last for soft jobs). In a
  gradient, HyperNodes whose idle resources hold the gang's minResources are eligible; they are
  tried in order of the plugin's binpack score (then name: Volcano's task-count tie-break is equal
  for a job with no pods placed yet) and the first whose dry-run places the gang wins, which is the
  best-scored successful dry-run. Inside the chosen HyperNode pods go first-fit over a binpack
  node order (see ``Cluster.node_order``). Jobs without an effective constraint take the same node
  order from the cluster-top, so their pods gather as the plugin's node scores pull them together.
  Partitions (SubJobs) run their own gradient inside the job's HyperNode, one gang each.
* ``Oblivious``: first-fit by node in fabric order, as a default scheduler packs, all-or-nothing.
* ``LowerBound`` (a ``TopologyAware`` on an always-empty cluster): each job alone in the smallest
  domain that fits it under its own constraint (jobs without one: anywhere); of the HyperNodes at
  that lowest tier, the one where its modeled all-reduce costs least.
"""
from __future__ import annotations

from collections import Counter
from itertools import chain
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator, Mapping, Sequence

from modules.core.vocabulary.go import parse_bool
from modules.core.wire import release_manifest
from modules.semantics.capacity import counted
from modules.semantics.scheduler_conf import conf_in_effect, conf_plugins, parse_conf
from modules.semantics.session import DEFAULT_ACTIONS, DEFAULT_JOB_ORDER, conf_actions, job_order_plugins

from .buckets import StateBuckets
from .cluster import TOP, Cluster, Need
from .jobs import Enforced, Job, Partition, effective, tier_label

BASELINE_WEIGHTS = {"cpu": 1, "memory": 1, "nvidia.com/gpu": 5}   # Volcano's default scheduler conf


@dataclass(frozen=True)
class SchedulerSettings:
    """What the stack's scheduler configuration says about topology-aware allocation."""

    weights: Mapping[str, int] = field(default_factory=lambda: dict(BASELINE_WEIGHTS))
    enforce_topology: bool = True        # False: the conf lacks network-topology-aware (§3)
    plugin_weight: int = 1               # 0 zeroes every HyperNode score
    source: str = "baseline weights (no Volcano scheduler conf in the stack)"
    actions: tuple[str, ...] = DEFAULT_ACTIONS        # the conf's actions (enqueue gates Pending PodGroups)
    normal_pod_binpack: bool = True      # hypernode.binpack.normal-pod.enable (node scores, nodescore.py)
    normal_pod_fading: float = 0.8       # hypernode.binpack.normal-pod.fading
    job_order: tuple[str, ...] = DEFAULT_JOB_ORDER    # its job-order plugins, in tier order (semantics.session)


@dataclass
class JobOutcome:
    """Where one job landed under one strategy."""

    job: str
    status: str                                   # placed | pending
    reason: str | None = None
    hypernode: str | None = None                  # the HyperNode that holds every pod
    tier: int | None = None
    pods: list[tuple[str, int]] = field(default_factory=list)   # (pod name, node index)
    allreduce_s: float | None = None
    span_tier: int | None = None                  # tier of the LCA of its nodes (0: one node)
    leaves: int = 0                               # distinct leaf switches under its pods

    @property
    def placed(self) -> bool:
        return self.status == "placed"


@dataclass
class Prepared:
    """A job's pods as request vectors of one cluster layout (shared by the three clusters)."""

    needs: list[Need]
    keys: list[tuple]
    missing: list[str]          # resources asked for that no node offers
    units: list[tuple[str, object]]   # ("pods", [indices]) or ("partition", Partition), in pod order


def prepare(job: Job, cluster: Cluster) -> Prepared:
    needs, keys, missing = [], [], set()
    offered = cluster.offered
    for pod in job.pods:
        requests = {}
        for name, amount in pod.requests.items():
            if name not in offered:
                if not counted(name, offered) or amount <= 0:
                    continue
                missing.add(name)
            requests[name] = amount
        need = cluster.need(requests)
        needs.append(need)
        keys.append(tuple(need))
    partition_of = {i: part for part in job.partitions for i in part.pods}
    units: list[tuple[str, object]] = []
    seen: set[int] = set()
    for i in range(len(job.pods)):
        part = partition_of.get(i)
        if part is None:
            if units and units[-1][0] == "pods":
                units[-1][1].append(i)
            else:
                units.append(("pods", [i]))
        elif id(part) not in seen:
            seen.add(id(part))
            units.append(("partition", part))
    return Prepared(needs, keys, sorted(missing), units)


def total(needs: list[Need], width: int) -> list[int]:
    out = [0] * width
    if needs and needs.count(needs[0]) == len(needs):     # alike pods: one multiplication
        for r, amount in needs[0]:
            out[r] = amount * len(needs)
        return out
    for need in needs:
        for r, amount in need:
            out[r] += amount
    return out


def sparse(vector: list[int]) -> Need:
    return [(r, a) for r, a in enumerate(vector) if a > 0]


def fill(cluster: Cluster, root: int, pods: list[int], prep: Prepared, txn: list, near: int | None = None,
         running: Sequence[int] = ()) -> dict[int, int]:
    """First-fit ``pods`` over ``root``'s binpack node order; returns pod index -> node for those placed.
    ``near``, ``running``: a partly running job's allocated HyperNode and its tasks' nodes, which
    the plugin's node score puts first (``Cluster.node_order``).

    Alike pods (one request) go through ``_fill_alike``, which places what ``_fill_each`` would.
    """
    needs = [prep.needs[i] for i in pods]
    remaining = total(needs, len(cluster.resources))
    left = [len(pods)]
    uniform = uniform_need(needs)
    chunks = cluster.node_order(root, remaining, uniform, left, near, running)
    if uniform is not None:
        return _fill_alike(cluster, chunks, pods, uniform, txn, remaining, left)
    return _fill_each(cluster, chunks, pods, prep, txn, remaining, left)


def _fill_each(cluster: Cluster, chunks: Iterator[list[int]], pods: list[int], prep: Prepared, txn: list,
               remaining: list[int], left: list[int]) -> dict[int, int]:
    """``fill`` pod by pod, one cursor per distinct request vector: a node that cannot take a
    request now never can later in the same dry-run, because usage only grows during it."""
    nodes = chain.from_iterable(chunks)
    order: list[int] = []
    cursor: dict[tuple, int] = {}
    exhausted: set[tuple] = set()
    placed: dict[int, int] = {}
    for i in pods:
        key, need = prep.keys[i], prep.needs[i]
        if key in exhausted:
            continue
        p = cursor.get(key, 0)
        while True:
            if p == len(order):
                nxt = next(nodes, None)
                if nxt is None:
                    break
                order.append(nxt)
            if cluster.fits(order[p], need):
                break
            p += 1
        cursor[key] = p
        if p == len(order):
            exhausted.add(key)
            continue
        node = order[p]
        cluster.apply(node, need)
        txn.append((node, need))
        placed[i] = node
        left[0] -= 1
        for r, amount in need:
            remaining[r] -= amount
    return placed


def _fill_alike(cluster: Cluster, chunks: Iterator[list[int]], pods: list[int], need: Need, txn: list,
                remaining: list[int], left: list[int]) -> dict[int, int]:
    """``fill`` for pods that all ask ``need``: the one cursor is the node in hand, which takes
    as many pods as it has room for (``node_slots``: what fitting them one by one would place).
    ``remaining`` and ``left`` are brought up to date before the node order reads them, which it
    does only when asked for the next node."""
    placed: dict[int, int] = {}
    count, k = len(pods), 0
    slots, apply = cluster.node_slots, cluster.apply
    for chunk in chunks:
        for node in chunk:
            for _ in range(min(slots(node, need), count - k)):
                apply(node, need)
                txn.append((node, need))
                placed[pods[k]] = node
                k += 1
            if k == count:
                return placed
        left[0] = count - k
        for r, amount in need:
            remaining[r] = amount * (count - k)
    return placed


def uniform_need(needs: list[Need]) -> Need | None:
    """The request every pod makes, when they all make the same one."""
    first = needs[0] if needs else None
    return first if first and needs.count(first) == len(needs) else None


def uniform_gpus(cluster: Cluster, needs: list[Need]) -> int:
    """The per-pod GPU request when every pod asks the same (0 when they differ or ask none)."""
    if cluster.gpu is None or not needs:
        return 0
    if needs.count(needs[0]) == len(needs):
        return dict(needs[0]).get(cluster.gpu, 0)
    asks = {dict(n).get(cluster.gpu, 0) for n in needs}
    return asks.pop() if len(asks) == 1 else 0


class TopologyAware:
    name = "topology-aware"

    def __init__(self, cluster: Cluster, settings: SchedulerSettings, *, lower_bound: bool = False,
                 cost: Callable[[Job, JobOutcome], float] | None = None):
        self.cluster = cluster
        self.settings = settings
        self.lower_bound = lower_bound
        self.cost = cost        # the lower bound keeps, per gradient, the placement that costs least
        self._distinct: dict[tuple, list[int]] = {}   # a gradient's HyperNodes, one per shape
        self.tier_names = cluster.fabric.tier_names

    def constraint(self, job: Job) -> Enforced:
        c = self.cluster
        if self.lower_bound:
            cons = effective(job.topology, c.tiers, self.tier_names)
            return cons if cons.kind != "any" else Enforced("domain", c.top_tier, cons.note)
        if not self.settings.enforce_topology:
            return Enforced("any", None, "the scheduler conf lacks network-topology-aware: no constraint")
        return effective(job.topology, c.tiers, self.tier_names)

    def gradients(self, root: int, limit: int) -> list[list[int]]:
        """Candidate HyperNodes inside ``root``, grouped by tier, lowest first, up to ``limit``."""
        c = self.cluster
        top = min(limit, c.g_tier[root])
        out = [c.below(root, t) for t in c.tiers if t <= top]
        if root == TOP and limit >= c.top_tier:
            out.append([TOP])
        return out

    def choose(self, cands: list[int], min_need: Need, score_need: Need, gang: int, gpus: int,
               placed: Iterable[int] = ()) -> Iterator[int]:
        """Eligible HyperNodes of one gradient, best binpack score first, then the task count (how
        many of the job's pods, ``placed`` on these nodes, each already holds), then name.

        HyperNodes in the same state (same size, same usage) are judged once: a gradient the cluster
        keeps state buckets for (``buckets.py``) is read bucket by bucket, each bucket's judgement
        kept for later jobs of the same shape; any other list is scanned.
        """
        c = self.cluster
        buckets = None if placed else c.state_buckets(cands)
        if buckets is not None:
            yield from self._choose_buckets(buckets, min_need, score_need, gang, gpus)
            return
        memo: dict[tuple, tuple[bool, float]] = {}
        scored = []
        for g in cands:
            key = c.state_key(g)
            judged = memo.get(key)
            if judged is None:
                ok = c.idle_fits(g, min_need) and not (gpus and c.gpu_slots(g, gpus) < gang)
                score = c.binpack(g, score_need) if ok and self.settings.plugin_weight else 0.0
                judged = memo[key] = (ok, score)
            if judged[0]:
                scored.append((-judged[1], 0, c.g_name[g], g))
        if placed and scored:                  # taskNum: only a later SubJob of a job has pods placed
            tasks = Counter(g for node in placed for g in c.node_chain[node])
            scored = [(score, -tasks[g], name, g) for score, _, name, g in scored]
        if not scored:
            return
        best = min(scored)[-1]
        yield best                          # usually the dry-run succeeds here: no need to sort
        scored.sort()
        yield from (g for *_, g in scored if g != best)

    def _choose_buckets(self, buckets: StateBuckets, min_need: Need, score_need: Need, gang: int,
                        gpus: int) -> Iterator[int]:
        """``choose`` over state buckets: the same order (score, then name), one judgement per state."""
        c = self.cluster
        weighted = bool(self.settings.plugin_weight)
        shape = (tuple(min_need), tuple(score_need), gang, gpus, weighted)
        eligible = []
        for bucket in buckets.buckets.values():
            ranks = bucket.ranks
            judged = bucket.judged.get(shape)
            if judged is None:
                g = buckets.by_rank[ranks[0]]
                ok = c.idle_fits(g, min_need) and not (gpus and c.gpu_slots(g, gpus) < gang)
                judged = bucket.judged[shape] = (ok, c.binpack(g, score_need) if ok and weighted else 0.0)
            if judged[0]:
                eligible.append((-judged[1], ranks[0], ranks))
        if not eligible:
            return
        by_rank = buckets.by_rank
        best = min(eligible)[1]
        later = [(score, list(ranks)) for score, _, ranks in eligible]   # the buckets move on while we yield
        yield by_rank[best]
        for _, r in sorted((score, r) for score, ranks in later for r in ranks):
            if r != best:
                yield by_rank[r]

    def place(self, job: Job, prep: Prepared) -> JobOutcome:
        if job.unscheduled:
            return JobOutcome(job.name, "pending", job.unscheduled)
        c = self.cluster
        cons = self.constraint(job)
        if cons.kind == "never":
            return JobOutcome(job.name, "pending", f"{cons.note}: Pending forever")
        if prep.missing:
            return JobOutcome(job.name, "pending", f"no node offers {', '.join(prep.missing)}: Pending forever")
        gang = job.gang                          # minAvailable 0 still needs one pod to run anything
        if job.allocated_hypernode and not self.lower_bound:
            min_need = []                        # Volcano skips the pre-filter for partly running jobs
        elif job.min_resources is not None:      # a PodGroup's own minResources
            min_need = c.need({r: a for r, a in job.min_resources.items() if r in c.rindex})
        else:
            min_need = sparse(total(prep.needs[:gang], len(c.resources)))
        all_need = sparse(total(prep.needs, len(c.resources)))
        gpus = uniform_gpus(c, prep.needs)
        if cons.kind == "any":
            roots = [[TOP]]
        elif job.allocated_hypernode and not self.lower_bound:
            root = self._allocated_root(job.allocated_hypernode, cons.tier)
            if root is None:
                return JobOutcome(job.name, "pending", f"{cons.note}: its running tasks' HyperNode "
                               f"{job.allocated_hypernode} is unknown or above the allowed tier")
            roots = self.gradients(root, cons.tier)
        else:
            roots = self.gradients(TOP, cons.tier)
        txn: list = []
        for cands in roots:
            if self.lower_bound and self.cost:
                best = self._cheapest(cands, job, prep, cons, min_need, all_need, gang, gpus)
                if best:
                    return best
                continue
            for g in self.choose(cands, min_need, all_need, gang, gpus):
                placed = self._dry_run(g, job, prep, txn)
                if self._ready(job, placed):
                    outcome = self._outcome(job, g, placed, cons)
                    if self.lower_bound:
                        c.rollback(txn)
                    return outcome
                c.rollback(txn)
        return JobOutcome(job.name, "pending", self._why_pending(job, cons))

    def _allocated_root(self, hypernode: str, tier: int) -> int | None:
        """A partly running job (or SubJob) searches only below the highest ancestor of its
        allocated HyperNode that its tier allows (Volcano's getSearchRoot)."""
        c = self.cluster
        g = c.group_of(hypernode)
        if g is None or c.g_tier[g] > tier:
            return None
        while True:
            parent = c.g_parent[g]
            if parent is None or c.g_tier[parent] > tier:
                return g
            g = parent

    def _within(self, inner: int, outer: int) -> bool:
        c = self.cluster
        while inner is not None:
            if inner == outer:
                return True
            inner = c.g_parent[inner]
        return False

    def _ready(self, job: Job, placed: dict[int, int]) -> bool:
        """Volcano's JobReady: minAvailable tasks, and per subGroupPolicy minSubGroups ready SubJobs."""
        if len(placed) + job.running < job.min_available or not placed:
            return False
        if job.min_partitions:
            ready = dict(job.ready_partitions)
            for part in job.partitions:
                if part.running + sum(1 for i in part.pods if i in placed) >= part.size:
                    ready[part.policy] = ready.get(part.policy, 0) + 1
            if any(ready.get(policy, 0) < need for policy, need in job.min_partitions.items()):
                return False
        return True

    def _cheapest(self, cands: list[int], job: Job, prep: Prepared, cons: Enforced, min_need: Need,
                  all_need: Need, gang: int, gpus: int) -> JobOutcome | None:
        """The lower bound's pick in one gradient: of the HyperNodes that hold the job alone, the one
        where it costs least (HyperNodes alike in size, shape and usage are tried once)."""
        c = self.cluster
        best: tuple[float, JobOutcome] | None = None
        key = tuple(cands)
        distinct = self._distinct.get(key)            # the bound's cluster is empty between jobs
        if distinct is None:
            shapes: dict[tuple, int] = {}
            for g in cands:
                shapes.setdefault((c.state_key(g), len(c.g_children[g]), len(c.g_nodes[g])), g)
            distinct = self._distinct[key] = list(shapes.values())
        txn: list = []
        for g in self.choose(distinct, min_need, all_need, gang, gpus):
            placed = self._dry_run(g, job, prep, txn)
            if len(placed) >= gang:
                outcome = self._outcome(job, g, placed, cons)
                seconds = self.cost(job, outcome)
                if best is None or seconds < best[0]:
                    best = (seconds, outcome)
            c.rollback(txn)
        return best[1] if best else None

    def _near(self, job: Job) -> tuple[int | None, list[int]]:
        """A partly running job's allocated HyperNode and its running tasks' nodes, for the node score."""
        c = self.cluster
        if self.lower_bound or not job.allocated_hypernode or job.topology is None:
            return None, []
        return c.group_of(job.allocated_hypernode), [c.node_index[n] for n in job.running_nodes if n in c.node_index]

    def _dry_run(self, g: int, job: Job, prep: Prepared, txn: list) -> dict[int, int]:
        placed: dict[int, int] = {}
        near, running = self._near(job)
        for kind, unit in self._units(job, prep):
            if kind == "pods":
                placed.update(fill(self.cluster, g, unit, prep, txn, near, running))
            else:
                placed.update(self._place_partition(g, job, unit, prep, txn, placed.values()))
        return placed

    @staticmethod
    def _units(job: Job, prep: Prepared) -> list[tuple[str, object]]:
        """Units in placement order. With minSubGroups, Volcano places first the fewest SubJobs
        that make each policy's minimum (organizeJobWorksheet's required SubJobs), then the rest."""
        if not job.min_partitions:
            return prep.units
        count = dict(job.ready_partitions)
        for kind, unit in prep.units:
            if kind == "partition" and unit.running >= unit.size:
                count[unit.policy] = count.get(unit.policy, 0) + 1
        first, rest = [], []
        for kind, unit in prep.units:
            if kind == "partition" and unit.running < unit.size \
                    and count.get(unit.policy, 0) < job.min_partitions.get(unit.policy, 0):
                count[unit.policy] = count.get(unit.policy, 0) + 1
                first.append((kind, unit))
            else:
                rest.append((kind, unit))
        return first + rest

    def _place_partition(self, g: int, job: Job, part: Partition, prep: Prepared, txn: list,
                         near: Iterable[int]) -> dict[int, int]:
        """One SubJob gang inside the job's HyperNode ``g``: all its pods or none."""
        c = self.cluster
        pods = list(part.pods)
        if part.topology is None:
            cons = Enforced("any", None, "the job's constraint")
        elif self.lower_bound or self.settings.enforce_topology:
            cons = effective(part.topology, c.tiers, self.tier_names, bound=c.g_tier[g])
        else:
            cons = Enforced("any", None, "not enforced")
        if cons.kind == "never":
            return {}
        sub_txn: list = []

        def whole(h: int) -> dict[int, int]:
            """The partition's pods first-fit inside ``h``: all of them, or none and nothing taken."""
            placed = fill(c, h, pods, prep, sub_txn, *self._near(job))
            if len(placed) >= part.gang:
                txn.extend(sub_txn)
                return placed
            c.rollback(sub_txn)
            return {}

        if cons.kind == "any":
            return whole(g)
        root = g
        if part.allocated_hypernode and not self.lower_bound:
            # where its running tasks are, intersected with the job's HyperNode (getSearchRoot)
            allowed = self._allocated_root(part.allocated_hypernode, cons.tier)
            if allowed is None:
                return {}
            if self._within(allowed, g):
                root = allowed
            elif not self._within(g, allowed):
                return {}
        needs = [prep.needs[i] for i in pods]
        need = sparse(total(needs, len(c.resources)))
        for cands in self.gradients(root, cons.tier):
            for h in self.choose(cands, need, need, len(pods), uniform_gpus(c, needs), list(near)):
                placed = whole(h)
                if placed:
                    return placed
        return {}

    def _outcome(self, job: Job, g: int, placed: dict[int, int], cons: Enforced) -> JobOutcome:
        c = self.cluster
        pods = [(job.pods[i].name, placed[i]) for i in sorted(placed)]
        reason = None
        if len(placed) < len(job.pods):
            reason = (f"{len(job.pods) - len(placed)} of {len(job.pods)} pods beyond minAvailable "
                      f"({job.min_available}) did not fit and stay Pending")
        if cons.kind == "any" and not self.lower_bound:
            return JobOutcome(job.name, "placed", reason, pods=pods)     # where: the smallest HyperNode holding it
        return JobOutcome(job.name, "placed", reason, c.g_name[g], c.g_tier[g], pods)

    def _why_pending(self, job: Job, cons: Enforced) -> str:
        c = self.cluster
        gang = job.gang
        what = f"{gang} pods ({job.gpus_for(gang)} GPUs)"
        if job.partitions:
            what += f" in partitions of {len(job.partitions[0].pods)}"
        if cons.kind == "any" or cons.tier >= c.top_tier:
            where = "the cluster"
        else:
            where = f"any HyperNode at tier <= {tier_label(cons.tier, self.tier_names, c.top_tier)}"
        if self.lower_bound:
            return f"{cons.note}: {what} do not fit in {where}, even on the empty fabric: Pending forever"
        return f"{cons.note}: {what} do not fit in {where} now"


class Oblivious:
    """First-fit by node in fabric order, the gang all-or-nothing; topology ignored."""

    name = "oblivious"

    def __init__(self, cluster: Cluster):
        self.cluster = cluster
        self.cursor: dict[tuple, int] = {}    # per request vector: nodes before it are too full

    def place(self, job: Job, prep: Prepared) -> JobOutcome:
        if job.unscheduled:
            return JobOutcome(job.name, "pending", job.unscheduled)
        c = self.cluster
        if prep.missing:
            return JobOutcome(job.name, "pending", f"no node offers {', '.join(prep.missing)}: Pending forever")
        count = len(c.node_names)
        local: dict[tuple, int] = {}
        for key, need in zip(prep.keys, prep.needs):      # advance on committed state only
            if key not in local:
                p = self.cursor.get(key, 0)
                while p < count and not c.fits(p, need):
                    p += 1
                self.cursor[key] = local[key] = p
        txn: list = []
        placed: dict[int, int] = {}
        for i, (key, need) in enumerate(zip(prep.keys, prep.needs)):
            p = local[key]
            while p < count and not c.fits(p, need):
                p += 1
            local[key] = p
            if p == count:
                continue
            c.apply(p, need)
            txn.append((p, need))
            placed[i] = p
        if len(placed) < job.gang:
            c.rollback(txn)
            return JobOutcome(job.name, "pending", f"first-fit by node found room for {len(placed)} of the "
                           f"{job.gang} pods the gang needs")
        reason = None
        if len(placed) < len(job.pods):
            reason = (f"{len(job.pods) - len(placed)} of {len(job.pods)} pods beyond minAvailable "
                      f"({job.min_available}) did not fit and stay Pending")
        return JobOutcome(job.name, "placed", reason, pods=[(job.pods[i].name, placed[i]) for i in sorted(placed)])


# --- the stack's scheduler configuration ----------------------------------------------------------

PLUGIN = "network-topology-aware"


def settings_from_conf(text: str, source: str) -> SchedulerSettings:
    """Binpack weights from a ``volcano-scheduler.conf``, parsed the way Volcano parses arguments
    (Volcano v1.15.1's plugin arguments): ints only as YAML ints (a quoted "5" is ignored), negative -> 1,
    ``hypernode.binpack.resources`` a comma-separated string. A conf without the plugin enforces
    no network topology at all (§3).
    """
    conf, problem = parse_conf(text)
    if conf is None and problem and problem.startswith("is not valid YAML"):
        return SchedulerSettings(source=f"{source} does not parse; baseline weights assumed")
    plugin = next((p for _, p in conf_plugins(conf or {}) if p.get("name") == PLUGIN), None)
    actions = conf_actions(conf or {}) or DEFAULT_ACTIONS
    job_order = job_order_plugins(p for _, p in conf_plugins(conf or {}))
    if plugin is None:
        return SchedulerSettings(enforce_topology=False, actions=actions, job_order=job_order,
                        source=f"{source} lacks {PLUGIN}: hard topology constraints are not enforced")
    args = plugin.get("arguments") if isinstance(plugin.get("arguments"), dict) else {}

    def int_arg(key: str, default: int) -> int:
        value = args.get(key)
        if isinstance(value, bool) or not isinstance(value, int):
            return default
        return default if value < 0 else value

    weights = {"cpu": int_arg("hypernode.binpack.cpu", 1), "memory": int_arg("hypernode.binpack.memory", 1)}
    listed = args.get("hypernode.binpack.resources")
    if isinstance(listed, str):
        for name in (n.strip() for n in listed.split(",")):
            if name:
                weights[name] = int_arg(f"hypernode.binpack.resources.{name}", 1)
    weight = args.get("weight")
    plugin_weight = weight if isinstance(weight, int) and not isinstance(weight, bool) and weight >= 0 else 1
    enable = args.get("hypernode.binpack.normal-pod.enable", True)      # Go's GetBool: a bool or ParseBool text
    if isinstance(enable, str):
        enable = parse_bool(enable) is not False   # text that is no boolean leaves the default, true
    fading = args.get("hypernode.binpack.normal-pod.fading", 0.8)      # GetFloat64: a float or an int
    fading = float(fading) if isinstance(fading, (int, float)) and not isinstance(fading, bool) else 0.8
    described = ", ".join(f"{k} {v}" for k, v in weights.items())
    return SchedulerSettings(weights=weights, plugin_weight=plugin_weight, actions=actions, job_order=job_order,
                             normal_pod_binpack=enable if isinstance(enable, bool) else True,
                             normal_pod_fading=fading if fading >= 0 else 0.8,
                             source=f"{source} (binpack weights: {described})")


def settings_from_objects(objects: Iterable[dict]) -> SchedulerSettings:
    """The conf in effect among manifests (``modules.semantics.scheduler_conf``): a user ConfigMap
    that replaces the chart's, else the release's ``custom.scheduler_config_override``, else the
    chart default (baseline weights)."""
    conf = conf_in_effect(objects)
    if conf is None or not isinstance(conf.text, str) or not conf.text.strip():
        return SchedulerSettings()
    m = conf.obj.get("metadata") or {}
    if conf.obj.get("kind") == "ConfigMap":
        where = f"{m.get('namespace')}/{m.get('name')}" if m.get("namespace") else str(m.get("name"))
        return settings_from_conf(conf.text, f"the scheduler conf of ConfigMap {where}")
    return settings_from_conf(conf.text, f"the scheduler conf of release {m.get('name')}")


def settings_from_bundle(bundle) -> SchedulerSettings:
    """The scheduler conf the stack installs: its Volcano release's values, or a ConfigMap of the
    stack that replaces the one the chart renders."""
    objects = [release_manifest(r.name, r.namespace, r.chart, r.repository, r.version, r.values)
               for r in getattr(bundle, "releases", [])]
    objects += [r.obj for r in getattr(bundle, "resources", [])]
    return settings_from_objects(objects)
