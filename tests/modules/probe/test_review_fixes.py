"""Review fixes in modules/probe: odd probe results and flags are clear InputErrors (exit 2, file,
path, what was expected), never a traceback or a silent default."""
from __future__ import annotations

import pytest

from modules.core.errors import InputError
from modules.probe import results

TIME = 'trainstack_probe_time_seconds{tier="node",collective="all_reduce",bytes="1048576"} '
WORLD = 'trainstack_probe_world_size{tier="node"} 8\n'


def _read(tmp_path, text: str, name: str = "r.prom") -> list[dict]:
    path = tmp_path / name
    path.write_text(text)
    return results.read(path)


@pytest.mark.parametrize("text, path, expected", [
    # a time sample without the labels the reader keys on (was KeyError / ValueError)
    ('trainstack_probe_time_seconds{tier="node",bytes="1048576"} 0.1\n', "line 1", 'collective="..."'),
    ('trainstack_probe_time_seconds{tier="node",collective="all_reduce",bytes="1MiB"} 0.1\n', "line 1",
     'bytes="<whole number>"'),
    # a sample value that is no number (was ValueError)
    (WORLD + TIME + "abc\n", "line 2", "expected a sample value"),
    # NaN or infinite counts (was ValueError / OverflowError in int())
    (TIME + "0.1\ntrainstack_probe_world_size{tier=\"node\"} NaN\n", "line 2", "expected a count"),
    (TIME + "0.1\n" + WORLD + 'trainstack_probe_nodes{tier="node"} +Inf\n', "line 3", "expected a count"),
    # a NaN or infinite time passed every check and made the fit NaN
    (TIME + "NaN\n" + WORLD, "(metrics)[0].time_s", "expected a positive number"),
    (TIME + "+Inf\n" + WORLD, "(metrics)[0].time_s", "expected a positive number"),
])
def test_odd_exposition_is_an_input_error(tmp_path, text, path, expected):
    with pytest.raises(InputError) as err:
        _read(tmp_path, text)
    assert err.value.path == path and expected in err.value.message
    assert str(tmp_path / "r.prom") in str(err.value)


@pytest.mark.parametrize("value", ['"x"', "0", "-2", "true", "1.5"])
def test_ranks_per_node_must_be_a_whole_number(tmp_path, value):
    text = ('[{"collective": "all_reduce", "bytes": 1048576, "world_size": 8, "time_s": 0.1, '
            f'"ranks_per_node": {value}}}]')
    with pytest.raises(InputError) as err:
        _read(tmp_path, text, "r.json")
    assert err.value.path == "[0].ranks_per_node"


def test_good_exposition_still_reads(tmp_path):
    records = _read(tmp_path, TIME + "0.1\n" + WORLD)
    assert [(r["collective"], r["bytes"], r["world_size"], r["time_s"]) for r in records] == \
        [("all_reduce", 1048576, 8, 0.1)]


NCCL_RESULTS = ('[{"collective": "all_reduce", "bytes": 1048576, "world_size": 8, "time_s": 0.0001, '
                '"backend": "nccl"}, {"collective": "all_reduce", "bytes": 1073741824, "world_size": 8, '
                '"time_s": 0.006, "backend": "nccl"}]')


@pytest.mark.parametrize("flag, value", [
    ("--gpu-memory-gb", "nan"),    # was blamed on --gpus ("cannot convert float NaN to integer")
    ("--gpu-memory-gb", "0"),      # was silently ignored (80 GB assumed)
    ("--gpu-memory-gb", "-80"),    # was used: TP=1 for a 70B model
    ("--gpu-memory-gb", "inf"),
    ("--gpus", "0"),               # was silently the whole fabric
])
def test_recommend_refuses_meaningless_sizes(tmp_path, flag, value):
    from tests.support.cli import run

    probe = tmp_path / "probe.json"
    probe.write_text(NCCL_RESULTS)
    result = run("recommend", "dev", "--probe", str(probe), flag, value)
    assert result.code == 2, result.out
    assert f"trainstack recommend: {flag}: expected" in result.err
    assert "Traceback" not in result.err


@pytest.mark.parametrize("flag, value", [("--nproc", "1000"), ("--iters", "-1"), ("--warmup", "-3")])
def test_probe_flags_are_checked_before_torchrun_starts(monkeypatch, flag, value):
    """--nproc 1000 started 1000 torch processes; negative counts failed inside every rank."""
    import importlib.util

    from modules.probe import commands
    from tests.support.cli import run

    if importlib.util.find_spec("torch") is None:
        pytest.skip("trainstack probe checks for torch first")

    def no_torchrun(*args, **kwargs):
        raise AssertionError("torchrun started")
    monkeypatch.setattr(commands.subprocess, "run", no_torchrun)
    result = run("probe", flag, value)
    assert result.code == 2 and f"trainstack probe: {flag}: expected" in result.err, result.err


class _FlakyApi:
    """The API server: creates the Job, fails the first status reads, then reports it Completed."""

    def __init__(self, failures: list[Exception]):
        self.failures = list(failures)
        self.calls: list[tuple[str, str]] = []

    def call(self, method: str, path: str, body: dict | None = None) -> dict:
        self.calls.append((method, path))
        if method == "POST":
            return {"metadata": {"name": "probe-leaf-x"}}
        if method == "GET" and self.failures:
            raise self.failures.pop(0)
        return {"status": {"state": {"phase": "Completed"}}}


def test_launcher_keeps_waiting_through_api_blips():
    """A transient error while polling abandoned the running Job; the next tier then ran beside it."""
    import io
    import urllib.error

    from modules.probe import launcher

    api = _FlakyApi([urllib.error.URLError("connection refused"),
                     urllib.error.HTTPError("u", 503, "Service Unavailable", {}, io.BytesIO()),
                     ConnectionResetError("reset")])
    logged: list[str] = []
    assert launcher.launch(api, "training", "{}", "run-1", timeout=30, poll=0, log=logged.append) is True
    assert [m for m, _ in api.calls] == ["POST", "GET", "GET", "GET", "GET"]
    assert sum("retrying" in line for line in logged) == 3 and "finished: Completed" in logged[-1]
