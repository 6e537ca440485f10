"""Platform-owned workloads: Volcano Jobs, TrainJobs, gang Deployments (+ PodGroups), PyTorchJobs."""
from __future__ import annotations

from decimal import Decimal

from modules.core.bundle import Resource
from modules.core.context import RenderContext
from modules.runtimes import pods
from modules.core.vocabulary.resource_names import is_device_count, is_extended
from modules.semantics.minresources import pod_usage
from modules.semantics.podspec import Reader, container_requests, merge_resources, pod_requests
from modules.storage import volumes
from modules.runtimes import render as runtimes
from modules.trainer.render import api as trainer_api
from modules.volcano import topology
from modules.volcano.render import (QUEUE_ANNOTATION, SCHEDULER_NAME, queue_ref, release_ref,
                                    resolve_priority_class, resolve_queue)

from . import trainer_admission

MODULE = "workloads"
WORKLOAD_LABEL = "trainstack.io/workload"
GROUP_NAME_ANNOTATION = "scheduling.k8s.io/group-name"
MIN_MEMBER_ANNOTATION = "scheduling.volcano.sh/group-min-member"
TOPOLOGY_MODE_ANNOTATION = "volcano.sh/network-topology-mode"
TOPOLOGY_TIER_ANNOTATION = "volcano.sh/network-topology-highest-tier"
PATCH_MANAGER = "trainstack.io/workloads"
TORCH_LAUNCHERS = ("torchrun",)


def _namespace(ctx: RenderContext, path: str, name: str) -> str:
    namespaces = ctx.stack.values["trainingNamespaces"]
    return ctx.pick(path, name, namespaces, f"one of trainstack:trainingNamespaces ({', '.join(namespaces)}); "
                    "the NCCL ConfigMaps the pods load exist only there")


def _network_topology(spec: dict) -> dict:
    out = {"mode": spec["mode"]}
    number, name = topology.tier_setting(spec)
    if number is not None:
        out["highestTierAllowed"] = number
    elif name is not None:
        out["highestTierName"] = name
    return out


def _gang_tier(ctx: RenderContext, path: str, spec: dict | None) -> int | None:
    """The tier bounding a hard gang (None for none/soft), after validating the spec."""
    if spec is None:
        return None
    tier = topology.resolve(ctx, path, spec)
    return tier if spec["mode"] == "hard" else None


def _common(ctx: RenderContext, path: str, cfg: dict) -> tuple[str, str, str, str, pods.Shape]:
    namespace = _namespace(ctx, f"{path}.namespace", cfg["namespace"])
    queue = resolve_queue(ctx, f"{path}.queue", cfg["queue"])
    priority = resolve_priority_class(ctx, f"{path}.priorityClassName", cfg["priorityClassName"])
    profile = pods.nccl_profile(ctx, f"{path}.nccl", cfg["nccl"])
    shape = pods.shape(ctx, path, cfg, profile)
    pods.check_image(ctx, f"{path}.image", cfg["image"])
    return namespace, queue, priority, profile, shape


def _depends(namespace: str, queue: str, profile: str, priority: str, *more: str,
             claims: volumes.Mounts | None = None) -> tuple[str, ...]:
    out = [queue_ref(queue), pods.nccl_ref(namespace, profile), *more]
    if priority:
        out.append(f"PriorityClass/{priority}")
    out += claims.claim_refs(namespace) if claims else ()
    return tuple(out)


def _claims(ctx: RenderContext, path: str, cfg: dict, namespace: str) -> volumes.Mounts:
    return volumes.resolve(ctx, f"{path}.volumes", cfg["volumes"], namespace)


# --- Volcano Jobs ----------------------------------------------------------------------------

