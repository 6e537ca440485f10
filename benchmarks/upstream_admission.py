"""How often our own admission checks reproduce upstream's webhook test tables.

    python benchmarks/upstream_admission.py [--json]

Runs every case ported under tests/policies/admission/upstream/<source>/ (Volcano's webhooks, Trainer's,
the Training Operator's, the API server's validation; see policies/admission/upstream_tables.py)
through the one registry (modules/upstream/registry.py), and the CRD structural-schema tables (source
``crd-schema``, modules/upstream/apiextensions/tables.py) through the schema port. A refusal is
reproduced only with upstream's fields, error list and message where its table gives them. Prints
{"cases", "reproduced", "case_names", "by_source": {source: {"cases", "reproduced", "refusals_compared":
{"fields", "errors", "message", "outcome_only"}}}, "divergent": [{"source", "file", "case", "reason",
"got"}]} with --json, a summary otherwise.
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from policies.admission.upstream_tables import report  # noqa: E402
from report_cli import run  # noqa: E402 - beside this script


# --- CRD structural schemas (h3-schema's block) ------------------------------------------------------
# apiextensions-apiserver's and kube-openapi's own tables (tests/modules/upstream/apiextensions/tables/),
# run against the schema port in modules/upstream/apiextensions/, reported as one more source.

def add_crd_schema(out: dict) -> dict:
    from modules.upstream.apiextensions import tables

    schema = tables.report()
    names = [f"{r.file}: {r.name}" for r in tables.results()]
    out["by_source"][tables.SOURCE] = {"cases": schema["cases"], "reproduced": schema["reproduced"],
                                       "refusals_compared": schema["refusals_compared"]}
    out["cases"] += schema["cases"]
    out["reproduced"] += schema["reproduced"]
    out["case_names"] += names
    out["divergent"] += [{"source": tables.SOURCE, "file": d["file"], "case": d["case"],
                          "reason": "not reproduced (no reason recorded)", "got": d["got"]}
                         for d in schema["divergent"]]
    return out
# --- end of the CRD schema block ------------------------------------------------------------------------


def summary(out: dict) -> None:
    for source, counts in out["by_source"].items():
        print(f"{source:18} {counts['reproduced']:4} / {counts['cases']:4}")
    print(f"{'all':18} {out['reproduced']:4} / {out['cases']:4}")
    for d in out["divergent"]:
        print(f"  divergent: {d['source']} {d['file']} {d['case']!r}: {d['reason']}")


def main() -> int:
    return run(__doc__, lambda: add_crd_schema(report()[0]), summary)


if __name__ == "__main__":
    sys.exit(main())
