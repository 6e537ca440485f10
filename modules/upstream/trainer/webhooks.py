"""What Kubeflow Trainer v2.3's admission webhooks check in Go, which no ValidatingAdmissionPolicy or
CRD rule carries: the (Cluster)TrainingRuntime webhook's replicated-job checks, and the TrainJob
webhook's plugin validations (Torch, TorchTune, Volcano, JobSet) against the referenced runtime.

Our own implementation of upstream's behaviour, measured against upstream's test tables turned into
fixtures (tests/policies/admission/upstream/trainer/, one file per upstream test function). Every check
returns coded refusals (``modules/upstream/webhook_error.py``: ``trainer.<plugin>.<check>``) worded as
upstream's; ``validate(obj, operation, old, cluster)`` is the registry's entry (the runtimePatches
immutability applies on UPDATE only).
"""
from __future__ import annotations

import math
import re
from modules.upstream.kubernetes.values import quantity
from modules.semantics.shapes import as_dict, as_int, as_list, meta
from modules.upstream.cluster import Cluster
from modules.upstream.field import FieldError
from modules.core.vocabulary.go import go_quote
from modules.core.vocabulary.names import dns1123_subdomain
from modules.upstream.webhook_error import refuse
from modules.semantics.volcano import RUNTIME_KINDS, TRAINER as GROUP
from modules.semantics.workloads import (ANCESTOR_STEP, NODE, QUEUE_ANNOTATION, find_runtime, is_mpi, job_patches,
                                        job_pod_spec, jobset_annotations, launcher_as_node, replicated_jobs,
                                        runtime_patches, trainer_settings)

# The container each ancestor step's replicated job must run (trainer -> node).
REQUIRED_CONTAINER = {"trainer": "node", "model-initializer": "model-initializer",
                      "dataset-initializer": "dataset-initializer"}
DATASET, MODEL = "dataset-initializer", "model-initializer"
INITIALIZER_VOLUME = "initializer"
# pkg/constants MPIReservedEnvNames (OpenMPI's hostfile, rsh args, FQDN host names, default slots)
MPI_RESERVED = ("OMPI_MCA_orte_default_hostfile", "OMPI_MCA_orte_keep_fqdn_hostnames",
                "OMPI_MCA_orte_set_default_slots", "OMPI_MCA_plm_rsh_args")
TORCHRUN_RESERVED = ("PET_MASTER_ADDR", "PET_MASTER_PORT", "PET_NNODES", "PET_NODE_RANK", "PET_NPROC_PER_NODE")
BUILTIN_PRIORITY_CLASSES = ("system-cluster-critical", "system-node-critical")
TORCHTUNE_ENTRYPOINT = ["tune", "run"]
TORCHTUNE_MODELS = ("llama3_2/1B", "llama3_2/3B", "llama3_3/70B", "qwen2_5/1.5B")
TORCHTUNE_MULTINODE_MODEL = "llama3_3/70B"
TORCHTUNE_IMMUTABLE = ("output_dir", "tokenizer.path", "checkpointer.checkpoint_dir", "tokenizer.merges_file")
_HTTP_PATH = re.compile(r"[A-Za-z0-9/\-._~%!$&'()*+,;=:]+")


def _q(text: object) -> str:
    """Go's %q of the value's text."""
    return go_quote(str(text))


def _names(items: object) -> list[str]:
    return [str(as_dict(c).get("name")) for c in as_list(items) if as_dict(c).get("name") is not None]


def _container_names(rj: dict) -> set[str]:
    """The names of a replicated job's init containers and containers."""
    pod = job_pod_spec(rj)
    return set(_names(pod.get("initContainers"))) | set(_names(pod.get("containers")))


# --- (Cluster)TrainingRuntime webhook ---------------------------------------------------------

