"""policies/checking.py and the path helpers of policies/report.py: where `check` and `preview`
put a stack error, which user objects they skip as copies, and how reports name files."""
from __future__ import annotations

import json
import os
import shutil

from policies.checking import without_copies
from policies.report import _artifact, shown
from tests.support.cli import ROOT, run

PAD = "# " + "x" * 1000 + "\n"


def test_a_fabric_larger_than_a_stack_file_is_located_in_check(tmp_path):
    """A 5 MiB fabric file is within the fabric bound (16 MiB); its error must be reported at its
    line, not replaced by the 4 MiB bound of stack files."""
    shutil.copy(ROOT / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    (tmp_path / "stacks" / "fabrics").mkdir(parents=True)
    (tmp_path / "stacks" / "Pulumi.big.yaml").write_text(
        "config:\n  trainstack:fabric: {source: file, path: fabrics/big.yaml}\n")
    cycle = "switches:\n  a: {switches: [b]}\n  b: {switches: [a]}\n  c: {nodes: [n1]}\n"
    (tmp_path / "stacks" / "fabrics" / "big.yaml").write_text(PAD * (5 * 1024) + cycle)
    assert run("render", "big", "--project", str(tmp_path)).code == 2
    result = run("check", "big", "--project", str(tmp_path), "--format", "json")
    assert result.code == 1, result
    [violation] = json.loads(result.out)["stacks"]["big"]["violations"]
    assert violation["rule"] == "hypernode-tree-valid" and "cycle" in violation["message"]
    assert violation["source"].endswith("big.yaml") and violation["line"] > 5 * 1024


def test_copies_are_recognised_by_resource_id():
    rendered = [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "n"}}]
    same = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "n"}}
    other_ns = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "m"}}
    assert without_copies(rendered, [same, other_ns, dict(other_ns)]) == [other_ns]


def test_reports_name_files_relative_inside_the_working_folder_only(tmp_path, monkeypatch):
    (tmp_path / "work" / "sub").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "work")
    assert shown(tmp_path / "work" / "sub" / "a b.yaml") == os.path.join("sub", "a b.yaml")
    assert shown(tmp_path / "elsewhere.yaml") == str(tmp_path / "elsewhere.yaml")
    assert _artifact("sub/a b.yaml") == {"uri": "sub/a%20b.yaml", "uriBaseId": "%SRCROOT%"}
    # A relative path that climbs out of the working folder is not a %SRCROOT%-relative URI.
    assert _artifact("../elsewhere.yaml") == {"uri": (tmp_path / "elsewhere.yaml").as_uri()}
