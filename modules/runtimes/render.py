"""ClusterTrainingRuntimes: torch-distributed, Volcano gang + network topology, one per policy."""
from __future__ import annotations

from dataclasses import dataclass

from modules.core.bundle import Resource
from modules.core.context import RenderContext
from modules.nccl.render import host_socket_ifname
from modules.storage import volumes
from modules.trainer.render import api as trainer_api
from modules.volcano import topology
from modules.volcano.render import QUEUE_ANNOTATION, queue_ref, resolve_priority_class, resolve_queue

from . import pods

MODULE = "runtimes"
API_VERSION = "trainer.kubeflow.org/v1alpha1"
KIND = "ClusterTrainingRuntime"
FRAMEWORK_LABEL = "trainer.kubeflow.org/framework"
ANCESTOR_LABEL = "trainer.kubeflow.org/trainjob-ancestor-step"
NODE_JOB = "node"              # Trainer injects the PET_* env into container "node" of this job
RUNTIME_LABEL = "trainstack.io/runtime"
MAX_NODES_ANNOTATION = "trainstack.io/max-nodes"
TORCH_MASTER_PORT = 29500      # PET_MASTER_PORT, hard-coded by Trainer v2's torch plugin


@dataclass(frozen=True)
class Runtime:
    """A rendered runtime and what TrainJobs on it need to know."""

    name: str
    shape: pods.Shape
    profile: str
    queue: str
    mode: str
    tier: int | None          # the tier bounding the gang (hard mode), None for soft
    num_nodes: int
    image: str
    one_per_node: bool        # host network: a required anti-affinity keeps pods on separate nodes
    resource: Resource
    claims: volumes.Mounts    # the claims its node pods mount


def _default_name(shape: pods.Shape, mode: str, tier: int, host_network: bool) -> str:
    base = (shape.pool.gpu_type or shape.pool.name).lower()
    parts = ["torch", "".join(c if c.isalnum() else "-" for c in base).strip("-")]
    if shape.gpus != shape.pool.gpus:
        parts.append(f"{shape.gpus}gpu")
    parts += [f"tier{tier}", mode]
    if host_network:
        parts.append("hostnet")
    return "-".join(p for p in parts if p)


def _topology(ctx: RenderContext, path: str, spec: dict) -> tuple[str, int]:
    """Mode and an explicit highestTierAllowed (the CRD would silently default it to 1)."""
    tiers = topology.fabric_tiers(ctx.fabric)
    mode = spec["mode"]
    given, name = topology.tier_setting(spec)
    number = given
    if number is None:
        if not tiers.tiers:
            raise ctx.error(f"{path}.topology", "the fabric defines no HyperNode tiers for the runtime's "
                            "network topology")
        number = tiers.lowest if mode == "hard" else tiers.highest
    topology.resolve(ctx, f"{path}.topology", {"mode": mode, "highestTierAllowed": number,
                                               "highestTierName": name},
                     allow_name=False, given=given is not None)
    return mode, number