def runtime_problems(runtime: dict) -> list[FieldError]:
    """Replicated jobs labelled as a TrainJob ancestor step (trainer, model- or dataset-initializer)
    run exactly one Job and hold the container that step needs."""
    out: list[FieldError] = []
    for i, rj in enumerate(replicated_jobs(runtime)):
        job_labels = as_dict(as_dict(as_dict(rj.get("template")).get("metadata")).get("labels"))
        ancestor = job_labels.get(ANCESTOR_STEP)
        if not isinstance(ancestor, str) or ancestor not in REQUIRED_CONTAINER:
            continue
        base = f"spec.template.spec.replicatedJobs[{i}]"
        replicas = as_int(rj.get("replicas", 1))   # the JobSet CRD defaults replicas to 1
        if replicas != 1:
            out.append(refuse(f"{base}.replicas", "trainer.runtime.replicas", "always must be 1"))
        if REQUIRED_CONTAINER[ancestor] not in _names(job_pod_spec(rj).get("containers")):
            out.append(refuse(f"{base}.template.spec.template.spec.containers", "trainer.runtime.container",
                              f"must contain the required container for the ancestor: {ancestor}"))
    return out


# --- TrainJob webhook: the plugins' Validate ----------------------------------------------------

def _torch_problems(job: dict, runtime: dict) -> list[FieldError]:
    torch = as_dict(as_dict(runtime.get("spec")).get("mlPolicy")).get("torch")
    if not isinstance(torch, dict):
        return []
    out: list[FieldError] = []
    jobs = {str(rj.get("name")): rj for rj in replicated_jobs(runtime)}
    for target in as_list(as_dict(torch.get("envInjection")).get("targets")):
        target = as_dict(target)
        rj = jobs.get(str(target.get("jobName")))
        present = set()
        if rj is not None:
            present = _container_names(rj)
        for name in as_list(target.get("containerNames")):
            if str(name) not in present:
                out.append(refuse("spec.runtimeRef", "trainer.torch.env-injection",
                                  f"envInjection target podSet {_q(target.get('jobName'))} container "
                                  f"{_q(name)} not found in runtime template"))
    trainer = as_dict(as_dict(job.get("spec")).get("trainer"))
    if not trainer:
        return out
    out += _reserved_env(trainer, TORCHRUN_RESERVED, "trainer.torch.reserved-env")
    if as_list(trainer.get("command")) == TORCHTUNE_ENTRYPOINT:
        out.extend(_torchtune_problems(job, runtime, trainer))
    return out


def _reserved_env(trainer: dict, reserved: tuple[str, ...], code: str) -> list[FieldError]:
    """The plugin's refusal of ``trainer.env`` names it reserves (torchrun's, OpenMPI's), sorted."""
    found = sorted({str(e.get("name")) for e in map(as_dict, as_list(trainer.get("env"))) if e.get("name") in reserved})
    return [refuse("spec.trainer.env", code,
                   f"must not have reserved envs, invalid envs configured: [{' '.join(found)}]")] if found else []


def _torchtune_model(runtime_name: str) -> str:
    """torchtune-llama3.2-1b -> llama3_2/1B (upstream derives the model from the runtime's name)."""
    parts = runtime_name.split("-")
    return f"{parts[1].replace('.', '_')}/{parts[2].upper()}" if len(parts) == 3 else ""


def _gpus(resources: dict) -> int:
    """GPUs per node: the first resource whose name contains "gpu", requests before limits."""
    def count(amounts: object) -> int:
        for name, amount in as_dict(amounts).items():
            if "gpu" in str(name).lower():
                value = quantity(amount)
                return int(math.ceil(value)) if value is not None else 0
        return 0
    return count(resources.get("requests")) or count(resources.get("limits"))


def _node_resources(runtime: dict) -> dict:
    for rj in replicated_jobs(runtime):
        job_labels = as_dict(as_dict(as_dict(rj.get("template")).get("metadata")).get("labels"))
        if job_labels.get(ANCESTOR_STEP) != "trainer":
            continue
        for container in as_list(job_pod_spec(rj).get("containers")):
            if as_dict(container).get("name") == NODE:
                return as_dict(as_dict(container).get("resources"))
    return {}


