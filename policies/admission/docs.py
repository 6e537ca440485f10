"""The "Upstream admission rules" section of docs/policies.md (policies/docs.py appends it)."""
from __future__ import annotations

SECTION = """
## Upstream admission rules

Rule [`upstream-admission`](#upstream-admission) runs upstream's own admission rules, in every runner
(`trainstack check`, the CrossGuard pack, `trainstack preview`), on each rendered object and each
`--manifests` object whose kind they match:

| upstream | release | what | read from |
|---|---|---|---|
| Volcano | v1.15.1 (the stack's `volcano.version` default) | ValidatingAdmissionPolicies `queue-`, `job-`, `podgroup-`, `pod-`, `hypernode-`, `jobflow-validation-policy`; MutatingAdmissionPolicies `volcano-job-`, `volcano-queue-`, `volcano-podgroup-`, `volcano-pod-mutation-policy` (their defaults are applied first) | the chart's `policy/*.yaml` |
| Volcano | v1.15.1 | CRD `x-kubernetes-validations` (HyperNode member selectors) | `config/crd/volcano/bases/` |
| Kubeflow Trainer | v2.3.0 | CRD rules of TrainJob, TrainingRuntime, ClusterTrainingRuntime | `manifests/base/crds/` |
| JobSet | v0.12.0 (Trainer 2.3's) | CRD rules of JobSet | `config/components/crd/bases/` |
| Training Operator | v1.9.4 | CRD rules of PyTorchJob, TFJob, MPIJob, XGBoostJob (transition rules only) | `manifests/base/crds/` |
| prometheus-operator | v0.93.0 | CRD rules of PrometheusRule, ServiceMonitor, PodMonitor (none at this release) | `example/prometheus-operator-crd/` |

A finding quotes upstream's message, names the policy (with release and file) or the CRD and its
rule, gives the field path (a CRD rule's own path; for a policy, which has none, the fields its
expression reads) and says that the API server refuses the object at create.

**Where the rules come from.** Never from this repository: trainstack reads them from artifacts.

1. `--admission-dir DIR` (on `check`, `preview` and `admission`) or `$TRAINSTACK_ADMISSION_DIR`: an
   offline folder for air-gapped use. Volcano's policies are `DIR/volcano/*.yaml` (the chart's
   `policy/` files) or a Volcano chart archive anywhere below `DIR` (`*.tgz`; its `*/policy/*.yaml`
   members are read). CRDs come from `$TRAINSTACK_CRD_DIR`, else `DIR/crds/`. One folder may hold
   both: `DIR/admission/volcano/*.yaml` beside `DIR/crds/` (`--admission-dir ../shared`).
2. Otherwise the cache, `$TRAINSTACK_CACHE_DIR/admission` (default `~/.cache/trainstack/admission`),
   which `trainstack admission fetch` fills from the pinned sources in `policies/admission/sources.yaml`:
   each file's upstream URL at its release tag and its sha256. A download whose sha256 differs is
   refused and nothing of it is written; `file://` URLs work for mirrors. (The pins are of the
   individual files, byte-identical to the chart archive's `policy/` members: the chart archive's own
   digest could not be recorded offline. Sources may also name an archive with its sha256; the
   fetcher then extracts the listed members.)

`trainstack admission status` says which rule sets a run evaluates, from which folder and at which
pinned release (one line each, and what is missing); `trainstack admission show` lists every rule set. Every file is recognised by its sha256, so a
finding names the release (`unpinned` for a file that matches no pin; it is still evaluated).
Extracting the rules parses several MB of CRDs, so the extracted index is cached (keyed by the
files' paths, sizes and modification times): the first run after a change costs 1-4 s, later runs
about 0.1-0.2 s (see docs/benchmarks.md). The test suite reads `../shared/admission/` and
`../shared/crds/`.

**When the rules cannot be loaded**, the run reports it once, naming the folder it
looked in and how to fill it; it never passes as if they had been evaluated. On a `production`
stack (or `check --manifests --profile production`) that is a violation of `upstream-admission`
at its level (mandatory unless the settings say otherwise); on other profiles a note (`not checked`). A file that cannot be
read (not YAML, beyond the YAML bounds of docs/reliability.md or over 16 MiB, a policy or CRD without
its names, a policy, binding or CRD rule of a shape the API server refuses or over its CEL limits, a
folder, FIFO or broken link named like a policy file or chart archive, a broken archive) is named in that note too; the other files still load. Runs whose objects no
upstream rule could match (no Volcano, Trainer, JobSet, Kubeflow, monitoring kind, no Pod) need no
note.

**Semantics**, as the API server at `CREATE`: `.status` of a status-subresource kind dropped,
mutating policies first (JSONPatch mutations; their
`JSONPatch{...}` values and `jsonpatch.escapeKey`), then the CRD's rules, then validating policies;
`matchConstraints` and the binding's `matchResources` (group, version, resource, operation,
excludeResourceRules, label selectors; a resource entry is split at its first `/`, so `*/*` and
`queues/*` match a Queue and `queues/status` does not; a policy without a binding does nothing), `matchConditions`, `variables` in order, `messageExpression`
before `message`; `request.operation` is `"CREATE"`, `oldObject` null; `namespaceObject` is the
stack's Namespace object when it renders one, else null. An expression that fails at run time (a
missing field, a function given the wrong type) denies the request, as `failurePolicy: Fail` does.
Resource quantities are what the object holds: an int-or-string field written as a number reaches
CEL as an int, and `quantity()` has no int overload, so Volcano's queue policy denies a Queue whose
`capability`/`deserved`/`guarantee` amounts are bare integers (write `"16"`, not `16`). Each
expression is compiled once per evaluating process; results are remembered per object content.
`check` starts that process before the stack renders, so that it compiles the rules meanwhile, and
hands it the stack's objects before the rules run, so that it evaluates them while the other rules
run; `upstream-admission` then reads the outcomes back (what the process answers, and the budgets
below, are the same as when it starts on first use).

**Bounded as the API server bounds CEL.** An expression longer than 100,000 characters or nested
deeper than 250 levels (cel-go's parser limits, which the API server keeps) makes its policy or CRD
malformed: it is named in the note and not loaded, and the limit is checked on the text, by a linear
scan that counts brackets, calls, member selections and chained operators, before the CEL library
parses anything (`policies/admission/limits.py`). This covers every expression: validations,
`matchConditions`, `variables`, `messageExpression`, JSONPatch mutations, CRD rules and their
`messageExpression`, in files and chart archives. The `cel` package tracks no cost, so the cost is
judged before it runs, by cel-go's cost model (`policies/admission/cost.py`): each expression's
floor, the least cost cel-go's runtime charges on any object (literals, the sizes of earlier
variables, comprehensions over literals; a field of the object counts as empty). A policy with a
variable or expression whose floor passes the API server's per-call limit (1,000,000) fails on
every object it matches, and a CRD rule whose floor passes the limit on a rule's estimated cost
(10,000,000) makes the API server refuse the CRD: either is one line in the note, the same on every
machine, and is not evaluated per object. So is an expression that builds a list of more than
1,000,000 elements (cheap for cel-go, which joins lists without copying them; the `cel` package
copies them). Before each call the floor is taken again with the object in hand (its lists' and
strings' sizes, each comprehension counted element by element): past the per-call limit, the call
fails as the API server's does ("operation cancelled: actual cost limit exceeded"), without running,
about 10 ms per `check prod`. What the floor cannot count (more than 50,000 steps of its own) stays
bounded by a safety net: evaluation runs in a child process (forked, or a fresh interpreter where
other threads run, as in the pack) with the API server's runtime cost budget expressed as CPU time:
1 s per expression and 4 s per object (generous: the API server's per-call and per-object limits,
about 0.1 s and 1 s of cel-go, are applied by the cost floor; the child's CPU time also holds the
machine's copy-on-write faults), and at most 256 MiB of memory per evaluation. An expression that
runs out of it fails as one that runs out of cost budget fails in the API server (an error: denied
under `failurePolicy: Fail`), is named in the finding, and is not run again in that check (the
verdict belongs to the objects it ran on, never to the next check); the
child is replaced. That verdict depends on the machine's speed: a safety net, not the cost model.
The per-object budget (10,000,000 over all of a policy's calls on one object, and over a CRD's
rules) is counted from the same floors: a call that takes the sum past it fails as the API server's
does ("validation failed due to running out of cost budget, no further validation rules will be run"). A `messageExpression` result
over 5 KiB is not used (the static `message` is). A native panic of the library is caught and
reported as a compile or run-time error, never a crash.

The CEL evaluator is the `common-expression-language` package (Rust `cel` crate); the Kubernetes
libraries the rules call are implemented in `modules/upstream/cel/library.py`: `quantity`,
`isQuantity` and a quantity's `compareTo`, `isLessThan`, `isGreaterThan`, `add`, `sub`,
`asInteger`, `isInteger`, `asApproximateFloat`, `sign`; strings `split`, `join`, `replace`,
`lowerAscii`, `upperAscii`, `substring`, `charAt`, `trim`, `indexOf`, `lastIndexOf`, `format`;
lists `sum`, `isSorted`, `min`, `max`, `slice`; regex `find`, `findAll` (and CEL's `matches`);
`format.dns1123Label()`, `dns1123Subdomain()`, `dns1035Label()`, `qualifiedName()`, `labelValue()`
with `.validate(s)` (an optional list of errors); `jsonpatch.escapeKey`.

**Not evaluated, and why.**

- Rules that cannot be compiled or call a function trainstack does not implement become a note
  naming the rule, never a crash. With the pinned releases there are none: every expression of
  the files above compiles and uses only the functions listed (the test suite asserts it).
- Transition rules (those reading `oldSelf`) run only on update: the immutability rules of JobSet,
  (Cluster)TrainingRuntime and TrainJob fields and the Training Operator's
  `runPolicy.schedulingPolicy.queue`. `optionalOldSelf` rules run with `oldSelf` absent.
- Validations guarded by `request.operation` for `UPDATE` or `DELETE` (job task count and queue
  changes, deleting the `default`/`root` queue) pass on create, as on the API server.
- Expressions reading `authorizer` (the requester's permissions) and policies with `paramKind`
  (parameter objects): unknown before apply; a note if ever matched.
- The chart's MutatingAdmissionPolicies run only where it installs them (`custom.map_enable`, off by
  default and in every shipped stack): elsewhere the policies and CRD rules see the object as the
  registered Go mutating webhooks leave it. A mutation that fails is skipped, not reported: its
  mutating webhooks set the same defaults.
  ApplyConfiguration mutations are not applied (Volcano uses none).
- Volcano's Go webhooks (on by default) also check what no policy states (queue hierarchy and
  parent state, a PodGroup's queue being open, ...): this rule runs them too, in trainstack's own
  code (see "Volcano's Go-only admission webhooks" above). The policies count only where the chart
  installs them (`custom.vap_enable`, the stack option `vapEnable`; without a Volcano release the
  v1.15.1 chart's default, false, is assumed and a note says so).
- The CRDs' OpenAPI schema itself (types, patterns, required fields, list types, defaulting, unknown
  fields): `crd-schema` and `crd-unknown-fields` (modules/upstream/apiextensions); this rule runs only
  the CEL rules, and none on an object its schema refuses (the API server stops there).
"""  # noqa: E501 (markdown table rows cannot wrap)
