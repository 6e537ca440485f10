"""The fabric probe in the cluster: one Volcano Job per tier, or a CronJob that launches them.

Placement is what makes a probe measure a tier. Volcano's hard network topology only bounds a job
from above (all pods inside one HyperNode of tier <= N); the scheduler may still put both pods in
one leaf. So every inter-node probe has two pods, tasks ``a`` and ``b``, and a lower bound too:

- tier 1 (within one leaf): hard ``highestTierAllowed: 1`` plus pod anti-affinity on the hostname,
  so the pods share a leaf but not a node;
- tier t >= 2 on a static fabric (HyperNodes rendered from switches): hard ``highestTierAllowed: t``
  plus node affinity that puts ``a`` under one child of a tier-t switch and ``b`` under another, so
  their lowest common switch is exactly that tier-t switch;
- tier t >= 2 on a label-defined fabric (Volcano discovers HyperNodes from node labels): hard
  ``highestTierAllowed: t`` plus pod anti-affinity on the tier t-1 label, so the pods sit in
  different tier-(t-1) domains of one tier-t domain;
- tier 0 (``node``): one pod, all GPUs of one node, no network at all.
"""
from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from modules.core.bundle import Resource
from modules.core.context import RenderContext
from modules.fabric.model import Fabric, NodePool
from modules.nccl.render import configmap_name
from modules.storage import volumes
from modules.volcano.render import queue_names, queue_ref

from . import measure

MODULE = "probe"
HERE = Path(__file__).resolve().parent
CONFIGMAP = "fabric-probe"
LAUNCHER = "fabric-probe-launcher"
MOUNT = "/opt/trainstack"
MASTER_PORT = 29500
NODE_TIER = "node"
RUN_LABEL = "trainstack.io/probe-run"
TIER_LABEL = "trainstack.io/probe-tier"
JOB_NAME_LABEL = "volcano.sh/job-name"     # set by Volcano on every pod of a Job
HOSTNAME = "kubernetes.io/hostname"


@dataclass(frozen=True)
class Tier:
    """A fabric tier the probe measures across."""
    number: int          # 0 = inside a node
    name: str            # tier name as alerts and results label it

    @property
    def slug(self) -> str:
        """A DNS label part for object names (tier names of label fabrics are label keys)."""
        return re.sub(r"[^a-z0-9-]+", "-", self.name.lower()).strip("-")[:40] or f"tier{self.number}"


@dataclass
class Placement:
    """How one tier's pods are placed: per task, the nodes it may use (None: any), and affinity."""

    tier: Tier
    pods: int
    nodes: dict[str, list[str] | None] = field(default_factory=dict)
    apart_on: str | None = None      # topology key the two pods must differ on
    together_on: str | None = None   # topology key the two pods must share
    note: str = ""


# --- which tiers, which pool ------------------------------------------------------------------

def available_tiers(fabric: Fabric) -> list[Tier]:
    numbers = fabric.tiers or sorted(fabric.tier_names)
    return [Tier(0, NODE_TIER)] + [Tier(t, fabric.tier_names.get(t, f"tier-{t}")) for t in numbers]


def probed_tiers(ctx: RenderContext) -> list[Tier]:
    """The tiers the stack probes (monitoring alerts on exactly these)."""
    cfg = ctx.section(MODULE)
    tiers = available_tiers(ctx.fabric)
    if not cfg["tiers"]:
        wanted = tiers
    else:
        by_name = {t.name: t for t in tiers}
        for i, name in enumerate(cfg["tiers"]):
            if name not in by_name:
                raise ctx.expected(f"probe.tiers[{i}]", "one of " + ", ".join(by_name), name)
        wanted = [t for t in tiers if t.name in cfg["tiers"]]
    pool = probe_pool(ctx)
    if pool.gpus < 2:   # one rank per node: nothing to measure inside a node
        wanted = [t for t in wanted if t.number != 0]
    return wanted


