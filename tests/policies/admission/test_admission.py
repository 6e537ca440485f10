"""Rule `upstream-admission`: upstream's own admission rules (Volcano's admission policies, the CEL
rules of the CRDs), read from ../shared/admission and ../shared/crds and evaluated offline.

The rule set is compiled once per session; the fixture table (admission_cases.yaml) runs in-process;
the eight objects of the first report of upstream rejections also go through `trainstack check dev
--manifests` and the pack over gRPC.
"""
from __future__ import annotations

import hashlib
import io
import json
import tarfile
from pathlib import Path

import pytest
import yaml

from modules.core.config import load_project, load_stack, pulumi_config_map
from modules.core.render import render
from policies.admission.engine import Denial, RuleSet, SkippedRule, apply_patch, compile_expr, rewrite_jsonpatch
from policies.admission.loader import Index, RuleSources, load_index, locate
from policies.admission.upstream_tables import load_fixture
from policies.framework import CheckContext
from policies.runner import PolicySettings, bundle_objects, run_rules
from policies.rules import BY_ID
from tests.support.admission import admission_env, require_shared_dirs
from tests.support.cli import ROOT, run

CASES = load_fixture(Path(__file__).parent / "cases.yaml")["cases"]
ISSUE = [c for c in CASES if c.get("issue")]


def expected(case: dict) -> tuple[str, str]:
    """(rule, message) `check` reports for an issue object: upstream-admission's unless the case says
    another rule answers first (the CRD schema, before any validating admission)."""
    check = case.get("check") or {}
    return check.get("rule", "upstream-admission"), check.get("message", case["message"])
RULE = BY_ID["upstream-admission"]


@pytest.fixture(scope="module")
def dirs():
    admission, crds = require_shared_dirs()
    with admission_env(admission, crds):
        yield admission, crds


@pytest.fixture(scope="module")
def ruleset(dirs) -> RuleSet:
    from policies.admission import rules

    return rules()


def verdict(ruleset: RuleSet, obj: dict) -> tuple[list[Denial], list[SkippedRule]]:
    """What upstream's rules say about ``obj`` as the API server hands it to admission on CREATE."""
    from modules.semantics.created import as_created

    items = ruleset.evaluate(as_created(obj))
    return [i for i in items if isinstance(i, Denial)], [i for i in items if isinstance(i, SkippedRule)]


def names(denials: list[Denial]) -> set[str]:
    """The policy or CRD each denial names, as the table writes it."""
    out = set()
    for d in denials:
        if "AdmissionPolicy '" in d.source:
            out.add(d.source.split("'")[1])
        else:
            out.add(d.source.split(" CRD ")[1].split(" ")[0])
    return out


# --- the rules load, and every expression compiles ----------------------------------------------

def test_every_shipped_rule_is_found_and_compiles(ruleset):
    assert not ruleset.missing
    policies = {p["name"] for p in ruleset.policies}
    assert {"queue-validation-policy", "job-validation-policy", "hypernode-validation-policy", "pod-validation-policy",
            "podgroup-validation-policy", "jobflow-validation-policy", "volcano-job-mutation-policy",
            "volcano-queue-mutation-policy", "volcano-pod-mutation-policy"} <= policies
    assert all(p["release"].startswith("volcano-sh/volcano v1.15.1") for p in ruleset.policies)
    kinds = {c["kind"] for c in ruleset.index.crds if c["rules"]}
    assert {"TrainJob", "TrainingRuntime", "ClusterTrainingRuntime", "JobSet", "HyperNode", "PyTorchJob"} <= kinds
    problems = []
    for p in ruleset.policies:
        sources = [v["expression"] for v in p["variables"] + p["validations"] + p["matchConditions"]]
        sources += [v["messageExpression"] for v in p["validations"] if v.get("messageExpression")]
        sources += [rewrite_jsonpatch(m["jsonPatch"]["expression"]) for m in p["mutations"]]
        problems += [(p["name"], compile_expr(s).problem) for s in sources if compile_expr(s).program is None]
    for crd in ruleset.index.crds:
        problems += [(crd["crd"], compile_expr(r["rule"]).problem) for r in crd["rules"]
                     if compile_expr(r["rule"]).program is None]
    assert problems == []     # docs/policies.md lists none as "not evaluated"