def _arg_true(args: list, key: str) -> bool:
    for arg in args:
        name, found, value = str(arg).partition("=")
        if found and key in name and value.strip().lower() == "true":
            return True
    return False


def _torchtune_problems(job: dict, runtime: dict, trainer: dict) -> list[FieldError]:
    out: list[FieldError] = []
    name = str(as_dict(as_dict(job.get("spec")).get("runtimeRef")).get("name", ""))
    model = _torchtune_model(name)
    if model not in TORCHTUNE_MODELS:
        out.append(refuse("spec.runtimeRef.name", "trainer.torchtune.model",
                          f"must have a supported pretrained model, invalid model configured: {model}"))
    nodes, per_node = trainer_settings(job)
    nodes = 1 if nodes is None else nodes
    if nodes > 1 and model != TORCHTUNE_MULTINODE_MODEL:
        out.append(refuse("spec.trainer.numNodes", "trainer.torchtune.nodes", f"must be 1 for {model} model"))
    procs = as_int(trainer.get("numProcPerNode"))    # None: "auto"
    resources = per_node if per_node is not None else _node_resources(runtime)
    gpus = _gpus(resources)
    args = as_list(trainer.get("args"))
    lora = any("model.lora_attn_modules" in str(a) for a in args)
    qlora = not _arg_true(args, "model.use_dora") and _arg_true(args, "model.quantize_base")
    # The recipe's config suffix, as Trainer picks it.
    if nodes == 1 and (procs == 1 or gpus == 1):
        suffix = "_qlora_single_device" if qlora else "_lora_single_device" if lora else "_full_single_device"
    elif nodes == 1 and qlora:
        suffix = "_qlora"
    elif nodes == 1 and lora:
        suffix = "_lora"
    else:
        suffix = "_full_multinode" if nodes > 1 else "_full"
    if suffix.startswith("_qlora"):
        if model == "qwen2_5/1.5B":
            out.append(refuse("spec.runtimeRef.name", "trainer.torchtune.qlora-model",
                              f"QLoRA is not supported for {model} model"))
        if suffix != "_qlora_single_device" and model in ("llama3_2/1B", "llama3_2/3B"):
            out.append(refuse("spec.trainer.numProcPerNode", "trainer.torchtune.qlora-procs",
                              f"must be auto or 1 for {model} model when using QLoRA"))
            out.append(refuse("spec.trainer.resourcesPerNode", "trainer.torchtune.qlora-gpus",
                              f"must have gpu resource with value 1 for {model} model when using QLoRA"))
    if nodes > 1 and (lora or qlora):
        out.append(refuse("spec.trainer.numNodes", "trainer.torchtune.lora-multinode",
                          "LoRA fine-tuning is not supported for multi-node training in TorchTune"))
    for i, arg in enumerate(args):
        key = str(arg).split("=", 1)[0]
        if key in TORCHTUNE_IMMUTABLE:
            out.append(refuse(f"spec.trainer.args[{i}]", "trainer.torchtune.immutable-arg",
                              f"must not set immutable config {_q(key)} in trainer args; it is managed by the runtime"))
    return out


