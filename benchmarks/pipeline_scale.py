"""Whole-pipeline scale: render, write, check (and preview) a prod-like stack at 1k-64k nodes.

Each size runs in a fresh subprocess (clean peak RSS). The stack is stacks/Pulumi.prod.yaml with
its fabric replaced by a generated three-tier fat-tree of the given size (32 nodes per leaf), so
every module renders what it renders for prod. The serialization floor is dumping the same
objects with PyYAML's C dumper, a dumper per object, measured in the same process; the ratio is
render+write over it. ``bundle_files`` dumps its objects from one dumper (``yamlio.dump_each``,
as ``dump_all`` writes a stream), which saves each dumper's set-up: the last column is the ratio
over that one-dumper floor of the same objects, the stricter of the two. With --preview, the SDK floor is
the bare Pulumi SDK under mocks registering the same objects (``sdk_floor``), after the preview.

    python benchmarks/pipeline_scale.py                # 1k, 4k, 16k, 64k nodes
    python benchmarks/pipeline_scale.py --nodes 16384 --preview
"""
from __future__ import annotations

import argparse
import json
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REPEATS = 5   # best of the warm passes; the first (cold) pass is reported on its own
PREVIEW_REPEATS = 3   # preview: the first run (cold: the SDK's imports) and the best of the others
sys.path.insert(0, str(ROOT))