# --- (a) every shipped stack ---------------------------------------------------------------------

SHIPPED = sorted(p.name.split(".")[1] for p in (ROOT / "stacks").glob("Pulumi.*.yaml"))


@pytest.mark.parametrize("stack", SHIPPED)
def test_shipped_stacks(stack, ruleset):
    loaded = load_stack(load_project(ROOT), stack)
    bundle = render(loaded)
    objects = bundle_objects(bundle)
    found = run_rules(objects, CheckContext(stack=loaded, fabric=bundle.fabric), PolicySettings(), [RULE])
    assert found == []
    judged = [o for o in objects if ruleset.evaluate(o) == [] and ruleset._may_apply(ruleset.target(o, {}))]
    assert any(o["kind"] == "Queue" for o in judged)      # the rules did run on the stack's own kinds


def test_outcomes_sent_ahead_are_those_asked_for_afterwards(dirs):
    """``send`` then ``evaluate_all`` of the very same objects (as `check` does) reuses what ``send``
    keyed; other objects, even equal ones, are keyed afresh: the outcomes are those of a rule set
    that was sent nothing."""
    from modules.semantics.created import as_created

    denied = [as_created(c["object"]) for c in CASES if c.get("expect") != "admit"][:6]
    expected = RuleSet(load_index(locate())).evaluate_all(denied)
    assert any(expected)
    for asked in (lambda sent: sent, lambda sent: [dict(o) for o in sent]):
        ruleset = RuleSet(load_index(locate()))
        sent = [dict(o) for o in denied]
        ruleset.send(sent)
        assert ruleset.evaluate_all(asked(sent)) == expected
    ruleset = RuleSet(load_index(locate()))
    sent = [dict(o) for o in denied]
    ruleset.send(sent)
    assert ruleset.evaluate_all([dict(o) for o in denied[:3]]) == expected[:3]


# --- (b) the fixture table --------------------------------------------------------------------------

@pytest.mark.parametrize("case", CASES, ids=lambda c: c["id"])
def test_fixture_table(case, ruleset):
    denials, skipped = verdict(ruleset, case["object"])
    assert skipped == []
    if case.get("expect") == "admit":
        assert denials == []
        return
    assert case["by"] in names(denials), denials
    assert names(denials) <= {case["by"], *case.get("also", [])}, denials
    ours = [d for d in denials if case["by"] in names([d])]
    assert any(case["message"] in d.message for d in ours), [d.message for d in ours]


def test_table_covers_every_policy_and_crd_family_our_kinds_hit():
    by = {c.get("by") for c in CASES}
    assert {"queue-validation-policy", "job-validation-policy", "hypernode-validation-policy", "pod-validation-policy",
            "trainjobs.trainer.kubeflow.org", "trainingruntimes.trainer.kubeflow.org",
            "clustertrainingruntimes.trainer.kubeflow.org", "jobsets.jobset.x-k8s.io",
            "hypernodes.topology.volcano.sh"} <= by
    assert len({c["id"] for c in CASES}) == len(CASES)


def volcano_release(**custom) -> dict:
    """The Volcano chart release a stack renders (its values say what the chart installs)."""
    return {"apiVersion": "helm.sh/v3", "kind": "Release",
            "metadata": {"name": "volcano", "namespace": "volcano-system"},
            "spec": {"chart": "volcano", "values": {"custom": custom}}}


VAPS_ON = volcano_release(vap_enable=True)


def test_finding_names_the_policy_the_field_and_quotes_upstream(ruleset):
    queue = next(c for c in CASES if c["id"] == "queue-guarantee-without-deserved")["object"]
    everything = run_rules([queue, VAPS_ON], CheckContext(), PolicySettings(), [RULE])
    # Volcano's queue webhook (Go) refuses it too, in its own words; the policy's finding is checked here.
    assert any("validate_queue.go" in f.message and "must be >= guarantee" in f.message for f in everything)
    found = [f for f in everything if "ValidatingAdmissionPolicy" in f.message]
    assert len(found) == 1 and found[0].path == "spec"
    message = found[0].message
    assert message.startswith(
        f"{found[0].resource} at spec: Volcano ValidatingAdmissionPolicy 'queue-validation-policy'")
    assert found[0].resource.endswith("Queue/q1")
    assert '"must be >= guarantee"' in message and "spec.deserved, spec.guarantee.resource" in message
    assert "volcano-sh/volcano v1.15.1" in message and "change the object" in message
    managed = next(c for c in CASES if c["id"] == "trainjob-unknown-managed-by")["object"]
    found = run_rules([managed], CheckContext(), PolicySettings(), [RULE])
    assert found[0].path == "spec.managedBy"
    assert found[0].message.startswith(f"{found[0].resource} at spec.managedBy: the TrainJob CRD "
                                       "trainjobs.trainer.kubeflow.org (kubeflow/trainer v2.3.0")


