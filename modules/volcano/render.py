"""The Volcano chart release (scheduler configuration, discovery), tenant Queues and PriorityClasses."""
from __future__ import annotations


from modules.core.bundle import ChartRelease, Resource, release_key
from modules.core.context import RenderContext
from modules.core.quantity import parse_quantity
from modules.core.vocabulary.resource_names import is_device_count, is_extended
from modules.upstream.volcano.mutation import settle_webhook_defaults

from . import scheduler_conf

MODULE = "volcano"
CHART = "volcano"
REPOSITORY = "https://volcano-sh.github.io/helm-charts"
SCHEDULER_NAME = "volcano"   # the chart's default `custom.scheduler_name`; pods must name it
QUEUE_ANNOTATION = "scheduling.volcano.sh/queue-name"
# API groups whose CRDs and webhooks the 1.15 chart installs (templates/*_v1*.yaml, jobflow subchart).
SERVES = ("batch.volcano.sh", "bus.volcano.sh", "config.volcano.sh", "flow.volcano.sh",
          "nodeinfo.volcano.sh", "scheduling.volcano.sh", "shard.volcano.sh", "topology.volcano.sh")
RESERVED_QUEUES = ("default", "root")   # created by the Volcano controller itself
# Volcano's job and podgroup admission require the Queue's status.state == Open, which the controller
# sets after the Queue is created: Pulumi waits for it (pulumi-kubernetes' waitFor), and GitOps tools
# apply Queues in an earlier sync wave than the objects that use them (see after_queues).
WAIT_FOR_ANNOTATION = "pulumi.com/waitFor"
QUEUE_OPEN = "jsonpath={.status.state}=Open"
SYNC_WAVE_ANNOTATION = "argocd.argoproj.io/sync-wave"
QUEUE_WAVE = "1"   # their users: one wave later per step of depends_on (after_queues)
MINIMUM_VERSION = (1, 14, 0)   # tierName, highestTierName, partitionPolicy, hypernode.binpack.*
# Volcano releases trainstack knows (tags of volcano-sh/volcano; see README "Version"). Other
# versions render with a warning: check they are published before `pulumi up`.
KNOWN_RELEASES = ("1.14.0", "1.14.1", "1.14.2", "1.14.3", "1.14.4", "1.15.0", "1.15.1")


def release_ref(ctx: RenderContext) -> str:
    """Bundle key of the Volcano release (for modules whose objects need it first)."""
    cfg = ctx.section(MODULE)
    return release_key(cfg["namespace"], cfg["releaseName"])


def queue_names(ctx: RenderContext) -> list[str]:
    return [q["name"] for q in ctx.section(MODULE)["queues"]]


def queue_ref(name: str) -> str:
    return f"Queue/{name}"


def finish(ctx: RenderContext, bundle) -> None:
    """Core's hook once the Bundle is built: Jobs and PodGroups are admitted only once their Queue
    is Open, so Queue users go in later sync waves. Jobs and Queues are written as Volcano's mutating
    webhooks leave them on CREATE (the defaults they add are rendered), so the first diff after apply
    is empty and no applier resets a default the webhook set."""
    after_queues(bundle)
    settle_webhook_defaults([resource.obj for resource in bundle.resources])


def after_queues(bundle) -> None:
    """Objects that depend on a Queue, directly or through another such object (every dependency
    the Bundle knows, declared or implicit), go in a sync wave after it: Queues in wave 1, their
    users in 2, what needs those users (a TrainJob its runtime, a Deployment its PodGroup) in 3.
    Argo CD applies a wave only once the previous one is healthy; the Bundle's dependencies order
    Pulumi and `releases.yaml`. Bundle order is topological: one pass sees every dependency first."""
    waves: dict[str, int] = {}
    for resource in bundle.resources:
        if resource.obj.get("kind") == "Queue":
            waves[resource.key] = int(QUEUE_WAVE)
            continue
        below = max((waves.get(dep, 0) for dep in bundle.dependencies.get(resource.key, ())), default=0)
        waves[resource.key] = below + 1 if below else 0
        if below:
            meta = resource.obj["metadata"]
            meta["annotations"] = {**meta.get("annotations", {}), SYNC_WAVE_ANNOTATION: str(waves[resource.key])}


def resolve_queue(ctx: RenderContext, path: str, name: str) -> str:
    """A queue named in the stack (or "" for the first one); must be a Queue this bundle renders."""
    names = queue_names(ctx)
    return ctx.pick(path, name, names, f"one of the stack's queues ({', '.join(names)}, set in "
                    "trainstack:volcano.queues)")


def priority_class_names(ctx: RenderContext) -> list[str]:
    return [p["name"] for p in ctx.section(MODULE)["priorityClasses"]]


def resolve_priority_class(ctx: RenderContext, path: str, name: str) -> str:
    if not name:
        return ""
    names = priority_class_names(ctx)
    if name not in names:
        raise ctx.expected(path, "a PriorityClass listed in trainstack:volcano.priorityClasses "
                           f"({', '.join(names) or 'none listed'}); Trainer rejects TrainJobs whose "
                           "PriorityClass does not exist", name)
    return name


