"""Broken stack files: each gives exit 2, one line naming the file and the path, and writes nothing."""
from __future__ import annotations

import shutil
import textwrap

import pytest

from tests.support.cli import ROOT, run, run_process

GOOD_FABRIC = "trainstack:fabric: {source: generated}\n"

# (case id, stack file text, extra files {relative path: text}, file named in the error, path fragment)
CASES = [
    ("yaml-syntax", "config:\n  trainstack:fabric: {source: generated\n", {}, "stacks/Pulumi.broken.yaml", "line 3"),
    ("duplicate-key", "config:\n  " + GOOD_FABRIC + "  trainstack:fabric: {source: file}\n", {},
     "stacks/Pulumi.broken.yaml", "trainstack:fabric: duplicate key"),
    ("empty-file", "", {}, "stacks/Pulumi.broken.yaml", "empty"),
    ("comments-only", "# nothing here\n", {}, "stacks/Pulumi.broken.yaml", "empty"),
    ("top-level-list", "- config\n- trainstack\n", {}, "stacks/Pulumi.broken.yaml", "(document)"),
    ("config-not-mapping", "config: [1, 2]\n", {}, "stacks/Pulumi.broken.yaml", "config: expected a mapping"),
    ("unknown-top-level-key", "confg:\n  " + GOOD_FABRIC, {}, "stacks/Pulumi.broken.yaml", "did you mean 'config'"),
    ("unknown-trainstack-key", "config:\n  " + GOOD_FABRIC + "  trainstack:fabrik: {}\n", {},
     "stacks/Pulumi.broken.yaml", "trainstack:fabrik: unknown key 'fabrik'; did you mean 'fabric'"),
    ("missing-fabric", "config:\n  trainstack:environment: dev\n", {}, "stacks/Pulumi.broken.yaml",
     "trainstack:fabric: missing required value"),
    ("fabric-wrong-type", "config:\n  trainstack:fabric: generated\n", {}, "stacks/Pulumi.broken.yaml",
     "trainstack:fabric: expected a mapping"),
    ("unknown-source", "config:\n  trainstack:fabric: {source: magic}\n", {}, "stacks/Pulumi.broken.yaml",
     "trainstack:fabric.source: expected one of"),
    ("wrong-type-nested", "config:\n  trainstack:fabric: {source: generated, generated: {leaves: four}}\n", {},
     "stacks/Pulumi.broken.yaml", "trainstack:fabric.generated.leaves: expected an integer"),
    ("negative-count", "config:\n  trainstack:fabric: {source: generated, generated: {nodesPerLeaf: -2}}\n", {},
     "stacks/Pulumi.broken.yaml", "trainstack:fabric.generated.nodesPerLeaf: expected an integer >= 1"),
    ("unknown-nested-key", "config:\n  trainstack:fabric: {source: generated, generated: {leafs: 4}}\n", {},
     "stacks/Pulumi.broken.yaml", "did you mean 'leaves'"),
    ("bad-name-pattern", "config:\n  trainstack:fabric: {source: generated, generated: {nodeName: 'gpu-{x}'}}\n", {},
     "stacks/Pulumi.broken.yaml", "trainstack:fabric.generated.nodeName"),
    ("bad-pool-regex", "config:\n  trainstack:fabric: {source: generated, nodePools: [{name: a, match: '(['}]}\n", {},
     "stacks/Pulumi.broken.yaml", "trainstack:fabric.nodePools[0].match"),
    ("size-500GB", "config:\n  " + GOOD_FABRIC + "  trainstack:storage: {claims: [{name: data, size: 500GB}]}\n", {},
     "stacks/Pulumi.broken.yaml",
     'trainstack:storage.claims[0].size: expected a positive Kubernetes quantity such as 500Gi, got "500GB"'),
    ("negative-size", "config:\n  " + GOOD_FABRIC + "  trainstack:storage: {claims: [{name: data, size: -5Gi}]}\n", {},
     "stacks/Pulumi.broken.yaml", "trainstack:storage.claims[0].size"),
    ("missing-size", "config:\n  " + GOOD_FABRIC + "  trainstack:storage: {claims: [{name: data}]}\n", {},
     "stacks/Pulumi.broken.yaml", "trainstack:storage.claims[0].size: missing required value"),
    ("bad-claim-name",
     "config:\n  " + GOOD_FABRIC + "  trainstack:storage: {claims: [{name: Training_Data, size: 1Ti}]}\n",
     {}, "stacks/Pulumi.broken.yaml", "trainstack:storage.claims[0].name: expected a Kubernetes name"),
    ("duplicate-claim",
     "config:\n  " + GOOD_FABRIC + "  trainstack:storage: {claims: [{name: d, size: 1Ti}, {name: d, size: 2Ti}]}\n",
     {}, "stacks/Pulumi.broken.yaml", "trainstack:storage.claims[1].name"),
    ("ib-timeout-range", "config:\n  " + GOOD_FABRIC + "  trainstack:nccl: {ibTimeout: 40}\n", {},
     "stacks/Pulumi.broken.yaml", "trainstack:nccl.ibTimeout: expected an integer <= 31, got 40"),
    ("nthreads-4", "config:\n  " + GOOD_FABRIC + "  trainstack:nccl: {env: {NCCL_NTHREADS: 4}}\n", {},
     "stacks/Pulumi.broken.yaml", "trainstack:nccl.env.NCCL_NTHREADS: NCCL_NTHREADS expects one of 64, 128, 256, 512"),
    ("not-an-nccl-setting", "config:\n  " + GOOD_FABRIC + "  trainstack:nccl: {env: {crossNic: 1}}\n", {},
     "stacks/Pulumi.broken.yaml", "trainstack:nccl.env.crossNic: crossNic is not an NCCL setting"),
    ("unknown-nccl-variable", "config:\n  " + GOOD_FABRIC + "  trainstack:nccl: {env: {NCCL_FAST: 1}}\n", {},
     "stacks/Pulumi.broken.yaml", "trainstack:nccl.env.NCCL_FAST"),
    ("bad-hca", "config:\n  " + GOOD_FABRIC + "  trainstack:nccl: {hcas: ['mlx5 0']}\n", {},
     "stacks/Pulumi.broken.yaml", "trainstack:nccl.hcas[0]: expected an HCA name"),
    ("transport-not-rendered",
     "config:\n  " + GOOD_FABRIC + "  trainstack:nccl: {transport: roce, profiles: [ethernet]}\n",
     {}, "stacks/Pulumi.broken.yaml", "trainstack:nccl.profiles"),
    ("queue-guarantee-without-deserved",
     "config:\n  " + GOOD_FABRIC
     + "  trainstack:volcano: {queues: [{name: prod, guarantee: {nvidia.com/gpu: 8}}]}\n", {},
     "stacks/Pulumi.broken.yaml",
     "trainstack:volcano.queues[0].deserved: expected deserved.nvidia.com/gpu >= the guarantee"),
    ("queue-deserved-above-capability",
     "config:\n  " + GOOD_FABRIC + "  trainstack:volcano: {queues: [{name: prod, deserved: {nvidia.com/gpu: 16}, "
     "capability: {nvidia.com/gpu: 8}}]}\n", {},
     "stacks/Pulumi.broken.yaml",
     'trainstack:volcano.queues[0].deserved.nvidia.com/gpu: expected at most the capability'),
    ("host-ifname-in-pod-network", "config:\n  " + GOOD_FABRIC + "  trainstack:nccl: {socketIfname: '=bond0'}\n", {},
     "stacks/Pulumi.broken.yaml",
     "trainstack:nccl.socketIfname: NCCL_SOCKET_IFNAME==bond0 lists exact interface name(s) bond0"),
    ("bad-environment", "config:\n  " + GOOD_FABRIC + "  trainstack:environment: US East\n", {},
     "stacks/Pulumi.broken.yaml", "trainstack:environment: expected a Kubernetes name"),
    ("bad-profile", "config:\n  " + GOOD_FABRIC + "  trainstack:profile: prod\n", {},
     "stacks/Pulumi.broken.yaml", 'trainstack:profile: expected one of "development", "standard", "production"'),
    ("no-training-namespace", "config:\n  " + GOOD_FABRIC + "  trainstack:trainingNamespaces: []\n", {},
     "stacks/Pulumi.broken.yaml", "trainstack:trainingNamespaces: expected a non-empty list"),
    ("secure-in-trainstack",
     "config:\n  " + GOOD_FABRIC + "  trainstack:storage: {claims: [{name: d, size: {secure: v1:AAAA}}]}\n",
     {}, "stacks/Pulumi.broken.yaml", "trainstack:storage.claims[0].size: secure values are never decrypted"),
    ("fabric-file-missing", "config:\n  trainstack:fabric: {source: file, path: fabrics/nope.yaml}\n", {},
     "stacks/Pulumi.broken.yaml", "trainstack:fabric.path: expected an existing file"),
    ("fabric-file-syntax", "config:\n  trainstack:fabric: {source: file, path: fabrics/bad.yaml}\n",
     {"stacks/fabrics/bad.yaml": "switches:\n  a: {nodes: [x\n"}, "stacks/fabrics/bad.yaml", "invalid YAML"),
    ("fabric-file-cycle", "config:\n  trainstack:fabric: {source: file, path: fabrics/cycle.yaml}\n",
     {"stacks/fabrics/cycle.yaml": "switches:\n  a: {switches: [b]}\n  b: {switches: [a]}\n  c: {nodes: [n1]}\n"},
     "stacks/fabrics/cycle.yaml", "cycle"),
    ("fabric-file-two-parents", "config:\n  trainstack:fabric: {source: file, path: fabrics/two.yaml}\n",
     {"stacks/fabrics/two.yaml": "switches:\n  a: {switches: [c]}\n  b: {switches: [c]}\n  c: {nodes: ['n[1-2]']}\n"},
     "stacks/fabrics/two.yaml", "two parents"),
]


