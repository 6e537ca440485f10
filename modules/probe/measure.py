"""The fabric probe: collective bandwidth with torch.distributed, measured as nccl-tests measures it.

Run it under torchrun: one process per GPU with NCCL, or CPU processes with gloo. It sweeps
all_reduce, all_gather, reduce_scatter, sendrecv (and broadcast) over message sizes and reports,
per collective and size, the time per operation, algbw = S / t and busbw = algbw x factor, with
S and the factor as nccl-tests defines them (reference/nccl.md section 3):

    collective       S (bytes counted)               busbw factor
    all_reduce       per-rank buffer                 2(n-1)/n
    all_gather       gathered total (n x per-rank)   (n-1)/n
    reduce_scatter   total input (n x per-rank out)  (n-1)/n
    broadcast        buffer                          1
    sendrecv         buffer sent by each rank        1

Timing follows nccl-tests: a correctness check, warm-up iterations, a barrier, then back-to-back
iterations without per-iteration synchronisation (CUDA is synchronised before reading the clock),
with the iteration count chosen on rank 0 and broadcast so every rank runs the same number of
collectives. The time per operation is combined across ranks with MAX (the slowest rank bounds
the collective; nccl-tests' default ``-a 1`` is the mean, recorded as ``time_mean_s``).

Standard library and torch only: trainstack ships this very file in a ConfigMap, so the same code
runs on a laptop (``trainstack probe``) and in the cluster.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
import urllib.parse
import urllib.request

COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter", "sendrecv", "broadcast")
DEFAULT_COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter", "sendrecv")
DTYPE_BYTES = 4                      # float32, as nccl-tests' default
MIB = 1 << 20
DEFAULT_SIZES = tuple(1 << k for k in range(20, 31))   # 1 MiB .. 1 GiB, powers of two
DEFAULT_WARMUP = 5
DEFAULT_MAX_ITERS = 20               # nccl-tests' default -n
DEFAULT_TIME_BUDGET_S = 1.0          # auto iterations: about this long per size
METRIC_PREFIX = "trainstack_probe"
PUSH_JOB = "trainstack-probe"

_UNITS = {"": 1, "b": 1, "k": 1 << 10, "kib": 1 << 10, "kb": 1 << 10, "m": 1 << 20, "mib": 1 << 20,
          "mb": 1 << 20, "g": 1 << 30, "gib": 1 << 30, "gb": 1 << 30}
_SIZE = re.compile(r"^\s*([0-9]+)\s*([A-Za-z]*)\s*$")


# --- definitions (pure; the recommender and the tests use them too) ------------------------------

def busbw_factor(collective: str, n: int) -> float:
    """busbw / algbw for ``n`` ranks (nccl-tests, doc/PERFORMANCE.md)."""
    if collective == "all_reduce":
        return 2 * (n - 1) / n
    if collective in ("all_gather", "reduce_scatter"):
        return (n - 1) / n
    if collective in ("broadcast", "sendrecv"):
        return 1.0
    raise ValueError(f"unknown collective {collective!r}")


def parse_size(text: str) -> int:
    """``1MiB`` -> 1048576. K/M/G are binary (1024-based), as in nccl-tests' -b/-e."""
    match = _SIZE.match(str(text))
    unit = match.group(2).lower() if match else None
    if not match or unit not in _UNITS:
        raise ValueError(f"expected a size such as 1MiB, 64MiB or 1GiB, got {text!r}")
    value = int(match.group(1)) * _UNITS[unit]
    if value <= 0:
        raise ValueError(f"expected a positive size, got {text!r}")
    return value


def parse_sizes(text: str) -> list[int]:
    """``1MiB,64MiB`` -> a list; ``1MiB-1GiB`` -> every power of two in between."""
    out: list[int] = []
    for part in str(text).split(","):
        if "-" in part:
            low, high = (parse_size(p) for p in part.split("-", 1))
            if high < low:
                raise ValueError(f"expected a range from small to large, got {part!r}")
            size = low
            while size <= high:
                out.append(size)
                size *= 2
        else:
            out.append(parse_size(part))
    return sorted(set(out))


