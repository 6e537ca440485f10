"""`trainstack diff`: a temporary git repository holding a copy of the project, one commit that grows
the dev fabric by a leaf switch and one that turns NCCL_DEBUG up in prod."""
from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from modules.review.diff import changed_fields
from tests.support.cli import ROOT, run

GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


def git(repo, *args):
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env={**os.environ, **GIT_ENV})


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    root = tmp_path_factory.mktemp("diffrepo")
    shutil.copy(ROOT / "Pulumi.yaml", root / "Pulumi.yaml")
    shutil.copytree(ROOT / "stacks", root / "stacks")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    git(root, "checkout", "-q", "-b", "feature")
    dev = root / "stacks" / "Pulumi.dev.yaml"
    text = dev.read_text()
    assert "leaves: 4, nodesPerLeaf: 4" in text
    dev.write_text(text.replace("leaves: 4, nodesPerLeaf: 4", "leaves: 5, nodesPerLeaf: 4"))
    git(root, "commit", "-qam", "dev: one more leaf")
    prod = root / "stacks" / "Pulumi.prod.yaml"
    text = prod.read_text()
    assert "    debug: WARN\n" in text
    prod.write_text(text.replace("    debug: WARN\n", "    debug: INFO\n"))
    git(root, "commit", "-qam", "prod: NCCL_DEBUG=INFO")
    return root


@pytest.fixture(scope="module")
def both(repo):
    """Against the merge base with main (the default): both commits."""
    result = run("diff", "--format", "json", "--project", str(repo))
    assert result.code == 0, result.err
    return json.loads(result.out)


def test_fabric_change_names_added_switches_and_capacity_per_tier(both):
    dev = both["stacks"]["dev"]
    fabric = dev["fabric"]
    assert [s["name"] for s in fabric["switchesAdded"]] == ["leaf-005"]
    assert fabric["switchesAdded"][0] == {"name": "leaf-005", "tier": 1, "parent": "spine-01"}
    assert fabric["nodesAddedCount"] == 4 and fabric["nodesAdded"] == ["gpu-[0017-0020]"]
    tiers = {t["tier"]: t for t in fabric["tiers"]}
    assert (tiers[1]["before"]["switches"], tiers[1]["after"]["switches"]) == (4, 5)
    assert (tiers[1]["before"]["gpus"], tiers[1]["after"]["gpus"]) == (128, 160)
    assert (tiers[2]["before"]["largestDomainGpus"], tiers[2]["after"]["largestDomainGpus"]) == (128, 160)
    assert dev["modules"]["fabric"]["added"] == ["HyperNode/leaf-005"]
    (spine,) = dev["modules"]["fabric"]["changed"]
    assert spine["key"] == "HyperNode/spine-01"
    assert spine["fields"] == [{"path": "spec.members[]", "before": None,
                                "after": {"selector": {"exactMatch": {"name": "leaf-005"}}, "type": "HyperNode"}}]
    assert both["stacks"]["staging"]["status"] == "unchanged"


def test_nccl_change_names_the_configmaps_and_the_new_findings(both):
    prod = both["stacks"]["prod"]
    changed = prod["modules"]["nccl"]["changed"]
    assert changed and all(c["key"].startswith("ConfigMap/") for c in changed)
    assert all(c["fields"] == [{"path": "data.NCCL_DEBUG", "before": "WARN", "after": "INFO"}] for c in changed)
    added = prod["findings"]["added"]
    assert {f["rule"] for f in added} == {"nccl-debug-production"}
    assert {f["resource"].removeprefix("v1/") for f in added} == {c["key"] for c in changed}   # ids carry apiVersion
    assert prod["findings"]["removed"] == [] and not prod.get("fabric", {}).get("changed")


def test_markdown_is_a_pr_comment(repo):
    result = run("diff", "HEAD~1", "--project", str(repo))   # only the NCCL commit
    assert result.code == 0, result.err
    out = result.out
    assert out.startswith("## trainstack diff: `") and "(HEAD~1) → working tree" in out
    last = out.rstrip().splitlines()[-1]
    assert "### Stack `prod`" in out and "### Stack `dev`" not in out
    assert last.startswith("No change: ") and "`dev`" in last and "`staging`" in last and "`prod`" not in last
    assert "- changed `ConfigMap/training/nccl-infiniband`: `data.NCCL_DEBUG`: `WARN` → `INFO`" in out
    assert "- new advisory `nccl-debug-production` (" in out
    result = run("diff", "HEAD~2", "--stack", "dev", "--project", str(repo))
    assert "- switch added: `leaf-005` (tier 1, under `spine-01`)" in result.out
    assert "| 1 `leaf` | 4 → **5** | 128 → **160** |" in result.out


def test_findings_that_go_away_and_uncommitted_changes(repo):
    prod = repo / "stacks" / "Pulumi.prod.yaml"
    text = prod.read_text()
    prod.write_text(text.replace("    debug: INFO\n", "    debug: WARN\n"))
    try:
        result = run("diff", "HEAD", "--stack", "prod", "--format", "json", "--project", str(repo))
    finally:
        prod.write_text(text)
    report = json.loads(result.out)["stacks"]["prod"]
    assert report["findings"]["added"] == [] and {f["rule"] for f in report["findings"]["removed"]} == \
        {"nccl-debug-production"}


def test_bad_base_is_one_clear_error(repo):
    result = run("diff", "no-such-ref", "--project", str(repo))
    assert result.code == 2 and "Traceback" not in result.err
    assert result.err.startswith("error: trainstack diff: BASE: no commit, branch or tag named 'no-such-ref'")


def test_changed_fields_matches_named_items():
    before = {"spec": {"containers": [{"name": "a", "image": "x:1"}, {"name": "b", "image": "y:1"}]}}
    after = {"spec": {"containers": [{"name": "b", "image": "y:2"}, {"name": "a", "image": "x:1"}]}}
    assert list(changed_fields(before, after)) == [("spec.containers.b.image", "y:1", "y:2")]
