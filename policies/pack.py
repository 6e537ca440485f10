"""The CrossGuard pack: every rule as a Pulumi policy, run on the engine's property bags.

The engine starts the pack as ``python -u -m pulumi.policy <engine> <packDir>`` with cwd = pack
dir and the stack in the environment (PULUMI_STACK, PULUMI_CONFIG with the ``trainstack:*`` keys;
Pulumi's analyzer protocol). From that the pack rebuilds what ``trainstack check`` has: the
StackConfig (``build_stack``), the fabric and the rendered bundle. Rules then judge the resources
the engine sends and consult the bundle as context, so a user's TrainJob resolves its runtime
and a Volcano Job is checked against the stack's scheduler configuration and fabric, exactly as
``trainstack check STACK --manifests`` does.

Importable without side effects; ``policies/__main__.py`` calls ``serve()``.
"""
from __future__ import annotations

import functools
import json
import os
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from modules.core import yamlio
from modules.core.errors import InputError
from modules.core.wire import object_key, plain, release_from_inputs

from .framework import CheckContext, Finding, NotChecked, Rule
from .rules import RULES
from .runner import bundle_objects, evaluate, schema_defaults

PACK_NAME = "trainstack"
PACK_DIR = Path(__file__).resolve().parent
PROJECT_ENV = "TRAINSTACK_PROJECT_DIR"    # overrides "the pack folder's parent" (tests, --project)
CONFIG_FILE_ENV = "TRAINSTACK_PACK_CONFIG_FILE"   # `trainstack preview` passes the config in this file
NAMESPACE = "trainstack"
NOTE_SEPARATOR = "\n"     # several "not checked" reasons travel in one not_applicable reason

# Pulumi types that are components or plumbing, not Kubernetes objects a rule can judge.
_COMPONENTS = ("kubernetes:helm.sh/v4:Chart", "kubernetes:yaml/v2:", "kubernetes:kustomize/v2:",
               "kubernetes:yaml:", "kubernetes:helm.sh/v3:Chart", "kubernetes:kustomize:")
UNKNOWNS = frozenset({
    "04da6b54-80e4-46f7-96ec-b56ff0331ba9", "1c4a061d-8072-4f0a-a4cb-0ff528b18fe7",
    "3eeb2bf0-c639-47a8-9e75-3b44932eb421", "6a19a0b0-7e62-4c92-b797-7f8e31da9cc2",
    "030794c1-ac77-496b-92df-f27374a8bd58", "e48ece36-62e2-4504-bad9-02848725956a",
    "dd056dcd-154b-4c76-9bd3-c8f88648b5ff"})


def log(message: str) -> None:
    """stdout is the port channel: anything printed there before the port breaks the engine."""
    print(f"trainstack policy pack: {message}", file=sys.stderr, flush=True)


# --- property bags -> manifests ---------------------------------------------------------------

def unknown_path(value: Any, path: str = "") -> str | None:
    """The first property path holding an unknown (preview) value, or None."""
    if isinstance(value, str) and value in UNKNOWNS:
        return path or "(value)"
    if isinstance(value, dict):
        for k, v in value.items():
            found = unknown_path(v, f"{path}.{k}" if path else str(k))
            if found:
                return found
    if isinstance(value, list):
        for i, v in enumerate(value):
            found = unknown_path(v, f"{path}[{i}]")
            if found:
                return found
    return None


def manifest(resource_type: str, props: Any, name: str = "") -> dict | None:
    """The Kubernetes object a Pulumi resource stands for, or None (providers, components, other clouds)."""
    if not resource_type.startswith("kubernetes:") or resource_type.startswith(_COMPONENTS):
        return None
    bag = plain(props)
    if not isinstance(bag, dict):
        return None
    if resource_type == "kubernetes:helm.sh/v3:Release":
        return release_from_inputs(bag, name)
    parts = resource_type.split(":")
    if len(parts) != 3 or "/" not in parts[1]:
        return None
    group, _, version = parts[1].rpartition("/")
    obj = dict(bag)
    obj.setdefault("apiVersion", version if group == "core" else f"{group}/{version}")
    obj.setdefault("kind", parts[2])
    return obj


