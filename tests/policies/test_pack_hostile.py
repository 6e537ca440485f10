"""The policy pack and `preview` under hostile input: a request nested past the protobuf limit is
refused with an error and the pack lives on; a pack that does not answer ends the run at the RPC
deadline in one line; a configuration over the 128 KiB an environment string may hold reaches the
pack through a file; a PULUMI_CONFIG in the user's environment does not crash `preview`."""
from __future__ import annotations

import grpc
import pytest

from policies import pack as pack_module
from policies.driver import Pack, PackError
from pulumi.runtime.proto import analyzer_pb2 as apb
from tests.support.cli import ROOT, run_process


def _field(number: int, payload: bytes) -> bytes:
    """A length-delimited protobuf field."""
    def varint(n: int) -> bytes:
        out = b""
        while True:
            low, n = n & 0x7F, n >> 7
            if not n:
                return out + bytes([low])
            out += bytes([low | 0x80])
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def deep_request(levels: int) -> bytes:
    """An AnalyzeRequest whose properties are a Struct nested ``levels`` objects deep, encoded by
    hand (protobuf's own encoder recurses as its parser does)."""
    struct = b""
    for _ in range(levels):
        value = _field(5, struct)                            # Value.struct_value
        struct = _field(1, _field(1, b"a") + _field(2, value))  # Struct.fields["a"]
    return _field(1, b"kubernetes:core/v1:ConfigMap") + _field(2, struct)


def test_message_depth_reads_the_wire_format():
    descriptor = apb.AnalyzeRequest.DESCRIPTOR
    assert pack_module.message_depth(deep_request(10), descriptor) == 2 + 3 * 10   # request, Struct, 3 a level
    assert pack_module.message_depth(deep_request(5000), descriptor) == pack_module.MAX_MESSAGE_DEPTH + 1
    assert pack_module.message_depth(b"\xff\xff", descriptor) == 0   # malformed: the parser says so
    # pruned (as requests are checked): short subtrees are skipped, a request past the limit still is
    assert pack_module.message_depth(deep_request(10), descriptor, prune=True) <= pack_module.MAX_MESSAGE_DEPTH
    assert pack_module.message_depth(deep_request(5000), descriptor, prune=True) == pack_module.MAX_MESSAGE_DEPTH + 1
    wide = b"".join(deep_request(3) for _ in range(300)) + deep_request(5000)   # concatenated messages merge
    assert pack_module.message_depth(wide, descriptor, prune=True) == pack_module.MAX_MESSAGE_DEPTH + 1


@pytest.fixture(scope="module")
def running():
    ports: list[int] = []
    read_port = Pack._read_port

    def remember(self, timeout):
        ports.append(read_port(self, timeout))
        return ports[-1]
    Pack._read_port = remember
    try:
        started = Pack("dev", "trainstack", {"kubernetes:context": "c" * 140_000})   # over 128 KiB
        started.stub   # connects (reads the port) now, not on the first call
    finally:
        Pack._read_port = read_port
    with started:
        yield started, ports[0]


def test_an_over_deep_request_is_refused_and_the_pack_lives(running):
    started, port = running
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        call = channel.unary_unary("/pulumirpc.Analyzer/Analyze", request_serializer=lambda b: b,
                                   response_deserializer=lambda b: b)
        with pytest.raises(grpc.RpcError) as refused:
            call(deep_request(5000), timeout=30)
        assert refused.value.code() == grpc.StatusCode.INTERNAL
        answer = apb.AnalyzeResponse.FromString(call(deep_request(20), timeout=30))   # alive, and it answers
        assert {d.policyName for d in answer.diagnostics} <= {"kubernetes-api-validation"}   # it has no name
    assert started.process.poll() is None
    assert "nested more than 400 messages deep" in started.stderr()


def test_a_config_over_128_kib_reaches_the_pack(running):
    started, _ = running
    assert started.info().name == "trainstack"


def test_a_pack_past_the_deadline_is_one_pack_error():
    """A pack that never answers (here a server whose Analyze waits) ends at the deadline."""
    import threading
    from concurrent import futures

    from pulumi.runtime.proto import analyzer_pb2_grpc

    release = threading.Event()

    class Hanging(analyzer_pb2_grpc.AnalyzerServicer):
        def Analyze(self, request, context):
            release.wait(30)
            return apb.AnalyzeResponse()

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    analyzer_pb2_grpc.add_AnalyzerServicer_to_server(Hanging(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            hanging = Pack.__new__(Pack)
            hanging._stub, hanging.deadline = analyzer_pb2_grpc.AnalyzerStub(channel), 0.5
            with pytest.raises(PackError, match=r"did not answer Analyze within 0.5 s \(the gRPC deadline\)"):
                hanging._call("Analyze", apb.AnalyzeRequest(type="kubernetes:core/v1:ConfigMap"))
    finally:
        release.set()
        server.stop(None)


@pytest.mark.parametrize("value", ["not json"])   # a list or another stack's keys took the same path
def test_pulumi_config_in_the_environment_does_not_crash_preview(monkeypatch, value):
    monkeypatch.setenv("PULUMI_CONFIG", value)
    result = run_process("preview", "dev", cwd=ROOT, timeout=300)
    assert result.code in (0, 1), result.err[-800:]
    assert "Traceback" not in result.err and "internal error" not in result.err