def _volcano_problems(job: dict, runtime: dict, priority_classes: set[str] | None) -> list[FieldError]:
    volcano = as_dict(as_dict(runtime.get("spec")).get("podGroupPolicy")).get("volcano")
    if not isinstance(volcano, dict):
        return []
    out: list[FieldError] = []
    notes = jobset_annotations(job, runtime)   # runtimePatches' template metadata reach the JobSet
    if QUEUE_ANNOTATION in notes and notes[QUEUE_ANNOTATION] == "":
        out.append(refuse(f"spec.annotations[{QUEUE_ANNOTATION}]", "trainer.volcano.queue-empty",
                          "Volcano queue name must not be empty"))
    # Each replicated job's priorityClassName, a runtime patch's winning over the runtime's.
    patched = {str(jp.name): jp.pod["priorityClassName"] for jp in job_patches(job) if jp.pod.get("priorityClassName")}
    for rj in replicated_jobs(runtime):
        name = patched.get(str(rj.get("name")), job_pod_spec(rj).get("priorityClassName"))
        if not name:
            continue
        name = str(name)
        if name in BUILTIN_PRIORITY_CLASSES:
            break   # upstream stops looking at the first built-in class
        if priority_classes is not None and name not in priority_classes:
            out.append(refuse("spec.templateSpec.priorityClassName", "trainer.volcano.priority-class",
                              f"PriorityClass {_q(name)} doesn't exist: priorityclasses.scheduling.k8s.io {_q(name)} "
                              "not found"))
    return out


def _domain_prefixed_path(value: object) -> str | None:
    text = str(value or "")
    if not text:
        return "Required value"
    host, sep, path = text.partition("/")
    if not sep or not host or not path:
        return 'must be a domain-prefixed path (such as "acme.io/foo")'
    host_errors = dns1123_subdomain(host)   # IsDomainPrefixedPath: the host as a DNS-1123 subdomain
    if host_errors:
        return host_errors[0]
    if not _HTTP_PATH.fullmatch(path):
        return "Invalid path"
    return None


def _patches_immutability(job: dict, old: dict | None, jobset: dict | None) -> list[FieldError]:
    """On UPDATE (the JobSet plugin's checkRuntimePatchesImmutability): runtimePatches change only
    while the TrainJob is suspended before or after the update, and not while the TrainJob's JobSet
    (``jobset``, None when it does not exist) still has an active replicated job."""
    if old is None:
        return []
    spec, old_spec = as_dict(job.get("spec")), as_dict(old.get("spec"))
    if as_list(spec.get("runtimePatches")) == as_list(old_spec.get("runtimePatches")):
        return []
    if old_spec.get("suspend") is not True and spec.get("suspend") is not True:
        return [refuse("spec.runtimePatches", "trainer.jobset.patches-not-suspended",
                       "RuntimePatches can only be modified when the TrainJob is suspended before or after the update")]
    statuses = as_list(as_dict(as_dict(jobset).get("status")).get("replicatedJobsStatus"))
    return [refuse("spec.runtimePatches", "trainer.jobset.patches-active",
                   f"RuntimePatches cannot be modified when the JobSet's ReplicatedJob "
                   f"{as_dict(st).get('name')} is still active")
            for st in statuses if (as_int(as_dict(st).get("active")) or 0) > 0]


