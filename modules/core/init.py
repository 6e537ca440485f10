"""`trainstack init NAME`: scaffold a stack that validates, renders and passes `check` at once.

It writes ``stacks/Pulumi.NAME.yaml`` (commented, with the options a new stack needs first) and
``stacks/fabrics/NAME.yaml`` (a compact fabric file: every node and switch named, so the real names
can be edited in place), and, when the project carries ``policies/``, ``policies/config.NAME.json``
from the profile's template. Nothing is overwritten without --force.
"""
from __future__ import annotations

import argparse
import math
import os
import re
from pathlib import Path

import yaml

from .config import Project, PROFILE_BY_ENVIRONMENT
from .errors import InputError
from .yamlio import MAX_FABRIC_NODES as MAX_NODES, read_text
from .vocabulary.names import is_dns1123_label

STACK_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*\Z")
PROFILES = ("development", "standard", "production")
# The policy settings each profile starts from (the shipped stacks' files).
POLICY_TEMPLATES = {"development": "dev", "standard": "staging", "production": "prod"}
NODE_PATTERN = re.compile(r"^[a-z0-9]([-a-z0-9]*)?\Z")


# What `validate` accepts: at most MAX_NODES (yamlio.MAX_FABRIC_NODES) nodes, a fabric file under its size limit.
MAX_GPUS_PER_NODE = 10_000
MAX_LEAVES = 100_000


def _flow(value) -> str:
    """A value as one line of YAML, quoted by the dumper where needed (never pasted)."""
    return yaml.dump(value, Dumper=yaml.CSafeDumper, default_flow_style=True, width=2**30,
                     allow_unicode=True).strip().removesuffix("\n...").strip()


def _range(prefix: str, lo: int, hi: int, width: int) -> str:
    if lo == hi:
        return f"{prefix}{lo:0{width}d}"
    return f"{prefix}[{lo:0{width}d}-{hi:0{width}d}]"


def fabric_file(args: argparse.Namespace) -> str:
    """The compact fabric file: leaves of ``leaf_size`` nodes; one spine (2 tiers), or spines of
    ``leaves_per_spine`` leaves under one core (3 tiers)."""
    nodes, size = args.nodes, args.leaf_size
    leaves = math.ceil(nodes / size)
    nw, lw = max(4, len(str(nodes))), max(2, len(str(leaves)))
    prefix = args.node_prefix
    lines = [f"# Fabric of stack {args.name}, scaffolded by `trainstack init`: {nodes} nodes, {leaves} leaf switches "
             f"of up to {size} nodes",
             "# Format: modules/fabric/README.md (compact fabric file). Replace the generated names with your",
             "# switches' and nodes' real names (`kubectl get nodes`; topograph or your cabling plan).",
             f"tierNames: {_flow(['leaf', 'spine', 'core'][:args.tiers])}",
             f"nodes: {_flow([_range(prefix, 1, nodes, nw)])}",
             "switches:"]
    if args.tiers == 2:
        lines.append(f"  spine-1: {_flow({'switches': [_range('leaf-', 1, leaves, lw)]})}")
    else:
        per = args.leaves_per_spine or max(1, math.ceil(math.sqrt(leaves)))
        spines = math.ceil(leaves / per)
        spine_range = _range('spine-', 1, spines, 1 if spines < 10 else len(str(spines)))
        lines.append(f"  core: {_flow({'switches': [spine_range]})}")
        for s in range(spines):
            lo, hi = s * per + 1, min(leaves, (s + 1) * per)
            name = f"spine-{s + 1:0{1 if spines < 10 else len(str(spines))}d}"
            lines.append(f"  {name}: {_flow({'switches': [_range('leaf-', lo, hi, lw)]})}")
    for leaf in range(leaves):
        lo, hi = leaf * size + 1, min(nodes, (leaf + 1) * size)
        lines.append(f"  leaf-{leaf + 1:0{lw}d}: {_flow({'nodes': [_range(prefix, lo, hi, nw)]})}")
    return "\n".join(lines) + "\n"


