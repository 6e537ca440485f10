"""One real probe run per test session (two gloo ranks on this machine, tiny sizes), shared by the
probe's own tests and by the format tests that feed its output to `simulate` and `recommend`.
The run starts as soon as the session knows it needs it (``start_early`` in those test modules), so
its ~10 s of CPU use the core that pytest leaves idle."""
from __future__ import annotations

import importlib.util

import pytest

from tests.support.observability import early_probe, start_probe


@pytest.fixture(scope="session")
def probe_run(tmp_path_factory):
    if importlib.util.find_spec("torch") is None:   # find_spec: no need to import torch in the test process
        pytest.skip("the probe needs torch: pip install 'trainstack[probe]'")
    started = early_probe()
    if started is None:
        folder = tmp_path_factory.mktemp("probe")
        started = (start_probe(folder), folder)
    run, folder = started
    return run.result(timeout=240), folder