def volcano_job(ctx: RenderContext, i: int, cfg: dict) -> Resource:
    path = f"workloads.volcanoJobs[{i}]"
    namespace, queue, priority, profile, shape = _common(ctx, path, cfg)
    replicas = cfg["replicas"]
    job_tier = _gang_tier(ctx, f"{path}.topology", cfg["topology"])
    task: dict = {"name": "worker", "replicas": replicas}
    min_available = cfg["minAvailable"]
    part = cfg["partitions"]
    if part is not None:
        size = part["size"]
        if replicas % size:
            raise ctx.error(f"{path}.partitions.size", f"replicas ({replicas}) must be a multiple of the "
                            f"partition size ({size}); Volcano's webhook rejects the job otherwise")
        total = replicas // size
        if part["minPartitions"] > total:
            raise ctx.expected(f"{path}.partitions.minPartitions", f"at most {total} (replicas / size)",
                               part["minPartitions"])
        wanted = (part["minPartitions"] or total) * size
        if min_available is None:
            min_available = wanted
        elif part["minPartitions"] and min_available != wanted:
            raise ctx.error(f"{path}.minAvailable", f"expected minPartitions x size = {wanted}, got "
                            f"{min_available} (Volcano's webhook requires them to agree)")
        policy: dict = {"totalPartitions": total, "partitionSize": size}
        if part["minPartitions"]:
            policy["minPartitions"] = part["minPartitions"]
        part_tier = _gang_tier(ctx, f"{path}.partitions.topology", part["topology"])
        if part["topology"] is not None:
            bound = _tier_of(ctx, cfg["topology"])
            mine = _tier_of(ctx, part["topology"])
            if bound is not None and mine is not None and mine > bound:
                raise ctx.error(f"{path}.partitions.topology", f"a partition (tier {mine}) cannot span more "
                                f"than its job (tier {bound}); Volcano does not check this (volcano#4188)")
            policy["networkTopology"] = _network_topology(part["topology"])
        topology.check_partitions_fit(ctx, path, min_available // size, size, shape.amounts(),
                                      part_tier, job_tier)
        task["partitionPolicy"] = policy
    if min_available is None:
        min_available = replicas
    if min_available > replicas:
        raise ctx.expected(f"{path}.minAvailable", f"at most replicas ({replicas})", min_available)
    topology.check_fits(ctx, f"{path}.topology", min_available, shape.amounts(), job_tier,
                        f"Volcano Job {cfg['name']}")
    claims = _claims(ctx, path, cfg, namespace)
    container = pods.container("worker", cfg["image"], shape, profile, cfg["command"], cfg["args"], mounts=claims)
    task["template"] = {"metadata": {"labels": {WORKLOAD_LABEL: cfg["name"]}},
                        "spec": pods.pod_spec(shape, [container], restart_policy="OnFailure", claims=claims)}
    spec: dict = {"schedulerName": SCHEDULER_NAME, "queue": queue, "minAvailable": min_available}
    if priority:
        spec["priorityClassName"] = priority
    if cfg["topology"] is not None:
        spec["networkTopology"] = _network_topology(cfg["topology"])
    # env/svc give each pod its index and the peers' host names (rendezvous); a gang that lost
    # a pod to eviction restarts as a whole.
    spec["plugins"] = {"env": [], "svc": []}
    spec["policies"] = [{"event": "PodEvicted", "action": "RestartJob"}]
    spec["tasks"] = [task]
    obj = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
           "metadata": ctx.metadata(MODULE, cfg["name"], namespace), "spec": spec}
    return Resource(module=MODULE, obj=obj, depends_on=_depends(namespace, queue, profile, priority, claims=claims))


def _tier_of(ctx: RenderContext, spec: dict | None) -> int | None:
    """The tier a spec names (number or name), whatever its mode."""
    number, name = topology.tier_setting(spec)
    if number is not None:
        return number
    if name is not None:
        return topology.fabric_tiers(ctx.fabric).by_name.get(name)
    return None


# --- TrainJobs -------------------------------------------------------------------------------

