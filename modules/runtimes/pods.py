"""GPU pod templates shared by the runtimes and the platform workloads.

Every training pod trainstack renders gets the same contract: `schedulerName: volcano`, CPU and
memory requests, GPU and RDMA requests equal to their limits, the pool's taints tolerated, the
stack's NCCL ConfigMap loaded with `envFrom`, and `/dev/shm` as a size-limited memory emptyDir
(the container runtime's default is 64 MiB, far too small for NCCL and data loaders).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING

from modules.core.quantity import parse_quantity
from modules.semantics.podspec import Reader, container_requests
from modules.nccl.render import configmap_name
from modules.volcano.render import SCHEDULER_NAME

if TYPE_CHECKING:
    from modules.core.context import RenderContext
    from modules.storage.volumes import Mounts
    from modules.fabric.model import NodePool

GI = 2**30
HEADROOM = Decimal("0.9")          # default requests leave 10% of a node for daemons (DCGM, device plugins)
SHM_DEFAULT_MAX = 64 * GI
SHM_VOLUME = "dshm"
RDMA_PROFILES = ("infiniband", "roce")
HOST_NETWORK_LABEL = "trainstack.io/host-network"
NOT_NETWORK_PREFIXES = ("hugepages-", "ephemeral-storage")


@dataclass(frozen=True)
class Shape:
    """What one pod asks for on one node of a pool."""

    pool: "NodePool"
    gpus: int
    cpu: str
    memory: str
    shm: str
    network: tuple[tuple[str, int], ...]   # RDMA device resources and counts

    def requests(self) -> dict[str, object]:
        out: dict[str, object] = {"cpu": self.cpu, "memory": self.memory}
        out.update(self.limits())
        return out

    def limits(self) -> dict[str, object]:
        # Memory limit = request (no overcommit of host memory on training nodes); CPU has no
        # limit (CFS throttling hurts data loaders). Extended resources: limits = requests.
        out: dict[str, object] = {"memory": self.memory}
        if self.gpus:
            out[self.pool.gpu_resource] = self.gpus
        out.update(dict(self.network))
        return out

    def amounts(self) -> dict[str, Decimal]:
        """What node fit counts for one pod of this shape (the semantic core's reading of the
        rendered resources), for capacity checks."""
        resources = {"requests": self.requests(), "limits": self.limits()}
        return container_requests(Reader(file="the rendered pod", where="resources"), resources, "resources").fit


def pick_pool(ctx: "RenderContext", path: str, name: str) -> "NodePool":
    pools = ctx.fabric.pools
    if name:
        if name not in pools:
            raise ctx.expected(path, f"one of the node pools ({', '.join(pools)}, from "
                               "trainstack:fabric.nodePools)", name)
        return pools[name]
    gpu_pools = [p for p in pools.values() if p.gpus > 0]
    return (gpu_pools or list(pools.values()))[0]


def network_resources(pool: "NodePool") -> dict[str, int]:
    """The pool's RDMA/network device resources (every extended resource but hugepages)."""
    return {name: count for name, count in sorted(pool.resources.items())
            if not name.startswith(NOT_NETWORK_PREFIXES) and count > 0}


def _gib(amount: Decimal) -> str:
    return f"{max(1, int(amount // GI))}Gi"


def shape(ctx: "RenderContext", path: str, cfg: dict, profile: str) -> Shape:
    """Resolve pool, GPUs, CPU, memory and /dev/shm of a pod from its stack entry.

    ``cfg`` has pool, gpus, cpu, memory, shmSize; unset sizes are the pod's GPU share of a node
    minus headroom (a whole node for pods with all of its GPUs).
    """
    pool = pick_pool(ctx, f"{path}.pool", cfg["pool"])
    gpus = pool.gpus if cfg["gpus"] is None else cfg["gpus"]
    if gpus > pool.gpus:
        raise ctx.expected(f"{path}.gpus", f"at most {pool.gpus} (GPUs per node of pool {pool.name})", gpus)
    allocatable = pool.allocatable()
    share = Decimal(max(gpus, 1)) / pool.gpus if pool.gpus else Decimal(1)
    cpu = cfg["cpu"]
    if cpu is None:
        cpu = str(max(1, int(allocatable["cpu"] * share * HEADROOM)))
    memory = cfg["memory"] if cfg["memory"] is not None else _gib(allocatable["memory"] * share * HEADROOM)
    for resource, value in (("cpu", cpu), ("memory", memory)):
        if parse_quantity(value) > allocatable[resource]:
            raise ctx.error(f"{path}.{resource}", f"{value} exceeds what a node of pool {pool.name} can "
                            f"allocate ({_show(resource, allocatable[resource])}); the pod could never schedule")
    shm = cfg["shmSize"]
    if shm is None:
        shm = _gib(min(Decimal(SHM_DEFAULT_MAX), parse_quantity(memory) / 2))
    if parse_quantity(shm) > parse_quantity(memory):
        raise ctx.error(f"{path}.shmSize", f"{shm} exceeds the pod's memory ({memory}); a memory-backed "
                        "/dev/shm is charged to the container's memory limit")
    network: dict[str, int] = {}
    if profile in RDMA_PROFILES and gpus:
        for name, count in network_resources(pool).items():
            network[name] = max(1, math.ceil(count * gpus / pool.gpus))
        if not network:
            ctx.warn(f"{ctx.stack.file}: trainstack:{path}: NCCL transport {profile} but node pool "
                     f"{pool.name} lists no RDMA device resource (fabric.nodePools[].resources); pods "
                     "get no HCA and NCCL falls back to TCP sockets")
    return Shape(pool=pool, gpus=gpus, cpu=str(cpu), memory=str(memory), shm=str(shm),
                 network=tuple(sorted(network.items())))