def test_mutation_defaults_are_what_validation_sees(ruleset):
    job = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "j", "namespace": "t"},
           "spec": {"tasks": [{"name": "a", "replicas": 2, "minAvailable": 1, "template": {}}]}}
    policy = next(p for p in ruleset.policies if p["name"] == "volcano-job-mutation-policy")
    target = ruleset.target(job, {})
    mutated, outcomes = ruleset._mutate(policy, job, {"operation": "CREATE"}, target, ruleset.scope())
    assert outcomes == []
    assert mutated["spec"]["minAvailable"] == 1 and mutated["spec"]["queue"] == "default"
    assert mutated["spec"]["schedulerName"] == "volcano" and mutated["spec"]["maxRetry"] == 3
    assert "minAvailable" not in job["spec"]          # the caller's object is never changed


# --- (c) the eight objects of the issue, through `check` and through the pack ------------------------

@pytest.fixture(scope="module")
def issue_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("issue-objects")
    out = {}
    for case in ISSUE:
        path = folder / f"{case['id']}.yaml"
        path.write_text(yaml.safe_dump(case["object"]))
        out[case["id"]] = path
    return out


@pytest.mark.parametrize("case", ISSUE, ids=lambda c: c["id"])
def test_issue_objects_fail_check(case, issue_files, dirs):
    result = run("check", "dev", "--manifests", str(issue_files[case["id"]]), "--format", "json")
    assert result.code == 1, result.err
    doc = json.loads(result.out)["stacks"]["dev"]
    rule, message = expected(case)
    hits = [v for v in doc["violations"] if v["rule"] == rule]
    assert hits and all(v["level"] == "mandatory" for v in hits)
    assert any(f'"{message}' in v["message"] or message in v["message"] for v in hits)
    assert all(v["source"] == str(issue_files[case["id"]]) for v in hits)


@pytest.fixture(scope="module")
def pack(dirs):
    from policies.driver import Pack

    config = pulumi_config_map(load_stack(load_project(ROOT), "dev"))
    with Pack("dev", "trainstack", config) as running:    # started with the env above: it reads the same rules
        yield running


def test_issue_objects_fail_in_the_pack(pack):
    from policies.driver import analyze, manifest_resources, stack_urn

    for case in ISSUE:
        resources = manifest_resources([case["object"]], "dev", "trainstack", stack_urn("dev", "trainstack"))
        outcome = analyze(pack, resources)
        rule, message = expected(case)
        hits = [v for v in outcome.violations if v.rule == rule]
        assert hits and all(v.level == "mandatory" for v in hits), (case["id"], outcome.violations)
        assert any(message in v.message for v in hits), (case["id"], [v.message for v in hits])


def test_valid_objects_pass_in_the_pack(pack):
    from policies.driver import analyze, manifest_resources, stack_urn

    admitted = [c["object"] for c in CASES if c.get("expect") == "admit"]
    resources = manifest_resources(admitted, "dev", "trainstack", stack_urn("dev", "trainstack"))
    assert [v for v in analyze(pack, resources).violations if v.rule == "upstream-admission"] == []


def test_issue_objects_fail_in_preview(tmp_path, dirs):
    """The third runner: the program under mocks plus the pack, with all eight objects at once."""
    manifests = tmp_path / "issue.yaml"
    manifests.write_text(yaml.safe_dump_all([c["object"] for c in ISSUE]))
    result = run("preview", "dev", "--manifests", str(manifests), "--format", "json")
    assert result.code == 1, result.err
    violations = json.loads(result.out)["stacks"]["dev"]["violations"]
    for case in ISSUE:
        rule, message = expected(case)
        assert any(v["rule"] == rule and message in v["message"] for v in violations), case["id"]