def train_job(ctx: RenderContext, i: int, cfg: dict, known: dict[str, runtimes.Runtime]) -> Resource:
    path = f"workloads.trainJobs[{i}]"
    namespace = _namespace(ctx, f"{path}.namespace", cfg["namespace"])
    runtime = known.get(cfg["runtime"])
    if runtime is None:
        raise ctx.expected(f"{path}.runtime", f"one of the stack's runtimes ({', '.join(known) or 'none'})",
                           cfg["runtime"])
    if cfg["command"][0] not in TORCH_LAUNCHERS:
        raise ctx.expected(f"{path}.command", "a command starting with torchrun (Trainer sets only the "
                           "PET_* variables torchrun reads, no MASTER_ADDR/RANK)", cfg["command"])
    per_node = _resources_per_node(cfg["resourcesPerNode"])
    num_nodes = cfg["numNodes"] or runtime.num_nodes
    topology.check_fits(ctx, f"{path}.numNodes", num_nodes, _node_amounts(ctx, path, runtime, per_node),
                        runtime.tier, f"TrainJob {cfg['name']} on {runtime.name} ({num_nodes} nodes, hard tier "
                        f"{runtime.tier})", runtime.one_per_node)
    trainer: dict = {}
    if cfg["image"]:
        trainer["image"] = pods.check_image(ctx, f"{path}.image", cfg["image"])
    trainer["command"] = list(cfg["command"])
    if cfg["args"]:
        trainer["args"] = list(cfg["args"])
    if cfg["env"]:
        trainer["env"] = [{"name": name, "value": cfg["env"][name]} for name in sorted(cfg["env"])]
    trainer["numNodes"] = num_nodes
    if cfg["numProcPerNode"] is not None:
        trainer["numProcPerNode"] = cfg["numProcPerNode"]
    if per_node is not None:
        trainer["resourcesPerNode"] = per_node
    spec: dict = {"runtimeRef": {"name": runtime.name, "apiGroup": "trainer.kubeflow.org",
                                 "kind": runtimes.KIND},
                  "trainer": trainer}
    queue = runtime.queue
    patch: dict = {}    # Trainer 2.3's per-TrainJob pod changes: one runtimePatches entry of ours
    if cfg["queue"]:
        queue = resolve_queue(ctx, f"{path}.queue", cfg["queue"])
        if queue != runtime.queue:   # the only way to set a per-TrainJob queue in Trainer 2.3
            patch["metadata"] = {"annotations": {QUEUE_ANNOTATION: queue}}
    claims = volumes.resolve(ctx, f"{path}.volumes", cfg["volumes"], namespace, base=runtime.claims,
                             base_what=f"runtime {runtime.name}")
    if claims:
        pod = {"volumes": list(claims.volumes),
               "containers": [{"name": runtimes.NODE_JOB, "volumeMounts": list(claims.mounts)}]}
        patch["spec"] = {"replicatedJobs": [{"name": runtimes.NODE_JOB,
                                             "template": {"spec": {"template": {"spec": pod}}}}]}
    if patch:
        spec["runtimePatches"] = [{"manager": PATCH_MANAGER, "trainingRuntimeSpec": {"template": patch}}]
    if cfg["suspend"]:
        spec["suspend"] = True
    if cfg["activeDeadlineSeconds"] is not None:
        spec["activeDeadlineSeconds"] = cfg["activeDeadlineSeconds"]
    obj = {"apiVersion": runtimes.API_VERSION, "kind": "TrainJob",
           "metadata": ctx.metadata(MODULE, cfg["name"], namespace), "spec": spec}
    refusals = trainer_admission.refusals(obj, runtime.resource.obj)
    if refusals:
        field, message = refusals[0]
        key = field.removeprefix("spec.trainer.").split(".")[0].split("[")[0]
        raise ctx.error(f"{path}.{key}" if field.startswith("spec.trainer.") and key in cfg else path,
                        f"Trainer's TrainJob webhook refuses the rendered TrainJob: {field}: {message}",
                        rule="trainer-admission")
    return Resource(module=MODULE, obj=obj, depends_on=_depends(
        namespace, queue, runtime.profile, "", f"{runtimes.KIND}/{runtime.name}", claims=claims))


