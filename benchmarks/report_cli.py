"""The command line the upstream-table benchmarks share (upstream_admission, upstream_autoscaling,
upstream_fidelity): ``--json`` prints the report as JSON, else the script's own summary."""
from __future__ import annotations

import argparse
import json
from typing import Callable


def run(doc: str, report: Callable[[], dict], summary: Callable[[dict], None]) -> int:
    """Parse the command line (described by the first line of ``doc``), build ``report()`` and print it."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the JSON report")
    args = parser.parse_args()
    out = report()
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        summary(out)
    return 0


def print_by_upstream_test(out: dict) -> None:
    """One line per upstream test function: ``TestName: reproduced/cases``."""
    for test, row in out["by_upstream_test"].items():
        print(f"{test}: {row['reproduced']}/{row['cases']}")