def probe_pool(ctx: RenderContext) -> NodePool:
    cfg = ctx.section(MODULE)
    pools = ctx.fabric.pools
    if cfg["pool"]:
        if cfg["pool"] not in pools:
            raise ctx.expected("probe.pool", "one of the fabric's node pools: " + ", ".join(pools), cfg["pool"])
        return pools[cfg["pool"]]
    with_gpus = [p for p in pools.values() if p.gpus]
    return (with_gpus or list(pools.values()))[0]


# --- placement ----------------------------------------------------------------------------------

def discovery_labels(fabric: Fabric) -> dict[int, str]:
    """Tier -> node label for a label-defined fabric (Volcano's label discoverer: the list runs from
    the top tier down to the node level, which is dropped; the entry above it is tier 1)."""
    for entry in fabric.discovery or []:
        types = ((entry.get("config") or {}).get("networkTopologyTypes") or {}) if isinstance(entry, dict) else {}
        for name in sorted(types):
            levels = [level.get("nodeLabel") for level in types[name] if isinstance(level, dict)]
            if len(levels) >= 2 and all(isinstance(k, str) for k in levels):
                return {tier: key for tier, key in enumerate(reversed(levels[:-1]), start=1)}
    return {}


def _spread(fabric: Fabric, switch: str, pool: str, limit: int) -> list[str]:
    """Up to ``limit`` pool nodes below a switch, taken round-robin over its leaves."""
    columns = [[n for n in fabric.nodes_under(leaf) if fabric.nodes[n].pool.name == pool]
               for leaf in _leaves_under(fabric, switch)]
    out: list[str] = []
    row = 0
    while len(out) < limit and any(row < len(c) for c in columns):
        out.extend(c[row] for c in columns if row < len(c))
        row += 1
    return sorted(out[:limit])


def _leaves_under(fabric: Fabric, switch: str) -> list[str]:
    s = fabric.switches[switch]
    if s.is_leaf:
        return [switch]
    return [leaf for child in s.children for leaf in _leaves_under(fabric, child)]


def placement(fabric: Fabric, tier: Tier, pool: NodePool, candidates: int) -> Placement | None:
    """Where a tier's probe pods may go so that exactly that tier's link is crossed; None if the
    fabric has no two places whose lowest common switch is at that tier."""
    def pool_nodes(switch: str) -> int:
        return fabric.pool_counts(switch).get(pool.name, 0)

    if tier.number == 0:
        return Placement(tier, pods=1, nodes={"a": None})
    if tier.number == 1:
        if fabric.switches and all(pool_nodes(leaf.name) < 2 for leaf in fabric.at_tier(1)):
            return None   # no leaf holds two of the pool's nodes: its gang of two could never start
        return Placement(tier, pods=2, nodes={"a": None, "b": None}, apart_on=HOSTNAME,
                         note="hard tier 1 keeps both pods in one leaf; "
                              "anti-affinity on the hostname puts them on two nodes")
    labels = discovery_labels(fabric)
    if not fabric.switches and labels:
        below = labels.get(tier.number - 1)
        if below is None:
            return None
        return Placement(tier, pods=2, nodes={"a": None, "b": None}, apart_on=below,
                         together_on=labels.get(tier.number),
                         note=f"hard tier {tier.number} keeps both pods in one tier-{tier.number} domain; "
                              f"anti-affinity on {below} puts them under two different tier-{tier.number - 1} domains")

    for switch in sorted(fabric.at_tier(tier.number), key=lambda s: (-pool_nodes(s.name), s.name)):
        children = sorted((c for c in switch.children if pool_nodes(c)), key=lambda c: (-pool_nodes(c), c))
        if len(children) >= 2:
            first, second = children[:2]
            return Placement(tier, pods=2, nodes={"a": _spread(fabric, first, pool.name, candidates),
                                                  "b": _spread(fabric, second, pool.name, candidates)},
                             note=f"pod a under {first}, pod b under {second}: their lowest common switch "
                                  f"is {switch.name} (tier {tier.number})")
    return None


