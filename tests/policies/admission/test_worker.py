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
