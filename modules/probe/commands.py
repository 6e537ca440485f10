"""`trainstack probe` (run the fabric probe on this machine) and `trainstack recommend`."""
from __future__ import annotations

import argparse
import importlib.util
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

from modules.core.config import Project, load_stack
from modules.core.context import RenderContext
from modules.core.errors import InputError

from . import measure, recommend, results
from .results import RANGES

MEASURE_SCRIPT = Path(measure.__file__).resolve()
INSTALL_HINT = "pip install 'trainstack[probe]' (or pip install torch)"


def _sizes(text: str) -> str:
    """``--sizes`` checked here, before any rank starts: each size at most the largest ``bytes`` a
    probe record may hold (1 EiB), and no number longer than 30 digits."""
    if re.search(r"[0-9]{31}", text):
        raise argparse.ArgumentTypeError(f"expected sizes such as 1MiB or 1MiB-1GiB, got a number of more than "
                                         f"30 digits in {text[:60]!r}")
    try:
        sizes = measure.parse_sizes(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    if sizes and sizes[-1] > RANGES["bytes"]:
        raise argparse.ArgumentTypeError(f"expected sizes of at most 1EiB, got {text!r}")
    return text


def _collectives(text: str) -> str:
    try:
        return ",".join(measure._collectives(text))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


DEFAULT_SIZES = "1MiB-1GiB"
MAX_LOCAL_RANKS = 64   # each rank is a process importing torch; a node has 8 GPUs, a laptop a few cores
# Measured with 2 gloo ranks on a busy 2-core machine (4 default collectives): how long a sweep takes.
TIMINGS = "the default 1MiB-1GiB took about 220 s on a 2-core machine with gloo, 1MiB-64MiB about 50 s"


def _where_results_go(args: argparse.Namespace) -> list[str]:
    out = ["the table on stdout"]
    if args.json:
        out.append("JSON on stdout" if args.json == "-" else f"JSON in {Path(args.json).resolve()}")
    if args.prom:
        out.append(f"Prometheus text in {Path(args.prom).resolve()}")
    if args.pushgateway:
        out.append(f"the Pushgateway at {args.pushgateway}")
    return out


def cmd_probe(args: argparse.Namespace, project: Project | None) -> int:
    """Needs no project or stack: it measures this machine."""
    if importlib.util.find_spec("torch") is None:
        print(f"error: trainstack probe needs PyTorch, which is not installed: {INSTALL_HINT}", file=sys.stderr)
        return 2
    if not 2 <= args.nproc <= MAX_LOCAL_RANKS:
        raise InputError("trainstack probe", "--nproc", f"expected 2 to {MAX_LOCAL_RANKS} ranks (processes on this "
                          f"machine), got {args.nproc}")
    for flag in ("iters", "warmup"):   # checked here, not by every rank after torchrun has started them
        if getattr(args, flag) < 0:
            raise InputError("trainstack probe", f"--{flag}", f"expected a count >= 0, got {getattr(args, flag)}")
    # torchrun, as in the cluster: one process per rank on this machine, over loopback.
    command = [sys.executable, "-m", "torch.distributed.run", "--nnodes", "1", "--nproc-per-node", str(args.nproc),
               "--master-addr", "127.0.0.1", "--master-port", str(_free_port()), "--monitor-interval", "0.1",
               str(MEASURE_SCRIPT), "--backend", args.backend, "--collectives", args.collectives, "--sizes", args.sizes,
               "--iters", str(args.iters), "--warmup", str(args.warmup), "--tier", args.tier]
    for flag in ("json", "prom"):
        if getattr(args, flag) and getattr(args, flag) != "-":
            _check_writable(getattr(args, flag), f"--{flag}")   # before minutes of measuring, not after
    for flag in ("json", "prom", "pushgateway"):
        if getattr(args, flag):
            command += [f"--{flag}", getattr(args, flag)]
    env = dict(os.environ, MASTER_ADDR="127.0.0.1", GLOO_SOCKET_IFNAME="lo", OMP_NUM_THREADS="1")
    count = len(args.collectives.split(","))
    sizes = len(measure.parse_sizes(args.sizes))
    print(f"trainstack probe: {args.nproc} ranks ({args.backend}), {count} collectives x {sizes} sizes "
          f"({args.sizes}); {TIMINGS}. Results go to: {'; '.join(_where_results_go(args))}"
          + ("" if args.json or args.prom else " (nothing is written to disk; add --json FILE or --prom FILE)"),
          file=sys.stderr, flush=True)
    proc = subprocess.run(command, env=env, stderr=subprocess.PIPE, text=True, errors="replace")
    if proc.returncode == 0:
        sys.stderr.write(proc.stderr)
        written = [str(Path(f).resolve()) for f in (args.json, args.prom) if f and f != "-"]
        if written:
            print(f"trainstack probe: wrote {', '.join(written)}", file=sys.stderr)
        return 0
    # A failing rank ends torchrun with pages of its own traceback: show the rank's error in one line.
    cause = next((m.group(2) for m in map(_EXCEPTION_LINE.match, proc.stderr.splitlines())
                  if m and "ChildFailedError" not in m.group(2)), None)
    print(f"error: trainstack probe: a rank failed (exit {proc.returncode})"
          + (f": {cause}" if cause else "; rerun with fewer ranks or --backend gloo to see why"), file=sys.stderr)
    return 2


_EXCEPTION_LINE = re.compile(r"^(\[rank\d+\]:\s*)?((?:[A-Za-z_.]+(?:Error|Exception)|error): .*)$")


def _check_writable(path: str, flag: str) -> None:
    """Open the output file for appending now (removing it again if it is new): an unwritable path
    fails in a second, with one line."""
    existed = os.path.lexists(path)
    try:
        with open(path, "a", encoding="utf-8"):
            pass
    except OSError as exc:
        raise InputError("trainstack probe", flag, f"cannot write {path}: {exc.strerror or exc}") from None
    if not existed:
        os.unlink(path)


def cmd_recommend(args: argparse.Namespace, project: Project) -> int:
    from modules.fabric.model import build_fabric

    stack = load_stack(project, args.stack)
    fabric = build_fabric(RenderContext(stack))
    records = [r for path in args.probe for r in results.read(path)]
    cpu_notes = results.require_representative(records, args.accept_cpu, "recommend")
    result = recommend.recommend(stack, fabric, records, args.model_size, args.gpus, args.grad_dtype,
                                 args.gpu_memory_gb)
    result["notes"] = cpu_notes + result["notes"]
    sys.stdout.write(recommend.json_report(result) if args.format == "json" else recommend.text_report(result))
    return 0


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("probe", parents=[common], help="measure collective bandwidth with N local ranks (torchrun)",
                       description="Run the fabric probe on this machine: N ranks over loopback, the same code the "
                                   "cluster's probe Jobs run. busbw/algbw follow nccl-tests' formulas. Needs no "
                                   f"project or stack. Timing: {TIMINGS}. Results: a table on stdout; --json and "
                                   "--prom also write files (their paths are printed at the end).")
    p.set_defaults(needs_project=False)
    p.add_argument("--nproc", type=int, default=2, help="ranks to start (default 2)")
    p.add_argument("--backend", choices=("gloo", "nccl"), default="gloo", help="gloo (CPU, default) or nccl (GPUs)")
    p.add_argument("--collectives", type=_collectives, default=",".join(measure.DEFAULT_COLLECTIVES),
                   help=f"comma list of {', '.join(measure.COLLECTIVES)}")
    p.add_argument("--sizes", type=_sizes, default=DEFAULT_SIZES,
                   help=f"comma list (1MiB,64MiB) or power-of-two range (default {DEFAULT_SIZES}: several minutes "
                        "on CPUs; 1MiB-64MiB for a quick run)")
    p.add_argument("--iters", type=int, default=0,
                   help="timed iterations per size (default: about 1 s each, at most 20)")
    p.add_argument("--warmup", type=int, default=measure.DEFAULT_WARMUP, help="warm-up iterations per size")
    p.add_argument("--tier", default="node", help="tier label of the results (default node: one machine)")
    p.add_argument("--json", metavar="FILE", help="write the results as JSON")
    p.add_argument("--prom", metavar="FILE", help="write Prometheus exposition text")
    p.add_argument("--pushgateway", metavar="URL", help="also PUT the exposition to this Pushgateway")
    p.set_defaults(run=cmd_probe)

    p = sub.add_parser("recommend", parents=[common], help="fit probe results and recommend a layout and NCCL settings",
                       description="Fit per-tier latency and bandwidth to probe results, predict collective times on "
                                   "the stack's fabric and recommend TP/PP/DP and NCCL settings.")
    p.add_argument("stack", help="stack name (stacks/Pulumi.<stack>.yaml)")
    p.add_argument("--probe", action="append", required=True, metavar="RESULTS",
                   help="probe results: JSON from `trainstack probe --json`, or Prometheus text (repeatable)")
    p.add_argument("--accept-cpu", action="store_true",
                   help="use results measured with gloo on CPUs (not representative of GPU tiers; refused otherwise)")
    p.add_argument("--model-size", default="70B",
                   help="parameters with a unit: 350M, 7B, 70B, 1.5T or 7e10 (default 70B); a bare 70 is refused")
    p.add_argument("--gpus", type=int, help="GPUs of the job (default: the fabric's largest domain)")
    p.add_argument("--grad-dtype", choices=sorted(recommend.BYTES_PER), default="bf16",
                   help="gradient dtype (default bf16)")
    p.add_argument("--gpu-memory-gb", type=float, help="GPU memory, if the pool's gpuType is not known")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.set_defaults(run=cmd_recommend)