def make_project(folder: Path, nodes: int) -> None:
    import yaml

    shutil.copy(ROOT / "Pulumi.yaml", folder / "Pulumi.yaml")
    (folder / "stacks").mkdir()
    data = yaml.safe_load((ROOT / "stacks" / "Pulumi.prod.yaml").read_text())
    leaves = nodes // 32
    pods = max(1, leaves // 32)
    fabric = dict(data["config"]["trainstack:fabric"])
    fabric.pop("path", None)
    fabric.update(source="generated", generated={"topology": "fat-tree", "pods": pods,
                                                  "leavesPerPod": leaves // pods, "nodesPerLeaf": 32})
    data["config"]["trainstack:fabric"] = fabric
    (folder / "stacks" / "Pulumi.bench.yaml").write_text(yaml.safe_dump(data, sort_keys=False))


def sdk_floor(objects: list[dict], options: bool = False) -> float:
    """Seconds the bare Pulumi SDK takes under mocks to register the same objects with the same
    inputs: one ``CustomResource`` each (its type token and the manifest as its properties), a mock
    that echoes the inputs back, no policy pack. Bare: no component, provider or dependency.
    ``options``: each with the options the program gives (a parent component, an explicit provider,
    an alias to its old place under the Stack, one dependency)."""
    import pulumi
    from pulumi.runtime import settings

    from modules.core.wire import object_key, resource_type

    class Echo(pulumi.runtime.Mocks):
        def new_resource(self, args: pulumi.runtime.MockResourceArgs):
            return f"{args.name}-id", args.inputs

        def call(self, args: pulumi.runtime.MockCallArgs):
            return {}

    def program() -> None:
        opts = None
        if options:
            provider = pulumi.ProviderResource("kubernetes", "kubernetes", {})
            parent = pulumi.ComponentResource("trainstack:index:Floor", "floor")
            first = pulumi.CustomResource("kubernetes:core/v1:Namespace", "floor", {}, opts=pulumi.ResourceOptions(
                parent=parent, provider=provider))
            opts = pulumi.ResourceOptions(parent=parent, provider=provider, depends_on=[first],
                                          aliases=[pulumi.Alias(parent=pulumi.ROOT_STACK_RESOURCE)])
        for obj in objects:
            pulumi.CustomResource(resource_type(obj), object_key(obj), props=dict(obj), opts=opts)

    settings.ROOT.set(None)
    pulumi.runtime.set_mocks(Echo(), project="floor", stack="floor", preview=True)
    start = time.perf_counter()
    pulumi.runtime.test(program)()
    return time.perf_counter() - start


def measure(nodes: int, preview: bool, clock=time.perf_counter, tmp_root: str | None = None) -> dict:
    """Runs inside the child process. ``clock``: wall time for the report; ``benchmarks/ratios.py``
    passes ``time.process_time`` (CPU time, which a busy machine does not inflate) and a
    memory-backed ``tmp_root`` (the disk's own speed is not trainstack's)."""
    from modules.core import yamlio
    from modules.core.config import load_project, load_stack
    from modules.core.output import bundle_files, write_tree
    from modules.core.render import render
    from policies.framework import CheckContext
    from policies.runner import bundle_objects, load_settings, run_rules

    out: dict = {"nodes": nodes}
    with tempfile.TemporaryDirectory(dir=tmp_root) as tmp:
        folder = Path(tmp)
        make_project(folder, nodes)
        runs = []
        for i in range(REPEATS):   # the first pass pays imports and caches: reported apart
            target = folder / "deploy" / f"bench-{i}"
            t0 = clock()
            stack = load_stack(load_project(folder), "bench")
            bundle = render(stack)
            t1 = clock()
            files = bundle_files(bundle, stack.file)
            t2 = clock()
            write_tree({target: files})
            t3 = clock()
            objects = bundle_objects(bundle)
            violations = run_rules(objects, CheckContext(stack=stack, fabric=bundle.fabric), load_settings("prod"))
            t4 = clock()
            floor_start = clock()
            for obj in objects:
                yamlio.dump(obj)
            floor = clock() - floor_start
            stream_start = clock()
            for _ in yamlio.dump_each(objects):
                pass
            stream_floor = clock() - stream_start
            runs.append(dict(render_s=t1 - t0, serialize_s=t2 - t1, write_s=t3 - t2, check_s=t4 - t3,
                             render_write_s=t3 - t0, floor_s=floor, stream_floor_s=stream_floor))
        out.update(objects=len(objects), files=len(files), violations=len(violations),
                   first_render_write_s=runs[0]["render_write_s"])
        warm = runs[1:] or runs
        out.update({key: min(r[key] for r in warm) for key in warm[0]})
        out["ratio_to_floor"] = out["render_write_s"] / out["floor_s"]
        out["ratio_to_stream_floor"] = out["render_write_s"] / out["stream_floor_s"]
        if preview:
            from policies.commands import preview_stack

            previews = []
            for _ in range(PREVIEW_REPEATS):   # the first pays the SDK's imports: reported apart
                t5 = clock()
                preview_stack(load_project(folder), "bench")
                previews.append(clock() - t5)
            out["preview_s"], out["preview_warm_s"] = previews[0], min(previews[1:] or previews)
            out["sdk_floor_s"] = sdk_floor(objects)   # after preview: the SDK's imports are paid
            out["sdk_options_s"] = sdk_floor(objects, options=True)
    out["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", default="1024,4096,16384,65536")
    parser.add_argument("--preview", action="store_true", help="also run `trainstack preview` (program + pack)")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.child, args.preview)))
        return 0
    rows = []
    for nodes in [int(n) for n in args.nodes.split(",")]:
        cmd = [sys.executable, __file__, "--child", str(nodes)] + (["--preview"] if args.preview else [])
        result = subprocess.run(cmd, capture_output=True, text=True, check=True)
        rows.append(json.loads(result.stdout.strip().splitlines()[-1]))
    print(f"# {platform.node()} {platform.processor() or platform.machine()}, python {platform.python_version()}, "
          f"{time.strftime('%Y-%m-%d')}")
    head = ("| nodes | objects | first render+write s | render s | serialize s | write s | render+write s "
            "| C-dump floor s | ratio | check s |")
    head += (" preview s | warm preview s | preview ms/object cold / warm | preview/check cold / warm "
             "| sdk floor s bare / with options |"
             if args.preview else "")
    head += " peak RSS MiB | ratio, one-dumper floor |"
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for r in rows:
        line = (f"| {r['nodes']:,} | {r['objects']:,} | {r['first_render_write_s']:.3f} | {r['render_s']:.3f} | "
                f"{r['serialize_s']:.3f} | {r['write_s']:.3f} | {r['render_write_s']:.3f} | {r['floor_s']:.3f} | "
                f"{r['ratio_to_floor']:.2f} | {r['check_s']:.3f} |")
        if args.preview:
            cold, warm, n = r["preview_s"], r["preview_warm_s"], r["objects"]
            line += (f" {cold:.2f} | {warm:.2f} | {1000 * cold / n:.1f} / {1000 * warm / n:.1f} | "
                     f"{cold / r['check_s']:.1f} / {warm / r['check_s']:.1f} | "
                     f"{r['sdk_floor_s']:.2f} / {r['sdk_options_s']:.2f} |")
        line += f" {r['peak_rss_mib']:.0f} | {r['ratio_to_stream_floor']:.2f} |"
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
