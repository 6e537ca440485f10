"""`validate`, `render`, `check` and `preview` agree on every stack of a corpus.

The corpus is the shipped stacks plus small edits of them (below). Each variant carries the verdict
all four commands must give, by this table:

| verdict       | validate / render                   | check / preview                                       |
|---------------|-------------------------------------|-------------------------------------------------------|
| OK            | exit 0, no warning                  | exit 0: no mandatory violation (advisory ones may be) |
| Warn(text)    | exit 0, the same warning lines      | exit 0, the same warning lines on stderr; a warning   |
|               |                                     | is never a mandatory violation                        |
| Rule(id)      | exit 2, the same one error line E   | exit 1: exactly one violation, rule `id` (E.rule),    |
|               |                                     | mandatory, message E, at E's line in its file         |
| Error         | exit 2, the same one error line E   | exit 2, E on stderr (no rule catches the mistake in   |
|               | (E carries no rule)                 | manifests); json still writes the failure document    |

`preview` must give `check`'s report byte for byte (json), with two documented differences that
come from what the program and the Analyzer protocol carry: the program also registers the Secrets
of `trainstack:secrets` (deploy/ never holds them), so `objects` counts them; and a stack-wide note
(no object) travels as a bare not_applicable reason, so its `path` is empty.

`preview` costs a program run under mocks and the pack (1-2 s a stack), so it runs once with --all
over a copy of the project that holds every variant it can report on (refused stacks cost nothing
there: they stop before the program), with the accepted ones limited to those whose objects or notes
take a path `check` does not (marked `preview=True`); the Error variants run one by one (they stop
before the pack starts).
"""
from __future__ import annotations

import copy
import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from modules.core import yamlio
from tests.support.cli import ROOT, run

# --- the corpus ---------------------------------------------------------------------------------

SMALL_FABRIC = """tierNames: [leaf, spine]
nodes: ["n[01-17]"]          # n17 hangs off no leaf
switches:
  spine: {switches: ["leaf-[1-2]"]}
  leaf-1: {nodes: ["n[01-08]"]}
  leaf-2: {nodes: ["n[09-16]"]}
"""
MIXED_FABRIC = """switches:          # leaf-3 hangs straight off the core: leaves at two depths
  core: {switches: [spine-1, leaf-3]}
  spine-1: {switches: ["leaf-[1-2]"]}
  leaf-1: {nodes: ["n[01-04]"]}
  leaf-2: {nodes: ["n[05-08]"]}
  leaf-3: {nodes: ["n[09-12]"]}
"""


@dataclass(frozen=True)
class Verdict:
    kind: str            # OK, Warn, Rule, Error
    text: str = ""       # a fragment of the warning or error
    rule: str = ""


OK = Verdict("OK")


def Warn(text: str) -> Verdict:  # noqa: N802 (table constructors)
    return Verdict("Warn", text)


def Rule(rule: str, text: str) -> Verdict:  # noqa: N802
    return Verdict("Rule", text, rule)


def Error(text: str) -> Verdict:  # noqa: N802
    return Verdict("Error", text)


def _set(key: str, value):
    def edit(config: dict) -> None:
        config[f"trainstack:{key}"] = value
    return edit


def _merge(key: str, **values):
    def edit(config: dict) -> None:
        config[f"trainstack:{key}"] = {**config.get(f"trainstack:{key}", {}), **values}
    return edit


def _both(*edits):
    def edit(config: dict) -> None:
        for one in edits:
            one(config)
    return edit


def _add_runtime(runtime: dict):
    return lambda config: config["trainstack:runtimes"]["runtimes"].append(runtime)


def _fabric_file(path: str, **flags):
    """A file fabric of other shape: the dev TrainJob names a runtime of the generated fabric, so it goes."""
    def edit(config: dict) -> None:
        config["trainstack:fabric"] = {"source": "file", "path": path, **flags}
        config.pop("trainstack:workloads")
    return edit


def _keep(config: dict) -> None:
    pass


@dataclass(frozen=True)
class Variant:
    name: str
    base: str
    edit: object
    verdict: Verdict
    preview: bool = False      # accepted variants that preview runs too (refused ones always do)