# --- objects ------------------------------------------------------------------------------------

PUSHGATEWAY_ENV = "TRAINSTACK_PUSHGATEWAY"


def _command(ctx: RenderContext, tier: Tier, pool: NodePool, pods: int) -> str:
    cfg = ctx.section(MODULE)
    nproc = max(pool.gpus, 1)
    backend = "nccl" if pool.gpus else "gloo"
    args = [f"{MOUNT}/probe.py", "--backend", backend, "--tier", tier.name,
            "--collectives", ",".join(cfg["collectives"]), "--sizes", cfg["sizes"],
            "--warmup", str(cfg["warmup"]), "--iters", str(cfg["iters"])]
    if cfg["pushgateway"]:
        args += ["--pushgateway", cfg["pushgateway"]]
    run = " ".join(_quote(a) for a in args)
    if cfg.get("pushgatewaySecret") and cfg["pushgateway"]:
        raise ctx.error("probe.pushgatewaySecret", "set pushgateway or pushgatewaySecret, not both")
    if cfg.get("pushgatewaySecret"):   # expanded by the shell at run time, from the Secret's key
        run += f' --pushgateway "${PUSHGATEWAY_ENV}"'

    if pods == 1:
        return (f"exec torchrun --nnodes 1 --nproc-per-node {nproc} --master-addr 127.0.0.1 "
                f"--master-port {MASTER_PORT} {run}\n")
    # Pod b may start before pod a's name resolves (Volcano's svc plugin publishes it).
    return ("set -eu\n"
            "for i in $(seq 1 150); do getent hosts \"$MASTER_ADDR\" >/dev/null && break; sleep 2; done\n"
            f"exec torchrun --nnodes {pods} --nproc-per-node {nproc} --node-rank \"$NODE_RANK\" "
            f"--master-addr \"$MASTER_ADDR\" --master-port {MASTER_PORT} {run}\n")


def _quote(arg: str) -> str:
    return arg if re.fullmatch(r"[A-Za-z0-9_./:,=@+-]+", arg) else "'" + arg.replace("'", "'\\''") + "'"


def _resources(ctx: RenderContext, pool: NodePool) -> dict:
    cfg = ctx.section(MODULE)["resources"]
    whole = {}
    if pool.gpus:
        whole[pool.gpu_resource] = str(pool.gpus)
    whole.update({name: str(count) for name, count in sorted(pool.resources.items()) if count})
    requests = {"cpu": cfg["cpu"], "memory": cfg["memory"], **whole}
    return {"requests": requests, "limits": dict(requests)}


def _affinity_term(key: str, run: str) -> dict:
    return {"labelSelector": {"matchLabels": {RUN_LABEL: run}}, "topologyKey": key}


