"""How often the HPA model reproduces Kubernetes' own podautoscaler tests.

    python benchmarks/upstream_autoscaling.py [--json]

Runs every case ported to tests/modules/upstream/autoscaling/upstream/ (kubernetes/kubernetes v1.35.0,
pkg/controller/podautoscaler/replica_calculator_test.go and horizontal_test.go; see
modules/upstream/autoscaling/fidelity.py) and prints {"source", "cases", "reproduced", "case_names",
"by_upstream_test": {TestFunction: {"cases", "reproduced"}}, "divergent": [{"test", "case",
"expected", "got"}]} with --json, a summary per upstream test function otherwise.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from modules.upstream.autoscaling.fidelity import report  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the JSON report")
    args = parser.parse_args()
    out, _ = report()
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    for test, row in out["by_upstream_test"].items():
        print(f"{test}: {row['reproduced']}/{row['cases']}")
    print(f"reproduced {out['reproduced']} of {out['cases']} ({100 * out['reproduced'] / max(1, out['cases']):.1f}%)")
    for d in out["divergent"]:
        print(f"- {d['test']}: {d['case']}\n    expected {d['expected']}, got {d['got']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