VARIANTS = [
    # the shipped stacks, with their policies/config.<stack>.json (preview: tests/policies/test_table.py)
    Variant("dev", "dev", _keep, OK),
    Variant("prod", "prod", _keep, OK),
    Variant("staging", "staging", _keep, OK),
    Variant("legacy", "legacy", _keep, OK),
    # accepted
    Variant("dev-flux", "dev", _set("gitops", {"engine": "flux"}), OK),
    Variant("dev-argocd", "dev", _set("gitops", {"engine": "argocd", "repoURL": "https://git.example.com/t.git"}),
            OK, preview=True),
    Variant("dev-host-network", "dev", _add_runtime({"gpus": 2, "topology": {"mode": "soft"}, "hostNetwork": True}),
            OK, preview=True),
    Variant("dev-production-debug", "dev", _both(_set("profile", "production"), _merge("nccl", debug="INFO")), OK,
            preview=True),
    Variant("dev-nccl-debug-info", "dev", _merge("nccl", debug="INFO"), OK),
    # accepted with a warning
    Variant("dev-uncovered", "dev", _fabric_file("fabrics/small.yaml"), Warn("hang off no leaf switch (n17)"),
            preview=True),
    Variant("dev-mixed-allowed", "dev", _fabric_file("fabrics/mixed.yaml", allowMixedDepth=True),
            Warn("accepted: allowMixedDepth is on"), preview=True),
    Variant("dev-secrets", "dev", _set("secrets", [{"name": "s", "namespace": "training",
                                                     "data": {"k": {"secure": "v1:AAAA"}}}]),
            Warn("holds secure values"), preview=True),
    Variant("dev-classic-preempt", "dev", _merge("volcano", actions=["enqueue", "allocate", "preempt", "backfill"]),
            Warn("preempt ignores network topology")),
    Variant("dev-volcano-version", "dev", _merge("volcano", version="1.99.0"), Warn("is not a Volcano release")),
    Variant("prod-queue-no-deserved", "prod", lambda c: c["trainstack:volcano"]["queues"][2].pop("deserved"),
            Warn("queue 'batch' has no deserved")),
    Variant("staging-roce-no-rdma", "staging", lambda c: c["trainstack:fabric"]["nodePools"][0].update(resources={}),
            Warn("lists no RDMA device resource")),
    Variant("dev-nccl-algo", "dev", _merge("nccl", env={"NCCL_ALGO": "Ring"}), Warn("forcing NCCL_ALGO")),
    Variant("staging-soft-tier", "staging",
            _add_runtime({"gpus": 4, "topology": {"mode": "soft", "highestTierAllowed": 1}}),
            Warn("soft mode ignores the tier")),
    # refused, and a rule catches the same mistake in manifests
    Variant("dev-uncovered-full", "dev", _fabric_file("fabrics/small.yaml", fullCoverage=True),
            Rule("hypernode-tree-valid", "fullCoverage is on")),
    Variant("dev-mixed", "dev", _fabric_file("fabrics/mixed.yaml"),
            Rule("hypernode-tree-valid", "tiers must increase")),
    Variant("dev-nccl-nthreads", "dev", _merge("nccl", env={"NCCL_NTHREADS": 4}),
            Rule("nccl-env-valid", "NCCL_NTHREADS expects one of")),
    Variant("dev-ifname-bond0", "dev", _merge("nccl", socketIfname="=bond0"),
            Rule("nccl-ifname-pod-network", "NCCL_SOCKET_IFNAME==bond0")),
    Variant("dev-quoted-weight", "dev", _merge("volcano", networkTopologyAware={"weight": "10"}),
            Rule("scheduler-args-typed", "expected an integer")),
    Variant("dev-guarantee-no-deserved", "dev",
            _merge("volcano", queues=[{"name": "dev", "guarantee": {"nvidia.com/gpu": 8}}]),
            Rule("upstream-admission", "must be >= guarantee")),
    Variant("prod-deserved-above-capability", "prod",
            lambda c: c["trainstack:volcano"]["queues"][2].update(deserved={"nvidia.com/gpu": 4096}),
            Rule("upstream-admission", "must be <= capability")),
    Variant("dev-bad-tier", "dev", _add_runtime({"topology": {"mode": "hard", "highestTierAllowed": 5}}),
            Rule("topology-tier-exists", "expected a tier of this fabric")),
    Variant("prod-vcjob-bad-tier-name", "prod",
            lambda c: c["trainstack:workloads"]["volcanoJobs"][0]["topology"].update(highestTierName="pod"),
            Rule("topology-tier-exists", "expected one of the fabric's tier names")),
    Variant("dev-unsatisfiable", "dev",
            _add_runtime({"numNodes": 5, "topology": {"mode": "hard", "highestTierAllowed": 1}}),
            Rule("topology-satisfiable", "Pending forever")),
    Variant("dev-latest-image", "dev", _add_runtime({"gpus": 2, "image": "pytorch/pytorch:latest"}),
            Rule("image-pinned", "expected a pinned image")),
    Variant("dev-hpa-trainjob", "dev",
            _set("autoscaling", {"hpas": [{"namespace": "training", "target": {"kind": "TrainJob", "name": "t"},
                                           "maxReplicas": 2, "metrics": [{"name": "gpu_utilization",
                                                                          "averageValue": 80}]}]}),
            Rule("hpa-target-scalable", "no scale subresource")),
    Variant("legacy-hpa-above-elastic", "legacy",
            lambda c: c["trainstack:autoscaling"]["hpas"][0].update(maxReplicas=16),
            Rule("hpa-target-scalable", "elastic.maxReplicas (8)")),
    Variant("legacy-hpa-below-elastic", "legacy",
            lambda c: c["trainstack:autoscaling"]["hpas"][0].update(minReplicas=1),
            Rule("hpa-target-scalable", "elastic.minReplicas (2)")),
    Variant("legacy-hpa-not-elastic", "legacy", lambda c: c["trainstack:workloads"]["pyTorchJobs"][0].pop("elastic"),
            Rule("hpa-target-scalable", "is not elastic")),
    Variant("staging-hpa-min-above-max", "staging",
            lambda c: c["trainstack:autoscaling"]["hpas"][0].update(minReplicas=5),
            Rule("kubernetes-api-validation", "expected at most maxReplicas (4)")),
    Variant("prod-deployment-too-big", "prod",
            lambda c: c["trainstack:workloads"]["deployments"][0].update(replicas=40),
            Rule("topology-satisfiable", "needs 40 pods in one tier-1 domain")),
    # refused, and no rule exists for it: exit 2 everywhere
    Variant("dev-unknown-key", "dev", _set("fabrik", {}), Error("unknown key 'fabrik'")),
    Variant("dev-fabric-missing-file", "dev", _set("fabric", {"source": "file", "path": "fabrics/nope.yaml"}),
            Error("expected an existing file")),
    Variant("prod-unknown-queue", "prod", lambda c: c["trainstack:workloads"]["trainJobs"][0].update(queue="nope"),
            Error("expected one of the stack's queues")),
    Variant("prod-partitions-uneven", "prod", lambda c: c["trainstack:workloads"]["volcanoJobs"][0].update(replicas=48),
            Error("must be a multiple of the partition size")),
    Variant("dev-tier-name-on-runtime", "dev", _add_runtime({"topology": {"mode": "hard", "highestTierName": "leaf"}}),
            Error("expected highestTierAllowed here")),
]
BY_NAME = {v.name: v for v in VARIANTS}
ON_PREVIEW = [v for v in VARIANTS if v.preview or v.verdict.kind == "Rule"]