def pod_template(ctx: RenderContext, plan: Placement, task: str, rank: int, run: str, pool: NodePool) -> dict:
    cfg = ctx.section(MODULE)
    nccl = ctx.section("nccl")["transport"]
    env = []
    if plan.pods > 1:   # rank 0 runs in task a; its pod is <job>-a-0, resolvable as <job>-a-0.<job> (svc plugin)
        env = [{"name": "JOB_NAME", "valueFrom": {"fieldRef": {"fieldPath": f"metadata.labels['{JOB_NAME_LABEL}']"}}},
               {"name": "NODE_RANK", "value": str(rank)},
               {"name": "MASTER_ADDR", "value": "$(JOB_NAME)-a-0.$(JOB_NAME)"}]
    env += [{"name": "OMP_NUM_THREADS", "value": "1"}, {"name": "PYTHONUNBUFFERED", "value": "1"}]
    if cfg.get("pushgatewaySecret"):
        env.append({"name": PUSHGATEWAY_ENV, "valueFrom": {"secretKeyRef": dict(cfg["pushgatewaySecret"])}})
    claims = copy.deepcopy(probe_claims(ctx))   # each template its own dicts (no YAML aliases)
    spec: dict = {
        "restartPolicy": "Never",
        "activeDeadlineSeconds": cfg["timeoutSeconds"],
        "containers": [{
            "name": "probe",
            "image": cfg["image"],
            "command": ["/bin/bash", "-c", _command(ctx, plan.tier, pool, plan.pods)],
            "env": env,
            "envFrom": [{"configMapRef": {"name": configmap_name(nccl)}}],
            "resources": _resources(ctx, pool),
            # RDMA registers (pins) memory; the default memlock limit is too small for NCCL over IB.
            "securityContext": {"allowPrivilegeEscalation": False,
                                "capabilities": {"drop": ["ALL"], "add": ["IPC_LOCK"]}},
            "volumeMounts": [{"name": "probe", "mountPath": MOUNT, "readOnly": True},
                             {"name": "dshm", "mountPath": "/dev/shm"}, *claims.mounts],
        }],
        "volumes": [{"name": "probe",
                     "configMap": {"name": CONFIGMAP, "items": [{"key": "probe.py", "path": "probe.py"}]}},
                    {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": cfg["resources"]["shm"]}},
                    *claims.volumes],
    }
    # Probe pods never call the API server; the runtime's seccomp filter suffices for NCCL.
    spec["automountServiceAccountToken"] = False
    spec["securityContext"] = {"seccompProfile": {"type": "RuntimeDefault"}}
    if cfg["priorityClassName"]:
        spec["priorityClassName"] = cfg["priorityClassName"]
    if pool.taints:
        spec["tolerations"] = [{"key": t["key"], "operator": "Equal" if t.get("value") else "Exists",
                                **({"value": t["value"]} if t.get("value") else {}), "effect": t["effect"]}
                               for t in pool.taints]
    affinity: dict = {}
    nodes = plan.nodes.get(task)
    if nodes:
        affinity["nodeAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": nodes}]}]}}
    if plan.together_on:
        affinity["podAffinity"] = {
            "requiredDuringSchedulingIgnoredDuringExecution": [_affinity_term(plan.together_on, run)]}
    if plan.apart_on:
        affinity["podAntiAffinity"] = {
            "requiredDuringSchedulingIgnoredDuringExecution": [_affinity_term(plan.apart_on, run)]}
    if affinity:
        spec["affinity"] = affinity
    labels = {"app.kubernetes.io/name": "fabric-probe", TIER_LABEL: plan.tier.slug, RUN_LABEL: run}
    return {"metadata": {"labels": labels}, "spec": spec}


def probe_claims(ctx: RenderContext) -> volumes.Mounts:
    """The claims of `probe.volumes`, in the probe's namespace, checked once per render: every pod
    template and the objects' dependencies read this one result (never change its dicts: copy)."""
    key = f"{MODULE}.claims"
    if key not in ctx.derived:
        ctx.derived[key] = _resolve_claims(ctx)
    return ctx.derived[key]


def _resolve_claims(ctx: RenderContext) -> volumes.Mounts:
    """`probe.volumes` through the one resolver; the mount path /opt/trainstack is the script's."""
    claims = volumes.resolve(ctx, "probe.volumes", ctx.section(MODULE)["volumes"], probe_namespace(ctx))
    for i, mount in enumerate(claims.mounts):
        if mount["mountPath"] == MOUNT or mount["mountPath"].startswith(MOUNT + "/"):
            raise ctx.error(f"probe.volumes[{i}].mountPath", f"{MOUNT} holds the probe script; mount the claim "
                            "elsewhere")
    return claims