# --- when the rules cannot be loaded; rules that cannot be evaluated ----------------------------

def test_missing_rules_give_one_note_never_a_silent_pass(tmp_path, monkeypatch):
    monkeypatch.setenv("TRAINSTACK_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TRAINSTACK_ADMISSION_DIR", raising=False)
    monkeypatch.delenv("TRAINSTACK_CRD_DIR", raising=False)
    objects = [c["object"] for c in ISSUE]
    everything = run_rules(objects, CheckContext(), PolicySettings(), [RULE])
    found = [f for f in everything if f.is_note]
    assert len(found) == 1 and found[0].resource == "stack"
    assert "upstream admission rules not evaluated" in found[0].message
    assert "trainstack admission fetch" in found[0].message and "--admission-dir" in found[0].message
    # Volcano's Go-only webhook checks are trainstack's own code: they still judge, rules or not.
    assert all("Volcano's admission webhook" in f.message for f in everything if not f.is_note)
    # objects no upstream rule judges need none: no note for a ConfigMap
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "n"}, "data": {}}
    assert run_rules([cm], CheckContext(), PolicySettings(), [RULE]) == []


def _index(policies: list[dict] = (), crds: list[dict] = ()) -> Index:
    return Index(policies=list(policies), crds=list(crds), location=RuleSources(None, None, "test"), missing=[])


def _policy(expression: str) -> dict:
    return {"kind": "ValidatingAdmissionPolicy", "name": "p", "source": "t.yaml", "release": "test",
            "failurePolicy": "Fail", "paramKind": None, "matchConditions": [], "variables": [], "mutations": [],
            "matchConstraints": {"resourceRules": [{"operations": ["CREATE"], "apiGroups": ["scheduling.volcano.sh"],
                                                    "apiVersions": ["v1beta1"], "resources": ["queues"]}]},
            "validations": [{"expression": expression, "message": "upstream says no"}],
            "bound": True, "validationActions": ["Deny"], "bindingMatch": {}}


QUEUE = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "q"}, "spec": {}}


@pytest.mark.parametrize("expression, reason", [
    ("object.spec.(", "does not compile"),
    ("object.spec.name.reverseWords()", "calls reverseWords, which trainstack does not implement"),
    ("authorizer.requestResource.check('get').allowed()", "authorizer"),
])
def test_unevaluable_expression_is_a_note_naming_the_rule(expression, reason):
    ruleset = RuleSet(_index([_policy(expression)]))
    denials, skipped = verdict(ruleset, QUEUE)
    assert denials == [] and len(skipped) == 1
    assert "'p'" in skipped[0].source and reason in skipped[0].reason


def test_unevaluable_rule_reaches_the_report_as_a_note(monkeypatch):
    import policies.admission as admission

    monkeypatch.setattr(admission, "rules", lambda: RuleSet(_index([_policy("object.spec.x.reverseWords()")])))
    found = run_rules([QUEUE, VAPS_ON], CheckContext(), PolicySettings(), [RULE])
    assert [v.level for v in found] == ["note"]
    assert "rule `object.spec.x.reverseWords()` not evaluated" in found[0].message


def test_volcano_policies_count_only_where_the_chart_installs_them(ruleset):
    """Volcano v1.15.1's chart ships vap_enable: false: without a release saying otherwise the policies
    are not evaluated (one note names the install assumed), and a stack with vapEnable: false gets no
    policy finding; the CRD rules and the Go webhooks count either way."""
    queue = next(c for c in CASES if c["id"] == "queue-guarantee-without-deserved")["object"]

    def policy_findings(objects):
        return [v for v in run_rules(objects, CheckContext(), PolicySettings(), [RULE])
                if "ValidatingAdmissionPolicy" in v.message]

    assert len(policy_findings([queue, VAPS_ON])) == 1
    assert policy_findings([queue, volcano_release(vap_enable=False)]) == []
    bare = run_rules([queue], CheckContext(), PolicySettings(), [RULE])
    assert not any("ValidatingAdmissionPolicy '" in v.message for v in bare)
    [note] = [v for v in bare if v.level == "note"]
    assert "the Volcano v1.15.1 chart's defaults are assumed (vap_enable: false" in note.message
    assert any("validate_queue.go" in v.message for v in bare)   # the queue webhook still refuses it


