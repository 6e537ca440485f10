"""`trainstack init NAME`: scaffold a stack that validates, renders and passes `check` at once.

It writes ``stacks/Pulumi.NAME.yaml`` (commented, with the options a new stack needs first) and
``stacks/fabrics/NAME.yaml`` (a compact fabric file: every node and switch named, so the real names
can be edited in place), and, when the project carries ``policies/``, ``policies/config.NAME.json``
from the profile's template. Nothing is overwritten without --force.
"""
from __future__ import annotations

import argparse
import json
import math
import re

from .config import Project, PROFILE_BY_ENVIRONMENT
from .errors import InputError
from .schema import DNS1123_LABEL

STACK_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*\Z")
PROFILES = ("development", "standard", "production")
# The policy settings each profile starts from (the shipped stacks' files).
POLICY_TEMPLATES = {"development": "dev", "standard": "staging", "production": "prod"}
NODE_PATTERN = re.compile(r"^[a-z0-9]([-a-z0-9]*)?\Z")


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
             f"tierNames: {json.dumps(['leaf', 'spine', 'core'][:args.tiers])}",
             f"nodes: [\"{_range(prefix, 1, nodes, nw)}\"]",
             "switches:"]
    if args.tiers == 2:
        lines.append(f"  spine-1: {{switches: [\"{_range('leaf-', 1, leaves, lw)}\"]}}")
    else:
        per = args.leaves_per_spine or max(1, math.ceil(math.sqrt(leaves)))
        spines = math.ceil(leaves / per)
        spine_range = _range('spine-', 1, spines, 1 if spines < 10 else len(str(spines)))
        lines.append(f"  core: {{switches: [\"{spine_range}\"]}}")
        for s in range(spines):
            lo, hi = s * per + 1, min(leaves, (s + 1) * per)
            name = f"spine-{s + 1:0{1 if spines < 10 else len(str(spines))}d}"
            lines.append(f"  {name}: {{switches: [\"{_range('leaf-', lo, hi, lw)}\"]}}")
    for leaf in range(leaves):
        lo, hi = leaf * size + 1, min(nodes, (leaf + 1) * size)
        lines.append(f"  leaf-{leaf + 1:0{lw}d}: {{nodes: [\"{_range(prefix, lo, hi, nw)}\"]}}")
    return "\n".join(lines) + "\n"


def stack_file(args: argparse.Namespace) -> str:
    name, profile = args.name, args.profile
    env_line = (f"  trainstack:environment: {name}\n" if DNS1123_LABEL.match(name) and len(name) <= 63 else "")
    pool = f"{{name: gpu, gpus: {args.gpus_per_node}" + (f", gpuType: {args.gpu_type}" if args.gpu_type else "")
    if args.transport == "ethernet":
        nccl = f"{{transport: ethernet, socketIfname: \"={args.socket_ifname}\"}}"
        nccl_note = "NCCL over TCP sockets on this interface (`ip -br link` on a node)"
        pool += "}"
    else:
        hcas = args.hcas.split(",") if args.hcas else [f"mlx5_{i}" for i in range(min(args.gpus_per_node, 8))]
        nccl = f"{{transport: {args.transport}, hcas: [{', '.join(hcas)}]}}"
        nccl_note = "the HCAs NCCL uses (`ibstat -l` on a node); one per GPU on rail-optimised fabrics"
        # pods request the RDMA devices of the device plugin (NVIDIA Network Operator: nvidia.com/hostdev)
        pool += f", resources: {{{args.rdma_resource}: {len(hcas)}}}}}"
    context = f"  kubernetes:context: {args.context}\n" if args.context else \
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
        f"    path: fabrics/{name}.yaml\n"
        "    fullCoverage: true          # a node missing from every leaf is an error\n"
        "    nodePools:\n"
        f"    - {pool}\n"
        f"  # {nccl_note}\n"
        f"  trainstack:nccl: {nccl}\n"
        "  trainstack:volcano:\n"
        "    queues:\n"
        f"    - {{name: training, weight: 1, capability: {{nvidia.com/gpu: {args.nodes * args.gpus_per_node}}}}}\n"
        "  trainstack:trainer: {api: v2}\n"
    )


def cmd_init(args: argparse.Namespace, project: Project) -> int:
    name = args.name
    if not STACK_NAME.match(name):
        raise InputError("trainstack init", "NAME", f"expected a stack name of letters, digits, '-', '_' and '.', "
                          f"got {name!r}")
    for flag, value in (("--nodes", args.nodes), ("--gpus-per-node", args.gpus_per_node),
                        ("--leaf-size", args.leaf_size), ("--leaves-per-spine", args.leaves_per_spine or 1)):
        if value < 1:
            raise InputError("trainstack init", flag, f"expected a positive number, got {value}")
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
    policies = project.root / "policies"
    template = policies / f"config.{POLICY_TEMPLATES[args.profile]}.json"
    if template.is_file():
        files[policies / f"config.{name}.json"] = template.read_text(encoding="utf-8")
    existing = [p for p in files if p.exists()]
    if existing and not args.force:
        raise InputError(project.show(existing[0]), "", "already exists; pass --force to overwrite")
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"wrote {project.show(path)}")
    if not template.is_file():
        print(f"note: no policies/ in this project: `check {name}` runs every rule at its default level")
    print(f"\nnext: trainstack validate {name} && trainstack render {name} && trainstack check {name}\n"
          f"      edit {project.show(fabric_path)} to your real switch and node names; docs/new-stack.md")
    return 0


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
