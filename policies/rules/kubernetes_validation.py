"""The Kubernetes API server's built-in validation on CREATE (modules/upstream/kubernetes/): every
object's metadata (name by its kind's format, label and annotation syntax and size) and the bodies of
the core kinds the stacks render or users check (pod templates of Pods, Deployments, StatefulSets,
DaemonSets, ReplicaSets, Jobs and CronJobs; HorizontalPodAutoscalers, PersistentVolumeClaims,
Services, PriorityClasses, ConfigMaps, Secrets). Volcano Job tasks get the same pod-template
validation through Volcano's job webhook (upstream-admission)."""
from __future__ import annotations

from typing import Iterator

from ..framework import MANDATORY, CheckContext, Finding, Rule, where
from modules.upstream.field import ErrorType, FieldError
from modules.upstream.kubernetes import apps, registry

RULE_ID = "kubernetes-api-validation"
_REPO = "kubernetes/kubernetes v1.35"

_FIX = {
    ErrorType.NOT_FOUND: "name something that exists: a volumeMount must name one of the pod's `volumes` (add the "
                         "volume or correct the name)",
    ErrorType.REQUIRED: "set the field",
    ErrorType.DUPLICATE: "give each entry its own value",
    ErrorType.TOO_LONG: "make it smaller",
}
_FIX_BY_FIELD = {
    "spec.minReplicas": "set minReplicas to at least 1 (0 needs the HPAScaleToZero feature gate, declared in "
                        "`trainstack:featureGates`, and an Object or External metric)",
    "spec.maxReplicas": "make maxReplicas at least 1 and at least minReplicas",
}
_FIX_BY_ORIGIN = {
    apps.SELECTOR_MISMATCH: "give the pod template every label the selector requires (or narrow the selector)",
    apps.NO_ROLLOUT_PROGRESS: "let the rollout either add a pod (maxSurge) or take one down (maxUnavailable)",
}


def _fix(error: FieldError) -> str:
    """The hint for an error, chosen by its code (origin, field, type), never by its wording."""
    return (_FIX_BY_ORIGIN.get(error.origin) or _FIX_BY_FIELD.get(error.field) or _FIX.get(error.type)
            or "change the value to one the quoted rule allows")


def feature_gates(ctx: CheckContext) -> frozenset[str]:
    """The stack's feature gates, read once per evaluation."""
    if ctx.stack is None:
        return frozenset()
    return ctx.remember("kubernetes-api-validation:gates",
                        lambda: frozenset(str(g) for g in ctx.stack.values.get("featureGates") or ()))


def _api_validation(obj: dict, ctx: CheckContext) -> Iterator[Finding]:
    for error in registry.validate_object(obj, feature_gates(ctx)):
        path = error.field
        yield Finding(path, f"{where(obj, path)}: the API server rejects it: \"{error.message()}\" ({_REPO} "
                            f"{registry.upstream_file(obj, path)}); {_fix(error)}.")


RULES = (
    Rule(
        id=RULE_ID,
        description="Every object passes the Kubernetes API server's built-in validation on create: names, labels "
                    "and annotations; pod templates (container names, volume mounts that name a volume, ports, "
                    "env names, requests not above limits, probes, the restart policy the kind allows, "
                    "tolerations, affinity, topology spread, DNS); workload selectors and strategies; HPAs, "
                    "PersistentVolumeClaims, Services, PriorityClasses, ConfigMaps, Secrets, StorageClasses and "
                    "RBAC roles and bindings.",
        why="The API server validates these objects in Go (kubernetes/kubernetes pkg/apis/*/validation), "
            "beyond any OpenAPI or CRD schema: an object that breaks a rule (a volumeMount naming no volume, an "
            "HPA with minReplicas 0, a label value with a space) is refused at create, so `pulumi up` or the "
            "GitOps sync fails after part of the stack was applied.",
        fix="Follow the message: it quotes the API server's own field error. With the HPAScaleToZero feature "
            "gate on in the cluster, declare it in `trainstack:featureGates`.",
        severity="high", enforcement=MANDATORY, check=_api_validation),
)


