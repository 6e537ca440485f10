"""How often the simulator reproduces Volcano v1.15.1's own scheduler tests.

    python benchmarks/upstream_fidelity.py [--json]

Runs every case ported to tests/modules/simulate/upstream/ (see modules/simulate/fidelity.py) and prints
{"cases": N, "reproduced": M, "case_names": [...], "by_upstream_test": {TestFunction: {"cases",
"reproduced"}}, "divergent": [{"test", "case", "expected", "got", "reason"}], "simulator": {"cases",
"reproduced"}, "harness_only": {"cases", "reproduced", "case_names", "why"}, "ours": {"cases",
"reproduced", "failed"}} with --json, a summary per upstream test function otherwise. "simulator"
leaves out the harness-only cases (code only the harness runs); "ours" are our own cases
(tests/modules/simulate/ours/), counted apart from upstream's.
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from modules.simulate.fidelity import report  # noqa: E402
from report_cli import print_by_upstream_test, run  # noqa: E402 - beside this script


def summary(out: dict) -> None:
    print_by_upstream_test(out)
    print(f"reproduced {out['reproduced']} of {out['cases']} ({100 * out['reproduced'] / out['cases']:.1f}%)")
    sim, harness, ours = out["simulator"], out["harness_only"], out["ours"]
    apart = (f"; not counted: {harness['reproduced']} of {harness['cases']} harness-only cases "
             f"({'; '.join(harness['why'])})" if harness["cases"] else "")
    print(f"simulator fidelity: {sim['reproduced']} of {sim['cases']} "
          f"({100 * sim['reproduced'] / max(sim['cases'], 1):.1f}%){apart}")
    print(f"ours (tests/modules/simulate/ours, traced to v1.15.1 source): {ours['reproduced']} of {ours['cases']}")
    for d in out["divergent"]:
        print(f"- {d['test']}: {d['case']}\n    expected {d['expected']}, got {d['got']}\n    {d['reason']}")


def main() -> int:
    return run(__doc__, lambda: report()[0], summary)


if __name__ == "__main__":
    sys.exit(main())
