"""Drive the real policy pack over the Analyzer gRPC protocol, as the Pulumi engine does
(Pulumi's analyzer plugin protocol): start it as a subprocess, read its port from stdout,
ConfigureStack, GetAnalyzerInfo, Configure with every policy's level, Remediate (when a policy is
configured to remediate) + Analyze each custom resource, AnalyzeStack once with all of them. Used
by ``trainstack preview`` and the tests.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

import grpc
from google.protobuf import empty_pb2, json_format, struct_pb2
from pulumi.runtime.proto import analyzer_pb2 as apb
from pulumi.runtime.proto import analyzer_pb2_grpc

from modules.core.vocabulary.go import atoi

from .framework import ADVISORY, DISABLED, MANDATORY, NOTE, Rule, Violation, resource_id
from .pack import CONFIG_FILE_ENV, NOTE_SEPARATOR, PACK_DIR, PROJECT_ENV, manifest
from .rules import RULES
from .runner import parse_settings

_LEVEL = {apb.ADVISORY: ADVISORY, apb.MANDATORY: MANDATORY, apb.DISABLED: DISABLED, apb.REMEDIATE: MANDATORY}
_TO_ENUM = {ADVISORY: apb.ADVISORY, MANDATORY: apb.MANDATORY, DISABLED: apb.DISABLED, "remediate": apb.REMEDIATE}
_SEVERITY = {apb.POLICY_SEVERITY_LOW: "low", apb.POLICY_SEVERITY_MEDIUM: "medium", apb.POLICY_SEVERITY_HIGH: "high",
             apb.POLICY_SEVERITY_CRITICAL: "critical"}
_MAX_MESSAGE = 400 * 1024 * 1024
RPC_DEADLINE_SECONDS = 120.0   # per RPC: a pack that hangs ends the run with a PackError (exit 3)


class PackError(Exception):
    """The pack could not be started or answered badly (not a user mistake)."""


@dataclass
class EngineResource:
    """One resource as the engine describes it to analyzers."""

    type: str
    name: str
    urn: str
    properties: dict
    custom: bool = True
    parent: str = ""
    dependencies: list[str] = field(default_factory=list)
    provider: "EngineResource | None" = None
    source: str | None = None     # the user's file, for reports
    _struct: struct_pb2.Struct | None = field(default=None, init=False, repr=False, compare=False)
    _manifest: tuple[dict | None] | None = field(default=None, init=False, repr=False, compare=False)

    def manifest(self) -> dict | None:
        """The Kubernetes object it stands for (``pack.manifest``), built once."""
        if self._manifest is None:
            self._manifest = (manifest(self.type, self.properties, self.name),)
        return self._manifest[0]

    def struct(self) -> struct_pb2.Struct:
        """The properties on the wire, built once (Analyze, AnalyzeStack and every resource naming
        this one as its provider send the same bytes)."""
        if self._struct is None:
            out = struct_pb2.Struct()
            out.update(json.loads(json.dumps(self.properties, default=str)))
            self._struct = out
        return self._struct

    def provider_message(self) -> apb.AnalyzerProviderResource | None:
        if self.provider is None:
            return None
        return apb.AnalyzerProviderResource(type=self.provider.type, name=self.provider.name,
                                            urn=self.provider.urn, properties=self.provider.struct())


def urn(stack: str, project: str, type_: str, name: str) -> str:
    return f"urn:pulumi:{stack}::{project}::{type_}::{name}"


class Pack:
    """A running pack process and a stub to talk to it. Always ``close()`` it (or use ``with``)."""

    def __init__(self, stack: str, project: str, config: dict[str, str], pack_dir: Path = PACK_DIR,
                 project_root: Path | None = None, organization: str = "organization", dry_run: bool = True,
                 python: str = sys.executable, timeout: float = 60, deadline: float = RPC_DEADLINE_SECONDS):
        self.stack, self.project, self.organization, self.dry_run = stack, project, organization, dry_run
        self.config = dict(config)
        self.deadline = deadline
        # The configuration travels in a private file, not in PULUMI_CONFIG: one environment string
        # holds at most 128 KiB (exec fails with "Argument list too long" beyond).
        handle, self._config_file = tempfile.mkstemp(prefix="trainstack-pack-config-", suffix=".json")
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump(self.config, out)
        env = dict(os.environ, PULUMI_PROJECT=project, PULUMI_STACK=stack, PULUMI_ORGANIZATION=organization,
                   PULUMI_DRY_RUN="true" if dry_run else "false", **{CONFIG_FILE_ENV: self._config_file})
        env.pop("PULUMI_CONFIG", None)
        env.pop("PULUMI_CONFIG_SECRET_KEYS", None)
        if project_root is not None:
            env[PROJECT_ENV] = str(Path(project_root).resolve())
        try:
            self._stderr = tempfile.TemporaryFile(mode="w+b")
            # The engine's address is never dialled by a Python pack; pass a placeholder as the engine does.
            self.process = subprocess.Popen([python, "-u", "-m", "pulumi.policy", "127.0.0.1:0", str(pack_dir)],
                                            cwd=str(pack_dir), env=env, stdout=subprocess.PIPE,
                                            stderr=self._stderr, stdin=subprocess.DEVNULL)
        except BaseException:   # a fork refused, no descriptor left: no configuration file left behind
            os.unlink(self._config_file)
            raise
        self.channel = None
        self._stub = None
        self._timeout = timeout
        self.remediating = True   # whether any policy is configured at the remediate level

    @property
    def stub(self) -> analyzer_pb2_grpc.AnalyzerStub:
        """Connected on first use: the pack process starts in __init__ and boots (about 0.3 s of
        imports) while the caller runs the program."""
        if self._stub is None:
            try:
                port = self._read_port(self._timeout)
                self.channel = grpc.insecure_channel(f"127.0.0.1:{port}", options=[
                    ("grpc.max_receive_message_length", _MAX_MESSAGE),
                    ("grpc.max_send_message_length", _MAX_MESSAGE)])
                grpc.channel_ready_future(self.channel).result(timeout=self._timeout)
                self._stub = analyzer_pb2_grpc.AnalyzerStub(self.channel)
            except BaseException:
                self.close()
                raise
        return self._stub

    def _read_port(self, timeout: float) -> int:
        line: list[bytes] = []
        reader = threading.Thread(target=lambda: line.append(self.process.stdout.readline()), daemon=True)
        reader.start()
        reader.join(timeout)
        text = line[0].decode(errors="replace").strip() if line else ""
        if not 1 <= (atoi(text) or 0) <= 65535:
            what = "no port" if not text else f"an invalid port {text!r}"
            raise PackError(f"the policy pack wrote {what} to stdout; its stderr ends with:\n{self.stderr()[-2000:]}")
        return int(text)

    def stderr(self) -> str:
        self._stderr.seek(0)
        return self._stderr.read().decode(errors="replace")

    def close(self) -> None:
        if self.channel is not None:
            self.channel.close()
            self.channel = None
        if self.process.poll() is None:
            self.process.terminate()     # the pack never exits by itself
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process.stdout:
            self.process.stdout.close()
        self._stderr.close()
        try:
            os.unlink(self._config_file)
        except OSError:
            pass

    def __enter__(self) -> "Pack":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # --- the RPCs, in the engine's order ----------------------------------------------------
    def _call(self, method: str, request: Any) -> Any:
        """One RPC under the deadline; a pack that hangs or fails is a PackError in one line."""
        try:
            return getattr(self.stub, method)(request, timeout=self.deadline)
        except grpc.RpcError as err:
            code = err.code() if callable(getattr(err, "code", None)) else None
            if code == grpc.StatusCode.DEADLINE_EXCEEDED:
                raise PackError(f"the policy pack did not answer {method} within {self.deadline:g} s (the gRPC "
                                "deadline); it was stopped") from None
            details = err.details() if callable(getattr(err, "details", None)) else str(err)
            raise PackError(f"the policy pack failed {method}: {code.name if code else 'error'}: "
                            f"{' '.join(str(details).split())[:300]}") from None

    def configure_stack(self, stack: str | None = None, config: dict[str, str] | None = None) -> None:
        if stack is not None:
            self.stack = stack
        if config is not None:
            self.config = dict(config)
        self._call("ConfigureStack", apb.AnalyzerStackConfigureRequest(
            stack=self.stack, project=self.project, organization=self.organization, dry_run=self.dry_run,
            config=self.config))

    def info(self) -> apb.AnalyzerInfo:
        return self._call("GetAnalyzerInfo", empty_pb2.Empty())

    def configure(self, policy_config: dict[str, tuple[str, dict]]) -> None:
        request = apb.ConfigureAnalyzerRequest()
        for name, (level, properties) in policy_config.items():
            config = apb.PolicyConfig(enforcementLevel=_TO_ENUM[level])
            if properties:
                config.properties.update(properties)
            request.policyConfig[name].CopyFrom(config)
        self._call("Configure", request)
        self.remediating = any(level == "remediate" for level, _ in policy_config.values())

    def _request(self, resource: EngineResource) -> apb.AnalyzeRequest:
        request = apb.AnalyzeRequest(type=resource.type, name=resource.name, urn=resource.urn,
                                     properties=resource.struct(),
                                     options=apb.AnalyzerResourceOptions(parent=resource.parent))
        provider = resource.provider_message()
        if provider is not None:
            request.provider.CopyFrom(provider)
        return request

    def analyze(self, resource: EngineResource) -> apb.AnalyzeResponse:
        request = self._request(resource)
        if self.remediating:   # the SDK's Remediate runs only remediate-level policies: none, nothing to ask
            self._call("Remediate", request)
        return self._call("Analyze", request)


    def analyze_stack(self, resources: Iterable[EngineResource]) -> apb.AnalyzeResponse:
        items = []
        for r in resources:
            item = apb.AnalyzerResource(type=r.type, name=r.name, urn=r.urn, properties=r.struct(), parent=r.parent,
                                        dependencies=r.dependencies,
                                        options=apb.AnalyzerResourceOptions(parent=r.parent))
            provider = r.provider_message()
            if provider is not None:
                item.provider.CopyFrom(provider)
            items.append(item)
        return self._call("AnalyzeStack", apb.AnalyzeStackRequest(resources=items))


# --- policy configuration, reconciled as the engine does ---------------------------------------

def policy_config(info: apb.AnalyzerInfo, data: Any = None, file: str = "policy config"
                  ) -> dict[str, tuple[str, dict]]:
    """Every policy's level and properties, as the engine reconciles them: pack defaults, then schema
    defaults, then the pack's initialConfig, then the file (``all`` first, then per policy). The file
    is read by the one settings resolver, ``runner.parse_settings``, over the policies the pack
    declares (not the rule table: the pack's own answer is what is under test)."""
    declared = []
    for p in info.policies:
        schema = json_format.MessageToDict(p.configSchema) if p.HasField("configSchema") else {}
        level, initial = _LEVEL.get(p.enforcementLevel, ADVISORY), {}
        if p.name in info.initialConfig:
            config = info.initialConfig[p.name]
            level = _LEVEL.get(config.enforcementLevel, level) if config.enforcementLevel else level
            initial = json_format.MessageToDict(config.properties)
        declared.append(Rule(id=p.name, description=p.description, why="", fix="", severity="", enforcement=level,
                             config_schema=schema.get("properties", {}), config_defaults=initial))
    settings = parse_settings({} if data is None else data, file, declared)
    return {rule.id: (settings.level(rule), settings.config(rule)) for rule in declared}


# --- diagnostics -> violations ------------------------------------------------------------------

_AT = re.compile(r"^(?P<resource>\S+) at (?P<path>\S+?)(?=: | \()")


def _message(description: str, message: str) -> str:
    """The SDK prefixes every violation with the policy's description and a newline."""
    prefix = description + "\n"
    return message[len(prefix):] if message.startswith(prefix) else message


def _path_of(message: str) -> str:
    match = _AT.match(message)
    return match.group("path") if match else ""


def _note_subject(reason: str, subject: EngineResource | None,
                  by_id: dict[str, EngineResource]) -> tuple[EngineResource | None, str]:
    """The resource and field a "not checked" reason is about. A not_applicable answer carries no
    URN: a stack policy's note names its object in the text (``<resource id> at <path>: ...``),
    as `check` reports it; a note that names no analyzed object stays on ``subject``."""
    match = _AT.match(reason)
    named = by_id.get(match.group("resource")) if match else None
    if named is None or (subject is not None and named is not subject):
        return subject, ""
    return named, match.group("path")


@dataclass
class AnalyzeOutcome:
    """What the pack answered for one run: the violations, its policy names and how many objects it analyzed."""
    violations: list[Violation]
    policies: list[str]          # names GetAnalyzerInfo listed
    objects: int                 # Kubernetes objects analyzed


class Analysis:
    """One run of the engine's sequence: ConfigureStack, GetAnalyzerInfo and Configure when it
    starts, then Analyze resource by resource as the caller hands them over (one at a time, in
    order: a TrainJob analyzed after its runtime finds it), AnalyzeStack at ``finish``. A caller
    may start analyzing before it knows every resource (``trainstack preview`` does while the
    program still registers)."""

    def __init__(self, pack: Pack, policy_file_data: Any = None, policy_file: str = "policy config"):
        self.pack = pack
        pack.configure_stack()
        self.info = pack.info()
        pack.configure(policy_config(self.info, policy_file_data, policy_file))
        self.answers: list[tuple[EngineResource, apb.AnalyzeResponse]] = []

    def analyze(self, resource: EngineResource) -> None:
        if resource.custom:
            self.answers.append((resource, self.pack.analyze(resource)))

    def finish(self, resources: list[EngineResource]) -> AnalyzeOutcome:
        """AnalyzeStack over ``resources`` (every one handed to ``analyze``, in that order); returns
        violations in rule order, then resource order, like ``trainstack check``."""
        info = self.info
        severity = {p.name: _SEVERITY.get(p.severity, "medium") for p in info.policies}
        by_urn = {r.urn: r for r in resources}
        objects = {r.urn: r.manifest() for r in resources}
        order = {r.urn: i for i, r in enumerate(resources)}
        rule_order = {r.id: i for i, r in enumerate(RULES)}
        by_id: dict[str, EngineResource] = {}
        for r in resources:
            if objects.get(r.urn) is not None:
                by_id.setdefault(resource_id(objects[r.urn]), r)
        found: list[tuple[tuple, Violation]] = []

        def collect(response: apb.AnalyzeResponse, subject: EngineResource | None) -> None:
            for d in response.diagnostics:
                target = subject if subject is not None else by_urn.get(d.urn)
                obj = objects.get(target.urn) if target is not None else None
                message = _message(d.description, d.message)
                v = Violation(rule=d.policyName, level=_LEVEL.get(d.enforcementLevel, ADVISORY),
                              severity=severity.get(d.policyName, "medium"),
                              resource=resource_id(obj) if obj else "stack", path=_path_of(message), message=message,
                              source=target.source if target is not None else None)
                found.append(((rule_order.get(v.rule, 99), order.get(target.urn, -1) if target else -1, len(found)),
                              v))
            for na in response.not_applicable:
                if na.reason.startswith("Policy does not implement"):
                    continue
                for reason in na.reason.split(NOTE_SEPARATOR):
                    target, path = _note_subject(reason, subject, by_id)
                    v = Violation(rule=na.policy_name, level=NOTE, severity=severity.get(na.policy_name, "medium"),
                                  resource=resource_id(objects[target.urn]) if target is not None and objects.get(
                                      target.urn) else "stack", path=path, message=reason,
                                  source=target.source if target is not None else None)
                    found.append(((rule_order.get(v.rule, 99), order.get(target.urn, -1) if target else -1,
                                   len(found)), v))

        for resource, response in self.answers:
            collect(response, resource)
        collect(self.pack.analyze_stack(resources), None)
        found.sort(key=lambda item: item[0])
        return AnalyzeOutcome([v for _, v in found], [p.name for p in info.policies],
                              sum(1 for o in objects.values() if o is not None))


def analyze(pack: Pack, resources: list[EngineResource], policy_file_data: Any = None,
            policy_file: str = "policy config") -> AnalyzeOutcome:
    """The engine's sequence over ``resources`` (in order); returns violations in rule order,
    then resource order, like ``trainstack check``."""
    analysis = Analysis(pack, policy_file_data, policy_file)
    for resource in resources:
        analysis.analyze(resource)
    return analysis.finish(resources)


def manifest_resources(objects: list[dict], stack: str, project: str, parent: str = "",
                       sources: dict[int, str] | None = None, taken: Iterable[str] = ()) -> list[EngineResource]:
    """User manifests as the resources a program registering them would produce. URNs are unique:
    an object that replaces one of the program's (same kind, namespace and name) gets a suffix."""
    from modules.core.bundle import object_key
    from modules.core.wire import resource_type

    used = set(taken)
    out = []
    for obj in objects:
        type_ = resource_type(obj)
        name = base = object_key(obj)
        n = 1
        while urn(stack, project, type_, name) in used:
            n += 1
            name = f"{base}#{n}"
        used.add(urn(stack, project, type_, name))
        out.append(EngineResource(type=type_, name=name, urn=urn(stack, project, type_, name), properties=obj,
                            parent=parent, source=(sources or {}).get(id(obj))))
    return out


def stack_urn(stack: str, project: str) -> str:
    return urn(stack, project, "pulumi:pulumi:Stack", f"{project}-{stack}")