# The section docs/policies.md carries about the Go-only checks of the API server and the Training
# Operator (policies/docs.py appends it; a test keeps the counts in step with the fixtures).
DOCS = """\
## The API server's built-in validation and the Training Operator's webhooks

Two checks of the real admission chain exist only as Go code, so neither a CRD schema nor
`upstream-admission` sees them. trainstack evaluates both in its own code, on every object of the stack
and of `--manifests`, as on create.

**`kubernetes-api-validation`** (`modules/upstream/kubernetes/`): how the API server (kubernetes
v1.35, `pkg/apis/*/validation` and apimachinery's `pkg/util/validation`) validates an object after its
v1 defaulting (restartPolicy `Always`, port protocol `TCP`, a volume without a source an `emptyDir`, an
HPA's minReplicas 1, a Service's type `ClusterIP`). Messages quote the API server's field error
(`Not found: "scratch"`, `Invalid value: 0: must be greater than or equal to 1`) and name the file that
holds the check.

| what | evaluated |
|---|---|
| every object, custom resources included | `metadata.name` in its kind's format (DNS-1123 subdomain; Namespace and StatefulSet a DNS-1123 label; Service a DNS-1035 label; RBAC objects and CertificateSigningRequests a path segment; an IPAddress a canonical IP address; a batch CronJob at most 52 characters), `metadata.namespace` a DNS label (on the built-in cluster-scoped kinds of v1.35 and the cluster-scoped CRDs the stacks render the API server clears it, so it is not judged), label keys and values, annotation keys and their total size (256 KiB); on Pods and pod templates, `controller.kubernetes.io/pod-deletion-cost` a 32-bit integer |
| pod templates of Pods, PodTemplates, ReplicationControllers, Deployments, DaemonSets, ReplicaSets, batch Jobs and CronJobs (and, through Volcano's job webhook under `upstream-admission`, every Volcano Job task) | at least one container; container names DNS labels and unique across init, regular and ephemeral containers; an image; volume names DNS labels and unique, one source per volume, the claim/ConfigMap/Secret/path each source needs; every `volumeMount` names a volume, mount paths unique and set, `subPath` relative; ports (number 1-65535, IANA names unique per container, protocol TCP/UDP/SCTP); env names (printable ASCII without `=`; Volcano's job webhook applies the strict names, so `1F1B_SCHEDULE` is refused in a Volcano Job task) and `valueFrom` with one source; requests not above limits and equal to them for extended resources (`nvidia.com/gpu`), which need a limit; hugepages only beside cpu or memory and in whole pages; pod-level `spec.resources` (cpu, memory, hugepages; requests at least the containers' aggregate, limits at least each container's); security contexts (user and group ids, seccomp types, `allowPrivilegeEscalation: false` not with `privileged` or `capabilities.add: [CAP_SYS_ADMIN]`); sysctls (names, each once, namespaced ones not with hostNetwork/hostIPC); probes with exactly one handler, non-negative timings, `successThreshold` 1 for liveness and startup probes, none on non-restartable init containers; lifecycle hooks with one handler; `restartPolicy` Always/OnFailure/Never, and the one the kind allows (apps kinds `Always`, batch Jobs and CronJobs `OnFailure` or `Never`); node selector labels; service account, priority class, hostname and subdomain names; extended resources (`nvidia.com/gpu`) in whole numbers; env `fieldRef` paths (`metadata.name`, ..., `metadata.labels['key']`) and `resourceFieldRef` resources (`limits.cpu`, `requests.memory`, ..., hugepages) the downward API offers; tolerations (key syntax, Equal/Exists, no value with Exists, an empty key only with Exists, `tolerationSeconds` only with NoExecute, known effects); node affinity (at least one required term; values for In/NotIn, none for Exists/DoesNotExist, one for Gt/Lt; known operators; keys), pod (anti-)affinity topology keys and weights 1-100; topology spread constraints (maxSkew > 0, a topology key, DoNotSchedule/ScheduleAnyway, each key/action pair once, minDomains > 0 only with DoNotSchedule); dnsPolicy, and `None` with a dnsConfig of 1-3 nameservers, each an IP address; with hostNetwork, each set hostPort equal to its containerPort; readiness and scheduling gates, host aliases, preemptionPolicy, no host namespaces with `hostUsers: false` |
| Deployments, StatefulSets, DaemonSets, ReplicaSets (`apps/v1`) | a selector, not empty, that the pod template's labels satisfy; no activeDeadlineSeconds in the template; a StatefulSet's template only by its labels, annotations and restart policy (upstream does not validate its pod spec, whose volumeMounts may name volumeClaimTemplates); a Deployment's strategy after defaulting (maxSurge and maxUnavailable 25%): not both 0, maxUnavailable at most 100%, no rollingUpdate with `Recreate` |
| batch Job | a known completionMode; an `Indexed` Job with completions and at most 100000 parallel pods |
| batch CronJob | a schedule robfig/cron's standard parser accepts (five fields or a descriptor; its error quoted), no `TZ`/`CRON_TZ` in it, a known concurrencyPolicy |
| HorizontalPodAutoscaler (`autoscaling/v2`, `v1`) | minReplicas >= 1 (>= 0 with the `HPAScaleToZero` gate declared in `trainstack:featureGates`, then with an Object or External metric), maxReplicas >= 1 and >= minReplicas, scale target kind and name, each metric: a known type, exactly its own source populated, a metric name, the target each type needs (Pods an averageValue, Resource a utilization or an average value, not both; Object and External a value or averageValue), target type and positive values; behavior windows (0-3600 s), policies (type, value, period 1-1800 s), selectPolicy |
| PersistentVolumeClaim | at least one access mode, each known, `ReadWriteOncePod` alone; a storage request above zero (a claim cloned or restored from a data source too); volumeMode; storage and volume-attributes class names; `dataSource`/`dataSourceRef` with a name and kind, in the core group only a PersistentVolumeClaim, the two alike |
| Service | type; ports (required unless headless or ExternalName; names DNS labels, required when several, unique; port numbers; protocols; target ports; no nodePort on ClusterIP; port/protocol pairs unique); `clusterIP: None` not on NodePort/LoadBalancer; externalName for ExternalName; selector labels |
| PriorityClass | the `system-` prefix only for the two built-in classes with their values; user values at most 1000000000; preemptionPolicy |
| StorageClass | a provisioner (a qualified name), reclaimPolicy Delete/Recycle/Retain, volumeBindingMode Immediate/WaitForFirstConsumer |
| Role, ClusterRole, RoleBinding, ClusterRoleBinding | each rule has verbs and either API groups and resources or (cluster roles only) non-resource URLs, not both; a binding's roleRef is an `rbac.authorization.k8s.io` Role (namespaced bindings) or ClusterRole with a name, its subjects a User, Group or ServiceAccount with a name (a ServiceAccount of a ClusterRoleBinding with its namespace) |
| ConfigMap, Secret | keys (`[-._a-zA-Z0-9]+`, not `.`/`..`, at most 253 characters), a key not in both `data` and `binaryData`, at most 1 MiB of data; the keys each built-in Secret type needs |

Not evaluated, and why:
- UPDATE rules (immutable fields such as a Job's template or a Service's clusterIP, a PodGroup's
  queue): trainstack judges the objects it would create.
- Checks that need the cluster: namespace existence, quotas and limit ranges (admission plugins over
  cluster state), whether a PriorityClass, ServiceAccount or StorageClass exists, IP allocation.
- Pod-spec details the stacks do not write and whose syntax the OpenAPI schema mostly covers: the
  label selectors inside pod affinity and topology spread constraints, DNS search domains and options,
  OS-specific and AppArmor/SELinux security fields (privileged containers depend on the API server's
  `--allow-privileged`; the pod-security rules judge the rest), volume sources' own fields beyond the
  name each needs (downward API volume items included), a `resourceFieldRef` divisor, resource claims.
  `modules/upstream/kubernetes/README.md` lists each with the reason.
- Feature-gated checks that are off on a default v1.35 API server: the toleration operators `Lt`/`Gt`
  (refused as unsupported, as there).
- Services' IP families, load-balancer fields and traffic policies; bodies of kinds not listed
  above (Ingress, NetworkPolicy, ...): their names, labels and annotations are checked, their bodies
  are left to the schema.
- Custom resources' bodies: the API server validates them against the CRD schema (and its CEL rules,
  `upstream-admission`), not with this Go code.
- Quantities in messages are quoted as written; the API server prints its canonical form. A value
  upstream prints as Go's dump of an internal struct (a security context) is left out of the message.

**`training-operator-admission`** (`modules/upstream/training_operator/webhooks.py`): the Training Operator
v1.9.4's validating webhooks (kubeflow/trainer tag v1.9.4 `pkg/webhooks/{pytorch,tensorflow,xgboost,jax,
paddlepaddle}`, `pkg/common/util/webhooks.go`): a DNS-1035 job name; a known replica type
(PyTorchJob, XGBoostJob and PaddleJob Master/Worker, JAXJob Worker); containers in every replica, each
with an image, one of them named after the framework (`pytorch`, `tensorflow`, `xgboost`, `jax`,
`paddle`); a Master with exactly one replica (PyTorchJob, XGBoostJob) and other PyTorchJob replicas at
least one; a Worker when a PyTorchJob has an `elasticPolicy`, and `elasticPolicy.nProcPerNode` not
together with `nprocPerNode`; at most one Chief or Master (TFJob); a Master present (XGBoostJob);
`runPolicy.managedBy` one of `kubeflow.org/training-operator` and `kueue.x-k8s.io/multikueue`. The
operator registers no defaulting webhook, so a Master without `replicas` is refused. Not evaluated:
MPIJob (v1.9.4 has no MPIJob webhook), the deprecation warning for `elasticPolicy.nProcPerNode` (a
warning admits), and the `managedBy` immutability on UPDATE in `check` (creates only; the fixtures
measure it).

**Measured against upstream.** Upstream's tables are our fixtures, in the format all upstream admission
tables share. `tests/policies/admission/upstream/kubernetes/` holds apimachinery's string-format tables
(9 tables at the release tag v1.35.0: DNS-1123 labels and subdomains, DNS-1035 labels, port numbers and
names, qualified names, label values, ConfigMap keys, relaxed env names; each value carried by the field
the API server checks with it) and the core tables `TestValidateContainers` and
`TestValidateInitContainers` (each case's containers in a PodTemplate; read at the one revision the
index holds, the reason in the file): 11 tables, 379 cases. Two are divergent, with the reason: the tables validate
them with options the v1.35 API server does not use on create (strict env names; sidecar resize
policies off). Cases whose input the API server's defaulting changes before validation (an empty
httpGet path or scheme, an empty termination message policy) and one that depends on
`--allow-privileged=false` are listed as not ported. `tests/policies/admission/upstream/training-operator/`
holds the five webhook tables (40 cases). Kubernetes' tables have one runner,
`policies/admission/kubernetes_tables.py`: upstream's verdict on exactly upstream's fields, the error type
where the table gives one and the whole message where upstream has one. The autoscaling `validation_test.go`
(HPAs) is not ported: the repository index holds it only at a revision that predates
`autoscaling/v2`; the HPA checks have our own tests (`tests/modules/upstream/kubernetes/test_api_server_validation.py`).
"""  # noqa: E501  (markdown table rows, copied into docs/policies.md)

