"""Suite-wide settings for upstream's admission rules (rule `upstream-admission`).

The tests never read or write the user's cache (~/.cache/trainstack): every session gets its own.
Tests that evaluate upstream's rules point at ../shared/admission and ../shared/crds themselves
(tests/policies/test_admission.py, via tests/support/admission.py).
"""
from __future__ import annotations

import os

import pytest

# Evaluate upstream's admission rules in every test (all runners, every table case). Off until the
# prod Queue `production` sets `deserved` (branch admission-fixes): upstream rejects that Queue, so
# every prod case would fail on it. Flip to True when that fix is merged.
UPSTREAM_RULES_EVERYWHERE = False


@pytest.fixture(scope="session", autouse=True)
def _admission_environment(tmp_path_factory):
    from tests.support.admission import shared_dirs

    saved = {k: os.environ.get(k) for k in ("TRAINSTACK_CACHE_DIR", "TRAINSTACK_ADMISSION_DIR", "TRAINSTACK_CRD_DIR")}
    os.environ["TRAINSTACK_CACHE_DIR"] = str(tmp_path_factory.mktemp("trainstack-cache"))
    dirs = shared_dirs() if UPSTREAM_RULES_EVERYWHERE else None
    if dirs:
        os.environ["TRAINSTACK_ADMISSION_DIR"], os.environ["TRAINSTACK_CRD_DIR"] = map(str, dirs)
    else:
        os.environ.pop("TRAINSTACK_ADMISSION_DIR", None)
    yield
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value