def gpu_resources(ctx: RenderContext) -> list[str]:
    pools = ctx.fabric.pools.values()
    return sorted({p.gpu_resource for p in pools if p.gpus > 0})


def _version(ctx: RenderContext, cfg: dict) -> str:
    version = cfg["version"]
    if tuple(int(x) for x in version.split(".")) < MINIMUM_VERSION:
        raise ctx.expected("volcano.version", "1.14.0 or newer (tier names, partitions and HyperNode "
                           "binpacking arrived in 1.14)", version)
    if version not in KNOWN_RELEASES:
        ctx.warn(f"{ctx.stack.file}: trainstack:volcano.version: {version} is not a Volcano release "
                 "trainstack knows; check `helm search repo volcano-sh/volcano --versions` before `pulumi up`")
    return version


def _actions(ctx: RenderContext, cfg: dict) -> None:
    actions = cfg["actions"]
    for required in ("enqueue", "allocate"):
        if required not in actions:
            raise ctx.error("volcano.actions", f"expected the list to include {required!r}, got "
                            f"{actions} (without enqueue, Kubeflow PodGroups never leave Pending)")
    if actions.index("enqueue") > actions.index("allocate"):
        raise ctx.error("volcano.actions", "expected enqueue before allocate, got " + ", ".join(actions))
    for classic, better in (("preempt", "gangpreempt"), ("reclaim", "gangreclaim")):
        if classic in actions:
            ctx.warn(f"{ctx.stack.file}: trainstack:volcano.actions: {classic} ignores network "
                     f"topology (volcano#4374); {better} is the topology-aware alternative")


def scheduler_config(ctx: RenderContext) -> str:
    cfg = ctx.section(MODULE)
    return scheduler_conf.dump(scheduler_conf.build(cfg, gpu_resources(ctx)))


def controller_config(ctx: RenderContext) -> dict:
    """HyperNode discovery: the label discoverer for label-defined fabrics, else explicitly none,
    so rendered HyperNodes never have a second writer (a mapping: the chart `toYaml`s it)."""
    discovery = ctx.fabric.discovery
    return {"networkTopologyDiscovery": [dict(d) for d in discovery] if discovery is not None else []}


def values(ctx: RenderContext, version: str) -> dict:
    cfg = ctx.section(MODULE)
    replicas = 2 if cfg["highAvailability"] else 1
    return {
        "basic": {"image_registry": cfg["imageRegistry"], "image_tag_version": f"v{version}"},
        "custom": {
            "scheduler_config_override": scheduler_config(ctx),
            "controller_config_override": controller_config(ctx),
            "vap_enable": cfg["vapEnable"],
            "leader_elect_enable": cfg["highAvailability"],
            "scheduler_replicas": replicas,
            "controller_replicas": replicas,
            "admission_replicas": replicas,
        },
    }


def _sorted(resources: dict) -> dict:
    """Amounts as quantity strings ("4096", not 4096): Volcano's queue admission policy calls
    quantity() on them, which takes strings only, so a bare integer fails the Queue's create."""
    return {name: str(resources[name]) for name in sorted(resources)}


# The policy rule that runs the same queue admission policy over manifests (InputError.rule).
ADMISSION = "upstream-admission"


def _check_shares(ctx: RenderContext, path: str, q: dict) -> None:
    """Volcano's queue admission (queues-validating.yaml, per resource): guarantee <= deserved,
    every guaranteed resource listed in deserved, deserved <= capability; guarantee <= capability."""
    guarantee, deserved, capability = q["guarantee"], q["deserved"], q["capability"]
    for resource, amount in guarantee.items():
        cap = capability.get(resource)
        if cap is not None and parse_quantity(amount) > parse_quantity(cap):
            raise ctx.error(f"{path}.guarantee.{resource}", f"the guarantee ({amount}) exceeds the "
                            f"queue's capability ({cap})", rule=ADMISSION)
        share = deserved.get(resource)
        if share is None:
            raise ctx.error(f"{path}.deserved", f"expected deserved.{resource} >= the guarantee ({amount}): "
                            "Volcano rejects a Queue whose guarantee lists a resource that deserved does not "
                            f"(\"must be >= guarantee\"), so `pulumi up` fails. Set deserved.{resource}, "
                            f"between {amount} and the capability", rule=ADMISSION)
        if parse_quantity(share) < parse_quantity(amount):
            raise ctx.error(f"{path}.deserved.{resource}", f"expected at least the guarantee ({amount}), got "
                            f"{share}: Volcano rejects the Queue (\"must be >= guarantee\")", rule=ADMISSION)
    for resource, share in deserved.items():
        cap = capability.get(resource)
        if cap is not None and parse_quantity(share) > parse_quantity(cap):
            raise ctx.error(f"{path}.deserved.{resource}", f"expected at most the capability ({cap}), got "
                            f"{share}: Volcano rejects the Queue (\"must be <= capability\")", rule=ADMISSION)


