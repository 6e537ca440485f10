"""The probe results format, and its one reader (``trainstack recommend`` and ``simulate --probe``).

``trainstack probe --json`` (measure.py, which ships alone in a ConfigMap and so writes the
document itself) writes version ``trainstack.probe/v1``, documented in README.md ("Results
format"). This module reads that document, a bare list of its records, or the Prometheus text the
probe exposes, checks every record and returns them in one shape:

``collective, bytes, world_size, time_s, tier, nodes, ranks_per_node, backend, representative, source``

``tier`` is what the probe was told (``node`` = inside one node, tier 0; else a fabric tier name such
as ``leaf``, or a tier number). ``representative`` is False for gloo results: gloo runs on CPUs (over
loopback on a laptop), so its times say nothing about NVLink or InfiniBand. Commands that turn results
into GPU tier models refuse such records unless the user says ``--accept-cpu``.
"""
from __future__ import annotations

import math
import re
from pathlib import Path

from modules.core import yamlio
from modules.core.errors import InputError, show
from modules.core.vocabulary.go import is_ascii_digits

from . import measure

FORMAT = "trainstack.probe/v1"
NODE_TIER = "node"              # tier 0: ranks inside one node
CPU_BACKENDS = ("gloo",)
ACCEPT_CPU_HINT = ("pass --accept-cpu to use them anyway (a demo of the pipeline, not a prediction), or run the probe "
                   "with --backend nccl on the GPUs of that tier")

_PROM_LINE = re.compile(r'^(trainstack_probe_[a-z_]+)\{([^}]*)\}\s+(\S+)')
_PROM_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def read(path: str | Path, shown: str | None = None) -> list[dict]:
    """Every record of a results file, checked and in the one shape (see the module docstring)."""
    shown = shown or str(path)
    text = yamlio.read_text(Path(path), shown)   # a regular file within the size limit
    defaults: dict = {}
    if text.lstrip().startswith(("{", "[")):
        data = yamlio.loads_json(text, shown, "expected JSON probe results")   # bounded; NaN and inf refused
        records, where, defaults = _document(data, shown)
    else:
        records, where = _from_exposition(text, shown), "(metrics)"
    out = [_record(r, f"{where}[{i}]", shown, defaults) for i, r in enumerate(records)]
    if not out:
        raise InputError(shown, "", "no probe results in the file")
    return out


def _document(data: object, shown: str) -> tuple[list, str, dict]:
    if isinstance(data, list):
        return data, "", {}
    if not isinstance(data, dict):
        raise InputError(shown, "(document)", f"expected a list of probe records (or {{\"results\": [...]}}), "
                          f"got {show(data)}")
    version = data.get("format", FORMAT)     # documents written before the format was versioned are v1
    if version != FORMAT:
        raise InputError(shown, "format", f"expected {FORMAT!r} (this trainstack reads that version), got "
                          f"{show(version)}")
    if not isinstance(data.get("results"), list):
        raise InputError(shown, "results", f"expected a list of probe records, got {show(data.get('results'))}")
    meta = data.get("probe") if isinstance(data.get("probe"), dict) else {}
    return data["results"], "results", {k: meta[k] for k in ("tier", "backend", "nodes") if k in meta}


# What a measurement can be: a nanosecond to a day, at most an exbibyte, ten million ranks.
MIN_TIME_S = 1e-9
RANGES = {"time_s": 86400.0, "bytes": 2**60, "world_size": 10**7, "nodes": 10**6, "ranks_per_node": 10**4}


