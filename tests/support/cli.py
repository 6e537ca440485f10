"""Run the trainstack CLI in-process or as a subprocess, the way a user would."""
from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path

from modules.cli import main

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Result:
    code: int
    out: str
    err: str


def run(*args: str, cwd: Path | None = None) -> Result:
    """In-process: fast, same behaviour as the console script."""
    out, err = io.StringIO(), io.StringIO()
    old = os.getcwd()
    try:
        if cwd:
            os.chdir(cwd)
        with redirect_stdout(out), redirect_stderr(err):
            try:
                code = main(list(args))
            except SystemExit as exc:  # argparse usage errors
                code = exc.code if isinstance(exc.code, int) else 2
    finally:
        os.chdir(old)
    return Result(code, out.getvalue(), err.getvalue())


def run_process(*args: str, cwd: Path | None = None, timeout: float = 300) -> Result:
    """As a separate process: proves what a user sees (no traceback, exit code)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-m", "modules.cli", *args], cwd=cwd or ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)
    return Result(proc.returncode, proc.stdout, proc.stderr)


def run_processes(*commands: tuple[str, ...], timeout: float = 300) -> list[Result]:
    """Independent CLI processes side by side: the wall time of the slowest, not of all together."""
    with ThreadPoolExecutor(len(commands)) as pool:
        return list(pool.map(lambda args: run_process(*args, timeout=timeout), commands))


def _lower_priority() -> None:
    os.nice(10)


class Started:
    """A process started now and read later: output goes to files, so a run started early never
    blocks on a full pipe while nobody reads it. It runs in a process group of its own (with the
    processes it starts, e.g. torchrun's ranks), niced until a test waits for it."""

    def __init__(self, args: list[str], cwd: Path | None = None, env: dict | None = None):
        self.files = (tempfile.TemporaryFile("w+"), tempfile.TemporaryFile("w+"))
        # Niced: started early, it should take the core pytest leaves idle, not slow pytest down.
        self.proc = subprocess.Popen(args, cwd=cwd, env=env, stdout=self.files[0], stderr=self.files[1], text=True,
                                     preexec_fn=_lower_priority if hasattr(os, "nice") else None, process_group=0)

    def _raise_priority(self) -> None:
        """Back to pytest's own priority once a test waits for it: on a busy machine a niced process
        gets a sliver of a core while pytest sits idle waiting. Lowering a nice value needs root
        (CAP_SYS_NICE); without it the process stays niced."""
        try:
            os.setpriority(os.PRIO_PGRP, self.proc.pid, os.getpriority(os.PRIO_PROCESS, 0))
        except OSError:   # not permitted, or the group is gone (the process ended)
            pass

    def result(self, timeout: float) -> Result:
        if self.proc.poll() is None:
            self._raise_priority()
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.stop()
            raise
        out, err = (self._read(f) for f in self.files)
        return Result(self.proc.returncode, out, err)

    def stop(self) -> None:
        if self.proc.returncode is None:   # not reaped yet, so the group id is still this one's
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)   # the whole group: torchrun's ranks too
            except OSError:   # the group is gone
                pass
        self.proc.wait()
        for f in self.files:
            f.close()

    @staticmethod
    def _read(f) -> str:
        f.seek(0)
        text = f.read()
        f.close()
        return text


def start_process(*args: str, cwd: Path | None = None) -> Started:
    """``run_process`` started now, its ``result(timeout)`` read later."""
    return Started([sys.executable, "-m", "modules.cli", *args], cwd or ROOT, dict(os.environ, PYTHONPATH=str(ROOT)))
