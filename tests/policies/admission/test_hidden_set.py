"""An adversarial review's set of objects the real admission chain rejects or admits (hidden_set/*.yaml:
Volcano v1.15.1's Go webhooks, the API server's built-in validation, Trainer v2.3.0's and the Training
Operator v1.9.4's webhooks), each with the upstream file and function that decides it.

Every object goes through `trainstack check --manifests` outside any project and `check dev
--manifests` inside it (in-process): a rejected one exits 1 with a mandatory finding of the named rule
quoting upstream's reason; an admitted one exits 0 with no mandatory finding. Two cases also run as a
separate process."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from policies.admission.upstream_tables import load_fixture
from tests.support.admission import admission_env, require_shared_dirs
from tests.support.cli import ROOT, run, run_process

HERE = Path(__file__).parent / "hidden_set"
FAMILIES = {p.stem: load_fixture(p) for p in sorted(HERE.glob("*.yaml"))}
CASES = [dict(case, family=data["family"]) for data in FAMILIES.values() for case in data["cases"]]
ADMISSION_RULES = ("upstream-admission", "volcano-job-admission", "trainer-admission", "training-operator-admission",
                   "kubernetes-api-validation")


@pytest.fixture(scope="module")
def dirs():
    with admission_env(*require_shared_dirs()):
        yield


def _write(case: dict, folder: Path) -> Path:
    path = folder / f"{case['id']}.yaml"
    path.write_text(yaml.safe_dump_all(case["objects"], sort_keys=False))
    return path


def _judge(case: dict, code: int, out: str) -> None:
    mandatory = [line for line in out.splitlines() if line.startswith("MANDATORY ")]
    if case["expect"] == "admit":
        assert (code, mandatory) == (0, []), out
        return
    assert code == 1, out
    ours = [line for line in mandatory if line.startswith(f"MANDATORY {case['rule']}: ")]
    assert any(case["message"] in line for line in ours), mandatory
    # the finding names the field path and the upstream file that holds the check
    assert all(" at " in line and any(repo in line for repo in ("kubernetes/kubernetes", "volcano-sh/volcano",
                                                                "kubeflow/trainer")) for line in ours), ours


def test_the_set_is_what_the_review_promised():
    rejected = [c for c in CASES if c["expect"] == "reject"]
    admitted = [c for c in CASES if c["expect"] == "admit"]
    assert len(rejected) >= 30 and len(admitted) >= 10
    assert {c["family"] for c in rejected} == {"volcano", "kubernetes", "trainer", "training-operator"}
    assert len({c["id"] for c in CASES}) == len(CASES)
    assert all(c["upstream"].split()[0] in ("volcano-sh/volcano", "kubeflow/trainer", "kubernetes") for c in CASES)
    assert all(c["rule"] in ADMISSION_RULES for c in rejected)
    assert len({(c["message"], c["upstream"]) for c in rejected}) == len(rejected)   # each for a different reason


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c['family']}-{c['id']}")
def test_hidden_set(case, dirs, tmp_path):
    path = _write(case, tmp_path)
    alone = run("check", "--manifests", str(path), cwd=tmp_path)
    _judge(case, alone.code, alone.out)
    in_stack = run("check", "dev", "--manifests", str(path), cwd=ROOT)
    _judge(case, in_stack.code, in_stack.out)


@pytest.mark.parametrize("case_id", ["job-task-toleration-exists-with-value", "queue-created-with-closing-status"])
def test_as_a_separate_process(case_id, dirs, tmp_path):
    case = next(c for c in CASES if c["id"] == case_id)
    result = run_process("check", "--manifests", str(_write(case, tmp_path)), cwd=tmp_path)
    assert "Traceback" not in result.err
    _judge(case, result.code, result.out)