# --- the stack's context ----------------------------------------------------------------------

@dataclass
class StackContext:
    """What the pack knows about the stack being deployed."""

    name: str = ""
    stack: Any = None             # StackConfig
    fabric: Any = None
    bundle: list[dict] = field(default_factory=list)
    problem: str = ""             # why the stack could not be loaded, if it could not
    config: dict = field(default_factory=dict)   # the config map it was built from


def project_root() -> Path:
    configured = os.environ.get(PROJECT_ENV)
    return Path(configured).resolve() if configured else PACK_DIR.parent


def load_context(stack_name: str, config: Mapping[str, str], root: Path | None = None) -> StackContext:
    """Rebuild the stack from the engine's config map; fall back to the stack file when the map
    carries no ``trainstack:`` keys (a driver that sets only PULUMI_STACK)."""
    from modules.core.config import load_project, load_stack, stack_from_config_map
    from modules.core.context import RenderContext
    from modules.core.render import render

    ctx = StackContext(name=stack_name, config=dict(config))
    if not stack_name:
        ctx.problem = "PULUMI_STACK is not set"
        return ctx
    try:
        project = load_project(root or project_root())
        ours = {k: v for k, v in config.items() if k.partition(":")[0] in (NAMESPACE, project.name)}
        if ours:
            # the engine hands trainstack:secrets decrypted: take them as such (they are never rendered)
            stack = stack_from_config_map(project, stack_name, dict(config), secret_keys=(f"{NAMESPACE}:secrets",))
        elif project.stack_file(stack_name).is_file():
            stack = load_stack(project, stack_name)
        else:
            ctx.problem = f"no trainstack:* config for stack {stack_name!r} and no stack file"
            return ctx
        ctx.stack = stack
        try:
            bundle = render(stack)
            ctx.fabric, ctx.bundle = bundle.fabric, bundle_objects(bundle)
            from .rules.hypernodes import resolve_members

            resolve_members(ctx.bundle, ctx.fabric)   # the fabric's regex members, before any call waits on them
            from .rules.admission import prime

            prime(ctx.bundle)   # upstream's admission rules for its objects, before the server's threads start
        except InputError as err:   # the program fails the same way; keep what can be had
            ctx.problem = str(err)
            from modules.fabric.model import build_fabric
            ctx.fabric = build_fabric(RenderContext(stack))
    except InputError as err:
        ctx.problem = ctx.problem or str(err)
    return ctx


def _env_config() -> dict[str, str]:
    """The stack's configuration: from the file ``trainstack preview`` names in CONFIG_FILE_ENV (no
    size limit on the environment), else from PULUMI_CONFIG as the Pulumi CLI passes it."""
    source = CONFIG_FILE_ENV if os.environ.get(CONFIG_FILE_ENV) else "PULUMI_CONFIG"
    try:
        if source == CONFIG_FILE_ENV:
            raw = yamlio.read_text(Path(os.environ[CONFIG_FILE_ENV]), CONFIG_FILE_ENV, yamlio.MAX_FABRIC_FILE_BYTES)
        else:
            raw = os.environ.get("PULUMI_CONFIG") or "{}"
        data = json.loads(raw)
    except (InputError, ValueError, RecursionError):
        log(f"{source} is not readable JSON; ignoring it")
        return {}
    return {str(k): v if isinstance(v, str) else json.dumps(v) for k, v in data.items()} if isinstance(data, dict) \
        else {}


