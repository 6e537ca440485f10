"""Run CLI cases in this one process, each under a CPU-time limit; print one JSON result per case.

Started by the hostile tests as a subprocess with a memory rlimit, so a case that spins, eats
memory or crashes the interpreter fails its test instead of the test run. Input: a JSON file
listing cases ``{"name", "cwd", "args", "cpu_seconds", "hang_seconds"}``. The limit is CPU time
(``ITIMER_PROF``), which a busy machine does not use up; ``hang_seconds`` of wall time only
catches a case blocked without using CPU (a FIFO read), far beyond any slowdown by load.
"""
from __future__ import annotations

import io
import json
import os
import signal
import sys
import time
from contextlib import redirect_stderr, redirect_stdout


class CaseTimeout(BaseException):   # not an Exception: the CLI's handler must not swallow it
    pass


def _alarm(signum, frame):
    raise CaseTimeout()


def main() -> None:
    from modules.cli import main as cli
    from modules.core.config import load_project

    cases = json.load(open(sys.argv[1]))
    signal.signal(signal.SIGALRM, _alarm)
    signal.signal(signal.SIGPROF, _alarm)
    for case in cases:
        print(json.dumps({"start": case["name"]}), flush=True)   # names the culprit of a crash
        load_project.cache_clear()
        out, err = io.StringIO(), io.StringIO()
        os.chdir(case["cwd"])
        started = time.process_time()
        signal.setitimer(signal.ITIMER_PROF, case["cpu_seconds"])
        signal.setitimer(signal.ITIMER_REAL, case["hang_seconds"])
        try:
            with redirect_stdout(out), redirect_stderr(err):
                try:
                    code = cli(case["args"])
                except SystemExit as exc:   # argparse usage errors
                    code = exc.code if isinstance(exc.code, int) else 2
        except CaseTimeout:
            code = "timeout"
        except BaseException as exc:   # noqa: BLE001 - reported, not raised
            code = f"raised {exc.__class__.__name__}: {exc}"
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0)
            signal.setitimer(signal.ITIMER_REAL, 0)
        print(json.dumps({"name": case["name"], "code": code, "cpu_seconds": round(time.process_time() - started, 2),
                          "out": out.getvalue()[-2**20:], "err": err.getvalue()[-2000:]}), flush=True)


if __name__ == "__main__":
    main()
