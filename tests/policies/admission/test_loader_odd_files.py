"""An admission folder the user points at may hold files that are not what they claim: each is a
problem in the one `upstream-admission` note, never a crash, and the good files still load."""
from __future__ import annotations

import io

import pytest
import tarfile

from policies.admission import loader
from policies.admission.engine import RuleSet
from tests.support.cli import ROOT

QUEUES = ROOT.parent / "shared" / "admission" / "volcano" / "queues-validating.yaml"


def test_odd_files_are_problems_and_good_files_still_load(tmp_path, monkeypatch):
    monkeypatch.setenv(loader.ENV_CACHE, str(tmp_path / "cache"))
    (tmp_path / "volcano").mkdir()
    (tmp_path / "crds").mkdir()
    (tmp_path / "volcano" / "queues.yaml").write_bytes(QUEUES.read_bytes())
    (tmp_path / "volcano" / "no-name.yaml").write_text("kind: ValidatingAdmissionPolicy\nspec: {}\n")
    (tmp_path / "volcano" / "syntax.yaml").write_text("kind: [\n")
    (tmp_path / "volcano" / "deep.yaml").write_text("a: " + "[" * 200 + "]" * 200 + "\n")
    (tmp_path / "crds" / "bad.yaml").write_text("kind: CustomResourceDefinition\nspec: {versions: [{}]}\n")
    big = b"# CustomResourceDefinition\n" + b"#" * 9000 + b"\n"
    (tmp_path / "crds" / "big.yaml").write_bytes(big)
    archive = io.BytesIO()
    with tarfile.open(fileobj=archive, mode="w:gz") as tar:
        info = tarfile.TarInfo("volcano/policy/huge.yaml")
        info.size = len(big)
        tar.addfile(info, io.BytesIO(big))
    (tmp_path / "volcano-1.tgz").write_bytes(archive.getvalue())
    (tmp_path / "broken.tgz").write_bytes(b"not a tar")
    monkeypatch.setattr(loader, "MAX_BYTES", 8000)   # the queues policy is about 6 kB

    index = loader.load_index(loader.RuleSources(tmp_path, tmp_path / "crds", "test"))
    assert index.policies and {p["source"] for p in index.policies} == {"volcano/queues.yaml"}
    problems = "\n".join(index.missing)
    for expected in ("volcano/no-name.yaml: document 1: a ValidatingAdmissionPolicy without metadata.name",
                     "volcano/syntax.yaml: not read", "volcano/deep.yaml: not read",
                     "bad.yaml: document 1: a CustomResourceDefinition without",
                     "big.yaml: not read, file is 9028 bytes; at most 8000 are read",
                     "volcano-1.tgz:volcano/policy/huge.yaml: not read", "broken.tgz: not read"):
        assert expected in problems, (expected, problems)


def test_a_folder_or_broken_link_named_like_a_file_is_a_problem(tmp_path, monkeypatch):
    """``volcano/*.yaml`` and ``crds/**/*.yaml`` are globbed: a folder or a dangling symlink with such
    a name was read (IsADirectoryError / FileNotFoundError out of load_index)."""
    monkeypatch.setenv(loader.ENV_CACHE, str(tmp_path / "cache"))
    (tmp_path / "volcano").mkdir()
    (tmp_path / "crds" / "folder.yaml").mkdir(parents=True)
    (tmp_path / "volcano" / "queues.yaml").write_bytes(QUEUES.read_bytes())
    (tmp_path / "volcano" / "gone.yaml").symlink_to(tmp_path / "nowhere.yaml")
    (tmp_path / "crds" / "gone.yaml").symlink_to(tmp_path / "nowhere.yaml")

    index = loader.load_index(loader.RuleSources(tmp_path, tmp_path / "crds", "test"))
    assert {p["source"] for p in index.policies} == {"volcano/queues.yaml"}
    problems = "\n".join(index.missing)
    for expected in ("volcano/gone.yaml: not read, file not found", "folder.yaml: not read, not a regular file",
                     "\ngone.yaml: not read, file not found"):
        assert expected in "\n" + problems, (expected, problems)


JOB = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "j", "namespace": "n"},
       "spec": {}}
