"""Hostile admission rules: policies, CRD rules and chart archives over the API server's CEL limits,
and evaluation that would run for minutes or fill memory. Same shape as corpus.py: ``(name, files,
args)``; every case checks a Volcano Queue against the hostile rules in ``adm/``."""
from __future__ import annotations

import io
import tarfile

from .corpus import stack

QUEUE = "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: q}\nspec: {weight: 1}\n"
DIGITS = "9" * 5000
TEN = "[0,1,2,3,4,5,6,7,8,9]"


def policy(*, validations: list[str] | None = None, variables: list[tuple[str, str]] | None = None,
           conditions: list[str] | None = None, message_expression: str | None = None, name: str = "hostile") -> str:
    """A ValidatingAdmissionPolicy on Queues and its binding, as YAML (expressions as JSON strings)."""
    import json

    def quoted(text: str) -> str:
        return json.dumps(text)
    lines = ["apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy",
             f"metadata: {{name: {name}}}",
             "spec:", "  failurePolicy: Fail",
             "  matchConstraints: {resourceRules: [{apiGroups: [scheduling.volcano.sh], apiVersions: ['*'], "
             "operations: [CREATE], resources: [queues]}]}"]
    if conditions:
        lines.append("  matchConditions:")
        lines += [f"  - {{name: c{i}, expression: {quoted(c)}}}" for i, c in enumerate(conditions)]
    if variables:
        lines.append("  variables:")
        lines += [f"  - {{name: {n}, expression: {quoted(e)}}}" for n, e in variables]
    lines.append("  validations:")
    for v in validations or ["true"]:
        extra = f", messageExpression: {quoted(message_expression)}" if message_expression else ""
        lines.append(f"  - {{expression: {quoted(v)}, message: hostile{extra}}}")
    lines.append(f"---\napiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBinding\n"
                 f"metadata: {{name: {name}}}\nspec: {{policyName: {name}, validationActions: [Deny]}}")
    return "\n".join(lines) + "\n"


def crd(rule: str, message_expression: str | None = None, extra: str = "") -> str:
    """The Queue CRD (a minimal one) with one x-kubernetes-validations rule on spec."""
    import json
    me = f", messageExpression: {json.dumps(message_expression)}" if message_expression else ""
    return ("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n"
            "metadata: {name: queues.scheduling.volcano.sh}\nspec:\n  group: scheduling.volcano.sh\n"
            "  names: {kind: Queue, plural: queues}\n  scope: Cluster\n  versions:\n"
            "  - name: v1beta1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n"
            "        type: object\n        properties:\n          spec:\n            type: object\n"
            f"            x-kubernetes-validations: [{{rule: {json.dumps(rule)}, message: hostile{me}}}]\n{extra}")


def chart(policy_text: str) -> bytes:
    """A Volcano chart archive holding one policy file."""
    data = policy_text.encode()
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        info = tarfile.TarInfo("volcano/policy/hostile.yaml")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def case(name: str, files: dict, command: str = "check") -> tuple[str, dict, list[str]]:
    base = {"stacks/Pulumi.t.yaml": stack(), "q.yaml": QUEUE, "adm/crds/.keep": ""}
    return (name, {**base, **files}, [command, "t", "--manifests", "q.yaml", "--admission-dir", "adm"])


PLUS = "+".join(["1"] * 20000) + " > 0"
HAS = "has(object" + ".a" * 20000 + ")"
PARENS = "(" * 100000 + "true" + ")" * 100000
NESTED = TEN + ".all(a, " + "".join(f"{TEN}.all({v}, " for v in "bcdefg") + "true" + ")" * 7
DOUBLING = [("v0", "[1, 2, 3, 4]")] + [(f"v{i}", f"variables.v{i - 1} + variables.v{i - 1}") for i in range(1, 31)]
STRING_DOUBLING = [("s0", "'abcdefgh'")] + [(f"s{i}", f"variables.s{i - 1} + variables.s{i - 1}") for i in range(1, 31)]

