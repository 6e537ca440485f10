"""The speed figures as ratios of CPU times, which hold when the machine is busy (absolute and
wall-clock times do not).

    python benchmarks/ratios.py            # measure at a small size, print JSON
    python benchmarks/ratios.py --record   # measure and store as the recorded baseline

* ``render_write_over_floor``: render + serialize + write of a 1,024-node prod-like stack over
  dumping the same objects with the C dumper (benchmarks/pipeline_scale.py; best of its warm passes);
* ``check_over_floor``: all policy rules over the same objects, over the same floor;
* ``aware_over_oblivious``: topology-aware placement jobs/s over the topology-oblivious first fit
  (benchmarks/simulate_throughput.py's workload on a 1,024-node fat-tree; best of three);
* ``check_process_over_imports``: ``trainstack check prod`` as a whole process over
  ``python -c "import yaml, jsonschema"`` (best of five each, taking turns, bytecode cached).

tests/benchmarks/test_ratios.py fails when a ratio regresses by more than half against
benchmarks/ratios.json; never on a wall-clock time.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RECORDED = ROOT / "benchmarks" / "ratios.json"
LOWER_IS_BETTER = ("render_write_over_floor", "check_over_floor", "check_process_over_imports")
HIGHER_IS_BETTER = ("aware_over_oblivious",)
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))


def _with_upstream_rules(env) -> None:
    """Upstream's admission rules and CRDs from ../shared, as `make demo` and the tests read them."""
    shared = ROOT.parent / "shared"
    if (shared / "admission").is_dir():
        env.setdefault("TRAINSTACK_ADMISSION_DIR", str(shared / "admission"))
        env.setdefault("TRAINSTACK_CRD_DIR", str(shared / "crds"))


def pipeline(nodes: int = 1024) -> dict[str, float]:
    from pipeline_scale import measure

    _with_upstream_rules(os.environ)   # as the test suite checks: upstream-admission and crd-schema on
    memory = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    row = measure(nodes, preview=False, clock=time.process_time, tmp_root=memory)
    return {"render_write_over_floor": row["render_write_s"] / row["floor_s"],
            "check_over_floor": row["check_s"] / row["floor_s"]}


def placement(pods: int = 4, leaves: int = 8, nodes_per_leaf: int = 32, jobs: int = 300, repeat: int = 3
              ) -> dict[str, float]:
    from modules.simulate.engine import resource_names
    from modules.simulate.scheduler import SchedulerSettings
    from simulate_throughput import fabric_of, makers, time_strategy, workload

    fabric, _ = fabric_of(pods, leaves, nodes_per_leaf)
    work = workload(1, jobs, nodes_per_leaf)
    aware, oblivious, _ = makers(fabric, resource_names(fabric, work, {}), SchedulerSettings())
    best_aware = min(time_strategy(aware, work, time.process_time)[0] for _ in range(repeat))
    best_oblivious = min(time_strategy(oblivious, work, time.process_time)[0] for _ in range(repeat))
    return {"aware_over_oblivious": best_oblivious / best_aware}   # jobs/s ratio = inverse time ratio


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _best_processes(cmds: list[list[str]], env: dict, repeat: int) -> list[float]:
    """Least CPU time (user + system, the process and its children) of each command, the commands
    taking turns (run by run): CPU time, which other processes on a busy machine do not inflate."""
    best = [float("inf")] * len(cmds)
    for _ in range(repeat):
        for i, cmd in enumerate(cmds):
            start = _children_cpu()
            subprocess.run(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
            best[i] = min(best[i], _children_cpu() - start)
    return best


def check_process(repeat: int = 5) -> dict[str, float]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}   # as a user's machine
    _with_upstream_rules(env)
    check = [sys.executable, "-m", "modules.cli", "check", "prod"]
    base = [sys.executable, "-c", "import yaml, jsonschema"]
    _best_processes([check], env, 1)   # the first run writes the bytecode and the caches
    check_s, base_s = _best_processes([check, base], env, repeat)
    return {"check_process_over_imports": check_s / base_s}


def measure_all() -> dict[str, float]:
    return {**pipeline(), **placement(), **check_process()}


def regressions(now: dict[str, float], recorded: dict[str, float], margin: float = 0.5) -> list[str]:
    """The ratios that got worse than recorded by more than ``margin`` (0.5: by half)."""
    out = []
    for key in LOWER_IS_BETTER:
        if key in recorded and key in now and now[key] > recorded[key] * (1 + margin):
            out.append(f"{key}: {now[key]:.2f}, recorded {recorded[key]:.2f} (lower is better)")
    for key in HIGHER_IS_BETTER:
        if key in recorded and key in now and now[key] < recorded[key] / (1 + margin):
            out.append(f"{key}: {now[key]:.2f}, recorded {recorded[key]:.2f} (higher is better)")
    return out


def best_of(measures: list[dict[str, float]]) -> dict[str, float]:
    """Each ratio at its best over several measurements: a busy moment costs one of them, while a
    real regression shows in all."""
    out: dict[str, float] = {}
    for now in measures:
        for key, value in now.items():
            better = max if key in HIGHER_IS_BETTER else min
            out[key] = better(out[key], value) if key in out else value
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--record", action="store_true", help=f"store the figures in {RECORDED.name}")
    args = parser.parse_args()
    now = {key: round(value, 3) for key, value in measure_all().items()}
    print(json.dumps(now, indent=2))
    if args.record:
        RECORDED.write_text(json.dumps(now, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
