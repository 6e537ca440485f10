"""The engine side of ``trainstack preview`` (production code, not a test helper): run the Pulumi
program under ``pulumi.runtime.set_mocks`` and record what it registers.

``trainstack preview`` sends the registrations to the real policy pack over gRPC; the tests use
it too (registered inputs must equal the rendered manifests).
"""
from __future__ import annotations

import asyncio
import functools
import os
import pathlib
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pulumi
from pulumi.runtime.mocks import MockMonitor

from .errors import InputError
from .wire import plain

STACK_PREFIX = "pulumi:pulumi:Stack$"


def engine_urn(urn: str) -> str:
    """Mock URNs put the Stack into the type chain; the engine does not. Strip it."""
    return urn.replace(STACK_PREFIX, "")


@dataclass
class Registration:
    """One resource as the Pulumi program registered it with the mock monitor."""
    type: str
    name: str
    urn: str
    custom: bool
    inputs: dict = field(default_factory=dict)
    dependencies: list[str] = field(default_factory=list)   # URNs
    provider: str = ""
    parent: str = ""
    retain_on_delete: bool = False
    read: bool = False            # a `.get` of an existing resource (ReadResource), not a registration
    outputs: dict = field(default_factory=dict)   # what a component registered as its outputs
    aliases: list[dict] = field(default_factory=list)   # e.g. [{"spec": {"noParent": True}}]: its old place
    ignore_changes: list[str] = field(default_factory=list)   # property paths the engine leaves at their live value


class _Mocks(pulumi.runtime.Mocks):
    def __init__(self) -> None:
        self.inputs: dict[tuple[str, str], dict] = {}

    def new_resource(self, args: pulumi.runtime.MockResourceArgs):
        self.inputs[(args.typ, args.name)] = plain(dict(args.inputs))
        return f"{args.name}-id", dict(args.inputs)

    def call(self, args: pulumi.runtime.MockCallArgs):
        return {}


class _Monitor(MockMonitor):
    def __init__(self, mocks: _Mocks, on_record=None) -> None:
        super().__init__(mocks)
        self.records: list[Registration] = []
        self.outputs: dict[str, dict] = {}   # URN -> registered outputs (components, the Stack's exports)
        self.on_record = on_record   # called with each record as it is made, in the order of ``records``
        self._lock = threading.Lock()   # the SDK calls the monitor from its executor's threads

    def _add(self, record: Registration) -> None:
        with self._lock:
            record.inputs = self.mocks.inputs.get((record.type, record.name), {})
            self.records.append(record)
            if self.on_record is not None:
                self.on_record(record)

    def RegisterResourceOutputs(self, request):  # noqa: N802 (gRPC name)
        from google.protobuf import json_format

        self.outputs[engine_urn(request.urn)] = plain(json_format.MessageToDict(request.outputs))
        return super().RegisterResourceOutputs(request)

    def ReadResource(self, request):  # noqa: N802 (gRPC name)
        response = super().ReadResource(request)
        self._add(Registration(
            type=request.type, name=request.name, urn=engine_urn(response.urn), custom=True,
            dependencies=[engine_urn(d) for d in request.dependencies],
            provider=engine_urn(request.provider.rsplit("::", 1)[0]) if request.provider else "",
            parent=engine_urn(request.parent), read=True))
        return response

    def RegisterResource(self, request):  # noqa: N802 (gRPC name)
        from google.protobuf import json_format

        response = super().RegisterResource(request)
        if request.type != "pulumi:pulumi:Stack":
            self._add(Registration(
                type=request.type, name=request.name, urn=engine_urn(response.urn), custom=request.custom,
                dependencies=[engine_urn(d) for d in request.dependencies],
                provider=engine_urn(request.provider.rsplit("::", 1)[0]) if request.provider else "",
                parent=engine_urn(request.parent), retain_on_delete=bool(request.retainOnDelete),
                aliases=[json_format.MessageToDict(a) for a in request.aliases],
                ignore_changes=list(request.ignoreChanges)))
        return response


@functools.lru_cache(maxsize=None)
def _file_uri(filename: str) -> str | None:
    try:
        return pathlib.Path(filename).as_uri()
    except BaseException:   # noqa: BLE001 - as the SDK: a frame without a file URI has no position
        return None


