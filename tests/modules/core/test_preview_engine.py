"""The program under mocks registers exactly what the SDK would send, at less cost: the source
positions are the SDK's own, and every registration request is byte for byte the one the SDK
sends without trainstack's lighter path, and with pulumi_kubernetes' own CustomResource class."""
from __future__ import annotations

from contextlib import nullcontext

import pulumi_kubernetes as k8s
import pytest
from pulumi.runtime import resource as sdk_resource

from modules.core import preview_engine, pulumi_adapter
from modules.core.config import pulumi_config_map
from modules.core.preview_engine import run_program, stack_trace
from tests.support.cli import ROOT
from tests.support.stacks import shipped

SDK_STACK_TRACE = sdk_resource._get_stack_trace   # outside a run: the SDK's own


class Base:
    def __init__(self, out: list) -> None:   # as Resource.__init__: asks for the stack here
        out.append((stack_trace(), SDK_STACK_TRACE()))


class Middle(Base):
    def __init__(self, out: list) -> None:   # as CustomResource.__init__
        super().__init__(out)


class Concrete(Middle):
    def __init__(self, out: list) -> None:   # as a concrete resource class
        super().__init__(out)


def _construct(out: list) -> None:   # user code: the first frame of the trace
    Concrete(out)


def test_stack_trace_is_the_sdks():
    out: list = []
    _construct(out)
    exec(compile("_construct(out)", "<string>", "exec"), {"_construct": _construct, "out": out})   # no file URI
    Middle(out)   # fewer than three constructors: no trace
    for ours, sdks in out:
        assert ours.SerializeToString() == sdks.SerializeToString()
    assert out[0][0].frames[0].pc.uri.endswith("test_preview_engine.py")
    assert any(not frame.HasField("pc") for frame in out[1][0].frames)   # the exec'd frame has no position
    assert not out[2][0].frames


def _normalized(request) -> bytes:
    """The request's bytes with its dependency lists sorted: the SDK gathers them from sets, so
    their order differs between any two runs (the engine reads them as sets)."""
    copy = type(request)()
    copy.CopyFrom(request)
    copy.dependencies[:] = sorted(copy.dependencies)
    for urns in copy.propertyDependencies.values():
        urns.urns[:] = sorted(urns.urns)
    return copy.SerializeToString(deterministic=True)


def _requests(monkeypatch, stack_name: str, lighter: bool, custom=pulumi_adapter.CustomObject) -> list[bytes]:
    sent: list[bytes] = []
    register = preview_engine._Monitor.RegisterResource

    def record(self, request):
        sent.append(_normalized(request))
        return register(self, request)

    monkeypatch.setattr(preview_engine._Monitor, "RegisterResource", record)
    if not lighter:
        monkeypatch.setattr(preview_engine, "_lighter_sdk", nullcontext)
    monkeypatch.setattr(pulumi_adapter, "CustomObject", custom)
    run_program(ROOT, stack_name, pulumi_config_map(shipped(stack_name)))   # one call site for both runs
    monkeypatch.undo()
    return sent


@pytest.mark.parametrize("stack_name", ["dev", "prod"])
def test_registrations_are_the_sdks_byte_for_byte(monkeypatch, stack_name):
    lighter, plain = _requests(monkeypatch, stack_name, True), _requests(monkeypatch, stack_name, False)
    assert len(lighter) > 20
    assert sorted(lighter) == sorted(plain)   # type, name, inputs, options, source position and stack
    assert sdk_resource._get_stack_trace is SDK_STACK_TRACE   # put back after the run


@pytest.mark.parametrize("stack_name", ["dev", "prod"])
def test_custom_objects_are_registered_as_the_kubernetes_sdk_registers_them(monkeypatch, stack_name):
    kubernetes = k8s.apiextensions.CustomResource
    ours, theirs = (_requests(monkeypatch, stack_name, True, custom=cls) for cls in (pulumi_adapter.CustomObject,
                                                                                     kubernetes))   # one call site
    assert any(b"kubernetes:scheduling.volcano.sh/" in request for request in ours)   # Queues: custom objects
    assert sorted(ours) == sorted(theirs)