CEL_CASES: list[tuple[str, dict, list[str]]] = [
    case("cel-plus-20000", {"adm/volcano/p.yaml": policy(validations=[PLUS])}),
    case("cel-has-20000-deep", {"adm/volcano/p.yaml": policy(validations=[HAS])}),
    case("cel-parens-100000", {"adm/volcano/p.yaml": policy(validations=[PARENS])}),
    case("cel-match-condition-deep", {"adm/volcano/p.yaml": policy(conditions=[PLUS])}),
    case("cel-variable-deep", {"adm/volcano/p.yaml": policy(variables=[("x", HAS)])}),
    case("cel-message-expression-deep", {"adm/volcano/p.yaml": policy(validations=["false"],
                                                                      message_expression=PLUS)}),
    case("cel-crd-rule-deep", {"adm/crds/queues.yaml": crd(PLUS)}),
    case("cel-crd-message-expression-deep", {"adm/crds/queues.yaml": crd("false", HAS)}),
    case("cel-chart-archive-deep", {"adm/volcano-1.15.1.tgz": chart(policy(validations=[PLUS]))}),
    case("cel-nested-comprehensions", {"adm/volcano/p.yaml": policy(validations=[NESTED])}),
    case("cel-crd-nested-comprehensions", {"adm/crds/queues.yaml": crd(NESTED)}),
    case("cel-doubling-variables", {"adm/volcano/p.yaml": policy(variables=DOUBLING,
                                                                 validations=["size(variables.v30) > 0"])}),
    case("cel-doubling-strings", {"adm/volcano/p.yaml": policy(variables=STRING_DOUBLING,
                                                               validations=["size(variables.s30) > 0"])}),
    case("cel-message-expression-huge", {"adm/volcano/p.yaml": policy(
        validations=["false"], variables=STRING_DOUBLING[:12], message_expression="variables.s11")}),
    case("cel-chart-archive-fifo", {"adm/volcano-1.15.1.tgz": None}),
    # through `preview`: the policy pack evaluates the same rules behind gRPC
    case("cel-preview-plus-20000", {"adm/volcano/p.yaml": policy(validations=[PLUS])}, "preview"),
    case("cel-preview-nested-comprehensions", {"adm/volcano/p.yaml": policy(validations=[NESTED])}, "preview"),
    case("cel-policy-int-5000-digits", {"adm/volcano/p.yaml": policy() + "---\nkind: ValidatingAdmissionPolicy\n"
                                        f"metadata: {{name: big}}\nspec: {{x: {DIGITS}}}\n"}),
    case("cel-crd-int-5000-digits",
         {"adm/crds/queues.yaml": crd("true", extra=f"            maxProperties: {DIGITS}\n")}),
]

# 5,000-digit integers where Python's int-str conversion limit raised ValueError (exit 4): a scheduler
# conf in a user's ConfigMap (a finding naming the conf) and a JSON snapshot (an input error).
SCHEDULER_CONF_CM = ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: volcano-scheduler-configmap, namespace: "
                     f"volcano-system}}\ndata:\n  volcano-scheduler.conf: \"actions: enqueue\\nx: {DIGITS}\"\n")
SNAPSHOT_JSON = ('{"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1", "kind": "Node", "metadata": '
                 '{"name": "n"}, "status": {"capacity": {"cpu": ' + DIGITS + '}}}]}')
CEL_CASES += [
    ("scheduler-conf-int-5000-digits", {"stacks/Pulumi.t.yaml": stack(), "cm.yaml": SCHEDULER_CONF_CM},
     ["check", "t", "--manifests", "cm.yaml"]),
    ("snapshot-json-int-5000-digits", {"stacks/Pulumi.t.yaml": stack(), "snap.json": SNAPSHOT_JSON},
     ["simulate", "--snapshot", "snap.json"]),
]
