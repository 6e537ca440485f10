"""The platform workloads' commands really run: torchrun with the PET_* variables Trainer v2 sets.

Trainer's torch plugin hands torchrun its rendezvous only as PET_NNODES, PET_NPROC_PER_NODE,
PET_NODE_RANK, PET_MASTER_ADDR and PET_MASTER_PORT (reference/kubeflow.md §3.4). Here the same
variables start the rendered commands on this machine (CPU, gloo, two processes); on GPU nodes the
same code takes the NCCL path.
"""
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from .support import of_kind, shipped_bundle

pytest.importorskip("torch")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(command: list[str]) -> subprocess.Popen:
    assert command[0] == "torchrun"
    env = dict(os.environ, PET_NNODES="1", PET_NPROC_PER_NODE="2", PET_NODE_RANK="0",
               PET_MASTER_ADDR="127.0.0.1", PET_MASTER_PORT=str(free_port()), BURNIN_BYTES=str(1 << 20),
               OMP_NUM_THREADS="1", PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    # `python -m torch.distributed.run` is torchrun; `python3` in the command must be this interpreter.
    return subprocess.Popen([sys.executable, "-m", "torch.distributed.run", *command[1:]], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_trainjob_commands_run_under_torchrun():
    dev = [j for j in of_kind(shipped_bundle("dev"), "TrainJob") if j["metadata"]["name"] == "allreduce-smoke"][0]
    staging = [j for j in of_kind(shipped_bundle("staging"), "TrainJob")][0]
    procs = [start(dev["spec"]["trainer"]["command"]), start(staging["spec"]["trainer"]["command"])]
    outputs = [p.communicate(timeout=120) for p in procs]
    for proc, (out, err) in zip(procs, outputs):
        assert proc.returncode == 0, err[-2000:]
    assert "all_reduce ok: world=2 backend=gloo" in outputs[0][0]
    assert "over 2 ranks: busbw" in outputs[1][0]