def _record(r: object, at: str, shown: str, defaults: dict) -> dict:
    if not isinstance(r, dict):
        raise InputError(shown, at, f"expected a probe record (a mapping), got {show(r)}")
    r = {**defaults, **r}
    for key, kind in (("collective", str), ("bytes", int), ("world_size", int), ("time_s", (int, float))):
        if not isinstance(r.get(key), kind) or isinstance(r.get(key), bool):
            raise InputError(shown, f"{at}.{key}", f"expected {key} in every probe record, got {show(r.get(key))}")
    if r["collective"] not in measure.COLLECTIVES:
        raise InputError(shown, f"{at}.collective", f"expected one of {', '.join(measure.COLLECTIVES)}, "
                          f"got {show(r['collective'])}")
    for key, low in (("bytes", 1), ("time_s", 0), ("world_size", 2)):
        # NaN compares false both ways: only a finite time is a measurement (the exposition can say NaN or +Inf)
        if r[key] < low or (key == "time_s" and not (math.isfinite(r[key]) and r[key] > 0)):
            raise InputError(shown, f"{at}.{key}", f"expected a positive number{' >= 2' if low == 2 else ''}, "
                              f"got {show(r[key])}")
    for key, high in RANGES.items():   # beyond these the fits divide by zero or overflow
        value = r.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and not \
                (value <= high and (key != "time_s" or value >= MIN_TIME_S)):
            raise InputError(shown, f"{at}.{key}", f"expected at most {high:g}"
                              + (f" and at least {MIN_TIME_S:g}" if key == "time_s" else "") + f", got {show(value)}")
    tier = r.get("tier", NODE_TIER)
    if isinstance(tier, bool) or not (isinstance(tier, str) and tier or isinstance(tier, int) and 0 <= tier <= 100):
        raise InputError(shown, f"{at}.tier", f"expected a tier name (node = inside one node, or a fabric tier "
                          f"name) or a tier number >= 0, got {show(tier)}")
    nodes = r.get("nodes") if isinstance(r.get("nodes"), int) and not isinstance(r.get("nodes"), bool) else 1
    per_node = r.get("ranks_per_node")
    if per_node is not None and (isinstance(per_node, bool) or not isinstance(per_node, int) or per_node < 1):
        raise InputError(shown, f"{at}.ranks_per_node", f"expected a whole number of ranks >= 1, got {show(per_node)}")
    backend = str(r.get("backend") or "")
    return {**r, "tier": tier, "nodes": max(1, nodes),
            "ranks_per_node": per_node or max(1, r["world_size"] // max(1, nodes)),
            "backend": backend, "representative": backend not in CPU_BACKENDS, "source": shown}


def _from_exposition(text: str, shown: str) -> list[dict]:
    times: dict[tuple, float] = {}
    per_tier: dict[str, dict[str, float]] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        match = _PROM_LINE.match(line)
        if not match:
            continue
        name, labels = match.group(1), dict(_PROM_LABEL.findall(match.group(2)))
        try:
            value = float(match.group(3))
        except ValueError:
            raise InputError(shown, f"line {number}", f"expected a sample value (a number) for {name}, got "
                              f"{show(match.group(3))}") from None
        tier = labels.get("tier", NODE_TIER)
        if name == "trainstack_probe_time_seconds":
            if "collective" not in labels or not is_ascii_digits(labels.get("bytes", "")) or len(labels["bytes"]) > 19:
                raise InputError(shown, f"line {number}", f"expected {name} with labels collective=\"...\" and "
                                  f"bytes=\"<whole number>\", got {{{match.group(2)}}}")
            times[(tier, labels["collective"], int(labels["bytes"]))] = value
        elif name in ("trainstack_probe_world_size", "trainstack_probe_nodes"):
            if not (math.isfinite(value) and 0 <= value <= RANGES["world_size"]):
                raise InputError(shown, f"line {number}", f"expected a count for {name}, got {show(match.group(3))}")
            per_tier.setdefault(tier, {})[name.rsplit("_", 1)[-1] if name.endswith("nodes") else "world"] = value
        elif name == "trainstack_probe_info":
            per_tier.setdefault(tier, {})["backend:" + labels.get("backend", "")] = 1
    out = []
    for (tier, collective, nbytes), seconds in sorted(times.items()):
        info = per_tier.get(tier, {})
        world, nodes = int(info.get("world", 0)), int(info.get("nodes", 1)) or 1
        backend = next((k.split(":", 1)[1] for k in info if k.startswith("backend:")), "")
        out.append({"collective": collective, "bytes": nbytes, "world_size": world, "time_s": seconds,
                    "tier": tier, "nodes": nodes, "ranks_per_node": max(1, world // nodes), "backend": backend})
    return out


def busbw_gbps(record: dict) -> float:
    """A checked record's bus bandwidth in GB/s, as the probe computes it (``measure.record``:
    algbw = S / t, busbw = algbw x the collective's factor)."""
    return measure.record(record["collective"], record["bytes"], record["world_size"], record["time_s"],
                          record["time_s"])["busbw_gbps"]


def exported_gauges() -> frozenset[str]:
    """The names of the gauges the probe exports, read from its own exposition (``measure.exposition``,
    which ships alone in the probe's ConfigMap): a gauge added there is known here without a list."""
    text = measure.exposition([measure.record("all_reduce", 1 << 20, 2, 1.0, 1.0)], NODE_TIER, 0.0, "nccl")
    return frozenset(line.split()[2] for line in text.splitlines()
                     if line.startswith("# TYPE ") and line.endswith(" gauge"))


def tier_number(record: dict, tier_names: dict[int, str]) -> int | None:
    """The fabric tier a record measured (0 = inside a node), or None when the stack has no such tier."""
    tier = record["tier"]
    if isinstance(tier, int):
        return tier
    if tier == NODE_TIER:
        return 0
    return next((t for t, name in tier_names.items() if name == tier), None)


def numbered(records: list[dict], tier_names: dict[int, str]) -> tuple[list[dict], list[str]]:
    """Records with ``tier`` as the fabric's tier number; notes for those whose tier the stack lacks."""
    names = {0: NODE_TIER, **tier_names}
    out, notes = [], []
    for r in records:
        tier = tier_number(r, names)
        if tier in names:
            out.append({**r, "tier": tier})
        else:
            notes.append(f"{r['source']}: results for tier {r['tier']!r} ignored: the stack's tiers are "
                         f"{', '.join(names.values())}")
    return out, list(dict.fromkeys(notes))


def require_representative(records: list[dict], accept_cpu: bool, command: str) -> list[str]:
    """Refuse CPU (gloo) results as GPU tier measurements unless ``accept_cpu``; then the notes to print."""
    cpu = [r for r in records if not r["representative"]]
    if not cpu:
        return []
    sources = sorted({r["source"] for r in cpu})
    what = (f"{len(cpu)} probe result(s) were measured with {cpu[0]['backend']} on CPUs, which says nothing "
            "about NVLink or InfiniBand")
    if not accept_cpu:
        raise InputError(sources[0], "backend", f"{what}; {command} does not treat them as GPU tier measurements: "
                          f"{ACCEPT_CPU_HINT}")
    return [f"{what}; used because of --accept-cpu: the figures below are not representative of the GPU fabric"]
