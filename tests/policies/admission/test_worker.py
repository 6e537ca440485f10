"""The evaluating children end with their parent: a child kept no write end of any request pipe
(its own parent's or another worker's), so when the parent exits every child reads EOF and exits.
Before, two workers' children kept each other waiting forever, outliving the test run."""
from __future__ import annotations

import os
import subprocess
import sys
import time

from tests.support.cli import ROOT

SCRIPT = """
from policies.admission.worker import Worker
first, second = Worker(lambda request: [request]), Worker(lambda request: [request * 2])
assert first.evaluate(1) == [1] and second.evaluate(2) == [4]
print(first.pid, second.pid)
"""


def _alive(pid: int) -> bool:
    """Running or sleeping; an exited child not yet reaped (a zombie) counts as gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in "ZX"
    except (OSError, IndexError):
        return False


def test_children_end_with_their_parent():
    out = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, capture_output=True, text=True, timeout=60,
                         env=dict(os.environ, PYTHONPATH=str(ROOT)), check=True).stdout
    pids = [int(p) for p in out.split()]
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(_alive(pid) for pid in pids):
        time.sleep(0.05)
    assert not [pid for pid in pids if _alive(pid)]


AHEAD = """
import os, signal
from policies.admission import worker

compiled = []
def steps():
    for source in ("a", "b"):
        worker.note(worker.COMPILE, source)
        compiled.append(source)
        yield

w = worker.Worker(lambda request: [request, compiled[:]], prime=steps)
w.start()
first, second = ["one"], ["two"]
w.send(first)
assert w.evaluate(first) == [["one"], ["a", "b"]]   # primed before the first request, answered once
w.send(first)
assert w.evaluate(second) == [["two"], ["a", "b"]]  # the answer sent ahead for another request is dropped
assert w.evaluate(first) == [["one"], ["a", "b"]]
big = ["x" * (4 << 20)]   # more than the pipe holds: not sent ahead (that would wait on the child)
w.send(big)
assert w.evaluate(big) == [big, ["a", "b"]]

def dying():
    worker.note(worker.COMPILE, "boom")
    os.kill(os.getpid(), signal.SIGSEGV)
    yield

d = worker.Worker(lambda request: [request], prime=dying)
d.start()
d.send(first)
assert d.evaluate(first) == [["one"]]   # restarted without priming; the request answered
print(worker.over_budget["C:boom"])
"""


def test_priming_and_requests_sent_ahead():
    """A worker started ahead compiles before its first request; a request sent ahead is answered by
    ``evaluate`` of the same request (one larger than the pipe holds is sent by ``evaluate``); a child
    that dies while priming costs no request's answer, and the expression it was compiling is
    remembered as one that crashed the library."""
    out = subprocess.run([sys.executable, "-c", AHEAD], cwd=ROOT, capture_output=True, text=True, timeout=60,
                         env=dict(os.environ, PYTHONPATH=str(ROOT)), check=True).stdout
    assert "crashed the CEL library (signal 11)" in out
