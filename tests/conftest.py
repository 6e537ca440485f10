"""Suite-wide settings for upstream's admission rules (rule `upstream-admission`), bytecode, the
modules' early processes (one pytest process) and the sharing of modules among pytest-xdist workers
(`make test`, tests/support/parallel.py).

The tests never read or write the user's cache (~/.cache/trainstack): every session gets its own.
Upstream's admission rules are read from ../shared/admission and ../shared/crds (or
$TRAINSTACK_ADMISSION_DIR / $TRAINSTACK_CRD_DIR) by every test; without them the rule reports its
one "not evaluated" note and tests/policies/admission/test_admission.py skips.
"""
from __future__ import annotations

import os
import shutil
import sys
import tempfile

import pytest

# Evaluate upstream's admission rules in every test (all runners, every table case, every shipped
# stack) when ../shared/admission and ../shared/crds (or the env vars) are there.
UPSTREAM_RULES_EVERYWHERE = True


_KEYS = ("TRAINSTACK_CACHE_DIR", "TRAINSTACK_ADMISSION_DIR", "TRAINSTACK_CRD_DIR", "PYTHONDONTWRITEBYTECODE")
_SAVED: dict[str, str | None] = {}
_SAVED_BYTECODE: list[bool] = []


def pytest_sessionstart(session):
    """Before collection, so that processes started early (``start_early``) see the same environment."""
    from tests.support.admission import shared_dirs

    _SAVED.update({k: os.environ.get(k) for k in _KEYS})
    # Bytecode is written and read back even where the environment asks not to write it: the suite
    # starts many interpreters that import the same modules (CLI processes, the hostile runners, the
    # pack, torchrun's ranks), and each would compile them from source again (`check prod` as a
    # process: 0.22 s with bytecode, 0.38 s without); pytest would rewrite every test module's
    # asserts again in every run.
    _SAVED_BYTECODE.append(sys.dont_write_bytecode)
    sys.dont_write_bytecode = False
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ["TRAINSTACK_CACHE_DIR"] = tempfile.mkdtemp(prefix="trainstack-cache-")
    dirs = shared_dirs() if UPSTREAM_RULES_EVERYWHERE else None
    if dirs:
        os.environ["TRAINSTACK_ADMISSION_DIR"], os.environ["TRAINSTACK_CRD_DIR"] = map(str, dirs)
    else:
        os.environ.pop("TRAINSTACK_ADMISSION_DIR", None)


def _restore_environment() -> None:
    if not _SAVED:
        return
    shutil.rmtree(os.environ["TRAINSTACK_CACHE_DIR"], ignore_errors=True)
    if _SAVED_BYTECODE:
        sys.dont_write_bytecode = _SAVED_BYTECODE.pop()
    for key, value in _SAVED.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value
    _SAVED.clear()


def _early_modules(session) -> list:
    modules = []
    for item in session.items:
        module = getattr(item, "module", None)
        if module is not None and hasattr(module, "start_early") and module not in modules:
            modules.append(module)
    return modules


@pytest.hookimpl(optionalhook=True)   # pytest-xdist's: `make test` runs the suite on one worker per core
def pytest_xdist_make_scheduler(config, log):
    """``--dist loadfile`` (as `make test` asks) with the slow modules first (tests/support/parallel.py)."""
    if config.getvalue("dist") == "loadfile":
        from tests.support.parallel import ByModule

        return ByModule(config, log)
    return None


def pytest_collection_finish(session):
    """A test module may start its slow subprocesses (``start_early()``) as soon as the run is known:
    they then use the second core while pytest works through the other tests on one. Not under
    pytest-xdist workers, where each worker collects everything but runs only its share."""
    if os.environ.get("PYTEST_XDIST_WORKER") or session.config.option.collectonly:
        return
    for module in _early_modules(session):
        module.start_early()


def pytest_sessionfinish(session):
    for module in _early_modules(session):
        if hasattr(module, "stop_early"):
            module.stop_early()
    _restore_environment()
