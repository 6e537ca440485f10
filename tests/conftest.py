"""Suite-wide settings for upstream's admission rules (rule `upstream-admission`).

The tests never read or write the user's cache (~/.cache/trainstack): every session gets its own.
Upstream's admission rules are read from ../shared/admission and ../shared/crds (or
$TRAINSTACK_ADMISSION_DIR / $TRAINSTACK_CRD_DIR) by every test; without them the rule reports its
one "not evaluated" note and tests/policies/test_admission.py skips.
"""
from __future__ import annotations

import os

import pytest

# Evaluate upstream's admission rules in every test (all runners, every table case, every shipped
# stack) when ../shared/admission and ../shared/crds (or the env vars) are there.
UPSTREAM_RULES_EVERYWHERE = True


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