def runtime(ctx: RenderContext, i: int, cfg: dict, default_image: str) -> Runtime:
    path = f"runtimes.runtimes[{i}]"
    profile = pods.nccl_profile(ctx, f"{path}.nccl", cfg["nccl"])
    shape = pods.shape(ctx, path, cfg, profile)
    mode, tier = _topology(ctx, path, cfg["topology"])
    host_network = cfg["hostNetwork"]
    name = cfg["name"] or _default_name(shape, mode, tier, host_network)
    queue = resolve_queue(ctx, f"{path}.queue", cfg["queue"])
    priority = resolve_priority_class(ctx, f"{path}.priorityClassName", cfg["priorityClassName"])
    image = pods.check_image(ctx, f"{path}.image" if cfg["image"] else "runtimes.image",
                             cfg["image"] or default_image)
    gang_tier = tier if mode == "hard" else None
    topology.check_fits(ctx, f"{path}.numNodes", cfg["numNodes"], shape.amounts(), gang_tier,
                        f"runtime {name} (numNodes {cfg['numNodes']}, hard tier {tier})", host_network)

    pod_labels = {RUNTIME_LABEL: name}
    if host_network:
        pod_labels[pods.HOST_NETWORK_LABEL] = "true"
    # Host-network pods see the host's interfaces: their own NCCL_SOCKET_IFNAME overrides the
    # ConfigMap's pod-network value (env wins over envFrom).
    host_ifname = host_socket_ifname(ctx) if host_network else ""
    env = [{"name": "NCCL_SOCKET_IFNAME", "value": host_ifname}] if host_ifname else None
    # Claims mount into every TrainJob's pods, in the TrainJob's namespace (claims-serve-pods checks it).
    claims = volumes.resolve(ctx, f"{path}.volumes", cfg["volumes"], None)
    container = pods.container("node", image, shape, profile, env=env, mounts=claims)
    pod_meta: dict = {"labels": pod_labels}
    if host_network:   # the explicit opt-in the host-network-opt-in policy looks for
        pod_meta["annotations"] = {pods.HOST_NETWORK_LABEL: "true"}
    pod = {"metadata": pod_meta,
           "spec": pods.pod_spec(shape, [container], host_network=host_network, priority_class=priority,
                                 node_selector=cfg["nodeSelector"], claims=claims)}
    annotations = {}
    if gang_tier is not None:
        most = topology.max_pods(ctx, shape.amounts(), gang_tier, host_network)
        if most is not None:   # what a TrainJob's numNodes may reach before it pends forever
            annotations[MAX_NODES_ANNOTATION] = str(most)
    meta = ctx.metadata(MODULE, name, labels={FRAMEWORK_LABEL: "torch"}, annotations=annotations or None)
    spec = {
        "mlPolicy": {"numNodes": cfg["numNodes"], "torch": {}},
        "podGroupPolicy": {"volcano": {"networkTopology": {"mode": mode, "highestTierAllowed": tier}}},
        "template": {
            "metadata": {"annotations": {QUEUE_ANNOTATION: queue}},
            "spec": {"replicatedJobs": [{
                "name": NODE_JOB,
                "template": {"metadata": {"labels": {ANCESTOR_LABEL: "trainer"}},
                             "spec": {"template": pod}},
            }]},
        },
    }
    depends = [queue_ref(queue)]
    if priority:
        depends.append(f"PriorityClass/{priority}")
    resource = Resource(module=MODULE, obj={"apiVersion": API_VERSION, "kind": KIND, "metadata": meta,
                                            "spec": spec}, depends_on=tuple(depends))
    return Runtime(name=name, shape=shape, profile=profile, queue=queue, mode=mode, tier=gang_tier,
                   num_nodes=cfg["numNodes"], image=image, one_per_node=host_network, resource=resource,
                   claims=claims)


def runtimes(ctx: RenderContext) -> list[Runtime]:
    """Every runtime of the stack (none with trainer.api v1, which has no runtimes), worked out
    once per render: the TrainJobs (workloads) ask for them again."""
    if MODULE not in ctx.derived:
        ctx.derived[MODULE] = _runtimes(ctx)
    return ctx.derived[MODULE]


def _runtimes(ctx: RenderContext) -> list[Runtime]:
    cfg = ctx.section(MODULE)
    if trainer_api(ctx) != "v2":
        if MODULE in ctx.stack.given:
            raise ctx.error(MODULE, "ClusterTrainingRuntimes (and network topology for training) need "
                            "Kubeflow Trainer v2; set trainer.api: v2 or remove trainstack:runtimes "
                            "(Training Operator v1 rewrites its PodGroups and cannot carry a topology)")
        return []
    out: list[Runtime] = []
    seen: dict[str, int] = {}
    for i, entry in enumerate(cfg["runtimes"]):
        rt = runtime(ctx, i, entry, cfg["image"])
        if rt.name in seen:
            raise ctx.error(f"runtimes.runtimes[{i}]", f"runtime name {rt.name!r} is already used by "
                            f"runtimes.runtimes[{seen[rt.name]}]; give one of them a `name`")
        seen[rt.name] = i
        out.append(rt)
    return out


def by_name(ctx: RenderContext) -> dict[str, Runtime]:
    return {rt.name: rt for rt in runtimes(ctx)}


def render(ctx: RenderContext) -> list[Resource]:
    return [rt.resource for rt in runtimes(ctx)]