def stack_file(args: argparse.Namespace) -> str:
    name, profile = args.name, args.profile
    env_line = (f"  trainstack:environment: {_flow(name)}\n" if is_dns1123_label(name) else "")
    pool: dict = {"name": "gpu", "gpus": args.gpus_per_node}
    if args.gpu_type:
        pool["gpuType"] = args.gpu_type
    if args.transport == "ethernet":
        nccl = _flow({"transport": "ethernet", "socketIfname": f"={args.socket_ifname}"})
        nccl_note = "NCCL over TCP sockets on this interface (`ip -br link` on a node)"
    else:
        hcas = args.hcas.split(",") if args.hcas else [f"mlx5_{i}" for i in range(min(args.gpus_per_node, 8))]
        nccl = _flow({"transport": args.transport, "hcas": hcas})
        nccl_note = "the HCAs NCCL uses (`ibstat -l` on a node); one per GPU on rail-optimised fabrics"
        # pods request the RDMA devices of the device plugin (NVIDIA Network Operator: nvidia.com/hostdev)
        pool["resources"] = {args.rdma_resource: len(hcas)}
    pool = _flow(pool)
    gpus = args.nodes * args.gpus_per_node
    context = f"  kubernetes:context: {_flow(args.context)}\n" if args.context else \
        "  # kubernetes:context: my-cluster      # the kubeconfig context `pulumi up` targets\n"
    return (
        f"# Stack {name}, scaffolded by `trainstack init` ({args.nodes} nodes x {args.gpus_per_node} GPUs, "
        f"{args.tiers} tiers, {args.transport}).\n"
        "# Every option: modules/<module>/README.md. Next: trainstack validate/render/check "
        f"{name}; docs/new-stack.md.\n"
        "config:\n"
        f"{context}{env_line}"
        f"  # production: production checks and defaults; standard; development (NCCL_DEBUG=INFO)\n"
        f"  trainstack:profile: {profile}\n"
        "  trainstack:fabric:\n"
        "    source: file\n"
        f"    path: {_flow(f'fabrics/{name}.yaml')}\n"
        "    fullCoverage: true          # a node missing from every leaf is an error\n"
        "    nodePools:\n"
        f"    - {pool}\n"
        f"  # {nccl_note}\n"
        f"  trainstack:nccl: {nccl}\n"
        "  trainstack:volcano:\n"
        "    queues:\n"
        f"    - {_flow({'name': 'training', 'weight': 1, 'capability': {'nvidia.com/gpu': gpus}})}\n"
        "  trainstack:trainer: {api: v2}\n"
    )


def cmd_init(args: argparse.Namespace, project: Project) -> int:
    name = args.name
    if not STACK_NAME.match(name):
        raise InputError("trainstack init", "NAME", f"expected a stack name of letters, digits, '-', '_' and '.', "
                          f"got {name!r}")
    for flag, value in (("--nodes", args.nodes), ("--gpus-per-node", args.gpus_per_node),
                        ("--leaf-size", args.leaf_size), ("--leaves-per-spine", args.leaves_per_spine or 1)):
        if not 1 <= value <= MAX_NODES:
            raise InputError("trainstack init", flag, f"expected a number from 1 to {MAX_NODES:,}, got {value}")
    if args.gpus_per_node > MAX_GPUS_PER_NODE:
        raise InputError("trainstack init", "--gpus-per-node",
                         f"expected at most {MAX_GPUS_PER_NODE:,} GPUs per node, got {args.gpus_per_node}")
    if math.ceil(args.nodes / args.leaf_size) > MAX_LEAVES:
        raise InputError("trainstack init", "--leaf-size", f"{args.nodes} nodes in leaves of {args.leaf_size} "
                         f"make more than {MAX_LEAVES:,} leaf switches; give a larger --leaf-size")
    if args.gpu_type and not re.match(r"^[A-Za-z0-9][-A-Za-z0-9_.]*\Z", args.gpu_type):
        raise InputError("trainstack init", "--gpu-type",
                          f"expected a model name such as H100-SXM, got {args.gpu_type!r}")
    if not NODE_PATTERN.match(args.node_prefix):
        raise InputError("trainstack init", "--node-prefix", f"expected the start of a Kubernetes node name, "
                          f"got {args.node_prefix!r}")
    if args.profile is None:
        args.profile = PROFILE_BY_ENVIRONMENT.get(name, "development")
    stack_path = project.stack_file(name)
    fabric_path = project.stack_dir / "fabrics" / f"{name}.yaml"
    files = {stack_path: stack_file(args), fabric_path: fabric_file(args)}
    _validate_before_writing(project, name, files[stack_path], files[fabric_path])
    policies = project.root / "policies"
    template = policies / f"config.{POLICY_TEMPLATES[args.profile]}.json"
    if template.is_file():
        files[policies / f"config.{name}.json"] = read_text(template, project.show(template))
    for path in files:
        _refuse_links(project, path)
    existing = [p for p in files if os.path.lexists(p)]
    if existing and not args.force:
        raise InputError(project.show(existing[0]), "", "already exists; pass --force to overwrite")
    for path, text in files.items():
        _write_inside(project, path, text)
        print(f"wrote {project.show(path)}")
    if not template.is_file():
        print(f"note: no policies/ in this project: `check {name}` runs every rule at its default level")
    print(f"\nnext: trainstack validate {name} && trainstack render {name} && trainstack check {name}\n"
          f"      edit {project.show(fabric_path)} to your real switch and node names; docs/new-stack.md")
    return 0


