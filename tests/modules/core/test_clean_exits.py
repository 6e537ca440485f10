"""A command leaves nothing behind and shows nothing a terminal would act on: the admission
child is reaped on every exit path (a return, an error, SIGINT, SIGTERM, SIGHUP), `preview`
removes its temporary folders, a refused pack start removes its configuration file, and
terminal control characters from input reach the output escaped."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.support.admission import require_shared_dirs
from tests.support.cli import ROOT, run


def _in_session(sid: int) -> list[tuple[int, str]]:
    """Every process of session ``sid`` (a command started with start_new_session), with its state."""
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[3]) == sid:
                out.append((int(entry), fields[0]))
    return out


def _check_process(tmp: Path) -> subprocess.Popen:
    admission, crds = require_shared_dirs()
    env = dict(os.environ, PYTHONPATH=str(ROOT), TRAINSTACK_ADMISSION_DIR=str(admission),
               TRAINSTACK_CRD_DIR=str(crds), TRAINSTACK_CACHE_DIR=str(tmp / "cache"))
    return subprocess.Popen([sys.executable, "-m", "modules.cli", "check", "dev"], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)


def test_no_process_of_a_check_outlives_it(tmp_path):
    """The admission child runs while `check` does and is gone (not running, not a zombie) the
    moment `check` has exited."""
    proc = _check_process(tmp_path)
    seen: set[int] = set()
    while proc.poll() is None:
        seen.update(pid for pid, _ in _in_session(proc.pid))
    stderr = proc.stderr.read().decode()
    assert proc.returncode in (0, 1), stderr
    assert len(seen) >= 2, "the admission child never ran: nothing was checked"
    assert _in_session(proc.pid) == []


@pytest.mark.parametrize("signum, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130), (signal.SIGHUP, 129)],
                         ids=["SIGTERM", "SIGINT", "SIGHUP"])
def test_a_signalled_check_reaps_its_child(tmp_path, signum, code):
    proc = _check_process(tmp_path)
    while len(_in_session(proc.pid)) < 2 and proc.poll() is None:   # until the child is forked
        pass
    proc.send_signal(signum)
    proc.wait()
    stderr = proc.stderr.read().decode()
    assert proc.returncode in (code, 0, 1), stderr   # 0/1: it had finished before the signal came
    assert "Traceback" not in stderr
    assert _in_session(proc.pid) == []


def test_preview_removes_its_temporary_folders(tmp_path):
    """The legacy stack's Training Operator overlay is written to a temporary folder for the
    program; none is left in $TMPDIR after `preview`."""
    pytest.importorskip("pulumi_policy")
    env = dict(os.environ, TMPDIR=str(tmp_path), PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-m", "modules.cli", "preview", "legacy"], cwd=ROOT, env=env,
                          capture_output=True, text=True)
    assert proc.returncode in (0, 1), proc.stderr[-800:]
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("trainstack-")] == []


def test_a_refused_pack_start_leaves_no_configuration_file(tmp_path, monkeypatch):
    import policies.driver as driver

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))

    def refused(*args, **kwargs):
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(driver.subprocess, "Popen", refused)
    with pytest.raises(BlockingIOError):
        driver.Pack("dev", "trainstack", {"a": "b"})
    assert list(tmp_path.iterdir()) == []


ESCAPES = "a\x1b]0;pwned\x07\x1b[2J\x9b31m\rb\u202e"


def test_control_characters_from_input_are_escaped_in_check_output(tmp_path):
    manifest = tmp_path / "m.yaml"
    manifest.write_text('apiVersion: v1\nkind: ConfigMap\nmetadata: {name: "bad\\e]0;pwned\\a\\e[2J", '
                        'namespace: training}\ndata: {password: hunter2hunter2}\n', encoding="utf-8")
    for fmt in ("text", "json", "sarif", "junit"):
        result = run("check", "--manifests", str(manifest), "--format", fmt)
        shown = result.out + result.err
        assert "\x1b" not in shown and "\x07" not in shown, (fmt, shown[-400:])
    assert "\\x1b]0;pwned\\x07" in run("check", "--manifests", str(manifest)).out


def test_one_function_escapes_what_a_terminal_acts_on():
    from modules.core.errors import one_line
    from modules.core.secrets import escape_controls, redact

    assert escape_controls(ESCAPES) == "a\\x1b]0;pwned\\x07\\x1b[2J\\x9b31m\\x0db\\u202e"
    assert escape_controls("plain\ttext\nnext line, ünïcode") == "plain\ttext\nnext line, ünïcode"
    assert one_line("x\ny\x1b") == "x\\ny\\x1b"
    assert one_line(redact("job\x1b[2J https://u:pw@host.example/x")) == "job\\x1b[2J https://<redacted>@host.example/x"
