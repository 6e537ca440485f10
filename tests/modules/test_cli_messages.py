"""Keys and messages a newcomer meets in the first hour: provider and project keys are checked, each
mistake names what is wrong in words a reader recognises, and a closed pipe ends quietly."""
from __future__ import annotations

import io
import shutil
from contextlib import redirect_stderr, redirect_stdout

import pytest
import yaml

from modules.cli import EXIT_BROKEN_PIPE, main, parser
from modules.core.config import PULUMI_KEYS, kubernetes_provider_keys
from tests.support.cli import ROOT, run


@pytest.fixture()
def project(tmp_path):
    """A copy of the project's stack files and Pulumi.yaml, to edit."""
    shutil.copy(ROOT / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    shutil.copytree(ROOT / "stacks", tmp_path / "stacks")
    return tmp_path


def _edit_dev(project, old: str, new: str) -> None:
    path = project / "stacks" / "Pulumi.dev.yaml"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


def test_the_kubernetes_keys_are_the_installed_providers():
    """Read from pulumi-kubernetes' ProviderArgs, not a list of ours: the keys every stack uses are there."""
    from pulumi_kubernetes.provider import ProviderArgs

    keys = kubernetes_provider_keys()
    assert {"context", "kubeconfig", "namespace", "cluster", "enableServerSideApply"} <= set(keys)
    assert len(keys) == sum(isinstance(v, property) for v in vars(ProviderArgs).values())


def test_the_cached_provider_keys_are_the_imported_ones(tmp_path, monkeypatch):
    """The names come from the user cache after the first read; both reads must agree."""
    monkeypatch.setenv("TRAINSTACK_CACHE_DIR", str(tmp_path))
    kubernetes_provider_keys.cache_clear()
    try:
        first = kubernetes_provider_keys()
        assert list((tmp_path / "provider-keys").glob("*.json"))   # remembered
        kubernetes_provider_keys.cache_clear()
        assert kubernetes_provider_keys() == first and "context" in first
    finally:
        kubernetes_provider_keys.cache_clear()


@pytest.mark.parametrize("key, value, hint", [
    ("kubernetes:contxt", "prod-cluster", "did you mean 'kubernetes:context'?"),
    ("kubernetes:enableServerSideAply", "true", "did you mean 'kubernetes:enableServerSideApply'?"),
    ("pulumi:tagz", "{team: ml}", "did you mean 'pulumi:tags'?"),
])
def test_an_unknown_provider_or_pulumi_key_is_exit_2_with_did_you_mean(project, key, value, hint):
    _edit_dev(project, "kubernetes:context: dev-cluster", f"{key}: {value}")
    for command in ("validate", "render", "check"):
        result = run(command, "dev", "--project", str(project))
        assert result.code == 2, (command, result.out)
        assert result.err.strip() == f"error: stacks/Pulumi.dev.yaml: {key}: unknown key '{key}'; {hint}"
    assert not (project / "deploy").exists()   # nothing written


def test_known_keys_of_every_namespace_pass(project):
    extra = "\n".join(f"  {k}: {v}" for k, v in (("kubernetes:namespace", "training"),
                                                  ("pulumi:disable-default-providers", "['*']"),
                                                  ("aws:region", "eu-west-1")))   # a provider we do not use
    _edit_dev(project, "  kubernetes:context: dev-cluster", f"  kubernetes:context: dev-cluster\n{extra}")
    result = run("validate", "dev", "--project", str(project))
    assert result.code == 0, result.err
    assert set(PULUMI_KEYS) >= {"disable-default-providers", "tags"}


def test_a_tab_in_a_stack_file_is_named(project):
    _edit_dev(project, "  kubernetes:context: dev-cluster", "\tkubernetes:context: dev-cluster")
    result = run("validate", "dev", "--project", str(project))
    assert result.code == 2
    assert result.err.strip() == ("error: stacks/Pulumi.dev.yaml: line 2, column 1: invalid YAML: a tab character; "
                                  "YAML indents with spaces only")


def test_diff_names_a_base_that_does_not_exist():
    result = run("diff", "nosuchref", cwd=ROOT)
    assert result.code == 2
    assert "no commit, branch or tag named 'nosuchref'" in result.err and "Needed a single" not in result.err


def test_a_snapshot_train_job_with_an_unknown_runtime_names_the_snapshot(tmp_path):
    from tests.modules.simulate.test_snapshot import HYPERNODES, NODES, as_list

    (tmp_path / "snap").mkdir()
    (tmp_path / "snap" / "fabric.yaml").write_text(yaml.safe_dump(as_list(HYPERNODES + NODES)))
    job = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
           "metadata": {"name": "ddp", "namespace": "team"}, "spec": {"runtimeRef": {"name": "nope"}}}
    (tmp_path / "jobs.yaml").write_text(yaml.safe_dump(job))
    result = run("simulate", str(tmp_path / "snap"), "--workloads", str(tmp_path / "jobs.yaml"))
    assert result.code == 2
    assert "no ClusterTrainingRuntime 'nope' in the snapshot (it has: none)" in result.err, result.err
    assert "in stack the snapshot" not in result.err


class _ClosedPipe(io.StringIO):
    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")


def test_a_closed_pipe_ends_quietly():
    """`trainstack admission show | head`: the reader went away; no 'Broken pipe' line."""
    err = io.StringIO()
    with redirect_stdout(_ClosedPipe()), redirect_stderr(err):
        code = main(["admission", "show"])
    assert code == EXIT_BROKEN_PIPE and err.getvalue() == ""


def test_help_lists_every_exit_code_and_debug():
    text = parser().format_help()
    for line in ("  3    preview", "  4    a trainstack bug", "--debug", "  130  interrupted", "  141  the reader"):
        assert line in text, line
