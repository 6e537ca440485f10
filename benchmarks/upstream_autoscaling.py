"""How often the HPA model reproduces Kubernetes' own podautoscaler tests.

    python benchmarks/upstream_autoscaling.py [--json]

Runs every case ported to tests/modules/upstream/autoscaling/upstream/ (kubernetes/kubernetes v1.35.0,
pkg/controller/podautoscaler/replica_calculator_test.go and horizontal_test.go; see
modules/upstream/autoscaling/fidelity.py) and prints {"source", "cases", "reproduced", "case_names",
"by_upstream_test": {TestFunction: {"cases", "reproduced"}}, "divergent": [{"test", "case",
"expected", "got"}]} with --json, a summary per upstream test function otherwise.
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from modules.upstream.autoscaling.fidelity import report  # noqa: E402
from report_cli import print_by_upstream_test, run  # noqa: E402 - beside this script


def summary(out: dict) -> None:
    print_by_upstream_test(out)
    print(f"reproduced {out['reproduced']} of {out['cases']} ({100 * out['reproduced'] / max(1, out['cases']):.1f}%)")
    for d in out["divergent"]:
        print(f"- {d['test']}: {d['case']}\n    expected {d['expected']}, got {d['got']}")


def main() -> int:
    return run(__doc__, lambda: report()[0], summary)


if __name__ == "__main__":
    sys.exit(main())