def make_project(tmp_path, stack_text: str, extra: dict[str, str]):
    shutil.copy(ROOT / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    (tmp_path / "stacks" / "fabrics").mkdir(parents=True)
    (tmp_path / "stacks" / "Pulumi.broken.yaml").write_text(stack_text)
    for rel, text in extra.items():
        (tmp_path / rel).write_text(text)
    return tmp_path


@pytest.mark.parametrize("case,text,extra,file,fragment", CASES, ids=[c[0] for c in CASES])
def test_broken_stack_gives_one_clear_error(tmp_path, case, text, extra, file, fragment):
    project = make_project(tmp_path, text, extra)
    out = tmp_path / "out"
    result = run("render", "broken", "--project", str(project), "--out", str(out))
    assert result.code == 2, result
    assert result.out == ""
    lines = result.err.strip().splitlines()
    assert len(lines) == 1, result.err
    assert lines[0].startswith(f"error: {file}: "), lines[0]
    assert fragment in lines[0], lines[0]
    assert "Traceback" not in result.err
    assert not out.exists()


def test_corpus_is_large_enough():
    assert len(CASES) >= 20


def test_broken_stack_as_a_process_prints_no_traceback(tmp_path):
    project = make_project(tmp_path, CASES[0][1], {})
    result = run_process("render", "broken", "--project", str(project))
    assert result.code == 2
    assert "Traceback" not in result.err
    assert len(result.err.strip().splitlines()) == 1
    assert not (project / "deploy").exists()


def test_failed_render_leaves_previous_output_untouched(tmp_path):
    project = make_project(tmp_path, "config:\n  " + GOOD_FABRIC, {})
    out = tmp_path / "out"
    assert run("render", "broken", "--project", str(project), "--out", str(out)).code == 0
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    (project / "stacks" / "Pulumi.broken.yaml").write_text(textwrap.dedent("""\
        config:
          trainstack:fabric: {source: generated}
          trainstack:storage: {claims: [{name: data, size: 500GB}]}
        """))
    assert run("render", "broken", "--project", str(project), "--out", str(out)).code == 2
    after = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert before == after
    assert sorted(p.name for p in out.iterdir()) == ["broken"]   # no temporary folders left behind


def test_render_all_writes_nothing_when_one_stack_is_broken(tmp_path):
    project = make_project(tmp_path, "config:\n  trainstack:fabric: {source: nope}\n", {})
    (project / "stacks" / "Pulumi.good.yaml").write_text("config:\n  " + GOOD_FABRIC)
    out = tmp_path / "out"
    result = run("render", "--all", "--project", str(project), "--out", str(out))
    assert result.code == 2
    assert not out.exists()


def test_unknown_stack_names_the_known_ones(tmp_path):
    project = make_project(tmp_path, "config:\n  " + GOOD_FABRIC, {})
    result = run("render", "prodd", "--project", str(project))
    assert result.code == 2
    assert "no such stack 'prodd'" in result.err and "broken" in result.err
