"""Where the tests find upstream's admission rules: ../shared/admission (Volcano's policy files, v1.15.1)
and ../shared/crds (the upstream CRDs), or $TRAINSTACK_ADMISSION_DIR / $TRAINSTACK_CRD_DIR."""
from __future__ import annotations

import contextlib
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
KEYS = ("TRAINSTACK_ADMISSION_DIR", "TRAINSTACK_CRD_DIR")


def shared_dirs() -> tuple[Path, Path] | None:
    admission = Path(os.environ.get("TRAINSTACK_ADMISSION_DIR") or ROOT.parent / "shared" / "admission")
    crds = Path(os.environ.get("TRAINSTACK_CRD_DIR") or ROOT.parent / "shared" / "crds")
    if (admission / "volcano").is_dir() and crds.is_dir():
        return admission.resolve(), crds.resolve()
    return None


def require_shared_dirs() -> tuple[Path, Path]:
    dirs = shared_dirs()
    if dirs is None:
        pytest.skip("upstream admission rules not found: keep ../shared/admission and ../shared/crds beside the "
                    "project or set TRAINSTACK_ADMISSION_DIR and TRAINSTACK_CRD_DIR")
    return dirs


@contextlib.contextmanager
def admission_env(admission: Path | None, crds: Path | None):
    """Point this process (and the subprocesses it starts: the CLI, the pack) at these folders."""
    saved = {k: os.environ.get(k) for k in KEYS}
    for key, value in zip(KEYS, (admission, crds)):
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = str(value)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