def test_runtime_error_denies_as_failure_policy_fail():
    ruleset = RuleSet(_index([_policy("object.spec.missing == 1")]))
    denials, _ = verdict(ruleset, QUEUE)
    assert len(denials) == 1 and "no such key: missing" in denials[0].message


def test_transition_rules_do_not_run_on_create():
    crd = {"crd": "queues.scheduling.volcano.sh", "source": "x", "release": "test", "group": "scheduling.volcano.sh",
           "version": "v1beta1", "kind": "Queue", "plural": "queues",
           "rules": [{"path": ["spec"], "rule": "self == oldSelf", "message": "immutable"},
                     {"path": ["spec"], "rule": "!oldSelf.hasValue() || self == oldSelf.value()",
                      "message": "optional", "optionalOldSelf": True},
                     {"path": ["spec", "weight"], "rule": "self > 0", "message": "weight must be positive"}]}
    ruleset = RuleSet(_index(crds=[crd]))
    denials, skipped = verdict(ruleset, {**QUEUE, "spec": {"weight": 0}})
    assert skipped == [] and [d.message for d in denials] == ["spec.weight: Invalid value: 0: weight must be positive"]


# --- (d) the Kubernetes CEL functions ------------------------------------------------------------------

def cel(expression: str, **variables):
    from policies.admission.engine import Scope

    scope = Scope()
    scope.bind(variables)
    return scope.run(compile_expr(expression))


@pytest.mark.parametrize("expression, expected", [
    ("quantity('1Gi').compareTo(quantity('1024Mi')) == 0", True),
    ("quantity('1G').isLessThan(quantity('1Gi'))", True),
    ("quantity('500m').isGreaterThan(quantity('0.4'))", True),
    ("quantity('1') == quantity('1000m')", True),
    ("quantity('1.5').add(quantity('500m')) == quantity('2')", True),
    ("quantity('2').sub(1).asInteger()", 1),
    ("quantity('1.5').isInteger()", False),
    ("quantity('1.5k').asApproximateFloat()", 1500.0),
    ("quantity('-3').sign()", -1),
    ("isQuantity('1Gi') && !isQuantity('1 Gi')", True),
    ("'a/b/c'.split('/')", ["a", "b", "c"]),
    ("'a/b/c'.split('/', 2)", ["a", "b/c"]),
    ("['a', 'b'].join('; ')", "a; b"),
    ("'MiXeD'.lowerAscii() + 'x'.upperAscii()", "mixedX"),
    ("'1%'.replace('%', '')", "1"),
    ("'hello'.substring(1, 3) + 'hello'.charAt(0)", "elh"),
    ("'  x '.trim()", "x"),
    ("'abcb'.indexOf('b') + 'abcb'.lastIndexOf('b')", 4),
    ("'%s has %d'.format(['q', 3])", "q has 3"),
    ("double([1, 2, 3].sum()) + [1.5].sum()", 7.5),
    ("[1, 2, 2].isSorted() && ![2, 1].isSorted()", True),
    ("[3, 1, 2].min() + [3, 1, 2].max()", 4),
    ("[1, 2, 3].slice(1, 3)", [2, 3]),
    ("'node-12'.find('[0-9]+')", "12"),
    ("'a1b22'.findAll('[0-9]+')", ["1", "22"]),
    ("'abc'.matches('^a')", True),
    ("format.dns1123Label().validate('ok-name').hasValue()", False),
    ("format.dns1123Label().validate('Not_OK').hasValue()", True),
    ("format.qualifiedName().validate('example.com/My.Name').hasValue()", False),
    ("format.qualifiedName().validate('-bad').orValue([]).size() > 0", True),
    ("format.dns1035Label().validate('1abc').hasValue()", True),
    ("jsonpatch.escapeKey('volcano.sh/a~b')", "volcano.sh~1a~0b"),
])
def test_kubernetes_cel_functions(expression, expected):
    assert cel(expression) == expected


def test_quantity_takes_strings_only_as_the_api_server():
    from policies.admission.engine import EvalError

    with pytest.raises(EvalError, match="no matching overload for 'quantity' applied to \\(int\\)"):
        cel("quantity(x)", x=8)
    with pytest.raises(EvalError, match="quantities must match"):
        cel("quantity('8 Gi')")


