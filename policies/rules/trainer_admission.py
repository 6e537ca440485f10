"""Kubeflow Trainer v2.3's Go-only admission checks as a rule (`trainer-admission`); the port itself is
``modules/upstream/trainer/webhooks.py``."""
from __future__ import annotations

from typing import Iterator

from modules.semantics.workloads import find_runtime
from modules.upstream.chain import refusals
from modules.upstream.cluster import Cluster
from modules.upstream.install import EVERY_WEBHOOK
from modules.upstream.trainer.install import built_in_runtimes
from modules.upstream.trainer.webhooks import (ANCESTOR_STEP, GROUP, RUNTIME_KINDS, _RELEASE, _SOURCES,
                                               _runtime_ref, problem_source, runtime_source)

from ..framework import MANDATORY, CheckContext, Finding, NotChecked, Rule, meta, where

RULE_ID = "trainer-admission"

_FIX = {
    "runtime": "Label only the trainer, model-initializer and dataset-initializer jobs with "
               f"{ANCESTOR_STEP}, give each replicas: 1 and the container that step runs (node for the trainer).",
    "trainjob": "Fix the TrainJob (or its runtime) as the message says; Trainer's webhook refuses it at "
                "creation, so `pulumi up` or `kubectl apply` fails.",
}



def _trainjob_cluster(obj: dict, ctx: CheckContext) -> tuple[Cluster, bool]:
    """What Trainer's TrainJob webhook looks up for ``obj``, and whether its runtime is known to be
    missing when absent: the setting ``clusterObjectsKnown`` says the checked objects are all, and a
    stack knows its runtimes as it knows its Queues (those it renders; a runtime its Trainer chart
    release installs is present but unseen)."""
    _, _, name = _runtime_ref(obj)
    built_in = ctx.remember("trainer-admission:built-in", lambda: built_in_runtimes(ctx.manifests))
    known = bool(ctx.config.get("clusterObjectsKnown")) or (ctx.stack is not None and name not in built_in)
    present = ctx.remember("priority-classes", lambda: {
        str(meta(o).get("name")) for o in ctx.manifests if o.get("kind") == "PriorityClass"})
    listed = {str(n) for n in ctx.config.get("priorityClasses") or ()}
    # Judged only when something says which PriorityClasses exist: the stack renders its own
    # (trainstack:volcano.priorityClasses), the settings list the cluster's, or the objects are all.
    settings = {"priorityClasses": present | listed} if (known or present or listed) else {}
    return Cluster(tuple(ctx.manifests), known, settings), name in built_in


def _trainer_admission(obj: dict, ctx: CheckContext) -> Iterator[Finding | NotChecked]:
    if obj.get("kind") in RUNTIME_KINDS:
        for _, error in refusals(obj, EVERY_WEBHOOK, Cluster(tuple(ctx.manifests)), sources=("trainer",)):
            yield Finding(error.field, f"{where(obj, error.field)}: Trainer's {obj['kind']} webhook rejects it: "
                                       f"{error.message()} ({runtime_source(obj)}). {_FIX['runtime']}")
        return
    group, kind, name = _runtime_ref(obj)
    cluster, built_in = _trainjob_cluster(obj, ctx)
    if group == GROUP and kind in RUNTIME_KINDS and not cluster.known and find_runtime(obj, ctx.manifests) is None:
        place = ("installed by the Trainer chart release (its template is not among the checked objects)"
                 if built_in else "not among the checked objects")
        yield NotChecked(f"{where(obj, 'spec.runtimeRef')}: {kind} {name!r} is {place}, so Trainer's plugin "
                         "validations (Torch, Volcano, JobSet) were not evaluated",
                         path="spec.runtimeRef")
        return
    for _, error in refusals(obj, EVERY_WEBHOOK, cluster, sources=("trainer",)):
        path = error.field
        if error.origin in _RUNTIME_REF_FIX:
            yield Finding(path, f"{where(obj, path)}: Trainer's TrainJob webhook rejects it: {error.message()} "
                                f"({_RELEASE} {_SOURCES['trainjob']}). {_RUNTIME_REF_FIX[error.origin]}")
        else:
            yield Finding(path, f"{where(obj, path)}: Trainer's TrainJob webhook rejects it (runtime {kind} "
                                f"{name!r}): {error.message()} ({problem_source(error)}). {_FIX['trainjob']}")


