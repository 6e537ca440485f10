"""The IANA time zone names an upstream Go webhook accepts in ``time.LoadLocation``, pinned.

Volcano's CronJob webhook (and the API server's CronJob ``timeZone``) resolve the name with Go's
``time.LoadLocation``, whose answer depends on the zone database of the machine (or the one the
binary embeds). A verdict here must not depend on the machine that runs trainstack, so the names come
from one release of the database, vendored in ``timezones.json``: the ``tzdata/zones`` list of the
``tzdata`` PyPI package (``python -m modules.core.vocabulary.timezones WHEEL`` regenerates it).
The host's ``/usr/share/zoneinfo`` is never read: a slim image without one, or a host whose
database holds ``localtime``, gives the same verdict as any other.
"""
from __future__ import annotations

import hashlib
import json
import sys
import zipfile
from functools import lru_cache
from pathlib import Path

DATA = Path(__file__).with_name("timezones.json")


@lru_cache(maxsize=1)
def zones() -> frozenset[str]:
    """Every zone name of the pinned release (``UTC`` and the backward-compatible links included)."""
    return frozenset(json.loads(DATA.read_text(encoding="utf-8"))["zones"])


def release() -> str:
    """The IANA release of the pinned names (e.g. ``2026f``)."""
    return str(json.loads(DATA.read_text(encoding="utf-8"))["iana"])


def from_wheel(wheel: Path) -> dict:
    """The content of ``timezones.json`` from a ``tzdata`` wheel."""
    with zipfile.ZipFile(wheel) as z:
        names = z.read("tzdata/zones").decode("utf-8").split()
        init = z.read("tzdata/__init__.py").decode("utf-8")
    fields = dict(line.replace('"', "").split(" = ", 1) for line in init.splitlines() if " = " in line)
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    return {"source": f"PyPI tzdata {fields['__version__']} (tzdata/zones), {wheel.name} sha256 {digest}",
            "iana": fields["IANA_VERSION"], "zones": sorted(names)}


def main(argv: list[str]) -> int:
    """``python -m modules.core.vocabulary.timezones WHEEL``: print timezones.json from a tzdata wheel."""
    if len(argv) != 1 or not Path(argv[0]).is_file():
        print("usage: python -m modules.core.vocabulary.timezones TZDATA_WHEEL", file=sys.stderr)
        return 2
    sys.stdout.write(json.dumps(from_wheel(Path(argv[0])), indent=0) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