def _resources_per_node(given: dict | None) -> dict | None:
    """trainer.resourcesPerNode as rendered: quantities as strings, resource names sorted."""
    if given is None:
        return None
    out = {part: {name: str(given[part][name]) for name in sorted(given[part])}
           for part in ("limits", "requests") if given[part]}
    return out


def _node_amounts(ctx: RenderContext, path: str, runtime: runtimes.Runtime, per_node: dict | None) -> dict:
    """What node fit counts for one node pod: the runtime's node container with resourcesPerNode
    merged over it key by key, as Trainer merges it (the semantic core's reading)."""
    if not per_node:
        return runtime.shape.amounts()
    base = {"requests": runtime.shape.requests(), "limits": runtime.shape.limits()}
    merged = merge_resources(base, per_node)
    for name in sorted(set(merged["requests"]) | set(merged["limits"])):
        if not is_extended(name):
            continue
        given = [part for part in ("requests", "limits") if name in per_node.get(part, {})]
        for part in given:
            if not is_device_count(per_node[part][name]):
                raise ctx.expected(f"{path}.resourcesPerNode.{part}.{name}", f"a whole number of devices such "
                                   f"as 8 ({name} is an extended resource: it counts devices)", per_node[part][name])
        request, limit = merged["requests"].get(name), merged["limits"].get(name)
        if request is not None and limit is not None and str(request) != str(limit):
            raise ctx.error(f"{path}.resourcesPerNode.{given[0]}.{name}", f"the node container would request "
                            f"{request} {name} with a limit of {limit} (runtime {runtime.name}'s value where this "
                            "sets none): extended resources request exactly their limit, or the API server "
                            f"refuses the pods; set requests and limits of {name} alike", rule="requests-required")
    reader = Reader(file=ctx.stack.file, where=f"trainstack:{path}.resourcesPerNode")
    return container_requests(reader, merged, "resources").fit


# --- gang Deployments ------------------------------------------------------------------------

GI = 2**30
_BYTES = ("memory", "ephemeral-storage", "hugepages-")


def _quantity(resource: str, total: Decimal) -> object:
    """A minResources amount in a readable unit: cores (or millicores), Gi where exact, else a count."""
    base = resource.removeprefix("requests.").removeprefix("limits.")
    if base == "cpu":
        return str(int(total)) if total == int(total) else f"{int(total * 1000)}m"
    if base.startswith(_BYTES):
        return f"{int(total // GI)}Gi" if total % GI == 0 else str(int(total))
    return int(total)


def gang_min_resources(pod_spec: dict, members: int) -> dict[str, object]:
    """The minResources Volcano's PodGroup controller would write for ``members`` of these pods
    (``buildPodGroupFromPod``: the quota usage of the created, defaulted pod; modules/semantics/
    minresources.py): bare names for the scheduler, ``requests.*``/``limits.*`` for a namespace
    ResourceQuota that the resourcequota plugin checks at enqueue."""
    pod = pod_requests(Reader(file="the rendered pod", where="spec"), pod_spec, "spec")
    usage = pod_usage(pod.fit, pod.limits)
    return {name: _quantity(name, amount * members) for name, amount in sorted(usage.items())}