def stack_text(variant: Variant) -> str:
    doc = yamlio.loads((ROOT / "stacks" / f"Pulumi.{variant.base}.yaml").read_text(), variant.base)
    doc = copy.deepcopy(doc)
    variant.edit(doc["config"])
    return yamlio.dump(doc)


def make_project(folder: Path, variants: list[Variant]) -> Path:
    shutil.copy(ROOT / "Pulumi.yaml", folder / "Pulumi.yaml")
    shutil.copytree(ROOT / "stacks" / "fabrics", folder / "stacks" / "fabrics")
    (folder / "stacks" / "fabrics" / "small.yaml").write_text(SMALL_FABRIC)
    (folder / "stacks" / "fabrics" / "mixed.yaml").write_text(MIXED_FABRIC)
    for variant in variants:
        (folder / "stacks" / f"Pulumi.{variant.name}.yaml").write_text(stack_text(variant))
    return folder


# --- running the commands once ------------------------------------------------------------------

@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    return make_project(tmp_path_factory.mktemp("corpus"), VARIANTS)


@pytest.fixture(scope="module")
def results(corpus, tmp_path_factory) -> dict:
    """validate, render and check of every variant, one run each."""
    out_dir = tmp_path_factory.mktemp("deploy")
    root = str(corpus)
    return {v.name: {"validate": run("validate", v.name, "--project", root),
                     "render": run("render", v.name, "--project", root, "--out", str(out_dir)),
                     "check": run("check", v.name, "--project", root, "--format", "json")}
            for v in VARIANTS}


