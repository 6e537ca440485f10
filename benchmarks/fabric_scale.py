"""Fabric scale benchmark: fat-trees of 1,024 to 65,536 nodes, end to end.

Each size is rendered from three sources of the same shape: the ``generated`` section of a stack,
and a topograph model file written once per size to a temporary folder, with node ranges per
block (``node[00001-00032]``, as topograph's own models are written) and with every node name
listed (the input YAML is then bigger than the output, and parsing it is part of the time).

For each size it times, in one process and the same run:

* end to end: fabric model build (importer + checks) + HyperNode render + YAML output of every
  HyperNode (one ``yamlio.dump`` per object, as ``trainstack render`` writes them);
* the serialization floor: dumping the same HyperNode objects with the same PyYAML C dumper.

It reports the best and median of several repeats, the ratio end-to-end / floor, microseconds
per node (linearity), peak traced memory (tracemalloc, measured in a separate pass so tracing does
not distort the times) and checks that the HyperNode count equals the number of non-empty
switches. Nothing is asserted about time; results go to docs/benchmarks.md.

    python benchmarks/fabric_scale.py [--sizes 1024,4096,16384,65536] [--repeats 5] [--markdown]
"""
from __future__ import annotations

import argparse
import datetime
import tempfile
import gc
import os
import platform
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from modules.core import yamlio  # noqa: E402
import yaml  # noqa: E402

from modules.core.config import build_stack, load_project  # noqa: E402
from modules.core.context import RenderContext  # noqa: E402
from modules.fabric import render as fabric_render  # noqa: E402
from modules.fabric.model import build_fabric  # noqa: E402

NODES_PER_LEAF = 32
LEAVES_PER_POD = 16


def stack_for(nodes: int):
    """A stack whose fabric is a three-tier fat-tree: 32 nodes per leaf, 16 leaves per spine."""
    pods = nodes // (NODES_PER_LEAF * LEAVES_PER_POD)
    config = {"trainstack:fabric": {"source": "generated", "generated": {
        "topology": "fat-tree", "pods": pods, "leavesPerPod": LEAVES_PER_POD,
        "nodesPerLeaf": NODES_PER_LEAF, "nodeName": "gpu-{n:05d}", "leafName": "leaf-{leaf:04d}",
        "spineName": "spine-{pod:03d}"}}}
    return build_stack(load_project(ROOT), f"bench-{nodes}", config, f"benchmark-{nodes}")


def topograph_stack(nodes: int, folder: Path, explicit: bool):
    """The same fat-tree as a topograph model: core -> spines -> leaves, one block per leaf."""
    pods = nodes // (NODES_PER_LEAF * LEAVES_PER_POD)
    switches = {"core": {"switches": [f"spine-{p:03d}" for p in range(1, pods + 1)]}}
    blocks = []
    first = 1
    for pod in range(1, pods + 1):
        leaves = [f"leaf-{pod:03d}-{i:02d}" for i in range(1, LEAVES_PER_POD + 1)]
        switches[f"spine-{pod:03d}"] = {"switches": leaves}
        for leaf in leaves:
            last = first + NODES_PER_LEAF - 1
            names = ([f"node{n:05d}" for n in range(first, last + 1)] if explicit
                     else [f"node[{first:05d}-{last:05d}]"])
            blocks.append({"switch": leaf, "nodes": names,
                           "annotations": {"accelerator.topology.test/domain": f"nvl-{leaf}"}})
            first = last + 1
    # A stack reads its model from under its project's stacks/ folder: a throwaway project in ``folder``.
    if not (folder / "Pulumi.yaml").exists():
        (folder / "Pulumi.yaml").write_bytes((ROOT / "Pulumi.yaml").read_bytes())
        (folder / "stacks").mkdir()
    name = f"model-{nodes}-{'explicit' if explicit else 'ranges'}.yaml"
    (folder / "stacks" / name).write_text(yaml.dump({"switches": switches, "blocks": blocks},
                                                    Dumper=yaml.CSafeDumper, sort_keys=False))
    config = {"trainstack:fabric": {"source": "topograph", "path": name}}
    return build_stack(load_project(folder), f"bench-{nodes}", config, f"benchmark-{nodes}")