def test_jsonpatch_rewrite_and_apply():
    source = 'cond ? [JSONPatch{op: "add", path: "/spec/a" + "b", value: {"k": [1, 2]}}] : []'
    assert rewrite_jsonpatch(source) == 'cond ? [{"op": "add", "path": "/spec/a" + "b", "value": {"k": [1, 2]}}] : []'
    obj = {"spec": {"list": [1]}, "metadata": {"annotations": {}}}
    out = apply_patch(obj, [{"op": "add", "path": "/spec/list/-", "value": 2},
                            {"op": "add", "path": "/metadata/annotations/a~1b", "value": "x"},
                            {"op": "replace", "path": "/spec/list/0", "value": 0}])
    assert out == {"spec": {"list": [0, 2]}, "metadata": {"annotations": {"a/b": "x"}}} and obj["spec"]["list"] == [1]


def test_each_expression_compiles_once():
    source = "object.spec.tasks.size() > 0 && true"
    assert compile_expr(source) is compile_expr(source)


# --- loading: offline chart archive, the cache, sha256-verified downloads ---------------------------

def _chart(tmp_path: Path, admission: Path) -> Path:
    """A Volcano chart archive as the chart repository ships it (volcano/policy/*.yaml inside)."""
    archive = tmp_path / "volcano-1.15.1.tgz"
    with tarfile.open(archive, "w:gz") as tar:
        for file in sorted((admission / "volcano").glob("*.yaml")):
            tar.add(file, arcname=f"volcano/policy/{file.name}")
        info = tarfile.TarInfo("volcano/Chart.yaml")
        data = b"name: volcano\nversion: 1.15.1\n"
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return archive


def test_offline_folder_with_the_chart_archive(tmp_path, dirs, monkeypatch):
    admission, crds = dirs
    offline = tmp_path / "offline"
    offline.mkdir()
    _chart(offline, admission)
    monkeypatch.setenv("TRAINSTACK_ADMISSION_DIR", str(offline))
    monkeypatch.setenv("TRAINSTACK_CACHE_DIR", str(tmp_path / "cache"))
    index = load_index(locate())
    assert not index.missing
    names_ = {p["name"] for p in index.policies}
    assert "queue-validation-policy" in names_
    assert all(p["source"].startswith("volcano-1.15.1.tgz:") for p in index.policies)
    assert all(p["release"].startswith("volcano-sh/volcano v1.15.1") for p in index.policies)   # sha256 matched
    assert list((tmp_path / "cache" / "admission-index").glob("*.json"))    # extracted once, then reused
    again = load_index(locate())
    assert again.policies == index.policies and again.crds == index.crds


def _fake_sources(tmp_path: Path, admission: Path, crds: Path, tamper: bool = False) -> Path:
    """A sources.yaml in the real format, served from file:// URLs (no network here)."""
    chart = _chart(tmp_path, admission)
    crd = crds / "kubeflow" / "trainer.kubeflow.org_trainjobs.yaml"
    sha = hashlib.sha256(crd.read_bytes()).hexdigest()
    doc = {"sources": [
        {"name": "volcano-chart", "release": "volcano 1.15.1 (test archive)",
         "archive": {"url": chart.as_uri(), "sha256": hashlib.sha256(chart.read_bytes()).hexdigest(),
                     "extract": [{"glob": "volcano/policy/*.yaml", "to": "volcano"}]}},
        {"name": "trainer-crds", "release": "kubeflow/trainer v2.3.0",
         "files": [{"url": crd.as_uri(), "path": "crds/kubeflow/trainer.kubeflow.org_trainjobs.yaml",
                    "sha256": ("0" * 64) if tamper else sha}]},
    ]}
    path = tmp_path / "sources.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def test_fetch_verifies_and_fills_the_cache(tmp_path, dirs, monkeypatch):
    from policies.admission.fetch import fetch

    admission, crds = dirs
    dest = tmp_path / "cache" / "admission"
    written = fetch(dest, _fake_sources(tmp_path, admission, crds))
    assert (dest / "volcano" / "queues-validating.yaml").is_file()
    assert (dest / "crds" / "kubeflow" / "trainer.kubeflow.org_trainjobs.yaml").is_file() and len(written) >= 11
    monkeypatch.setenv("TRAINSTACK_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TRAINSTACK_ADMISSION_DIR", raising=False)
    monkeypatch.delenv("TRAINSTACK_CRD_DIR", raising=False)
    index = load_index(locate())
    assert not index.missing and "cache" in index.location.origin
    assert {c["kind"] for c in index.crds} == {"TrainJob"}