def _check_counts(ctx: RenderContext, path: str, q: dict) -> None:
    """Extended resources (GPUs, RDMA devices: a domain other than kubernetes.io) count devices, so
    a queue's amounts of them are whole numbers without a unit: `100Gi` GPUs would be 107374182400."""
    for part in ("capability", "deserved", "guarantee"):
        for resource, amount in q[part].items():
            if not is_extended(resource):
                continue
            if not is_device_count(amount):
                raise ctx.expected(f"{path}.{part}.{resource}", f"a whole number of devices such as 8 ({resource} "
                                   "is an extended resource: it counts devices, and a unit suffix or fraction "
                                   "makes it another number)", amount)


def queue(ctx: RenderContext, i: int, q: dict) -> Resource:
    path = f"volcano.queues[{i}]"
    if q["name"] in RESERVED_QUEUES:
        raise ctx.error(f"{path}.name", f"queue {q['name']!r} is created by Volcano itself; "
                        "give the tenant's queue another name")
    _check_counts(ctx, path, q)
    _check_shares(ctx, path, q)
    spec: dict = {"weight": q["weight"], "reclaimable": q["reclaimable"]}
    if q["capability"]:
        spec["capability"] = _sorted(q["capability"])
    if q["deserved"]:
        spec["deserved"] = _sorted(q["deserved"])
    if q["guarantee"]:
        spec["guarantee"] = {"resource": _sorted(q["guarantee"])}
    if q["priority"]:
        spec["priority"] = q["priority"]
    meta = ctx.metadata(MODULE, q["name"], labels={"trainstack.io/tenant": q["name"]},
                        annotations={WAIT_FOR_ANNOTATION: QUEUE_OPEN, SYNC_WAVE_ANNOTATION: QUEUE_WAVE})
    return Resource(module=MODULE, obj={"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
                                        "metadata": meta, "spec": spec})


def priority_class(ctx: RenderContext, i: int, p: dict) -> Resource:
    if p["name"].startswith("system-"):
        raise ctx.error(f"volcano.priorityClasses[{i}].name", "names starting with system- are "
                        "reserved by Kubernetes")
    obj = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
           "metadata": ctx.metadata(MODULE, p["name"]), "value": p["value"], "globalDefault": False,
           "preemptionPolicy": p["preemptionPolicy"]}
    if p["description"]:
        obj["description"] = p["description"]
    return Resource(module=MODULE, obj=obj)


def _check_guarantees(ctx: RenderContext, queues: list[dict]) -> None:
    """Guarantees are reservations: together they cannot exceed what the fabric's nodes have."""
    if not ctx.fabric.nodes or not any(q["guarantee"] for q in queues):
        return   # nothing reserved, or a label-defined fabric whose node inventory is not known here
    per_pool = ctx.fabric.nodes_per_pool()
    totals: dict = {}
    for pool_name, count in per_pool.items():
        for resource, amount in ctx.fabric.pools[pool_name].allocatable().items():
            totals[resource] = totals.get(resource, 0) + amount * count
    reserved: dict = {}
    for i, q in enumerate(queues):
        for resource, amount in sorted(q["guarantee"].items()):
            reserved[resource] = reserved.get(resource, 0) + parse_quantity(amount)
            if resource in totals and reserved[resource] > totals[resource]:
                raise ctx.error(f"volcano.queues[{i}].guarantee.{resource}", "the queues' guarantees add up "
                                f"to {reserved[resource]:f} {resource}, more than the fabric's nodes have "
                                f"({totals[resource]:f})")


def _unique(ctx: RenderContext, path: str, names: list[str]) -> None:
    for i, name in enumerate(names):
        if names.index(name) != i:
            raise ctx.error(f"{path}[{i}].name", f"{name!r} is listed twice (also at {path}[{names.index(name)}])")


def render(ctx: RenderContext) -> list[Resource | ChartRelease]:
    cfg = ctx.section(MODULE)
    version = _version(ctx, cfg)
    _actions(ctx, cfg)
    _unique(ctx, "volcano.queues", queue_names(ctx))
    _unique(ctx, "volcano.priorityClasses", priority_class_names(ctx))
    _check_guarantees(ctx, cfg["queues"])
    if scheduler_conf.share_plugin(cfg) == "capacity":
        for q in cfg["queues"]:
            if not q["deserved"]:
                ctx.warn(f"{ctx.stack.file}: trainstack:volcano.queues: queue {q['name']!r} has no deserved; "
                         "the capacity plugin (chosen for gang eviction or queue shares) then lets other "
                         "queues reclaim everything it runs")
    release = ChartRelease(module=MODULE, name=cfg["releaseName"], chart=CHART, repository=REPOSITORY,
                           version=version, namespace=cfg["namespace"], values=values(ctx, version),
                           serves=SERVES)
    out: list[Resource | ChartRelease] = [release]
    out.extend(queue(ctx, i, q) for i, q in enumerate(cfg["queues"]))
    out.extend(priority_class(ctx, i, p) for i, p in enumerate(cfg["priorityClasses"]))
    return out