def end_to_end(stack) -> tuple[list[str], object, list[dict]]:
    ctx = RenderContext(stack)
    fabric = build_fabric(ctx)
    ctx.fabric = fabric
    objs = [r.obj for r in fabric_render.render(ctx)]
    texts = [yamlio.dump(obj) for obj in objs]
    return texts, fabric, objs


def floor(objs: list[dict]) -> list[str]:
    return [yamlio.dump(obj) for obj in objs]


def timed(fn, *args) -> tuple[float, object]:
    gc.collect()
    start = time.perf_counter()
    result = fn(*args)
    return time.perf_counter() - start, result


def peak_bytes(fn, *args) -> int:
    gc.collect()
    tracemalloc.start()
    fn(*args)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def measure(nodes: int, repeats: int, stack) -> dict:
    e2e_times, floor_times = [], []
    for _ in range(repeats):
        seconds, (texts, fabric, objs) = timed(end_to_end, stack)
        e2e_times.append(seconds)
        seconds, floor_texts = timed(floor, objs)
        floor_times.append(seconds)
        assert floor_texts == texts
    expected = len(fabric.switches)   # the model holds exactly the switches with nodes below them
    non_empty = sum(1 for s in fabric.switches.values() if fabric.node_count(s.name))
    assert len(objs) == expected == non_empty, (len(objs), expected, non_empty)
    assert len(fabric.nodes) == nodes
    best, best_floor = min(e2e_times), min(floor_times)
    return {
        "nodes": nodes, "hypernodes": len(objs), "switches": non_empty,
        "e2e_best": best, "e2e_median": statistics.median(e2e_times),
        "floor_best": best_floor, "floor_median": statistics.median(floor_times),
        "ratio": best / best_floor, "us_per_node": best / nodes * 1e6,
        "peak_mib": peak_bytes(end_to_end, stack) / 2**20,
        "yaml_kib": sum(len(t) for t in texts) / 1024,
    }


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, {platform.system()}"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1024,4096,16384,65536")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--markdown", action="store_true", help="print a table for docs/benchmarks.md")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    end_to_end(stack_for(1024))   # warm imports and schema caches
    with tempfile.TemporaryDirectory() as tmp:
        sources = {"generated": stack_for,
                   "topograph, ranges": lambda n: topograph_stack(n, Path(tmp), explicit=False),
                   "topograph, every name": lambda n: topograph_stack(n, Path(tmp), explicit=True)}
        rows = [(source, measure(n, args.repeats, make(n))) for source, make in sources.items() for n in sizes]
    print(f"# {machine()}; {datetime.date.today().isoformat()}; best of {args.repeats}")
    if args.markdown:
        print("| source | nodes | HyperNodes (= non-empty switches) | end to end best / median (ms) "
              "| floor best / median (ms) | ratio | µs per node | peak traced memory (MiB) | YAML out (KiB) |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for source, r in rows:
            print(f"| {source} | {r['nodes']:,} | {r['hypernodes']:,} "
                  f"| {r['e2e_best'] * 1e3:.1f} / {r['e2e_median'] * 1e3:.1f} "
                  f"| {r['floor_best'] * 1e3:.1f} / {r['floor_median'] * 1e3:.1f} | {r['ratio']:.2f} "
                  f"| {r['us_per_node']:.2f} | {r['peak_mib']:.1f} | {r['yaml_kib']:,.0f} |")
    else:
        for source, r in rows:
            print(f"{source:<22} {r['nodes']:>6} nodes  {r['hypernodes']:>5} HyperNodes  end-to-end "
                  f"{r['e2e_best'] * 1e3:8.1f} ms (median {r['e2e_median'] * 1e3:7.1f})  floor "
                  f"{r['floor_best'] * 1e3:7.1f} ms  ratio {r['ratio']:.2f}  {r['us_per_node']:.2f} us/node  "
                  f"peak {r['peak_mib']:.1f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
