"""The "Volcano's Go-only admission webhooks" section of docs/policies.md (policies/docs.py appends it)."""
from __future__ import annotations

SECTION = """
## Volcano's Go-only admission webhooks (`upstream-admission`)

Volcano v1.15.1 checks much of what it admits in Go, in its webhook server
(`pkg/webhooks/admission/<kind>/{validate,mutate}` of volcano-sh/volcano): no ValidatingAdmissionPolicy
and no CRD rule states these checks. trainstack writes them in its own code
(`modules/upstream/volcano/`: `job.py`, `queue.py`, `podgroup.py`, `hypernode.py`, `cronjob.py`,
`jobflow.py`, `pod.py`, the mutations in `mutation.py`), registers each as the chart registers the
webhook it stands for (`modules/upstream/volcano/registry.py`: path, name, operations, namespace
selector), and `upstream-admission` reports their refusals in every runner (`check`, the CrossGuard
pack, `preview`): upstream's message, the upstream file and function, the field path and a fix
chosen by the refusal's code (`modules/upstream/volcano/fixes.py`; `simulate` names the same fix).

| webhook (chart `enabled_admissions`) | on by default | what it refuses |
|---|---|---|
| `/jobs/validate` (`admit_job.go`) | yes | no tasks; an mpi plugin without its master task; a task minAvailable above its replicas; duplicated task names; lifecycle policies (unknown events or actions, event and exitCode together, neither, exit code 0, duplicates, `*` with others); `<job>-<task>-<index>` or the job name not a qualified name (63 characters); the job's minAvailable above the total replicas; unknown plugins; job volumes (mountPath missing or repeated, neither or both of volumeClaim and volumeClaimName, a bad claim name); a queue that is not Open, `root`, or not a leaf; a dependsOn cycle; highestTierAllowed with highestTierName; a topologyPolicy with fractional CPU requests; every task's pod template through the API server's own validation as a PodTemplate named after the task (the task name a DNS-1123 subdomain, `spec.task[i].metadata.name: ...`; `modules/upstream/kubernetes/core_pod.py` `validate_pod_template`, quoted as `spec.task[i].<field>: ...`, with the webhook's own `PodValidationOptions` as upstream passes them: strict env var names, namespaced sysctls refused with host network); partitionPolicy (reported by the named sub-rule [`volcano-job-admission`](#volcano-job-admission)) |
| `/jobs/mutate` (`mutate_job.go`) | yes | nothing: it sets queue `default`, schedulerName `volcano`, maxRetry 3, task names `default<i>`, task minAvailable (minPartitions x partitionSize, else replicas), the job's minAvailable (sum of the tasks'), `ClusterFirstWithHostNet` under hostNetwork, the svc plugin (tensorflow, mpi, pytorch, ray) and ssh (mpi); validation sees the result |
| `/queues/validate` (`validate_queue.go`) | yes | negative quantities; a fraction of an extended resource (`nvidia.com/gpu: "1.5"`) or a quota count in capability, deserved or guarantee (`must be an integer`); deserved below guarantee or above capability; a state other than Open/Closed (on the object it is handed; see below); malformed `volcano.sh/hierarchy` annotations or one inside another queue's path; a queue as its own parent; a hierarchy deeper than 5; a parent that runs pods; a capability above the nearest ancestor's; a parent's capability below a descendant's; children's guarantee or deserved summing above the parent's |
| `/queues/mutate` (`mutate_queue.go`) | yes | nothing: `reclaimable: true`, `weight: 1`, `root/` and `1/` prefixed to a hierarchy |
| `/podgroups/validate` (`validate_podgroup.go`) | yes | a queue that is not Open; highestTierAllowed with highestTierName (the PodGroup's or a subGroupPolicy's) |
| `/hypernodes/validate` (`admit_hypernode.go`) | yes | no members; a regexMatch pattern Go's RE2 refuses (quoted as Go words it, `error parsing regexp: missing closing ]: ...`) |
| `/cronjobs/validate` (`admit_cronjob.go`) | yes | a missing or invalid schedule (five cron fields or a descriptor such as `@daily`), `TZ` inside it; an empty, `Local` or unknown timeZone; a name over 52 characters (its Jobs add `-<minutes>`) or not a qualified name. The CronJob webhook does not look at the job template, so the CronJob is admitted; the job webhook would refuse every Job it creates (`<cronjob>-<8-digit minute>`), which the advisory rule [`volcano-cronjob-runs`](#volcano-cronjob-runs) reports on the CronJob's `spec.jobTemplate` paths |
| `/jobflows/validate` (`validate_jobflow.go`) | no | a dependsOn target that is not a flow; a cycle |
| `/pods/validate` (`admit_pod.go`) | no | on a pod for Volcano's scheduler, both job-disruption-budget annotations, or one that is not a positive integer or 1%..99% |
| `/podgroups/mutate` (`mutate_podgroup.go`) | no | nothing: a PodGroup in queue `default` moves to its namespace's `scheduling.volcano.sh/queue-name` |

**Which webhooks count.** Those the stack's Volcano chart release registers: `custom.admission_enable`
(false: none) and `custom.enabled_admissions` (the list above); the stacks keep the chart's defaults.
With `check --manifests` and no chart release, the chart's defaults. As the chart's
`templates/webhooks.yaml` registers them, every namespaced webhook has a `namespaceSelector` that
leaves out the release namespace (`volcano-system` in the stacks) and `kube-system`: a Volcano Job
there is neither mutated nor validated by Volcano's webhooks (the HyperNode webhook has no selector).
The chart's ValidatingAdmissionPolicies count only with `custom.vap_enable` (the stack option
`vapEnable`; v1.15.1's chart default is false, assumed without a release, which a note says).

**Create semantics.** Each object is judged as the API server hands it to admission on `CREATE`:
`.status` of a kind with the status subresource is dropped first (apiextensions-apiserver
`PrepareForCreate`; so a Queue created with `status.state: Closing` is admitted), then the registered
mutating webhooks' defaults are applied (one mutation registry, `modules/upstream/chain.py`), then
validation runs. The CEL policies and CRD rules of the section below judge the same mutated object
(an unnamed task is `default0` by then), as the API server runs mutating webhooks before any
validating webhook or policy.

**The cluster the webhooks look up.** The stack's (and the manifests') Queues, each Open (the queue
controller opens a new queue), Volcano's own `root` and `default` queues, and Namespaces. A queue is
judged before its child queues exist (they name it as parent, so they are created after it). When
the objects are a whole stack (they hold the Volcano chart release) its queues are all the queues
there are, as `render` already requires of its workloads: a job, PodGroup or parent naming another
queue is refused as the webhook refuses it ("not found"). Bare `--manifests` without a stack promise
nothing about the cluster, so such a lookup is not judged.

**Measured against upstream's own tables.** Every table of `pkg/webhooks/admission/**/*_test.go` at
v1.15.1 is ported as data under `tests/policies/admission/upstream/volcano/` (upstream's case names,
inputs and expected verdicts and message fragments, with repo, tag, path and test function);
`python benchmarks/upstream_admission.py --json` runs them through the same registry (153 cases,
151 reproduced), and the test suite fails when a case stops being reproduced.

**Not evaluated, and why.**

- The CRD schemas' own `default:` values are not applied: for Volcano's kinds they are the values
  the mutating webhooks set anyway (a Job's queue `default` and maxRetry 3, a Queue's weight 1) or
  ones no check reads (a PodGroup's queue `default`, which Volcano always has; network topology
  mode `hard`; a Queue's dequeueStrategy), so no verdict depends on them.
- `UPDATE` and `DELETE` requests: `check` judges objects being created (the table runner does run
  upstream's update cases: job updates, queue updates).
- The PodLevelResources feature gate's pod-level `spec.resources` checks (two job cases, listed as
  divergent): the API server validation trainstack models has no pod-level resources.
- Settings of the webhook server other than its defaults: `--max-queue-depth` 5, scheduler names
  `volcano`; root-queue protection and the allocated-pods check on delete act on updates and deletes.
- A parent queue's `status.allocated` (pods it runs) exists only in a live cluster: rendered queues
  run none.
- Not ported: `TestMpi` (its `AddDependsOn` is not called by the v1.15.1 mutating webhook),
  `TestCreatePatchExecution` (one struct whose expected patch is built in the test body; the same
  defaults are measured by `TestMutateSpecPartitionPolicyDefaults`), `TestMutatePods` (the pods
  mutating webhook is off and needs the admission configuration's resource groups), and the cases
  of `DELETE` or invalid operations.
"""  # noqa: E501 (markdown table rows cannot wrap)