def _show(resource: str, amount: Decimal) -> str:
    return f"{int(amount)}" if resource == "cpu" else _gib(amount)


def nccl_profile(ctx: "RenderContext", path: str, name: str) -> str:
    """The NCCL profile a pod loads ("" = the stack's transport); its ConfigMap must be rendered."""
    nccl = ctx.section("nccl")
    profile = name or nccl["transport"]
    if profile not in nccl["profiles"]:
        raise ctx.expected(path, f"one of the rendered NCCL profiles ({', '.join(nccl['profiles'])}, "
                           "trainstack:nccl.profiles)", profile)
    return profile


def nccl_ref(namespace: str, profile: str) -> str:
    return f"ConfigMap/{namespace}/{configmap_name(profile)}"


def check_image(ctx: "RenderContext", path: str, image: str) -> str:
    """Images must be pinned: a tag other than `latest`, or a digest."""
    if "@sha256:" in image:
        return image
    last = image.rsplit("/", 1)[-1]
    tag = last.split(":", 1)[1] if ":" in last else ""
    if not tag or tag == "latest":
        raise ctx.expected(path, "a pinned image (repository:tag, not latest, or @sha256:digest)", image,
                           rule="image-pinned")
    return image


def tolerations(pool: "NodePool") -> list[dict]:
    """Tolerate exactly the taints of the pool (GPU nodes are usually tainted)."""
    out = []
    for taint in pool.taints:
        entry: dict = {"key": taint["key"]}
        if taint.get("value"):
            entry.update(operator="Equal", value=taint["value"])
        else:
            entry["operator"] = "Exists"
        entry["effect"] = taint["effect"]
        out.append(entry)
    return out


def container(name: str, image: str, shape: Shape, profile: str, command: list[str] | None = None,
              args: list[str] | None = None, env: list[dict] | None = None, mounts: "Mounts | None" = None) -> dict:
    out: dict = {"name": name, "image": image}
    if command:
        out["command"] = list(command)
    if args:
        out["args"] = list(args)
    if env:
        out["env"] = env
    out["envFrom"] = [{"configMapRef": {"name": configmap_name(profile)}}]
    out["resources"] = {"requests": shape.requests(), "limits": shape.limits()}
    out["securityContext"] = container_security(rdma=bool(shape.network))
    out["volumeMounts"] = [{"name": SHM_VOLUME, "mountPath": "/dev/shm"}, *(mounts.mounts if mounts else ())]
    return out


def container_security(rdma: bool) -> dict:
    """Pod Security Standards Restricted, less runAsNonRoot (training images run as root): no
    privilege escalation, every capability dropped but IPC_LOCK where RDMA registers (pins) memory."""
    capabilities: dict = {"drop": ["ALL"]}
    if rdma:
        capabilities["add"] = ["IPC_LOCK"]
    return {"allowPrivilegeEscalation": False, "capabilities": capabilities}


def pod_security(spec: dict) -> dict:
    """The pod-level half: the runtime's seccomp filter, and no API token (training pods never call
    the API server)."""
    spec["automountServiceAccountToken"] = False
    spec["securityContext"] = {"seccompProfile": {"type": "RuntimeDefault"}}
    return spec


def host_network_anti_affinity() -> dict:
    """At most one host-network training pod per node: they share the node's ports (Trainer v2
    hard-codes the rendezvous port 29500), so two on one node collide. The empty namespaceSelector
    makes the term count such pods of every namespace, not only the pod's own."""
    return {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {HOST_NETWORK_LABEL: "true"}},
         "namespaceSelector": {},
         "topologyKey": "kubernetes.io/hostname"}]}}


def pod_spec(shape: Shape, containers: list[dict], *, host_network: bool = False,
             priority_class: str = "", node_selector: dict | None = None,
             restart_policy: str | None = None, claims: "Mounts | None" = None) -> dict:
    spec: dict = {"schedulerName": SCHEDULER_NAME}
    if priority_class:
        spec["priorityClassName"] = priority_class
    if restart_policy:
        spec["restartPolicy"] = restart_policy
    if host_network:
        spec["hostNetwork"] = True
        spec["dnsPolicy"] = "ClusterFirstWithHostNet"   # keep resolving the job's headless Service
        spec["affinity"] = host_network_anti_affinity()
    if node_selector:
        spec["nodeSelector"] = dict(sorted(node_selector.items()))
    tol = tolerations(shape.pool)
    if tol:
        spec["tolerations"] = tol
    spec["containers"] = containers
    spec["volumes"] = [{"name": SHM_VOLUME, "emptyDir": {"medium": "Memory", "sizeLimit": shape.shm}},
                       *(claims.volumes if claims else ())]
    return pod_security(spec)