RULE = "{resourceRules: [{apiGroups: ['*'], apiVersions: ['*'], operations: ['*'], resources: ['*']}]}"
MALFORMED = {
    "binding-policy-name-list": "kind: ValidatingAdmissionPolicyBinding\nmetadata: {name: b}\n"
                                "spec: {policyName: [p]}\n",
    "match-constraints-list": "kind: ValidatingAdmissionPolicy\nmetadata: {name: p}\n"
                              "spec: {matchConstraints: [1], validations: [{expression: 'true'}]}\n",
    "resource-rules-strings": "kind: ValidatingAdmissionPolicy\nmetadata: {name: p}\n"
                              "spec: {matchConstraints: {resourceRules: [x]}, validations: [{expression: 'true'}]}\n",
    "operations-string": "kind: ValidatingAdmissionPolicy\nmetadata: {name: p}\nspec: {matchConstraints: "
                         "{resourceRules: [{operations: CREATE, resources: ['*']}]}, "
                         "validations: [{expression: 'true'}]}\n",
    # the API server requires operations: without them the engine matched every operation
    "operations-missing": "kind: ValidatingAdmissionPolicy\nmetadata: {name: p}\nspec: {matchConstraints: "
                          "{resourceRules: [{apiGroups: ['*'], apiVersions: ['*'], resources: ['*']}]}, "
                          "validations: [{expression: 'false'}]}\n",
    "condition-int": f"kind: ValidatingAdmissionPolicy\nmetadata: {{name: p}}\nspec: {{matchConstraints: {RULE}, "
                     "matchConditions: [2], validations: [{expression: 'true'}]}\n",
    "expression-int": f"kind: ValidatingAdmissionPolicy\nmetadata: {{name: p}}\nspec: {{matchConstraints: {RULE}, "
                      "validations: [{expression: 5}]}\n",
    "variable-without-name": f"kind: ValidatingAdmissionPolicy\nmetadata: {{name: p}}\nspec: {{matchConstraints: "
                             f"{RULE}, variables: [{{expression: '1'}}], validations: [{{expression: 'true'}}]}}\n",
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_a_malformed_policy_or_binding_is_a_problem_not_a_crash(case, tmp_path, monkeypatch):
    """Shapes the API server's validation refuses (a list for a mapping, a number for an expression)
    crashed the engine (AttributeError / TypeError out of RuleSet.evaluate or the loader)."""
    monkeypatch.setenv(loader.ENV_CACHE, str(tmp_path / "cache"))
    (tmp_path / "volcano").mkdir()
    (tmp_path / "crds").mkdir()
    binding = "---\nkind: ValidatingAdmissionPolicyBinding\nmetadata: {name: pb}\nspec: {policyName: p}\n"
    (tmp_path / "volcano" / "x.yaml").write_text(MALFORMED[case] + binding)
    index = loader.load_index(loader.RuleSources(tmp_path, tmp_path / "crds", "test"))
    assert RuleSet(index).evaluate(JOB) == []
    assert any("x.yaml: document 1:" in p and "skipped" in p for p in index.missing), index.missing


def test_crd_rules_of_the_wrong_shape_are_skipped(tmp_path, monkeypatch):
    monkeypatch.setenv(loader.ENV_CACHE, str(tmp_path / "cache"))
    (tmp_path / "crds").mkdir()
    (tmp_path / "crds" / "job.yaml").write_text(
        "kind: CustomResourceDefinition\nmetadata: {name: jobs.batch.volcano.sh}\n"
        "spec:\n  group: batch.volcano.sh\n  names: {kind: Job, plural: jobs}\n  versions:\n  - name: v1alpha1\n"
        "    schema:\n      openAPIV3Schema:\n        x-kubernetes-validations: {rule: self.x}\n"
        "        properties:\n          spec:\n            properties: [a]\n"
        "            x-kubernetes-validations: [rule, {message: m}, {rule: 5}, {rule: 'has(self.tasks)'}]\n")
    index = loader.load_index(loader.RuleSources(None, tmp_path / "crds", "test"))
    assert [r["rule"] for crd in index.crds for r in crd["rules"]] == ["has(self.tasks)"]


def test_each_binding_of_a_policy_is_evaluated():
    """The API server evaluates a policy once per binding that names it, each with its own actions and
    match resources; the loader kept only the last binding."""
    policy = (b"apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\n"
              b"metadata: {name: p}\nspec:\n  matchConstraints:\n    resourceRules:\n"
              b"    - {apiGroups: ['*'], apiVersions: ['*'], operations: [CREATE], resources: ['*']}\n"
              b"  validations: [{expression: 'false'}]\n")
    bindings = b"".join(
        b"---\napiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBinding\n"
        b"metadata: {name: b%d}\nspec: {policyName: p, validationActions: [%s], matchResources: "
        b"{namespaceSelector: {matchLabels: {team: %s}}}}\n" % (i, action, team)
        for i, (action, team) in enumerate([(b"Deny", b"a"), (b"Audit", b"b")]))
    problems: list[str] = []
    entries = loader.extract_policies([("volcano/p.yaml", policy + bindings)], {}, problems)
    assert problems == []
    assert [(e["name"], e["bound"], e["validationActions"], e["bindingMatch"]["namespaceSelector"]["matchLabels"])
            for e in entries] == [("p", True, ["Deny"], {"team": "a"}), ("p", True, ["Audit"], {"team": "b"})]
    unbound = loader.extract_policies([("volcano/p.yaml", policy)], {}, problems)
    assert [(e["bound"], e["validationActions"]) for e in unbound] == [(False, ["Deny"])]


def test_an_archive_is_read_within_its_bounds(tmp_path, monkeypatch):
    """A chart archive with too many members, or one whose members run past the byte bound, is read
    up to the bound and the rest named in the note (a gzip bomb does not decompress on)."""
    archive = io.BytesIO()
    with tarfile.open(fileobj=archive, mode="w:gz") as tar:
        for i in range(5):
            data = b"# member %d\n" % i
            info = tarfile.TarInfo(f"volcano/policy/p{i}.yaml")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    (tmp_path / "many.tgz").write_bytes(archive.getvalue())
    monkeypatch.setattr(loader, "MAX_ARCHIVE_MEMBERS", 3)
    problems: list[str] = []
    assert [label for label, _ in loader.policy_documents(tmp_path, problems)] == [
        f"many.tgz:volcano/policy/p{i}.yaml" for i in range(3)]
    assert problems == ["many.tgz: read only its first 3 members (at most 3 members and "
                        f"{loader.MAX_ARCHIVE_BYTES} bytes)"]
    monkeypatch.setattr(loader, "MAX_ARCHIVE_MEMBERS", 100)
    monkeypatch.setattr(loader, "MAX_ARCHIVE_BYTES", 1024 + 512)   # the second member ends past it
    problems.clear()
    assert len(loader.policy_documents(tmp_path, problems)) == 1 and "first 1 members" in problems[0]
