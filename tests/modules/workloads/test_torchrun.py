"""The platform workloads' commands really run: torchrun with the PET_* variables Trainer v2 sets.

Trainer's torch plugin hands torchrun its rendezvous only as PET_NNODES, PET_NPROC_PER_NODE,
PET_NODE_RANK, PET_MASTER_ADDR and PET_MASTER_PORT (Kubeflow Trainer v2.3's torch plugin). Here the same
variables start the rendered commands on this machine (CPU, gloo, two processes); on GPU nodes the
same code takes the NCCL path.
"""
import importlib.util
import os
import socket
import sys
from pathlib import Path

import pytest

from tests.support.cli import Started

from tests.support.stacks import of_kind, shipped_bundle

if importlib.util.find_spec("torch") is None:   # find_spec: the test process itself needs no torch
    pytest.skip("the workloads' commands need torch: pip install 'trainstack[probe]'", allow_module_level=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(command: list[str]) -> Started:
    assert command[0] == "torchrun"
    env = dict(os.environ, PET_NNODES="1", PET_NPROC_PER_NODE="2", PET_NODE_RANK="0",
               PET_MASTER_ADDR="127.0.0.1", PET_MASTER_PORT=str(free_port()), BURNIN_BYTES=str(1 << 20),
               OMP_NUM_THREADS="1", PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    # `python -m torch.distributed.run` is torchrun; `python3` in the command must be this interpreter.
    return Started([sys.executable, "-m", "torch.distributed.run", *command[1:]], env=env)


RUNS: dict[str, Started] = {}


def start_early() -> None:
    """tests/conftest.py calls this once the run is collected: the two runs spend ~10 s of CPU, mostly
    importing torch in six interpreters, on the core that pytest (one process) leaves idle."""
    if RUNS:
        return
    dev = [j for j in of_kind(shipped_bundle("dev"), "TrainJob") if j["metadata"]["name"] == "allreduce-smoke"][0]
    staging = [j for j in of_kind(shipped_bundle("staging"), "TrainJob")][0]
    RUNS["dev"] = start(dev["spec"]["trainer"]["command"])
    RUNS["staging"] = start(staging["spec"]["trainer"]["command"])


def stop_early() -> None:
    """At the end of the session: runs no test waited for (deselected, -x) do not outlive it."""
    for run in RUNS.values():
        run.stop()
    RUNS.clear()


def test_trainjob_commands_run_under_torchrun():
    start_early()      # a no-op when the session started them
    results = [RUNS.pop("dev").result(120), RUNS.pop("staging").result(120)]
    for result in results:
        assert result.code == 0, result.err[-2000:]
    assert "all_reduce ok: world=2 backend=gloo" in results[0].out
    assert "over 2 ranks: busbw" in results[1].out