_RUNTIME_REF_FIX = {
    "trainer.trainjob.runtime-kind": f"Reference a ClusterTrainingRuntime or TrainingRuntime of {GROUP}.",
    "trainer.trainjob.runtime-not-found": "Create the runtime before the TrainJob.",
}


RULES = (
    Rule(
        id=RULE_ID,
        description="TrainJobs and (Cluster)TrainingRuntimes pass what Kubeflow Trainer v2.3's admission webhooks "
                    "check in Go: ancestor-step jobs with one replica and their container, no torchrun-reserved "
                    "env, supported TorchTune settings, a non-empty Volcano queue and existing PriorityClass, "
                    "initializer jobs with their volume mount, and runtimePatches that name existing jobs and "
                    "containers.",
        why="These checks live in Trainer's webhook code (pkg/webhooks, pkg/runtime/framework/plugins "
            "{torch,volcano,jobset} Validate), not in any ValidatingAdmissionPolicy or CRD rule, so neither "
            "schema validation nor upstream-admission sees them; the API server refuses the object at creation.",
        fix="Follow the message: it quotes Trainer's own error. Upstream's test cases are the fixtures in "
            "tests/policies/admission/upstream/trainer/.",
        severity="high", enforcement=MANDATORY, check=_trainer_admission,
        kinds=frozenset({"TrainJob", *RUNTIME_KINDS}),
        config_schema={
            "clusterObjectsKnown": {
                "type": "boolean", "default": False,
                "description": "The checked objects are everything the cluster holds: a TrainJob whose runtime "
                               "is missing from them is rejected (as the webhook would) instead of noted, and "
                               "PriorityClasses are judged against them."},
            "priorityClasses": {
                "type": "array", "items": {"type": "string", "minLength": 1}, "default": [],
                "description": "PriorityClasses the cluster has besides the checked objects' own."}},
        config_defaults={"clusterObjectsKnown": False, "priorityClasses": []}),
)