def format_size(nbytes: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if nbytes >= scale and nbytes % scale == 0:
            return f"{nbytes // scale}{unit}"
    return f"{nbytes}B"


def counted_bytes(collective: str, nbytes: int, n: int) -> int:
    """S as nccl-tests counts it, rounded down so every rank holds whole float32 elements."""
    unit = DTYPE_BYTES * (n if collective in ("all_gather", "reduce_scatter") else 1)
    return max(unit, nbytes // unit * unit)


def record(collective: str, nbytes: int, n: int, time_max: float, time_mean: float, **extra) -> dict:
    """One result: algbw = S / t, busbw = algbw x factor (GB = 1e9 bytes, as nccl-tests)."""
    algbw = nbytes / time_max / 1e9
    return {"collective": collective, "bytes": nbytes, "world_size": n, "time_s": time_max,
            "algbw_gbps": algbw, "busbw_gbps": algbw * busbw_factor(collective, n),
            "time_mean_s": time_mean, **extra}


# --- Prometheus exposition and the Pushgateway ---------------------------------------------------

def _labels(**labels: object) -> str:
    def escape(value: object) -> str:
        return str(value).replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')
    return "{" + ",".join(f'{k}="{escape(v)}"' for k, v in labels.items()) + "}"


def exposition(records: list[dict], tier: str, timestamp: float, backend: str) -> str:
    """Gauges per collective, size and tier in the Prometheus text format (version 0.0.4)."""
    gauges = (
        ("busbw_gbps", "busbw_gbps",
         "Bus bandwidth (GB/s, nccl-tests formulas) measured by the trainstack fabric probe."),
        ("algbw_gbps", "algbw_gbps", "Algorithm bandwidth S/t (GB/s) measured by the trainstack fabric probe."),
        ("time_seconds", "time_s",
         "Time per collective operation (max over ranks) measured by the trainstack fabric probe."),
    )
    lines: list[str] = []
    for name, field, help_text in gauges:
        lines += [f"# HELP {METRIC_PREFIX}_{name} {help_text}", f"# TYPE {METRIC_PREFIX}_{name} gauge"]
        for r in records:
            labels = _labels(tier=tier, collective=r["collective"], bytes=r["bytes"])
            lines.append(f"{METRIC_PREFIX}_{name}{labels} {r[field]!r}")
    world = records[0]["world_size"] if records else 0
    nodes = records[0].get("nodes", 1) if records else 0
    lines += [
        f"# HELP {METRIC_PREFIX}_world_size Ranks in the last probe run of this tier.",
        f"# TYPE {METRIC_PREFIX}_world_size gauge",
        f"{METRIC_PREFIX}_world_size{_labels(tier=tier)} {world}",
        f"# HELP {METRIC_PREFIX}_nodes Nodes in the last probe run of this tier.",
        f"# TYPE {METRIC_PREFIX}_nodes gauge",
        f"{METRIC_PREFIX}_nodes{_labels(tier=tier)} {nodes}",
        f"# HELP {METRIC_PREFIX}_last_success_timestamp_seconds When the last probe run of this tier finished.",
        f"# TYPE {METRIC_PREFIX}_last_success_timestamp_seconds gauge",
        f"{METRIC_PREFIX}_last_success_timestamp_seconds{_labels(tier=tier)} {timestamp!r}",
        f"# HELP {METRIC_PREFIX}_info The backend of the last probe run of this tier.",
        f"# TYPE {METRIC_PREFIX}_info gauge",
        f"{METRIC_PREFIX}_info{_labels(tier=tier, backend=backend)} 1",
    ]
    return "\n".join(lines) + "\n"


def push(url: str, text: str, tier: str, job: str = PUSH_JOB, timeout: float = 30.0) -> int:
    """PUT the exposition to a Pushgateway, replacing the group {job, tier}; returns the HTTP status."""
    path = "/metrics/job/" + urllib.parse.quote(job, safe="") + "/tier/" + urllib.parse.quote(tier, safe="")
    request = urllib.request.Request(url.rstrip("/") + path, data=text.encode(), method="PUT",
                                     headers={"Content-Type": "text/plain; version=0.0.4; charset=utf-8"})
    with urllib.request.urlopen(request, timeout=timeout) as response:   # raises on 4xx/5xx
        return response.status


# --- the measurement (needs torch) ---------------------------------------------------------------

class Probe:
    """One rank's view: its process group, device and buffers."""

    def __init__(self, backend: str):
        import torch
        import torch.distributed as dist

        self.torch, self.dist, self.backend = torch, dist, backend
        self.local_rank = int(os.environ.get("LOCAL_RANK", "0"))
        if backend == "nccl":
            self.device = torch.device("cuda", self.local_rank)
            torch.cuda.set_device(self.device)
            dist.init_process_group("nccl", device_id=self.device)   # eager communicator
        else:
            self.device = torch.device("cpu")
            torch.set_num_threads(1)   # ranks share cores; measure the transport, not contention
            dist.init_process_group("gloo")
        self.rank, self.n = dist.get_rank(), dist.get_world_size()
        self.local_n = int(os.environ.get("LOCAL_WORLD_SIZE", str(self.n)))

    def sync(self) -> None:
        """GPU collectives only enqueue work: wait for it before reading the clock."""
        if self.device.type == "cuda":
            self.torch.cuda.synchronize(self.device)

    def _full(self, count: int, value: float):
        return self.torch.full((count,), value, dtype=self.torch.float32, device=self.device)

    def operation(self, collective: str, nbytes: int):
        """Buffers for one collective and size; returns (run one op, check the result once)."""
        torch, dist, n, rank = self.torch, self.dist, self.n, self.rank
        count = nbytes // DTYPE_BYTES
        if collective == "all_reduce":
            buf = self._full(count, rank + 1.0)
            return (lambda: dist.all_reduce(buf)), (lambda: bool(torch.all(buf == n * (n + 1) / 2))), [buf]
        if collective == "all_gather":
            part = count // n
            send, out = self._full(part, rank + 1.0), self._full(part * n, 0.0)
            ranks = torch.arange(1, n + 1, dtype=torch.float32, device=self.device).view(n, 1)
            gather = getattr(dist, "all_gather_single", None) or dist.all_gather_into_tensor   # older torch: old name
            return (lambda: gather(out, send)), \
                (lambda: bool(torch.all(out.view(n, part) == ranks))), [send, out]
        if collective == "reduce_scatter":
            part = count // n
            inp, out = self._full(part * n, rank + 1.0), self._full(part, 0.0)
            scatter = getattr(dist, "reduce_scatter_single", None) or dist.reduce_scatter_tensor
            return (lambda: scatter(out, inp)), \
                (lambda: bool(torch.all(out == n * (n + 1) / 2))), [inp, out]
        if collective == "broadcast":
            buf = self._full(count, rank + 1.0)
            return (lambda: dist.broadcast(buf, 0)), (lambda: bool(torch.all(buf == 1.0))), [buf]
        if collective == "sendrecv":   # every rank sends to the next and receives from the previous
            send, recv = self._full(count, rank + 1.0), self._full(count, 0.0)
            peer_to, peer_from = (rank + 1) % n, (rank - 1) % n

            def run():
                ops = [dist.P2POp(dist.isend, send, peer_to), dist.P2POp(dist.irecv, recv, peer_from)]
                for work in dist.batch_isend_irecv(ops):
                    work.wait()
            return run, (lambda: bool(torch.all(recv == peer_from + 1.0))), [send, recv]
        raise ValueError(f"unknown collective {collective!r}")

    def _agree(self, value: float, op) -> float:
        t = self.torch.tensor([value], dtype=self.torch.float64, device=self.device)
        self.dist.all_reduce(t, op=op)
        return float(t.item())

    def measure(self, collective: str, nbytes: int, iters: int | None, warmup: int,
                budget_s: float, max_iters: int) -> dict:
        run, check, buffers = self.operation(collective, nbytes)
        run()
        self.sync()
        ok = self._agree(1.0 if check() else 0.0, self.dist.ReduceOp.MIN)
        if ok != 1.0:
            raise RuntimeError(f"{collective} {format_size(nbytes)}: wrong result on at least one rank")
        for buf in buffers:   # repeated in-place sums of non-zero data would overflow to inf
            buf.zero_()
        start = time.perf_counter()
        for _ in range(warmup):
            run()
        self.sync()
        per_op = (time.perf_counter() - start) / max(warmup, 1)
        # Rank 0 chooses the count and broadcasts it: ranks that ran different numbers of
        # collectives would deadlock until the process-group timeout.
        chosen = iters if iters else max(1, min(max_iters, int(budget_s / max(per_op, 1e-9))))
        count = self.torch.tensor([chosen if self.rank == 0 else 0], dtype=self.torch.int64, device=self.device)
        self.dist.broadcast(count, 0)
        count = int(count.item())
        self.sync()
        self.dist.barrier()
        self.sync()
        start = time.perf_counter()
        for _ in range(count):
            run()
        self.sync()
        elapsed = (time.perf_counter() - start) / count
        time_max = self._agree(elapsed, self.dist.ReduceOp.MAX)
        time_mean = self._agree(elapsed, self.dist.ReduceOp.SUM) / self.n
        return record(collective, nbytes, self.n, time_max, time_mean, iters=count,
                      nodes=max(1, self.n // max(self.local_n, 1)), ranks_per_node=self.local_n)

    def close(self) -> None:
        self.dist.barrier()
        self.dist.destroy_process_group()


# The results document's version (this file ships alone, so results.py, the reader, checks they match).
RESULTS_FORMAT = "trainstack.probe/v1"


def sweep(probe: Probe, collectives: list[str], sizes: list[int], iters: int | None, warmup: int,
          budget_s: float, max_iters: int, tier: str, report=None) -> list[dict]:
    records = []
    for collective in collectives:
        for size in sizes:
            nbytes = counted_bytes(collective, size, probe.n)
            result = probe.measure(collective, nbytes, iters, warmup, budget_s, max_iters)
            result.update(backend=probe.backend, tier=tier, dtype="float32")
            records.append(result)
            if report:
                report(result)
    return records


# --- command line (what torchrun runs) -----------------------------------------------------------

def table_line(r: dict | None) -> str:
    if r is None:
        return (f"{'collective':<15}{'size':>9}{'ranks':>7}{'iters':>7}"
                f"{'time (ms)':>12}{'algbw GB/s':>12}{'busbw GB/s':>12}")
    return (f"{r['collective']:<15}{format_size(r['bytes']):>9}{r['world_size']:>7}{r['iters']:>7}"
            f"{r['time_s'] * 1e3:>12.3f}{r['algbw_gbps']:>12.3f}{r['busbw_gbps']:>12.3f}")


def arguments(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description="Collective bandwidth probe (run under torchrun).")
    p.add_argument("--backend", choices=("nccl", "gloo"), help="default: nccl when CUDA is available, else gloo")
    p.add_argument("--collectives", default=",".join(DEFAULT_COLLECTIVES),
                   help=f"comma list of {', '.join(COLLECTIVES)}")
    p.add_argument("--sizes", default="1MiB-1GiB", help="comma list (1MiB,64MiB) or a power-of-two range (1MiB-1GiB)")
    p.add_argument("--iters", type=int, default=0,
                   help="timed iterations per size (0: about --time-budget each, at most 20)")
    p.add_argument("--warmup", type=int, default=DEFAULT_WARMUP)
    p.add_argument("--time-budget", type=float, default=DEFAULT_TIME_BUDGET_S)
    p.add_argument("--tier", default="node", help="fabric tier the ranks span (label on every result)")
    p.add_argument("--json", metavar="FILE", help="write the results as JSON (- for stdout)")
    p.add_argument("--prom", metavar="FILE", help="write Prometheus exposition text")
    p.add_argument("--pushgateway", metavar="URL", help="PUT the exposition to this Pushgateway")
    args = p.parse_args(argv)
    try:
        args.collectives = _collectives(args.collectives)
        args.sizes = parse_sizes(args.sizes)
    except ValueError as exc:
        p.error(str(exc))
    if args.iters < 0 or args.warmup < 0:
        p.error("--iters and --warmup must be >= 0")
    return args


def _collectives(text: str) -> list[str]:
    names = [c.strip() for c in text.split(",") if c.strip()]
    unknown = [c for c in names if c not in COLLECTIVES]
    if unknown or not names:
        raise ValueError(f"expected collectives from {', '.join(COLLECTIVES)}, got {text!r}")
    return list(dict.fromkeys(names))


_USERINFO = re.compile(r"://[^/@\s]*@")


def main(argv: list[str] | None = None) -> int:
    args = arguments(argv)
    import torch

    backend = args.backend or ("nccl" if torch.cuda.is_available() else "gloo")
    if backend == "nccl" and not torch.cuda.is_available():
        print("error: --backend nccl needs CUDA GPUs and a CUDA build of torch; use --backend gloo on CPUs",
              file=sys.stderr)
        return 2
    probe = Probe(backend)
    if probe.n < 2:
        print("error: the probe needs at least 2 ranks", file=sys.stderr)
        return 2
    out = sys.stderr if args.json == "-" else sys.stdout
    lead = probe.rank == 0
    if lead:
        print(f"# trainstack probe: backend {backend}, {probe.n} ranks on {max(1, probe.n // probe.local_n)} "
              f"node(s), tier {args.tier}, torch {torch.__version__}; time = max over ranks", file=out)
        print(table_line(None), file=out, flush=True)
    report = (lambda r: print(table_line(r), file=out, flush=True)) if lead else None
    records = sweep(probe, args.collectives, args.sizes, args.iters or None, args.warmup, args.time_budget,
                    DEFAULT_MAX_ITERS, args.tier, report)
    probe.close()
    if not lead:
        return 0
    finished = time.time()
    document = {"format": RESULTS_FORMAT, "probe": {"tier": args.tier, "backend": backend, "world_size": probe.n,
                          "nodes": max(1, probe.n // probe.local_n), "torch": torch.__version__,
                          "finished_at": finished, "time_combined_over_ranks": "max"},
                "results": records}
    if args.json == "-":
        json.dump(document, sys.stdout, indent=1)
        sys.stdout.write("\n")
    elif args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(document, f, indent=1)
            f.write("\n")
    text = exposition(records, args.tier, finished, backend)
    if args.prom:
        with open(args.prom, "w", encoding="utf-8") as f:
            f.write(text)
    if args.pushgateway:
        shown = _USERINFO.sub("://<redacted>@", args.pushgateway)   # never log credentials
        try:
            push(args.pushgateway, text, args.tier)
        except OSError as exc:   # URLError and HTTPError are OSErrors
            reason = _USERINFO.sub("://<redacted>@", str(exc))
            print(f"error: pushing to {shown} failed: {reason}", file=sys.stderr)
            return 1
        print(f"# pushed {len(records)} results to {shown} (job {PUSH_JOB}, tier {args.tier})", file=out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
