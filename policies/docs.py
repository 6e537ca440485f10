"""Generate docs/policies.md from the rules: ``python -m policies.docs`` writes it, ``--check``
exits 1 when it is stale (the test suite runs the check)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from .framework import MANDATORY, Rule
from .pack import PACK_NAME
from .rules import RULES

DOC = Path(__file__).resolve().parent.parent / "docs" / "policies.md"

INTRO = """\
# Policies

<!-- Generated from policies/rules/ by `python -m policies.docs`; edit the rules, not this file. -->

trainstack's policy pack checks what generic Kubernetes linters cannot see: the pod templates inside
PyTorchJobs, TrainJobs (merged with their runtime), (Cluster)TrainingRuntimes and Volcano Jobs; Volcano's
network-topology constraints against the stack's fabric; the scheduler configuration; NCCL settings.
Rules are pure functions over manifests (`policies/rules/`), and one rule set runs three ways:

| runner | command | sees |
|---|---|---|
| in-process | `trainstack check STACK\\|--all [--manifests PATH ...] [--format text\\|json\\|sarif\\|junit]` | the rendered bundle plus your manifests |
| CrossGuard pack | `pulumi preview -s STACK --policy-pack policies --policy-pack-config policies/config.STACK.json` | what the program registers |
| pack without the CLI | `trainstack preview STACK\\|--all [--manifests PATH ...] [--format ...]` | the program under mocks, sent to the real pack over gRPC |

All three report the same violations. Exit codes: `0` no mandatory violation, `1` at least one
mandatory violation, `2` a configuration error (stack file, manifest or policy config), `3` (preview)
the pack could not be started or answered badly.

**The same verdict as `validate` and `render`.** `check` and `preview` share one loop
(`policies/commands.py`): each stack is rendered first. A stack that does not render is never
accepted: where a rule catches the same mistake in manifests, the error is that rule's mandatory
violation (exit 1) at the error's line in the stack file, whatever level the settings give the rule
(a disabled rule leaves the error: exit 2); any other error is exit 2, as in `render`. The render's
warnings are printed on stderr as `validate` prints them, and a warning never becomes a mandatory
violation (at most a note). `tests/policies/test_command_agreement.py` holds the four commands to
this over a corpus of stack variants.

**Checking your own jobs against a stack.** `trainstack check prod --manifests my-trainjob.yaml`
checks your objects together with the prod bundle: a TrainJob's `runtimeRef` resolves against the
stack's ClusterTrainingRuntimes, tiers and capacity come from the prod fabric, and the scheduler
configuration of the stack's Volcano release counts for `scheduler-plugin-enabled`. The pack does the
same: it rebuilds the stack from the engine's environment (`PULUMI_STACK`, `PULUMI_CONFIG`) and
consults the rendered bundle while judging the resources it is sent.

**Manifests without a stack.** `trainstack check --manifests PATH ...` (no STACK, no `--all`) needs
no project: it runs every rule that needs no stack over your objects alone, at the rules' default
levels, with `--profile development|standard|production` (default `standard`) where a rule depends
on the profile (`nccl-debug-production`; `upstream-admission` without its rules). The rules that
judge against a stack's fabric or scheduler configuration (`topology-tier-exists`,
`topology-satisfiable`, `scheduler-plugin-enabled`) run only when you name a stack, and the text
report says so on stderr. Same formats and exit codes; the report names the run `manifests`. In CI:
`kustomize build overlays/prod | trainstack check --manifests - --format sarif`.

**Manifests as repositories hold them.** `--manifests` takes files, folders (every `*.yaml`/`*.yml`
below) and `-` for standard input (`kustomize build overlays/prod | trainstack check prod --manifests -`).
Documents that are not Kubernetes objects (kustomization files, Helm `Chart.yaml` and values, patch
fragments without `apiVersion`/`kind`, a `List` item without them, named by index) are skipped with
one note each (consecutive `List` items skipped for one reason share a note), and a file in a folder that does not parse is skipped with its error; the rest is
checked. An object identical to one the stack renders counts once, so `trainstack check prod
--manifests deploy/prod` reports what `trainstack check prod` reports.