def deployment(ctx: RenderContext, i: int, cfg: dict) -> list[Resource]:
    path = f"workloads.deployments[{i}]"
    namespace, queue, priority, profile, shape = _common(ctx, path, cfg)
    replicas = cfg["replicas"]
    spec_topology = cfg["topology"]
    tier = _gang_tier(ctx, f"{path}.topology", spec_topology)
    topology.check_fits(ctx, f"{path}.topology", replicas, shape.amounts(), tier, f"Deployment {cfg['name']}")
    selector = {WORKLOAD_LABEL: cfg["name"]}
    pod_annotations = {QUEUE_ANNOTATION: queue}
    annotations: dict = {}
    out: list[Resource] = []
    depends = [release_ref(ctx)]
    tier_number, tier_name = topology.tier_setting(spec_topology)
    explicit = spec_topology is not None and tier_name is not None
    claims = _claims(ctx, path, cfg, namespace)
    container = pods.container("main", cfg["image"], shape, profile, cfg["command"], cfg["args"], mounts=claims)
    if cfg["port"] is not None:
        container.update(_probes(cfg["port"], cfg["healthPath"]))
    template = {"metadata": {"labels": dict(selector), "annotations": pod_annotations},
                "spec": pods.pod_spec(shape, [container], priority_class=priority, claims=claims)}
    if explicit:
        # No pod annotation carries a tier name: create the PodGroup and bind the pods to it.
        group = podgroup(ctx, cfg["name"], namespace, queue, priority, replicas, template["spec"], spec_topology)
        out.append(group)
        pod_annotations[GROUP_NAME_ANNOTATION] = cfg["name"]
        depends.append(group.key)
    else:
        annotations[MIN_MEMBER_ANNOTATION] = str(replicas)   # read from the ReplicaSet (copied from here)
        if spec_topology is not None:
            pod_annotations[TOPOLOGY_MODE_ANNOTATION] = spec_topology["mode"]
            if tier_number is not None:
                pod_annotations[TOPOLOGY_TIER_ANNOTATION] = str(tier_number)
    obj = {"apiVersion": "apps/v1", "kind": "Deployment",
           "metadata": ctx.metadata(MODULE, cfg["name"], namespace, annotations=annotations or None),
           # Recreate: a rolling update's surge pods could never gang while the old ones hold the GPUs.
           "spec": {"replicas": replicas, "strategy": {"type": "Recreate"},
                    "selector": {"matchLabels": dict(selector)}, "template": template}}
    out.append(Resource(module=MODULE, obj=obj, depends_on=_depends(namespace, queue, profile, priority, *depends,
                                                                    claims=claims)))
    return out


def _probes(port: int, path: str | None) -> dict:
    """Readiness keeps a loading server (model weights take minutes) out of its Service; liveness
    restarts a hung one, after a start-up allowance."""
    check: dict = {"httpGet": {"path": path, "port": "serve"}} if path else {"tcpSocket": {"port": "serve"}}
    return {"ports": [{"name": "serve", "containerPort": port, "protocol": "TCP"}],
            "readinessProbe": {**check, "periodSeconds": 10, "failureThreshold": 3},
            "livenessProbe": {**check, "initialDelaySeconds": 600, "periodSeconds": 30, "failureThreshold": 5}}


def podgroup(ctx: RenderContext, name: str, namespace: str, queue: str, priority: str, members: int,
             pod_spec: dict, spec_topology: dict) -> Resource:
    spec: dict = {"minMember": members, "queue": queue, "minResources": gang_min_resources(pod_spec, members),
                  "networkTopology": _network_topology(spec_topology)}
    if priority:
        spec["priorityClassName"] = priority
    obj = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
           "metadata": ctx.metadata(MODULE, name, namespace), "spec": spec}
    depends = [queue_ref(queue)] + ([f"PriorityClass/{priority}"] if priority else [])
    return Resource(module=MODULE, obj=obj, depends_on=tuple(depends))


# --- PyTorchJobs (Training Operator v1) ------------------------------------------------------