def stack_trace():
    """The SDK's ``_get_stack_trace`` (the source position and stack sent with every registration),
    the same message built without its costs: ``traceback.extract_stack`` reads every frame's source
    line (and stats every file) and ``pathlib`` builds a URI per frame, for every resource; here the
    frames are walked directly and a file's URI is made once. Falls back to the SDK's own when
    ``sys.tracebacklimit`` would cut the stack. tests/modules/core/test_preview_engine.py compares the two."""
    from pulumi.runtime.proto import source_pb2

    if hasattr(sys, "tracebacklimit"):
        return _SDK_STACK_TRACE[0]()
    frames = []
    frame = sys._getframe()
    while frame is not None:   # innermost first
        frames.append(frame)
        frame = frame.f_back
    # As the SDK: user code starts below the third __init__ from the top (Resource, then
    # CustomResource/ComponentResource, then the concrete class); without one, no stack.
    inits = [i for i, f in enumerate(frames) if f.f_code.co_name == "__init__"][2:3]
    if not inits or inits[0] >= len(frames) - 1:
        return source_pb2.StackTrace()
    out = []
    for frame in frames[inits[0] + 1:]:
        filename, line = frame.f_code.co_filename, frame.f_lineno
        uri = _file_uri(filename) if filename and line is not None else None
        out.append(source_pb2.StackFrame(pc=source_pb2.SourcePosition(uri=uri, line=line) if uri else None))
    return source_pb2.StackTrace(frames=out)


_SDK_STACK_TRACE: list = []


@contextmanager
def _lighter_sdk():
    """What the SDK does under mocks, with the same requests, at less cost: its stack walk for the
    source position of each resource (``stack_trace``), and its calls to the (mock) monitor, one
    at a time on one thread instead of a pool growing to 32 threads that contend for the GIL (the
    mock monitor answers each call at once and none waits for another)."""
    from pulumi.runtime import resource as sdk

    original = getattr(sdk, "_get_stack_trace", None)
    if original is not None and not _SDK_STACK_TRACE:
        _SDK_STACK_TRACE.append(original)
    try:
        loop = asyncio.get_event_loop()   # the loop the SDK's test() runs on (it makes one the same way)
    except RuntimeError:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
    previous = getattr(loop, "_default_executor", None)
    monitor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="trainstack-monitor")
    loop.set_default_executor(monitor)
    if original is not None:
        sdk._get_stack_trace = stack_trace
    try:
        yield
    finally:
        if original is not None:
            sdk._get_stack_trace = original
        loop._default_executor = previous   # as before: the loop's own pool, made when first needed
        monitor.shutdown(wait=False)


def run_program(project_root: Path, stack: str, config: dict[str, str],
                secret_keys: list[str] | None = None, outputs: dict | None = None,
                rendered: tuple | None = None, on_record=None) -> list[Registration]:
    """Run ``modules.core.program.run`` for one stack under mocks; return its registrations in order.
    ``outputs``, when given, receives every registered output by URN (the Stack's exports included).
    ``rendered``: ``(StackConfig, Bundle)`` the caller already rendered; the program reuses the
    bundle when the stack it loads from ``config`` is the same (``program.rendered``).
    ``on_record``: called with each registration (inputs set) as the program makes it, in order."""
    from contextlib import nullcontext

    from .program import rendered as given_render, run

    from pulumi.runtime import settings

    pulumi.runtime.set_all_config(dict(config), secret_keys or [])
    # The stack's config is set above; a PULUMI_CONFIG in the user's environment (not JSON, or
    # another stack's) must neither crash the run nor mix into it.
    for key in ("PULUMI_CONFIG", "PULUMI_CONFIG_SECRET_KEYS"):
        os.environ.pop(key, None)
    settings.ROOT.set(None)   # a fresh root Stack per run, or URN parents leak between stacks
    mocks = _Mocks()
    monitor = _Monitor(mocks, on_record)
    pulumi.runtime.set_mocks(mocks, project="trainstack", stack=stack, preview=True, monitor=monitor)
    try:
        with given_render(*rendered) if rendered is not None else nullcontext(), _lighter_sdk():
            pulumi.runtime.test(lambda: run(Path(project_root)))()
    except pulumi.RunError as err:   # the program's input error (a value from PULUMI_CONFIG in the environment too)
        raise getattr(err, "input_error", None) or InputError("the Pulumi program", "", str(err)) from None
    for record in monitor.records:
        record.outputs = monitor.outputs.get(record.urn, {})
    if outputs is not None:
        outputs.update(monitor.outputs)
        root = settings.get_root_resource()   # the Stack registers its exports only when a real run ends
        if root is not None and getattr(root, "outputs", None):
            outputs[engine_urn(f"urn:pulumi:{stack}::trainstack::pulumi:pulumi:Stack::trainstack-{stack}")] = \
                plain(dict(root.outputs))
    return monitor.records