def test_fetch_refuses_a_file_whose_sha256_differs(tmp_path, dirs):
    from modules.core.errors import InputError
    from policies.admission.fetch import fetch

    admission, crds = dirs
    dest = tmp_path / "cache" / "admission"
    with pytest.raises(InputError, match="refusing to use it"):
        fetch(dest, _fake_sources(tmp_path, admission, crds, tamper=True))
    assert not (dest / "crds").exists()


def test_pinned_sources_match_the_shared_copies(dirs):
    """sources.yaml pins the same bytes the shared folders hold (same upstream tags)."""
    admission, crds = dirs
    pins = yaml.safe_load((ROOT / "policies" / "admission" / "sources.yaml").read_text())["sources"]
    for source in pins:
        for f in source["files"]:
            local = admission / f["path"] if f["path"].startswith("volcano/") else crds / f["path"][len("crds/"):]
            assert hashlib.sha256(local.read_bytes()).hexdigest() == f["sha256"], f["path"]


def test_admission_show_command(dirs):
    result = run("admission", "show")
    assert result.code == 0, result.out + result.err
    assert "ValidatingAdmissionPolicy queue-validation-policy" in result.out
    assert "CRD trainjobs.trainer.kubeflow.org v1alpha1" in result.out


# --- Volcano's Go-only webhooks (our code), in the pack and in preview ------------------------------

WEBHOOK_REFUSED = [   # (object, upstream's message fragment)
    ({"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "mounts", "namespace": "training"},
      "spec": {"queue": "default", "tasks": [{"name": "w", "replicas": 1, "template": {"spec": {"containers": [
          {"name": "c", "image": "i:1", "volumeMounts": [{"name": "data", "mountPath": "/d"}],
           "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}]}}}]}},
     'spec.task[0].template.spec.containers[0].volumeMounts[0].name: Not found: "data"'),
    ({"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "CronJob", "metadata": {"name": "cj", "namespace": "training"},
      "spec": {"schedule": "0 1 * * *", "timeZone": "Mars/Olympus", "jobTemplate": {"spec": {"tasks": [
          {"name": "w", "replicas": 1, "template": {"spec": {"containers": [{"name": "c", "image": "i:1"}]}}}]}}}},
     "invalid timeZone"),
]
WEBHOOK_ADMITTED = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "closing"},
                    "spec": {"weight": 1}, "status": {"state": "Closing"}}


def test_volcano_webhook_refusals_in_the_pack(pack):
    from policies.driver import analyze, manifest_resources, stack_urn

    for obj, message in WEBHOOK_REFUSED:
        resources = manifest_resources([obj], "dev", "trainstack", stack_urn("dev", "trainstack"))
        hits = [v for v in analyze(pack, resources).violations if v.rule == "upstream-admission"]
        assert any(message in v.message and "pkg/webhooks/admission" in v.message for v in hits), hits
    resources = manifest_resources([WEBHOOK_ADMITTED], "dev", "trainstack", stack_urn("dev", "trainstack"))
    assert [v for v in analyze(pack, resources).violations if v.rule == "upstream-admission"] == []


def test_volcano_webhook_refusals_in_check_and_preview(tmp_path, dirs):
    manifests = tmp_path / "webhooks.yaml"
    manifests.write_text(yaml.safe_dump_all([obj for obj, _ in WEBHOOK_REFUSED] + [WEBHOOK_ADMITTED]))
    for command in ("check", "preview"):
        result = run(command, "dev", "--manifests", str(manifests), "--format", "json")
        assert result.code == 1, result.err
        hits = [v for v in json.loads(result.out)["stacks"]["dev"]["violations"] if v["rule"] == "upstream-admission"]
        for _, message in WEBHOOK_REFUSED:
            assert any(message in v["message"] for v in hits), (command, message)
        assert not any("Queue/closing" in v["resource"] for v in hits), command
