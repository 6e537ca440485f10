"""How often our own admission checks reproduce upstream's webhook test tables.

    python benchmarks/upstream_admission.py [--json]

Runs every case ported under tests/policies/admission/upstream/<source>/ (Volcano's webhooks, Trainer's,
the Training Operator's, the API server's validation; see policies/admission/upstream_tables.py)
through the one registry (modules/upstream/registry.py). A refusal is reproduced only with upstream's
fields, error list and message where its table gives them. Prints {"cases", "reproduced",
"case_names", "by_source": {source: {"cases", "reproduced", "refusals_compared": {"fields", "errors",
"message", "outcome_only"}}}, "divergent": [{"source", "file", "case", "reason", "got"}]} with --json,
a summary otherwise.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from policies.admission.upstream_tables import report  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the JSON report")
    args = parser.parse_args()
    out, _ = report()
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    for source, counts in out["by_source"].items():
        print(f"{source:18} {counts['reproduced']:4} / {counts['cases']:4}")
    print(f"{'all':18} {out['reproduced']:4} / {out['cases']:4}")
    for d in out["divergent"]:
        print(f"  divergent: {d['source']} {d['file']} {d['case']!r}: {d['reason']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