def _jobset_problems(job: dict, runtime: dict, old: dict | None = None, jobset: dict | None = None) -> list[FieldError]:
    out: list[FieldError] = []
    jobs = {str(rj.get("name")): rj for rj in replicated_jobs(runtime)}
    containers = {name: _container_names(rj) for name, rj in jobs.items()}
    initializer = as_dict(as_dict(job.get("spec")).get("initializer"))
    for key, step, config in (("dataset", DATASET, "datasetConfig"), ("model", MODEL, "modelConfig")):
        if initializer.get(key) is None:
            continue
        if step not in jobs:
            out.append(refuse("spec.runtimeRef", "trainer.jobset.initializer-job",
                              f"must have {step} job when trainJob is configured with input {config}"))
        elif step not in containers[step]:
            out.append(refuse("spec.runtimeRef", "trainer.jobset.initializer-container",
                              f"must have container with name - {step} in the {step} job"))
        else:
            mounts = [m for c in as_list(job_pod_spec(jobs[step]).get("containers")) if as_dict(c).get("name") == step
                      for m in _names(as_dict(c).get("volumeMounts"))]
            if INITIALIZER_VOLUME not in mounts:
                out.append(refuse("spec.runtimeRef", "trainer.jobset.initializer-mount",
                                  f"must have volumeMount with name - {INITIALIZER_VOLUME} in container "
                                  f"{step} of the {step} job"))
    out += _patches_immutability(job, old, jobset)
    for patch in runtime_patches(job):
        problem = _domain_prefixed_path(patch.manager)
        if problem:
            out.append(refuse("spec.runtimePatches.manager", "trainer.jobset.patch-manager", problem))
        for jp in patch.jobs:
            name = str(jp.name)
            if name not in containers:
                out.append(refuse("spec.runtimePatches", "trainer.jobset.patch-job",
                                  "must not have replicated job that doesn't exist in the runtime job template"))
                continue
            for _, c in jp.containers("initContainers"):
                if str(c.get("name")) not in containers[name]:
                    out.append(refuse("spec.runtimePatches", "trainer.jobset.patch-init-container",
                                      f"must not have initContainer that doesn't exist in the runtime job {name}"))
            for _, c in jp.containers():
                if str(c.get("name")) not in containers[name]:
                    out.append(refuse("spec.runtimePatches", "trainer.jobset.patch-container",
                                      f"must not have container that doesn't exist in the runtime job {name}"))
                elif as_list(c.get("env")) and c.get("name") in (DATASET, MODEL, NODE):
                    out.append(refuse("spec.runtimePatches", "trainer.jobset.patch-env",
                                      f"must not have envs for the {DATASET}, {MODEL}, {NODE} containers"))
    return out


def _mpi_problems(job: dict, runtime: dict) -> list[FieldError]:
    """pkg/runtime/framework/plugins/mpi ``Validate``: with runLauncherAsNode (the launcher is one of
    the nodes, see modules/semantics/workloads.py ``mpi_node_count``) more than one node needs both a
    ``launcher`` and a ``node`` job; no OpenMPI-reserved env."""
    if not is_mpi(runtime):
        return []
    trainer = as_dict(as_dict(job.get("spec")).get("trainer"))
    if not trainer:
        return []
    out: list[FieldError] = []
    nodes = trainer_settings(job)[0]
    names = {str(rj.get("name")) for rj in replicated_jobs(runtime)}
    if (1 if nodes is None else nodes) >= 2 and launcher_as_node(runtime) and not {"launcher", NODE} <= names:
        out.append(refuse("spec.trainer.numNodes", "trainer.mpi.launcher-and-node",
                          "must have 1 when MPI trainingRuntime with enabled runLauncherAsNode "
                          "does not have either launcher and node"))
    out += _reserved_env(trainer, MPI_RESERVED, "trainer.mpi.reserved-env")
    return out


def trainjob_problems(job: dict, runtime: dict, priority_classes: set[str] | None = None,
                      old: dict | None = None, jobset: dict | None = None) -> list[FieldError]:
    """What the TrainJob webhook rejects, given the runtime it names: on CREATE, or on UPDATE from
    ``old`` (``jobset``: the TrainJob's live JobSet, None when it does not exist). ``priority_classes``:
    the PriorityClasses that exist, or None when unknown (then that check is skipped)."""
    return (_torch_problems(job, runtime) + _mpi_problems(job, runtime)
            + _volcano_problems(job, runtime, priority_classes) + _jobset_problems(job, runtime, old, jobset))


_RELEASE = "kubeflow/trainer v2.3.0"
_SOURCES = {"torch": "pkg/runtime/framework/plugins/torch/torch.go Validate",
            "mpi": "pkg/runtime/framework/plugins/mpi/mpi.go Validate",
            "volcano": "pkg/runtime/framework/plugins/volcano/volcano.go Validate",
            "jobset": "pkg/runtime/framework/plugins/jobset/jobset.go Validate",
            "trainjob": "pkg/webhooks/trainjob_webhook.go ValidateCreate"}