**Messages** say what is wrong, where (`apiVersion/Kind/namespace/name at field.path`; the apiVersion
tells a `batch/v1` Job from a `batch.volcano.sh/v1alpha1` one) and how to fix it. A rule
that cannot check something says so as a note (`not checked`; the pack reports it as "not
applicable"): for example capacity on a label-defined fabric, whose nodes only Volcano's discoverer
knows.

**Locations.** Every finding names a file, line and column: the offending field in your manifest (the
nearest enclosing field when the rule asks for one to be added), the object's rendered file under
`deploy/<stack>/` for objects the stack renders (chart releases: `charts/<release>.values.yaml`),
and, as `origin`, the stack file line that renders the object (the list entry that names it, else
the module's `trainstack:<module>` key); findings about the whole stack point at the stack file.

**Pod security** is two rules because the two Pod Security Standards profiles are enforced
differently: `pod-security-baseline` (mandatory) holds the Baseline controls, `pod-security-restricted`
(advisory, also in prod where everything else is mandatory) the Restricted ones and the
service-account token advice. Both read every pod template trainstack knows, TrainJobs after their
runtime patches. The allow-lists start from the profiles' own lists plus `IPC_LOCK` (RDMA pins
memory); hostNetwork is allowed where the host-network opt-in annotation is set. `runAsNonRoot` is
off by default (`requireRunAsNonRoot`): the PyTorch, NGC and vLLM images run as root. `image-pinned`'s
`requireDigest` is off in every shipped stack, prod included: the stacks pin public images by
version tag and a digest cannot be recorded without pulling from the registry; turn it on once the
images are mirrored into a registry you control and their digests are written into the stack files.

**Controller-owned fields** (`controller-owned-fields`) is advisory by default and mandatory in
production: `policies/config.prod.json` (which `trainstack init --profile production` copies) makes
every rule mandatory. It pairs each HPA with its target among the checked objects (the stack's and
yours) and reports a target whose manifest sets the scaled field: `spec.replicas` of Deployments,
StatefulSets, ReplicaSets and ReplicationControllers, a custom resource's scale subresource path
(a PyTorchJob's `spec.pytorchReplicaSpecs.Worker.replicas`). The field may stay where the engine
in use leaves it to the HPA: Flux's `kustomize.toolkit.fluxcd.io/ssa: IfNotPresent` (or `Ignore`)
on the object, an Argo CD Application among the objects with `ignoreDifferences` on the field
(`jsonPointers` or a plain `jqPathExpressions` path such as `.spec.replicas`, or a parent of it;
group and kind as globs, an empty name or namespace matching any, as Argo CD reads them) and
the sync option `RespectIgnoreDifferences=true`, or, for objects trainstack renders, the
`trainstack.io/controller-owned` annotation from which the Pulumi program registers `ignoreChanges`
and the GitOps output writes the engine's mechanism. With engine `none` (your manifests are applied by
your own tool) or without a stack, either engine's mechanism counts.
The field an HPA scales in each kind, with its upstream source, is `modules/semantics/owned.py` (`scale_fields`).

**Reports.** `--format sarif` writes SARIF 2.1.0 (one run per stack, `automationDetails.id`
`trainstack/<stack>/`, rules with help text; every result has a physical location whose URI is
relative to `%SRCROOT%`, the folder the command runs in, with a `region` (line, column), the stack
setting as a related location, and a logical location `apiVersion/Kind/namespace/name:path`); upload
it with `github/codeql-action/upload-sarif` from the repository root. `--format junit` writes one
testsuite per stack, one testcase per rule and one `<failure>` per violation (`type` is the level).
A run that stops on its input (exit 2), or in `preview` on the pack (exit 3), still writes a valid json,
sarif or junit document that records the failure (SARIF `invocations[].executionSuccessful: false`
with the message and the exit code).

## Per-stack configuration

`policies/config.<stack>.json` uses Pulumi's policy-pack-config format: keys are policy names or
`all`; a value is a level (`mandatory`, `advisory`, `disabled`) or an object with `enforcementLevel`
and the rule's settings. Settings are validated against each rule's schema (below) by `trainstack
check`, by `trainstack preview` and by the Pulumi engine.

```json
{"all": "mandatory", "nccl-debug-production": {"enforcementLevel": "advisory", "levels": ["INFO", "TRACE"]}}
```

## The pack and its virtual environment

`policies/` is a Python CrossGuard pack (`PulumiPolicy.yaml`, `__main__.py`, `requirements.txt`).
`runtime.options.virtualenv` is `../.venv`, the project's own environment (relative to the pack
folder): `make setup` creates it with pulumi, pulumi-policy and trainstack installed, and Pulumi never
creates a pack's virtualenv itself, so run `make setup` before `pulumi preview --policy-pack policies`.
The pack imports the rules from the project (the pack folder's parent); set `TRAINSTACK_PROJECT_DIR`
to point it at another checkout.
"""  # noqa: E501 (markdown table rows cannot wrap)


def _settings(rule: Rule) -> list[str]:
    if not rule.config_schema:
        return ["No settings."]
    lines = ["| setting | type | default | description |", "|---|---|---|---|"]
    for name, schema in rule.config_schema.items():
        kind = schema.get("type", "any")
        if kind == "array" and isinstance(schema.get("items"), dict):
            inner = schema["items"]
            kind = "list of " + (" \\| ".join(f"`{v}`" for v in inner["enum"]) if "enum" in inner
                                 else inner.get("type", "any"))
        default = rule.config_defaults.get(name, schema.get("default"))
        shown = f"`{json.dumps(default)}`" if default is not None or "default" in schema else "—"
        description = " ".join(str(schema.get("description", "")).split()).replace("|", "\\|")
        lines.append(f"| `{name}` | {kind} | {shown} | {description} |")
    return lines


def render() -> str:
    out = [INTRO, "## Rules", "",
           "| id | default level | severity | checks | what it catches |", "|---|---|---|---|---|"]
    for rule in RULES:
        scope = "the whole stack" if rule.is_stack_rule else "each object"
        description = rule.description.replace("|", "\\|")
        out.append(f"| [`{rule.id}`](#{rule.id}) | {rule.enforcement} | {rule.severity} | {scope} | {description} |")
    for rule in RULES:
        kind = "StackValidationPolicy" if rule.is_stack_rule else "ResourceValidationPolicy"
        level = "**mandatory**" if rule.enforcement == MANDATORY else rule.enforcement
        out += ["", f"### {rule.id}", "",
                f"Default level {level}; severity {rule.severity}; in the pack `{PACK_NAME}` a {kind}.", "",
                f"**What it catches.** {rule.description}", "",
                f"**Why.** {rule.why}", "",
                f"**How to fix.** {rule.fix}", "",
                "**Settings.**", "", *_settings(rule)]
    from .rules.trainer_admission import DOCS as TRAINER_ADMISSION
    out += ["", TRAINER_ADMISSION.rstrip()]
    from .rules.kubernetes_validation import DOCS as GO_ONLY_VALIDATION
    out += ["", GO_ONLY_VALIDATION.rstrip()]
    from .admission.webhook_docs import SECTION as VOLCANO_WEBHOOKS
    out += ["", VOLCANO_WEBHOOKS.strip()]
    from .admission.docs import SECTION

    return "\n".join(out) + "\n" + SECTION


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    text = render()
    if "--check" in argv:
        current = DOC.read_text(encoding="utf-8") if DOC.is_file() else ""
        if current != text:
            print(f"{DOC} is stale; run `python -m policies.docs`", file=sys.stderr)
            return 1
        return 0
    DOC.parent.mkdir(parents=True, exist_ok=True)
    DOC.write_text(text, encoding="utf-8")
    print(f"wrote {DOC}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