def _validate_before_writing(project: Project, name: str, stack_text: str, fabric_text: str) -> None:
    """Load and render the stack as `validate` would, from a scratch copy of the two files, so
    that init never writes a stack `validate` refuses (``--hcas ",,,"``, a quote in an HCA or
    interface name, a node prefix too long for a node name, more nodes than a fabric may hold)."""
    import tempfile

    from .config import load_project, load_stack
    from .render import render

    with tempfile.TemporaryDirectory(prefix="trainstack-init-") as scratch:
        root = Path(scratch)
        (root / "Pulumi.yaml").write_text(f"name: {_flow(project.name)}\nstackConfigDir: stacks\n", encoding="utf-8")
        (root / "stacks" / "fabrics").mkdir(parents=True)
        (root / "stacks" / f"Pulumi.{name}.yaml").write_text(stack_text, encoding="utf-8")
        (root / "stacks" / "fabrics" / f"{name}.yaml").write_text(fabric_text, encoding="utf-8")
        try:
            render(load_stack(load_project(root), name))
        except InputError as err:
            where = err.file.replace(scratch + os.sep, "").replace("stacks/", "", 1)
            raise InputError("trainstack init", "", f"the options make a stack that `validate` refuses "
                             f"({where}: {err.path}: {err.message}); nothing was written") from None
        finally:
            load_project.cache_clear()


def _refuse_links(project: Project, path: Path) -> None:
    """``init`` writes only inside the project and never through a link: every folder from the
    project root down to the file, and the file itself, must be a real folder or file (or absent)."""
    root = Path(os.path.abspath(project.root))
    target = Path(os.path.abspath(path))
    if root not in target.parents:
        raise InputError(project.show(path), "", "is outside the project; init writes only inside it")
    current = root
    for part in target.relative_to(root).parts:
        current = current / part
        if os.path.islink(current):
            raise InputError(project.show(current), "", "is a symbolic link; init never writes through a link "
                             "(it could create files outside the project): remove it or choose another name")
        if current != target and os.path.lexists(current) and not os.path.isdir(current):
            raise InputError(project.show(current), "", "exists and is not a folder")
    if os.path.lexists(target) and not os.path.isfile(target):
        raise InputError(project.show(target), "", "exists and is not a regular file")


def _write_inside(project: Project, path: Path, text: str) -> None:
    """Create the folders one by one and the file without following a link at any step."""
    root = Path(os.path.abspath(project.root))
    current = root
    for part in Path(os.path.abspath(path)).relative_to(root).parts[:-1]:
        current = current / part
        try:
            os.mkdir(current)
        except FileExistsError:
            pass
        if os.path.islink(current) or not os.path.isdir(current):
            raise InputError(project.show(current), "", "is not a folder (or is a link); init never writes through it")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text)


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("init", parents=[common], help="scaffold stacks/Pulumi.NAME.yaml and its fabric file",
                       description="Write a new stack and a fabric file from a few numbers. The result validates, "
                                   "renders and passes check as it is; then replace the generated names with real "
                                   "ones. See docs/new-stack.md.")
    p.add_argument("name", metavar="NAME", help="the stack's name (any, e.g. east); also its environment name")
    p.add_argument("--nodes", type=int, default=16, help="GPU nodes (default 16)")
    p.add_argument("--gpus-per-node", type=int, default=8, help="GPUs per node (default 8)")
    p.add_argument("--tiers", type=int, choices=(2, 3), default=2,
                   help="switch tiers: 2 = leaves under one spine, 3 = leaves under spines under a core (default 2)")
    p.add_argument("--leaf-size", type=int, default=16, help="nodes per leaf switch (default 16)")
    p.add_argument("--leaves-per-spine", type=int, help="with --tiers 3: leaves per spine (default about sqrt(leaves))")
    p.add_argument("--transport", choices=("infiniband", "roce", "ethernet"), default="infiniband",
                   help="NCCL transport (default infiniband)")
    p.add_argument("--hcas", metavar="LIST", help="infiniband/roce: comma list of HCAs (default mlx5_0.. one per GPU, "
                                                  "at most 8)")
    p.add_argument("--rdma-resource", default="nvidia.com/hostdev", metavar="NAME",
                   help="infiniband/roce: the RDMA device plugin's resource, one per HCA (default nvidia.com/hostdev)")
    p.add_argument("--socket-ifname", default="eth0", metavar="IF", help="ethernet: the interface (default eth0)")
    p.add_argument("--gpu-type", metavar="MODEL", help="GPU model, e.g. H100-SXM (names runtimes)")
    p.add_argument("--node-prefix", default="gpu-", help="node names: PREFIX0001.. (default gpu-)")
    p.add_argument("--profile", choices=PROFILES,
                   help="production, standard or development (default from NAME: prod -> production, "
                        "staging -> standard, otherwise development)")
    p.add_argument("--context", metavar="CTX", help="kubeconfig context for `pulumi up` (kubernetes:context)")
    p.add_argument("--force", action="store_true", help="overwrite existing files")
    p.set_defaults(run=cmd_init)
