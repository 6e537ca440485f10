"""The probe's pure parts: nccl-tests definitions, sizes, exposition text, the Pushgateway PUT and
the CronJob's launcher (against local HTTP servers on 127.0.0.1)."""
from __future__ import annotations

import http.server
import json
import subprocess
import threading

import pytest

from modules.probe import launcher, measure

from tests.support.observability import promtool


@pytest.mark.parametrize("collective, n, factor", [
    ("all_reduce", 2, 1.0), ("all_reduce", 4, 1.5), ("all_reduce", 8, 1.75),
    ("all_gather", 2, 0.5), ("all_gather", 8, 0.875), ("reduce_scatter", 4, 0.75),
    ("sendrecv", 8, 1.0), ("broadcast", 16, 1.0),
])
def test_busbw_factors_follow_nccl_tests(collective, n, factor):
    assert measure.busbw_factor(collective, n) == pytest.approx(factor)


def test_record_computes_algbw_and_busbw():
    r = measure.record("all_reduce", 1 << 30, 16, time_max=0.01, time_mean=0.009)
    assert r["algbw_gbps"] == pytest.approx((1 << 30) / 0.01 / 1e9)
    assert r["busbw_gbps"] == pytest.approx(r["algbw_gbps"] * 2 * 15 / 16)


def test_counted_bytes_are_whole_elements_per_rank():
    # all_gather/reduce_scatter count the gathered total: it must split into n float32 chunks
    assert measure.counted_bytes("all_gather", 1 << 20, 3) % (3 * 4) == 0
    assert measure.counted_bytes("all_reduce", 1 << 20, 3) == 1 << 20
    assert measure.counted_bytes("reduce_scatter", 10, 4) == 16   # at least one element per rank


def test_sizes():
    assert measure.parse_sizes("1MiB-8MiB") == [1 << 20, 2 << 20, 4 << 20, 8 << 20]
    assert measure.parse_sizes("64MiB,1MiB,1GiB") == [1 << 20, 64 << 20, 1 << 30]
    assert measure.parse_sizes("4096") == [4096]
    assert list(measure.DEFAULT_SIZES) == measure.parse_sizes("1MiB-1GiB")
    assert measure.format_size(3 << 20) == "3MiB"
    for bad in ("1XB", "", "0", "8MiB-1MiB", "-1"):
        with pytest.raises(ValueError):
            measure.parse_sizes(bad)


def test_exposition_passes_promtool_check_metrics():
    records = [measure.record(c, 1 << 20, 2, 0.002, 0.0019, nodes=1) for c in measure.DEFAULT_COLLECTIVES]
    text = measure.exposition(records, "leaf", 1795000000.5, "nccl")
    assert 'trainstack_probe_busbw_gbps{tier="leaf",collective="all_reduce",bytes="1048576"}' in text
    assert 'trainstack_probe_last_success_timestamp_seconds{tier="leaf"} 1795000000.5' in text
    result = subprocess.run([promtool(), "check", "metrics"], input=text, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


class _Recorder(http.server.BaseHTTPRequestHandler):
    calls: list = []
    responses: dict = {}

    def _handle(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        type(self).calls.append((self.command, self.path, dict(self.headers), body))
        status, payload = type(self).responses.get((self.command, self.path), (200, b"{}"))
        if callable(payload):
            payload = payload()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = do_PUT = do_POST = do_DELETE = _handle

    def log_message(self, *args):   # keep test output clean
        pass


@pytest.fixture
def server():
    handler = type("Handler", (_Recorder,), {"calls": [], "responses": {}})
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    yield handler, f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_push_puts_the_group_to_the_pushgateway(server):
    handler, url = server
    text = measure.exposition([measure.record("all_reduce", 1 << 20, 2, 0.002, 0.002, nodes=1)], "spine", 1.0, "nccl")
    assert measure.push(url + "/", text, "spine") == 200
    method, path, headers, body = handler.calls[0]
    assert (method, path) == ("PUT", "/metrics/job/trainstack-probe/tier/spine")
    assert headers["Content-Type"].startswith("text/plain; version=0.0.4")
    assert body.decode() == text


def test_push_failure_raises(server):
    handler, url = server
    handler.responses[("PUT", "/metrics/job/trainstack-probe/tier/leaf")] = (400, b"bad")
    with pytest.raises(OSError):
        measure.push(url, "x 1\n", "leaf")


def test_launcher_creates_each_job_and_waits_for_it(server, tmp_path):
    handler, url = server
    jobs = "/apis/batch.volcano.sh/v1alpha1/namespaces/training/jobs"
    phases = iter(["Pending", "Running", "Completed"])
    handler.responses[("POST", jobs)] = (201, json.dumps({"metadata": {"name": "fabric-probe-leaf-x7k2q"}}).encode())
    handler.responses[("GET", f"{jobs}/fabric-probe-leaf-x7k2q")] = (
        200, lambda: json.dumps({"status": {"state": {"phase": next(phases)}}}).encode())
    template = tmp_path / "probe-leaf.json"
    template.write_text(json.dumps({"metadata": {"generateName": "fabric-probe-leaf-",
                                                 "labels": {"trainstack.io/probe-run": "__RUN_ID__"}}}))
    token = tmp_path / "token"
    token.write_text("secret-token\n")
    code = launcher.main([str(template), "--namespace", "training", "--api", url, "--poll", "0.01",
                          "--token-file", str(token), "--ca-file", str(tmp_path / "absent")])
    assert code == 0
    method, path, headers, body = handler.calls[0]
    assert (method, path) == ("POST", jobs)
    assert headers["Authorization"] == "Bearer secret-token"
    run = json.loads(body)["metadata"]["labels"]["trainstack.io/probe-run"]
    assert run.startswith("probe-leaf-") and "__RUN_ID__" not in body.decode()
    assert [c[0] for c in handler.calls] == ["POST", "GET", "GET", "GET"]


def test_launcher_deletes_a_job_that_overruns(server, tmp_path):
    handler, url = server
    jobs = "/apis/batch.volcano.sh/v1alpha1/namespaces/training/jobs"
    handler.responses[("POST", jobs)] = (201, json.dumps({"metadata": {"name": "stuck"}}).encode())
    handler.responses[("GET", f"{jobs}/stuck")] = (
        200, json.dumps({"status": {"state": {"phase": "Pending"}}}).encode())
    template = tmp_path / "probe-core.json"
    template.write_text("{}")
    code = launcher.main([str(template), "--namespace", "training", "--api", url, "--poll", "0.01",
                          "--timeout", "0.05", "--token-file", str(tmp_path / "none")])
    assert code == 1
    assert ("DELETE", f"{jobs}/stuck") in [(c[0], c[1]) for c in handler.calls]