class PackState:
    """The stack context plus every object analyzed so far in this process (a TrainJob analyzed
    after its runtime finds it, as in ``trainstack check``)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.context = StackContext()
        self.seen: dict[str, dict] = {}
        # rule id -> (the policy's config as the SDK handed it, the stack context, the CheckContext):
        # every policy of every Analyze asks for its settings again, with the same config
        self._check_contexts: dict[str, tuple[Any, StackContext, CheckContext]] = {}

    def configure(self, stack_name: str, config: Mapping[str, str]) -> None:
        if stack_name == self.context.name and dict(config) == self.context.config and stack_name:
            return   # the engine's ConfigureStack repeats what the environment said at start: built already
        context = load_context(stack_name, config)
        if context.problem:
            log(f"stack {stack_name!r}: {context.problem}; rules that need the stack or fabric say so")
        with self.lock:
            self.context = context
            self.seen = {}

    def forget(self) -> None:
        """A run is over (or starts): objects of one preview never leak into the next, nor what
        was decoded for it."""
        with self.lock:
            self.seen = {}
            _RUN.clear()

    def remember(self, obj: dict) -> None:
        local = getattr(_CALL, "decoded", None)
        if local is not None:   # within a call every resource policy hands over the same object
            key = ("remembered", id(obj))
            if local.get(key) is obj:
                return
            local[key] = obj
        with self.lock:
            self.seen[object_key(obj)] = obj

    def context_for(self, judged: list[dict]) -> list[dict]:
        """Objects rules may consult besides ``judged``: the stack's bundle and what was analyzed
        before. A bundle object the engine sent unchanged is not repeated; one a user replaced
        with different content stays, as in ``trainstack check --manifests`` (both are there)."""
        sent: dict[str, list[dict]] = {}
        for obj in judged:
            sent.setdefault(object_key(obj), []).append(obj)
        with self.lock:
            extra = [o for k, o in self.seen.items() if k not in sent]
            base = [o for o in self.context.bundle
                    if not any(o == s for s in sent.get(object_key(o), ())) and object_key(o) not in self.seen]
        return base + extra

    def check_context(self, rule: Rule, config: Mapping[str, Any] | None) -> CheckContext:
        """What ``rule`` reads besides its objects: the stack, the fabric and its settings (schema
        defaults, then ``config``). Built once per rule while its config and the stack stay the
        same (rules read it and never change it; each evaluation gets its own copy with its objects,
        ``runner.evaluate``)."""
        context = self.context
        hit = self._check_contexts.get(rule.id)
        if hit is not None and hit[1] is context and hit[0] == config:
            return hit[2]
        given = plain(dict(config)) if config else config
        built = CheckContext(stack=context.stack, fabric=context.fabric,
                             config={**schema_defaults(rule), **(given or {})})
        self._check_contexts[rule.id] = (given, context, built)
        return built


STATE = PackState()


# --- rules as policies ------------------------------------------------------------------------

def _not_checked(args: Any, notes: list[str]) -> None:
    if notes:
        args.not_applicable(NOTE_SEPARATOR.join(dict.fromkeys(notes)))


# One Analyze or AnalyzeStack call hands every policy the same resources (the SDK deserializes them
# for each policy anew), and one run (Configure, Analyze per resource, AnalyzeStack) hands every
# resource over twice: in its Analyze and again in AnalyzeStack. Each properties message is decoded,
# and each resource made a manifest, once per run: within a call by the message object, across the
# calls of a run by the message's bytes (a resource sent again with other properties is decoded
# anew). ``_CALL`` holds the call's own cache, on the call's thread; ``_RUN`` the run's, dropped when
# a run starts or ends (``PackState.forget``).
_CALL = threading.local()
RUN_CACHE_LIMIT = 100_000   # entries per cache: a driver that never ends its runs does not grow the pack


def _once(cache: dict, key: tuple, keep: Any, compute: Callable[[], Any]) -> Any:
    """``compute()`` once for ``key`` while ``cache`` holds it; ``keep`` (what the ids in ``key``
    belong to) is held with the answer, so an id cannot be reused meanwhile."""
    hit = cache.get(key)
    if hit is None:
        if len(cache) >= RUN_CACHE_LIMIT:
            cache.clear()
        hit = cache[key] = (keep, compute())
    return hit[1]


class _RunCache:
    def __init__(self) -> None:
        self.decoded: dict[tuple, tuple] = {}
        self.manifests: dict[tuple, tuple] = {}

    def clear(self) -> None:
        self.decoded, self.manifests = {}, {}


_RUN = _RunCache()


def _manifest_once(resource_type: str, props: Any, name: str, urn: str) -> dict | None:
    if getattr(_CALL, "decoded", None) is None:   # outside a call: nothing shared
        return manifest(resource_type, props, name)
    return _once(_RUN.manifests, (urn, resource_type, name, id(props)), props,
                     lambda: manifest(resource_type, props, name))


def _one_call(handler):
    """Wrap a servicer method: decoded property bags (and manifests) are shared by the policies of
    the call, and with the other calls of the run."""
    def call(self, request, context):
        _CALL.decoded = {}
        try:
            return handler(self, request, context)
        finally:
            _CALL.decoded = None
    return call


def _per_call(key: tuple, keep: Any, compute: Callable[[], Any]) -> Any:
    """``compute()`` once per call for ``key``, outside a call each time. ``keep`` (what the ids in
    ``key`` belong to) is held with the answer, so an id cannot be reused while it is cached."""
    local = getattr(_CALL, "decoded", None)
    return compute() if local is None else _once(local, key, keep, compute)


def _decoded_once(decode):
    """``decode`` (one of the SDK's steps from a properties message to the proxy a policy reads)
    run once per input in a run, instead of once per policy of every call. Every policy then reads
    the same read-only proxy; outside a call (Remediate, Configure) nothing is shared. A message is
    known again by its bytes (deterministic serialization), any other input by identity."""
    from google.protobuf.message import Message

    def once(value, *args):
        if getattr(_CALL, "decoded", None) is None:
            return decode(value, *args)
        key = (decode, id(value), args)

        def in_run():
            shared = (decode, value.SerializeToString(deterministic=True), args) if isinstance(value, Message) \
                else key
            return _once(_RUN.decoded, shared, value, lambda: decode(value, *args))
        return _per_call(key, value, in_run)
    return once


def _per_request(method):
    """``method(self, request)`` (the SDK's reading of a request's options or provider, which it
    repeats for every policy) answered once per request message within a call."""
    def once(self, request):
        return _per_call((method, id(request)), request, lambda: method(self, request))
    return once


def resource_validation(rule: Rule):
    def validate(args, report_violation) -> None:
        obj = _manifest_once(args.resource_type, args.props, args.name, args.urn)
        if obj is None:
            return
        STATE.remember(obj)
        if not rule.applies_to(obj):
            return
        items = evaluate(rule, [obj], STATE.check_context(rule, args.get_config()),
                         lambda: STATE.context_for([obj]))
        findings = [item for _, item in items if isinstance(item, Finding)]
        unknown = unknown_path(obj) if findings else None
        if unknown:   # the SDK's own way of saying "can't run this policy during preview"
            from pulumi_policy.proxy import UNKNOWN_STRING_VALUE, UnknownValueError
            raise UnknownValueError(UNKNOWN_STRING_VALUE, unknown.split("."))
        for finding in findings:
            report_violation(finding.message)
        _not_checked(args, [item.reason for _, item in items if isinstance(item, NotChecked)])
    return validate


def _context_once(judged: list[dict]) -> list[dict]:
    """``STATE.context_for(judged)``, once per call for the same objects (every stack policy of an
    AnalyzeStack judges the same manifests; nothing is remembered or forgotten during the call)."""
    return _per_call(("context_for", tuple(map(id, judged))), judged, lambda: STATE.context_for(judged))


def stack_validation(rule: Rule):
    def validate(args, report_violation) -> None:
        objects, urns = [], {}
        for resource in args.resources:
            obj = _manifest_once(resource.resource_type, resource.props, resource.name, resource.urn)
            if obj is not None:
                objects.append(obj)
                urns[id(obj)] = resource.urn
        items = evaluate(rule, objects, STATE.check_context(rule, args.get_config()), _context_once(objects))
        notes = []
        for obj, item in items:
            if isinstance(item, NotChecked):
                notes.append(item.reason)
            elif obj is not None and unknown_path(obj):
                notes.append(f"{urns.get(id(obj))}: not checked during preview: {unknown_path(obj)} is unknown")
            else:
                report_violation(item.message, urns.get(id(obj)) if obj is not None else None)
        _not_checked(args, notes)
    return validate


def policies() -> list:
    from pulumi_policy import (EnforcementLevel, PolicyConfigSchema, ResourceValidationPolicy, Severity,
                               StackValidationPolicy)

    out = []
    for rule in RULES:
        common = dict(name=rule.id, description=rule.description,
                      enforcement_level=EnforcementLevel(rule.enforcement), severity=Severity(rule.severity),
                      config_schema=PolicyConfigSchema(properties=rule.config_schema) if rule.config_schema else None,
                      remediation_steps=rule.fix)
        if rule.is_stack_rule:
            out.append(StackValidationPolicy(validate=stack_validation(rule), **common))
        else:
            out.append(ResourceValidationPolicy(validate=resource_validation(rule), **common))
    return out


def _hook_servicer() -> None:
    """What the SDK's servicer does not do for us.

    A driver without the CLI's proxy sends the stack over ``ConfigureStack``: rebuild from it
    (through the CLI the proxy takes that call and passes the same data in the environment).
    And one run is ``Configure``, ``Analyze`` per resource, then ``AnalyzeStack`` once: the objects
    remembered during a run (a TrainJob finds a runtime analyzed before it) are dropped at both
    ends, so a driver that reuses one pack process for independent runs sees no leftovers.
    And each run turns a resource into a manifest once, not once per policy of each call, and
    decodes its properties once: the SDK's servicer runs MessageToDict, deserialize_properties and
    unknown_checking_proxy on the same message for every policy (``_decoded_once``), in Analyze
    and again in AnalyzeStack; it reads each request's options and provider once per call, not once
    per policy (``_per_request``).
    """
    from types import SimpleNamespace

    from pulumi_policy import policy as sdk

    servicer = getattr(sdk, "_PolicyAnalyzerServicer", None)
    if servicer is None:
        return
    if all(hasattr(sdk, name) for name in ("json_format", "deserialize_properties", "unknown_checking_proxy")):
        sdk.json_format = SimpleNamespace(MessageToDict=_decoded_once(sdk.json_format.MessageToDict))
        sdk.deserialize_properties = _decoded_once(sdk.deserialize_properties)
        sdk.unknown_checking_proxy = _decoded_once(sdk.unknown_checking_proxy)
    if hasattr(sdk, "signature"):   # asked of pulumi.runtime.Settings at every call; a class's signature is fixed
        sdk.signature = functools.lru_cache(maxsize=16)(sdk.signature)
    for name in ("_get_resource_options", "_get_provider_resource"):
        if hasattr(servicer, name):
            setattr(servicer, name, _per_request(getattr(servicer, name)))
    configure_stack, configure = servicer.ConfigureStack, servicer.Configure
    analyze, analyze_stack = _one_call(servicer.Analyze), _one_call(servicer.AnalyzeStack)

    def on_configure_stack(self, request, context):
        config = dict(request.config)
        if request.stack and (config or request.stack != STATE.context.name):
            STATE.configure(request.stack, config or _env_config())
        STATE.forget()
        return configure_stack(self, request, context)

    def on_configure(self, request, context):
        STATE.forget()
        return configure(self, request, context)

    def on_analyze_stack(self, request, context):
        try:
            return analyze_stack(self, request, context)
        finally:
            STATE.forget()

    servicer.ConfigureStack, servicer.Configure, servicer.Analyze, servicer.AnalyzeStack = \
        on_configure_stack, on_configure, analyze, on_analyze_stack


# --- bounded requests -----------------------------------------------------------------------------

MAX_MESSAGE_DEPTH = 400   # protobuf nesting: three levels per object level (Struct, entry, Value), and
                          # objects nest at most 100 deep (yamlio); the parser crashes near 5,000


def message_depth(data: bytes, descriptor: Any, limit: int = MAX_MESSAGE_DEPTH, prune: bool = False) -> int:
    """How deep the submessages of an encoded message nest, read from the wire format with the
    message's descriptor (no recursion; stops past ``limit``). Malformed data counts 0: the real
    parser then reports it. ``prune``: only whether ``limit`` is passed matters, so a submessage
    too short to nest past it is not read (each level takes at least two bytes of its parent: a
    tag and a length); the depth returned is then exact only above ``limit``."""
    if prune and 1 + len(data) // 2 <= limit:
        return 1
    stack, deepest = [(0, len(data), descriptor, 1)], 1
    try:
        while stack:
            pos, end, desc, depth = stack.pop()
            fields = {f.number: f for f in desc.fields}
            while pos < end:
                key, pos = _varint(data, pos)
                kind = key & 7
                if kind == 0:
                    _, pos = _varint(data, pos)
                elif kind in (1, 5):
                    pos += 8 if kind == 1 else 4
                elif kind == 2:
                    size, pos = _varint(data, pos)
                    field_ = fields.get(key >> 3)
                    if field_ is not None and field_.message_type is not None:
                        if depth + 1 > limit:
                            return depth + 1
                        deepest = max(deepest, depth + 1)
                        inner = min(pos + size, end)
                        if not prune or depth + 1 + (inner - pos) // 2 > limit:
                            stack.append((pos, inner, field_.message_type, depth + 1))
                    pos += size
                else:
                    return 0
    except IndexError:
        return 0
    return deepest


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80 or shift > 63:
            return value, pos
        shift += 7


class RequestTooDeep(ValueError):
    pass


def _bounded(deserialize: Any) -> Any:
    """``deserialize`` (a message class's FromString) refusing a request nested past the limit."""
    message_class = getattr(deserialize, "__self__", None)
    descriptor = getattr(message_class, "DESCRIPTOR", None)
    if descriptor is None:
        return deserialize

    def checked(data: bytes) -> Any:
        if message_depth(data, descriptor, prune=True) > MAX_MESSAGE_DEPTH:
            log(f"refused a {descriptor.name} nested more than {MAX_MESSAGE_DEPTH} messages deep")
            raise RequestTooDeep(f"{descriptor.name} nested more than {MAX_MESSAGE_DEPTH} messages deep")
        return deserialize(data)
    return checked


def _guard_requests() -> None:
    """Every Analyzer request is depth-checked before protobuf parses it (its C parser recurses)."""
    import grpc
    from pulumi.runtime.proto import analyzer_pb2_grpc

    class Guarded(grpc.GenericRpcHandler):
        def __init__(self, inner: Any) -> None:
            self.inner = inner

        def service(self, details: Any) -> Any:
            handler = self.inner.service(details)
            if handler is None or handler.request_deserializer is None:
                return handler
            return handler._replace(request_deserializer=_bounded(handler.request_deserializer))

    class Server:
        def __init__(self, server: Any) -> None:
            self._server = server

        def add_generic_rpc_handlers(self, handlers: Any) -> None:
            self._server.add_generic_rpc_handlers(tuple(Guarded(h) for h in handlers))

        def __getattr__(self, name: str) -> Any:
            return getattr(self._server, name)

    add = analyzer_pb2_grpc.add_AnalyzerServicer_to_server
    if getattr(add, "guarded", False):
        return

    def add_guarded(servicer: Any, server: Any) -> None:
        add(servicer, Server(server))
    add_guarded.guarded = True
    analyzer_pb2_grpc.add_AnalyzerServicer_to_server = add_guarded


def serve() -> None:
    """Build the context from the environment and serve the pack (prints the port, never returns)."""
    from pulumi_policy import EnforcementLevel, PolicyPack

    config = _env_config()
    if os.environ.get(CONFIG_FILE_ENV):   # pulumi.Config in the pack sees it as from PULUMI_CONFIG
        import pulumi.runtime

        pulumi.runtime.set_all_config(config, [])
    STATE.configure(os.environ.get("PULUMI_STACK", ""), config)
    _hook_servicer()
    _guard_requests()
    PolicyPack(name=PACK_NAME, policies=policies(), enforcement_level=EnforcementLevel.MANDATORY,
               description="trainstack: resource requests, network-topology constraints, NCCL and safety for "
                           "distributed training on Kubernetes (Volcano, Kubeflow Trainer).")