@pytest.fixture(scope="module")
def both_all(tmp_path_factory) -> dict:
    """`check --all` and `preview --all` over the variants preview runs (one pack for the run)."""
    root = str(make_project(tmp_path_factory.mktemp("preview"), ON_PREVIEW))
    return {command: run(command, "--all", "--project", root, "--format", "json") for command in ("check", "preview")}


def warnings(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("warning: ")]


def errors(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("error: ")]


# --- the table ------------------------------------------------------------------------------------

def test_the_corpus_covers_every_verdict():
    kinds = [v.verdict.kind for v in VARIANTS]
    assert len(VARIANTS) >= 15 and {"OK", "Warn", "Rule", "Error"} <= set(kinds)
    assert len(BY_NAME) == len(VARIANTS)
    assert sum(v.preview for v in VARIANTS) >= 5


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: v.name)
def test_validate_and_render_agree(variant, results):
    validated, rendered = results[variant.name]["validate"], results[variant.name]["render"]
    assert validated.code == rendered.code, (validated, rendered)
    assert warnings(validated.err) == warnings(rendered.err)
    assert errors(validated.err) == errors(rendered.err)
    verdict = variant.verdict
    if verdict.kind in ("OK", "Warn"):
        assert validated.code == 0, validated.err
        said = warnings(validated.err)
        assert (said == []) if verdict.kind == "OK" else any(verdict.text in w for w in said), said
    else:
        assert validated.code == 2 and len(errors(validated.err)) == 1, validated.err
        assert verdict.text in validated.err


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: v.name)
def test_check_agrees_with_validate(variant, results, corpus):
    validated, checked = results[variant.name]["validate"], results[variant.name]["check"]
    verdict = variant.verdict
    if verdict.kind in ("OK", "Warn"):
        assert checked.code == 0, checked.out
        assert warnings(checked.err) == warnings(validated.err)   # a warning is a warning everywhere
        report = json.loads(checked.out)["stacks"][variant.name]
        assert report["mandatory"] == 0
        return
    [error] = errors(validated.err)
    if verdict.kind == "Error":
        assert checked.code == 2 and errors(checked.err) == [error]
        assert json.loads(checked.out) == {"error": error[len("error: "):], "exitCode": 2, "stacks": {}}
        return
    assert checked.code == 1, checked.err
    [violation] = json.loads(checked.out)["stacks"][variant.name]["violations"]
    assert (violation["rule"], violation["level"], violation["resource"]) == (verdict.rule, "mandatory", "stack")
    assert violation["message"] == f"{error[len('error: '):]} (the stack does not render until this is fixed)"
    assert_located(violation, corpus, variant)