def problem_source(problem: FieldError) -> str:
    """The upstream file and function that refuses ``problem`` of a TrainJob (for the message), from
    its code (``trainer.<plugin>.<check>``; TorchTune's checks are the Torch plugin's)."""
    plugin = problem.origin.split(".")[1] if problem.origin.count(".") >= 2 else "trainjob"
    plugin = "torch" if plugin == "torchtune" else plugin
    return f"{_RELEASE} {_SOURCES.get(plugin, _SOURCES['trainjob'])}"


def runtime_source(runtime: dict) -> str:
    """The webhook file that judges a (Cluster)TrainingRuntime."""
    name = "clustertrainingruntime" if runtime.get("kind") == "ClusterTrainingRuntime" else "trainingruntime"
    return f"{_RELEASE} pkg/webhooks/{name}_webhook.go validateReplicatedJobs"


def _runtime_ref(job: dict) -> tuple[str, str, str]:
    ref = as_dict(as_dict(job.get("spec")).get("runtimeRef"))
    return (str(ref.get("apiGroup") or GROUP), str(ref.get("kind") or "ClusterTrainingRuntime"),
            str(ref.get("name", "")))


def trainjob_refusals(job: dict, objects: list[dict], known: bool, priority_classes: set[str] | None,
                      old: dict | None = None) -> list[FieldError] | None:
    """What the TrainJob webhook refuses (on CREATE, or on UPDATE from ``old``), the runtime and the
    TrainJob's JobSet looked up among ``objects``. None: the runtime is not among them and ``known`` is
    False (the cluster may hold it), so nothing was judged."""
    group, kind, name = _runtime_ref(job)
    if group != GROUP or kind not in RUNTIME_KINDS:
        return [refuse("spec.runtimeRef", "trainer.trainjob.runtime-kind", f"unsupported runtime: {kind}.{group}")]
    runtime = find_runtime(job, objects)
    if runtime is None:
        if not known:
            return None
        path = "spec.RuntimeRef" if kind == "ClusterTrainingRuntime" else "spec.runtimeRef"
        step = kind[0].lower() + kind[1:]
        return [refuse(path, "trainer.trainjob.runtime-not-found",
                       f"{kind.lower()}s.{GROUP} {_q(name)} not found: specified {step} must be created before "
                       "the TrainJob is created")]
    jobset = None
    if old is not None:
        md = meta(job)
        jobset = next((o for o in objects if o.get("kind") == "JobSet" and meta(o).get("name") == md.get("name")
                       and meta(o).get("namespace", "default") == md.get("namespace", "default")), None)
    return trainjob_problems(job, runtime, priority_classes, old, jobset)


def admission_problems(obj: dict, objects: list[dict], known: bool, priority_classes: set[str] | None,
                       old: dict | None = None) -> list[FieldError] | None:
    """Trainer's webhooks for any of their kinds (the registry's and the rule's entry); ``old``: the
    object before an UPDATE."""
    if obj.get("kind") in RUNTIME_KINDS:
        return runtime_problems(obj)
    return trainjob_refusals(obj, objects, known, priority_classes, old)


def validate(obj: dict, operation: str, old: dict | None, cluster: Cluster) -> list[FieldError]:
    """Trainer's validating webhooks for any of their kinds: the runtime a TrainJob names, its
    JobSet and the PriorityClasses looked up in ``cluster``. The PriorityClasses are judged against
    the setting ``priorityClasses`` (the names that exist) when given, else against the cluster's
    when its list is complete. A TrainJob whose runtime the cluster may hold unseen: not judged."""
    classes = cluster.setting("priorityClasses", None)
    if classes is None and cluster.known:
        classes = cluster.names("PriorityClass")
    problems = admission_problems(obj, list(cluster.objects), cluster.known, classes,
                                  old if operation == "UPDATE" else None)
    return problems or []
