"""One real probe run per test session (two gloo ranks on this machine, tiny sizes), shared by the
probe's own tests and by the format tests that feed its output to `simulate` and `recommend`."""
from __future__ import annotations

import importlib.util

import pytest

from tests.support.cli import run_process


@pytest.fixture(scope="session")
def probe_run(tmp_path_factory):
    if importlib.util.find_spec("torch") is None:   # find_spec: no need to import torch in the test process
        pytest.skip("the probe needs torch: pip install 'trainstack[probe]'")
    folder = tmp_path_factory.mktemp("probe")
    result = run_process("probe", "--nproc", "2", "--backend", "gloo", "--sizes", "1MiB,4MiB", "--iters", "3",
                         "--warmup", "1", "--collectives", "all_reduce,all_gather,reduce_scatter,sendrecv,broadcast",
                         "--json", str(folder / "out.json"), "--prom", str(folder / "out.prom"), timeout=240)
    return result, folder