# The section docs/policies.md carries about this rule (policies/docs.py appends it; a test keeps
# the lists in step with tests/policies/admission/upstream/trainer/).
DOCS = """\
## Trainer's Go-only admission checks (`trainer-admission`)

Kubeflow Trainer v2.3.0 validates TrainJobs and (Cluster)TrainingRuntimes in its webhook code, which no
ValidatingAdmissionPolicy or CRD `x-kubernetes-validations` rule carries. `trainer-admission` is our own
implementation of that logic (`modules/upstream/trainer/webhooks.py`, reported by
`policies/rules/trainer_admission.py`), applied to every TrainJob and (Cluster)TrainingRuntime of the
stack and of `--manifests`, a TrainJob against the runtime its `runtimeRef` names. A stack knows its
runtimes as it knows its Queues: a TrainJob naming one the stack does not render is rejected as the
webhook rejects it (a runtime the stack's Trainer chart release installs itself, `runtimes.*.enabled`,
is present but unseen: a note). Without a stack, a runtime missing from the checked objects is a note,
unless the setting `clusterObjectsKnown` says they are all. PriorityClasses are judged
only when the checked objects hold some (the stack's `trainstack:volcano.priorityClasses`) or the
setting `priorityClasses` lists the cluster's.

| upstream source (tag v2.3.0) | what we check |
|---|---|
| `pkg/webhooks/trainingruntime_webhook.go`, `clustertrainingruntime_webhook.go` (`validateReplicatedJobs`) | jobs labelled `trainer.kubeflow.org/trainjob-ancestor-step` trainer / model-initializer / dataset-initializer have `replicas: 1` and the container `node` / `model-initializer` / `dataset-initializer` |
| `pkg/webhooks/trainjob_webhook.go` | `runtimeRef` names a TrainingRuntime or ClusterTrainingRuntime of `trainer.kubeflow.org` that exists |
| `pkg/runtime/framework/plugins/torch` (`Validate`, `validateTorchTune`) | no torchrun-reserved env (`PET_*`) in `spec.trainer.env`; `envInjection` targets exist; TorchTune (`command: [tune, run]`): supported model, single node except Llama 3.3 70B, QLoRA limits, no LoRA across nodes, no runtime-managed config in `args` |
| `pkg/runtime/framework/plugins/mpi` (`Validate`) | with `runLauncherAsNode` and `numNodes` >= 2 the runtime has both a `launcher` and a `node` job; no OpenMPI-reserved env (`OMPI_MCA_*` hostfile, rsh args, FQDN host names, default slots) in `spec.trainer.env` |
| `pkg/runtime/framework/plugins/volcano` (`Validate`) | the queue annotation is not empty; the pods' PriorityClass exists |
| `pkg/runtime/framework/plugins/jobset` (`Validate`) | initializer jobs, containers and `initializer` volume mounts for `spec.initializer`; `runtimePatches` managers are domain-prefixed paths and name existing jobs and containers, without env for node/initializer containers; on UPDATE, `runtimePatches` change only while the TrainJob is suspended before or after and its JobSet has no active replicated job |

**Measured against upstream.** The inputs and expected outcomes of upstream's test tables are our
fixtures in `tests/policies/admission/upstream/trainer/` (one file per upstream test function, upstream's case
names verbatim, with repository, tag, path and function), and `tests/policies/rules/test_trainer_admission.py`
requires upstream's outcome for every ported case: accepted, or rejected on upstream's field with
upstream's message. Ported: `TestValidateReplicatedJobs` (4 cases), `TestClusterTrainingRuntimeValidateCreate` (2),
`TestValidateCreate` of the TrainJob webhook (3), `TestTorchValidate` (15), the Volcano plugin's `TestValidate` (5),
the JobSet plugin's `TestValidate` (26) and the MPI plugin's `TestValidate` (11): 66 cases, 33 of them rejected.

**Not ported, and why.**
- JobSet plugin `TestValidate`, "forbid changes to runtimePatches when trainJob is suspended but jobSet
  cannot be checked due to a client error": it simulates a failing API client (an internal error);
  an admission check over manifests has no client to fail. (Its 9 other UPDATE cases are ported: the
  runtimePatches immutability against the old TrainJob, `spec.suspend` and the live JobSet's status;
  `check` judges creates, the fixtures and the runner judge the updates.)
- The TrainJob defaulting webhook's `TestDefault` (7 cases, all CREATE/UPDATE stamps of
  `runtimePatches[].time` from a fake clock): "CREATE: all patches get timestamped",
  "UPDATE, patch unchanged: Time preserved", "UPDATE, patch changed: Time updated",
  "CREATE: externally-set Time is preserved", "UPDATE, patch changed with pre-existing Time: Time updated",
  "UPDATE, new patch added alongside unchanged patch",
  "UPDATE, new patch added with externally-set Time: Time preserved". The stamp changes no verdict, and
  trainstack does not model clock-driven timestamps.
- Deprecation *warnings* (`support=deprecated`, "deprecated runtime referenced"): only the outcome
  (admitted) is checked; warnings never reject an object.
- The JAX, XGBoost and Flux plugins' `Validate` (and their test tables): trainstack renders only
  torch runtimes and does not model those ML policies; a TrainJob on such a runtime gets the Torch-
  independent checks (JobSet, Volcano) only. (MPI is modelled: its pod counts in
  `modules/semantics/workloads.py`, its `Validate` here.)
- Upstream's JobSet plugin checks `runtimePatches` against the runtime's template as written (as its
  tests do); the live webhook merges the patches first, so a patch that adds a new container may be
  admitted there while trainstack reports it (such a container has no image and fails later anyway).
"""  # noqa: E501  (markdown table rows and quoted upstream case names, copied into docs/policies.md)
