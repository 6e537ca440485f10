"""Review fixes in modules/nccl/variables.py (NCCL's documented variables, src/debug.cc and
graph/connect.cc): values NCCL accepts are not reported as mistakes."""
from __future__ import annotations

import pytest

from modules.nccl import variables


@pytest.mark.parametrize("env", [
    {"NCCL_DEBUG": "info"},          # NCCL compares the level with strcasecmp
    {"NCCL_DEBUG": "Warn"},
    {"NCCL_MIN_NRINGS": "4"},        # legacy aliases of NCCL_MIN/MAX_NCHANNELS, still read
    {"NCCL_MAX_NRINGS": "32"},
])
def test_values_nccl_reads_are_not_problems(env):
    assert variables.problems(env) == []


@pytest.mark.parametrize("env, words", [
    ({"NCCL_DEBUG": "verbose"}, "one of VERSION, WARN, INFO, TRACE"),
    ({"NCCL_MAX_NRINGS": "65"}, "an integer 1-64"),
    ({"nrings": "4"}, "not an NCCL setting"),
])
def test_wrong_values_still_are(env, words):
    problems = variables.problems(env)
    assert len(problems) == 1 and words in problems[0][1]
