"""Hostile input that only a real process sees: the C locale with a stray byte on stdin, a closed
or broken stdout, and a symbolic link in the commit `diff` compares with. Each case is one
subprocess under the corpus' limits (20 s of CPU time, 1 GiB); each ends with exit 0, 1 or 2, at most one
`error:` line and no traceback, and leaves everything outside the project's deploy/ unchanged."""
from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from tests.modules.core.test_hostile import CASE_CPU_SECONDS, HANG_SECONDS, MEMORY_LIMIT, PULUMI_YAML, snapshot
from tests.support.cli import ROOT

STACK = "config:\n  trainstack:fabric: {source: generated}\n"


@pytest.fixture
def project(tmp_path) -> Path:
    (tmp_path / "Pulumi.yaml").write_text(PULUMI_YAML)
    (tmp_path / "stacks").mkdir()
    (tmp_path / "stacks" / "Pulumi.t.yaml").write_text(STACK)
    return tmp_path


def _limits() -> None:
    """The corpus' limits for the shell and what it starts: memory, and CPU time (which a busy
    machine does not use up; a spinning process is killed by SIGXCPU)."""
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    resource.setrlimit(resource.RLIMIT_CPU, (CASE_CPU_SECONDS, CASE_CPU_SECONDS))


def _shell(command: str, cwd: Path, stdin: bytes = b"", env: dict | None = None) -> subprocess.CompletedProcess:
    """``command`` in a shell, where ``TS`` runs trainstack from this checkout. ``HANG_SECONDS``
    of wall time only catches a process blocked without using CPU."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), TS=f"{sys.executable} -m modules.cli", **(env or {}))
    return subprocess.run(["bash", "-c", command], cwd=cwd, env=env, input=stdin, capture_output=True,
                          timeout=HANG_SECONDS, preexec_fn=_limits)


def _one_line_at_most(proc: subprocess.CompletedProcess, codes: set[int]) -> None:
    err = proc.stderr.decode("utf-8", "replace")
    assert proc.returncode in codes, (proc.returncode, err[-600:])
    assert "Traceback" not in err and "please report" not in err and "Exception ignored" not in err, err[-600:]
    assert len([line for line in err.splitlines() if line.startswith("error:")]) <= 1, err


def test_a_stray_byte_on_stdin_under_the_c_locale(project):
    before = snapshot(project)
    manifest = b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: \"a\xff\", namespace: training}\n"
    proc = _shell("$TS check t --manifests -", project, manifest, {"LANG": "C", "LC_ALL": "C"})
    _one_line_at_most(proc, {2})
    assert b"not UTF-8" in proc.stderr
    assert snapshot(project) == before


def test_unencodable_output_under_the_c_locale(project):
    """A name that is valid UTF-8 but not ASCII, printed under LANG=C: escaped, never a crash."""
    (project / "m.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: pöd, namespace: training}\n"
                                    "spec: {containers: [{name: c, image: 'busybox:1.36'}]}\n", encoding="utf-8")
    proc = _shell("$TS check t --manifests m.yaml", project, env={"LANG": "C", "LC_ALL": "C", "PYTHONUTF8": "0",
                                                                  "PYTHONIOENCODING": "ascii"})
    _one_line_at_most(proc, {0, 1})


@pytest.mark.parametrize("redirect", [">&-", "| head -c 20"])
def test_a_closed_or_broken_stdout(project, redirect):
    pods = "".join(f"---\napiVersion: v1\nkind: Pod\nmetadata: {{name: p{i}, namespace: training}}\n"
                   "spec: {containers: [{name: c, image: 'busybox:latest'}]}\n" for i in range(300))
    (project / "m.yaml").write_text(pods)   # a report far larger than a pipe's buffer
    before = snapshot(project)
    proc = _shell(f"$TS check t --manifests m.yaml --format json {redirect}; exit ${{PIPESTATUS[0]}}", project)
    _one_line_at_most(proc, {0, 1, 2})
    assert snapshot(project) == before


def test_diff_with_symbolic_links_in_the_base_commit(project):
    (project / "stacks" / "evil.yaml").symlink_to("/etc/passwd")
    (project / "stacks" / "up").symlink_to("../../../../../../etc")
    (project / "stacks" / "Pulumi.l.yaml").symlink_to("/etc/hostname")
    git = "git -c user.email=t@example.com -c user.name=t"
    setup = _shell(f"git init -q && git add -A && {git} commit -qm base", project)
    assert setup.returncode == 0, setup.stderr
    with open(project / "stacks" / "Pulumi.t.yaml", "a") as f:
        f.write("# changed\n")
    before = snapshot(project)
    proc = _shell("$TS diff HEAD t", project)
    _one_line_at_most(proc, {0, 1, 2})
    assert snapshot(project) == before


@pytest.mark.parametrize("command, env, code", [
    ("$TS --version >/dev/full", {}, 2),
    ("$TS preview t", {"PULUMI_CONFIG": "[1]"}, 0),   # ignored: preview sets the stack's own config
    ("$TS check t", {"HOME": "\udcff\udcfe"}, 2),
], ids=["version-into-a-full-stdout", "pulumi-config-not-an-object", "home-not-utf8"])
def test_the_environment_and_a_full_stdout(project, command, env, code):
    """A full stdout under --version, a HOME of non-UTF-8 bytes (written by the shell as they are):
    one line, exit 2; a PULUMI_CONFIG that is not a JSON object is ignored by preview; nothing is
    created in the project."""
    before = snapshot(project)
    shell_env = {k: v.encode("utf-8", "surrogateescape") for k, v in env.items()}
    proc = _shell(command, project, env=shell_env)
    _one_line_at_most(proc, {code})
    assert len(proc.stderr.strip().splitlines()) == (1 if code else 0), proc.stderr
    assert snapshot(project) == before