def pytorch_job(ctx: RenderContext, i: int, cfg: dict) -> Resource:
    path = f"workloads.pyTorchJobs[{i}]"
    if cfg["topology"] is not None:
        raise ctx.error(f"{path}.topology", "a PyTorchJob cannot carry a network topology: Training "
                        "Operator v1 rewrites its PodGroup on every sync; use trainer.api v2 and a TrainJob "
                        "on a runtime with the topology")
    namespace, queue, priority, profile, shape = _common(ctx, path, cfg)
    workers = cfg["workers"]
    elastic = cfg["elastic"]
    claims = _claims(ctx, path, cfg, namespace)
    container = pods.container("pytorch", cfg["image"], shape, profile, cfg["command"], cfg["args"], mounts=claims)
    template = {"metadata": {"labels": {WORKLOAD_LABEL: cfg["name"]}},
                "spec": pods.pod_spec(shape, [container], priority_class=priority, claims=claims)}
    replica_specs: dict = {}
    spec: dict = {"nprocPerNode": str(shape.gpus) if shape.gpus else "auto"}
    if elastic is not None:
        if not ctx.section("trainer")["elastic"]:
            raise ctx.error(f"{path}.elastic", "elastic PyTorchJobs need trainer.elastic: true")
        if not elastic["minReplicas"] <= workers <= elastic["maxReplicas"]:
            raise ctx.error(f"{path}.workers", f"expected minReplicas <= workers <= maxReplicas, got "
                            f"{elastic['minReplicas']} <= {workers} <= {elastic['maxReplicas']}")
        # Workers only: the c10d rendezvous replaces the Master; the gang is the minimum (kubeflow/trainer#1515).
        gang = elastic["minReplicas"]
        spec["elasticPolicy"] = {"minReplicas": elastic["minReplicas"], "maxReplicas": elastic["maxReplicas"],
                                 "rdzvBackend": "c10d", "maxRestarts": elastic["maxRestarts"]}
    else:
        gang = workers + 1
        replica_specs["Master"] = {"replicas": 1, "restartPolicy": "OnFailure", "template": template}
    replica_specs["Worker"] = {"replicas": workers, "restartPolicy": "OnFailure", "template": template}
    scheduling: dict = {"queue": queue, "minAvailable": gang}
    if priority:
        scheduling["priorityClass"] = priority
    spec["runPolicy"] = {"cleanPodPolicy": "None", "schedulingPolicy": scheduling}
    spec["pytorchReplicaSpecs"] = replica_specs
    obj = {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
           "metadata": ctx.metadata(MODULE, cfg["name"], namespace), "spec": spec}
    return Resource(module=MODULE, obj=obj, depends_on=_depends(namespace, queue, profile, priority, claims=claims))


def render(ctx: RenderContext) -> list[Resource]:
    cfg = ctx.section(MODULE)
    version = trainer_api(ctx)
    if version != "v2" and cfg["trainJobs"]:
        raise ctx.error("workloads.trainJobs", "TrainJobs need Kubeflow Trainer v2 (trainer.api: v2)")
    if version != "v1" and cfg["pyTorchJobs"]:
        raise ctx.error("workloads.pyTorchJobs", "PyTorchJobs need the v1 Training Operator "
                        "(trainer.api: v1); with v2 use trainJobs")
    out: list[Resource] = []
    seen: dict[str, str] = {}

    def add(path: str, resources: list[Resource]) -> None:
        for resource in resources:
            if resource.key in seen:
                raise ctx.error(f"{path}.name", f"{resource.kind} {resource.name!r} in namespace "
                                f"{resource.namespace!r} is already defined by {seen[resource.key]}")
            seen[resource.key] = path
        out.extend(resources)

    for i, c in enumerate(cfg["volcanoJobs"]):
        add(f"workloads.volcanoJobs[{i}]", [volcano_job(ctx, i, c)])
    if cfg["trainJobs"]:
        known = runtimes.by_name(ctx)
        for i, c in enumerate(cfg["trainJobs"]):
            add(f"workloads.trainJobs[{i}]", [train_job(ctx, i, c, known)])
    for i, c in enumerate(cfg["deployments"]):
        add(f"workloads.deployments[{i}]", deployment(ctx, i, c))
    for i, c in enumerate(cfg["pyTorchJobs"]):
        add(f"workloads.pyTorchJobs[{i}]", [pytorch_job(ctx, i, c)])
    return out
