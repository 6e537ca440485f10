"""Bad option combinations through the CLI: one line on stderr, exit 2, nothing written."""
import shutil

import pytest
import yaml

from tests.support.cli import ROOT, run, run_process


def project_with(tmp_path, stack: str, **sections):
    """A copy of the project whose stack file has some trainstack sections replaced."""
    shutil.copy(ROOT / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    shutil.copytree(ROOT / "stacks", tmp_path / "stacks")
    path = tmp_path / "stacks" / f"Pulumi.{stack}.yaml"
    data = yaml.safe_load(path.read_text())
    for key, value in sections.items():
        data["config"][f"trainstack:{key}"] = value
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return tmp_path


CASES = [
    ({"trainer": {"api": "v2", "elastic": True}},
     "stacks/Pulumi.dev.yaml: trainstack:trainer.elastic: elastic training exists only with the v1 Training Operator"),
    ({"runtimes": {"runtimes": [{"topology": {"mode": "hard", "highestTierAllowed": 3}}]}},
     "stacks/Pulumi.dev.yaml: trainstack:runtimes.runtimes[0].topology.highestTierAllowed: expected a tier of this "
     "fabric (1..2)"),
    ({"trainer": {"api": "v1"}},
     "stacks/Pulumi.dev.yaml: trainstack:runtimes: ClusterTrainingRuntimes (and network topology for training) "
     "need Kubeflow Trainer v2"),
]


@pytest.mark.parametrize("sections, message", CASES)
def test_render_refuses_with_one_line(tmp_path, sections, message):
    project = project_with(tmp_path, "dev", **sections)
    out = tmp_path / "deploy"
    result = run("render", "dev", "--project", str(project), "--out", str(out))
    assert result.code == 2
    assert result.err.startswith(f"error: {message}"), result.err
    assert result.err.count("\n") == 1 and not out.exists()


def test_as_a_process_no_traceback(tmp_path):
    sections, message = CASES[0]
    project = project_with(tmp_path, "dev", **sections)
    result = run_process("render", "dev", "--project", str(project), "--out", str(tmp_path / "deploy"))
    assert result.code == 2 and "Traceback" not in result.err
    assert result.err.strip().splitlines() == [result.err.strip()] and message in result.err