def volcano_job(ctx: RenderContext, plan: Placement, pool: NodePool, name: str | None, run: str,
                scheduled: bool) -> dict:
    cfg = ctx.section(MODULE)
    namespace = probe_namespace(ctx)
    tasks = ["a", "b"][:plan.pods]
    meta = ctx.metadata(MODULE, name or "", namespace, labels={TIER_LABEL: plan.tier.slug},
                        annotations={"trainstack.io/probe-placement": plan.note} if plan.note else None)
    if scheduled:   # the launcher creates one per run
        del meta["name"]
        meta = {"generateName": f"fabric-probe-{plan.tier.slug}-", **meta}
    spec: dict = {"schedulerName": "volcano", "queue": cfg["queue"], "minAvailable": plan.pods, "maxRetry": 1}
    if plan.tier.number >= 1:
        spec["networkTopology"] = {"mode": "hard", "highestTierAllowed": plan.tier.number}
    if plan.pods > 1:
        spec["plugins"] = {"svc": [], "env": []}   # svc: stable pod DNS names for the rendezvous
    if cfg["priorityClassName"]:
        spec["priorityClassName"] = cfg["priorityClassName"]
    if scheduled:
        spec["ttlSecondsAfterFinished"] = 86400
    spec["tasks"] = [{"name": task, "replicas": 1,
                      "template": pod_template(ctx, plan, task, rank, run, pool)}
                     for rank, task in enumerate(tasks)]
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": meta, "spec": spec}


def probe_namespace(ctx: RenderContext) -> str:
    cfg = ctx.section(MODULE)
    namespaces = ctx.stack.values["trainingNamespaces"]
    namespace = cfg["namespace"] or namespaces[0]
    if namespace not in namespaces:
        raise ctx.error("probe.namespace", f"expected one of the training namespaces ({', '.join(namespaces)}), "
                        f"got {namespace!r}: the probe loads the nccl-<transport> ConfigMap, which exists only there")
    return namespace


def _check_queue(ctx: RenderContext) -> None:
    queue = ctx.section(MODULE)["queue"]
    declared = ctx.stack.values.get("volcano", {}).get("queues") or []
    names = {q.get("name") for q in declared if isinstance(q, dict)} | {"default"}
    if declared and queue not in names:
        raise ctx.expected("probe.queue", "a queue the stack declares (" + ", ".join(sorted(n for n in names if n))
                           + ")", queue)


def plans(ctx: RenderContext) -> tuple[NodePool, list[Placement]]:
    cfg = ctx.section(MODULE)
    pool = probe_pool(ctx)
    out = []
    for tier in probed_tiers(ctx):
        plan = placement(ctx.fabric, tier, pool, cfg["candidateNodes"])
        if plan is None:
            ctx.warn(f"{ctx.stack.file}: trainstack:probe: tier {tier.name} cannot be probed: no switch at "
                     f"that tier has two children with {pool.name} nodes")
            continue
        out.append(plan)
    return pool, out


def render(ctx: RenderContext) -> list[Resource]:
    cfg = ctx.section(MODULE)
    if not cfg["enabled"]:
        return []
    try:
        measure.parse_sizes(cfg["sizes"])
    except ValueError as exc:
        raise ctx.error("probe.sizes", str(exc)) from None
    namespace = probe_namespace(ctx)
    _check_queue(ctx)
    pool, tier_plans = plans(ctx)
    nccl_cm = f"ConfigMap/{namespace}/{configmap_name(ctx.section('nccl')['transport'])}"
    scheduled = bool(cfg["schedule"])
    data = {"probe.py": (HERE / "measure.py").read_text(encoding="utf-8")}
    out: list[Resource] = []
    if scheduled:
        data["launch.py"] = (HERE / "launcher.py").read_text(encoding="utf-8")
        for plan in tier_plans:
            job = volcano_job(ctx, plan, pool, None, "__RUN_ID__", scheduled=True)
            data[f"probe-{plan.tier.slug}.json"] = json.dumps(job, indent=1, sort_keys=True) + "\n"
        out += launcher_objects(ctx, namespace, [f"probe-{p.tier.slug}.json" for p in tier_plans])
    else:
        for plan in tier_plans:
            name = f"fabric-probe-{plan.tier.slug}"
            out.append(Resource(MODULE, volcano_job(ctx, plan, pool, name, name, scheduled=False),
                                depends_on=(f"ConfigMap/{namespace}/{CONFIGMAP}", nccl_cm, *_queue_dep(ctx),
                                            *_claim_deps(ctx))))
    configmap = {"apiVersion": "v1", "kind": "ConfigMap",
                 "metadata": ctx.metadata(MODULE, CONFIGMAP, namespace), "data": dict(sorted(data.items()))}
    return [Resource(MODULE, configmap)] + out