def assert_located(violation: dict, corpus: Path, variant: Variant) -> None:
    """At the error's own line: the key in the stack file (or in the fabric file the error names),
    not the 1:1 fallback."""
    source = Path(violation["source"])
    source = source if source.is_absolute() else Path.cwd() / source
    lines = source.read_text().splitlines()
    line = lines[violation["line"] - 1]
    if source.name == f"Pulumi.{variant.name}.yaml":
        module = violation["path"].removeprefix("trainstack:").split(".")[0].split("[")[0]
        start = next(i for i, text in enumerate(lines) if text.strip().startswith(f"trainstack:{module}:"))
        assert violation["line"] > start, (violation, line)
    else:
        assert source.parent.name == "fabrics" and violation["line"] > 1, violation
    last = violation["path"].rsplit(".", 1)[-1].split("[")[0]
    assert last in line or line.lstrip().startswith("- ") or last not in source.read_text(), (violation, line)


@pytest.mark.parametrize("variant", ON_PREVIEW, ids=lambda v: v.name)
def test_preview_agrees_with_check(variant, both_all):
    checked, previewed = (json.loads(both_all[c].out)["stacks"][variant.name] for c in ("check", "preview"))
    secrets = len(yamlio.loads(stack_text(variant), variant.name)["config"].get("trainstack:secrets", []))
    assert previewed["objects"] == checked["objects"] + secrets
    plan = previewed.pop("plan", None)   # what the program registers: every object judged, and the provider
    if previewed["objects"]:   # a stack that does not render registers nothing
        assert plan["resources"] == previewed["objects"] + 1 and plan["kinds"]["pulumi:providers:kubernetes"] == 1
    for note in checked["notChecked"]:
        if note["resource"] == "stack":
            note["path"] = ""      # a stack-wide note carries no path over the Analyzer protocol
    for report in (checked, previewed):
        del report["objects"]
    assert previewed == checked


def test_preview_and_check_exit_and_warn_alike(both_all):
    checked, previewed = both_all["check"], both_all["preview"]
    assert checked.code == previewed.code == 1      # the Rule variants
    assert warnings(previewed.err) == warnings(checked.err) != []
    assert [line for line in previewed.err.splitlines() if not line.startswith("warning: ")] == []


@pytest.mark.parametrize("variant", [v for v in VARIANTS if v.verdict.kind == "Error"], ids=lambda v: v.name)
def test_preview_stops_where_check_stops(variant, results, corpus):
    previewed = run("preview", variant.name, "--project", str(corpus), "--format", "json")
    checked = results[variant.name]["check"]
    assert (previewed.code, previewed.out, previewed.err) == (checked.code, checked.out, checked.err)


# --- settings do not turn a refused stack into an accepted one ------------------------------------

@pytest.mark.parametrize("level,code", [("advisory", 1), ("disabled", 2)])
def test_a_stack_that_does_not_render_is_never_accepted(level, code, corpus, monkeypatch, tmp_path):
    """The rule's level is for manifests; a render error stays mandatory (advisory) or the error
    stands (disabled): check and preview never pass a stack that render refuses."""
    import policies.runner

    name = "dev-latest-image"
    (tmp_path / f"config.{name}.json").write_text(json.dumps({"image-pinned": level}))
    monkeypatch.setattr(policies.runner, "POLICY_DIR", tmp_path)
    for command in ("check", "preview"):
        result = run(command, name, "--project", str(corpus), "--format", "json")
        assert result.code == code, (command, result)
        if code == 1:
            [violation] = json.loads(result.out)["stacks"][name]["violations"]
            assert (violation["rule"], violation["level"]) == ("image-pinned", "mandatory")
        else:
            assert "expected a pinned image" in result.err and json.loads(result.out)["exitCode"] == 2


def test_a_pack_that_fails_is_exit_3_with_a_document(corpus, monkeypatch):
    import policies.driver

    def broken(self, *args, **kwargs):
        raise policies.driver.PackError("the policy pack wrote no port to stdout")

    monkeypatch.setattr(policies.driver.Pack, "__init__", broken)
    result = run("preview", "dev", "--project", str(corpus), "--format", "sarif")
    assert result.code == 3 and result.err.endswith("error: dev: the policy pack wrote no port to stdout\n")
    [invocation] = json.loads(result.out)["runs"][0]["invocations"]
    assert invocation["exitCode"] == 3 and not invocation["executionSuccessful"]