def launcher_objects(ctx: RenderContext, namespace: str, templates: list[str]) -> list[Resource]:
    cfg = ctx.section(MODULE)
    meta = lambda kind_name: ctx.metadata(MODULE, kind_name, namespace)   # noqa: E731
    account = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta(LAUNCHER)}
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": meta(LAUNCHER),
            "rules": [{"apiGroups": ["batch.volcano.sh"], "resources": ["jobs"], "verbs": ["create", "get", "delete"]}]}
    binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": meta(LAUNCHER),
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": LAUNCHER},
               "subjects": [{"kind": "ServiceAccount", "name": LAUNCHER, "namespace": namespace}]}
    deadline = cfg["timeoutSeconds"] * max(len(templates), 1) + 600
    container = {
        "name": "launcher",
        "image": cfg["launcherImage"],
        "command": ["python3", f"{MOUNT}/launch.py", "--namespace", namespace,
                    "--timeout", str(cfg["timeoutSeconds"]), *[f"{MOUNT}/{t}" for t in templates]],
        "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}, "limits": {"memory": "128Mi"}},
        "securityContext": {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True,
                            "runAsNonRoot": True, "runAsUser": 65534,
                            "capabilities": {"drop": ["ALL"]}, "seccompProfile": {"type": "RuntimeDefault"}},
        "volumeMounts": [{"name": "probe", "mountPath": MOUNT, "readOnly": True}],
    }
    cron = {
        "apiVersion": "batch/v1", "kind": "CronJob", "metadata": meta("fabric-probe"),
        "spec": {
            "schedule": cfg["schedule"],
            "concurrencyPolicy": "Forbid",
            "startingDeadlineSeconds": 3600,
            "successfulJobsHistoryLimit": 3,
            "failedJobsHistoryLimit": 3,
            "jobTemplate": {"spec": {"backoffLimit": 0, "activeDeadlineSeconds": deadline, "template": {
                "metadata": {"labels": {"app.kubernetes.io/name": "fabric-probe-launcher"}},
                # The launcher creates the probe Jobs, so it keeps its account's token.
                "spec": {"serviceAccountName": LAUNCHER, "restartPolicy": "Never",
                         "securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
                         "containers": [container],
                         "volumes": [{"name": "probe", "configMap": {"name": CONFIGMAP}}]}}}},
        },
    }
    keys = (f"ServiceAccount/{namespace}/{LAUNCHER}", f"Role/{namespace}/{LAUNCHER}",
            f"RoleBinding/{namespace}/{LAUNCHER}", f"ConfigMap/{namespace}/{CONFIGMAP}")
    return [Resource(MODULE, account), Resource(MODULE, role), Resource(MODULE, binding, depends_on=keys[:2]),
            Resource(MODULE, cron, depends_on=keys + _queue_dep(ctx) + _claim_deps(ctx))]


def _claim_deps(ctx: RenderContext) -> tuple[str, ...]:
    return probe_claims(ctx).claim_refs(probe_namespace(ctx))


def _queue_dep(ctx: RenderContext) -> tuple[str, ...]:
    """The probe's jobs are admitted only into an Open queue: wait for it when the bundle renders it."""
    queue = ctx.section(MODULE)["queue"]
    return (queue_ref(queue),) if queue in queue_names(ctx) else ()
