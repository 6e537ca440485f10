"""Read a stack's configuration: ``stacks/Pulumi.<stack>.yaml`` directly, or ``pulumi.Config``.

Both paths produce the same ``StackConfig``: the ``trainstack:`` values validated against the
module schemas with every default filled in. ``secure:`` values are kept opaque: they are accepted
only under ``trainstack:secrets[].data`` (Secrets the Pulumi program creates from the decrypted
values) and refused elsewhere in the ``trainstack:`` namespace; the renderer never sees a plaintext.
"""
from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from . import cache
from . import schema as schemas
from . import yamlio
from .errors import InputError, SecretText, SecureValue, expected, show
from .names import check_stack_name, check_stack_names
from .registry import MODULES

NAMESPACE = "trainstack"
MODULES_DIR = Path(__file__).resolve().parent.parent
STACK_FILE_KEYS = ("config", "secretsprovider", "encryptedkey", "encryptionsalt", "environment")


@dataclass(frozen=True)
class Project:
    """The project folder: where ``Pulumi.yaml`` lives."""

    root: Path
    name: str
    stack_dir: Path
    defaults: dict  # project-level config from Pulumi.yaml, "ns:key" -> value

    def show(self, path: Path) -> str:
        """How a file is named in messages: relative to the project root when inside it."""
        try:
            return str(Path(path).resolve().relative_to(self.root))
        except (ValueError, RuntimeError, OSError):   # outside the project, or a symlink loop
            return str(path)

    def stack_file(self, stack: str) -> Path:
        check_stack_name(stack)   # before the name becomes part of any path
        return self.stack_dir / f"Pulumi.{stack}.yaml"

    def stacks(self) -> list[str]:
        names = [p.name[len("Pulumi."):-len(".yaml")] for p in self.stack_dir.glob("Pulumi.*.yaml")]
        return sorted(names)


def find_project(start: Path | None = None) -> Path:
    """The nearest folder at or above ``start`` that holds a trainstack ``Pulumi.yaml``."""
    here = Path(start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / "Pulumi.yaml"
        if candidate.is_file():
            return folder
    raise InputError(str(here), "", "no Pulumi.yaml here or in any parent folder; "
                      "run inside a trainstack project or pass --project DIR")


@functools.lru_cache(maxsize=None)
def load_project(root: Path) -> Project:
    root = Path(root).resolve()
    path = root / "Pulumi.yaml"
    data = yamlio.load_file(path, "Pulumi.yaml")
    if not isinstance(data, dict):
        raise expected("Pulumi.yaml", "(document)", "a mapping", data)
    name = data.get("name")
    if not isinstance(name, str) or not name:
        raise expected("Pulumi.yaml", "name", "a project name", name)
    stack_dir = data.get("stackConfigDir", ".")
    if not isinstance(stack_dir, str):
        raise expected("Pulumi.yaml", "stackConfigDir", "a folder name", stack_dir)
    defaults: dict[str, Any] = {}
    config = data.get("config") or {}
    if not isinstance(config, dict):
        raise expected("Pulumi.yaml", "config", "a mapping", config)
    for key, value in config.items():
        full = key if ":" in str(key) else f"{name}:{key}"
        # Project config is either a plain value or a declaration {type, default|value, description}.
        if isinstance(value, dict) and ({"default", "value"} & value.keys() or "type" in value):
            if "value" in value:
                defaults[full] = value["value"]
            elif "default" in value:
                defaults[full] = value["default"]
        else:
            defaults[full] = value
    try:
        resolved = (root / stack_dir).resolve()
    except (RuntimeError, OSError) as exc:   # a symlink loop
        raise expected("Pulumi.yaml", "stackConfigDir", "a folder", f"{stack_dir} ({exc.__class__.__name__})") from None
    return Project(root=root, name=name, stack_dir=resolved, defaults=defaults)


def module_schema(name: str) -> dict:
    return schemas.load_schema(MODULES_DIR / name / "schema.yaml")


@functools.lru_cache(maxsize=None)
def stack_schema() -> dict:
    """The whole ``trainstack:`` namespace: core keys plus one section per module."""
    core = module_schema("core")
    properties = dict(core["properties"])
    required = ["fabric"]   # the hardware has no sensible default; every other section has one
    for name in MODULES:
        sub = dict(module_schema(name))
        if name not in required:
            sub.setdefault("default", {})
        properties[name] = sub
    return {"type": "object", "additionalProperties": False, "properties": properties,
            "required": required}


def format_path(parts: Iterable[Any]) -> str:
    """``["storage", "claims", 0, "size"]`` -> ``trainstack:storage.claims[0].size``."""
    parts = list(parts)
    if not parts:
        return f"{NAMESPACE}:"
    path = f"{NAMESPACE}:{parts[0]}"
    for part in parts[1:]:
        path = yamlio.join_path(path, part)
    return path


@dataclass
class StackConfig:
    """One stack's validated configuration."""

    project: Project
    name: str
    file: str                      # the stack file, as named in messages
    values: dict                   # trainstack config with defaults filled in
    given: dict                    # trainstack config exactly as written (no defaults)
    other: dict = field(default_factory=dict)   # other namespaces, e.g. "kubernetes:context"

    def section(self, name: str) -> dict:
        return self.values[name]

    @property
    def environment(self) -> str:
        return self.values["environment"]

    @property
    def profile(self) -> str:
        return profile_of(self.values)

    @property
    def production(self) -> bool:
        return self.profile == "production"

    @property
    def secrets(self) -> list[dict]:
        """``trainstack:secrets`` with namespaces filled in; data values are SecureValue (read from
        the file: never decrypted) or SecretText (decrypted by the Pulumi CLI for the program)."""
        default_ns = self.values["trainingNamespaces"][0]
        return [{**s, "namespace": s.get("namespace") or default_ns} for s in self.values.get("secrets", [])]

    @property
    def kube_context(self) -> str | None:
        value = self.other.get("kubernetes:context")
        return value if isinstance(value, str) else None

    def error(self, path: str, message: str, rule: str | None = None) -> InputError:
        """An error at ``path`` (dotted, below ``trainstack:``, e.g. ``storage.claims[0].size``)."""
        return InputError(self.file, f"{NAMESPACE}:{path}", message, rule=rule)

    def expected(self, path: str, what: str, got: object, rule: str | None = None) -> InputError:
        return self.error(path, f"expected {what}, got {show(got)}", rule=rule)

    def resolve(self, path: str, relative: str) -> Path:
        """A file referenced from the stack file, relative to the stacks folder; must exist."""
        if not isinstance(relative, str) or not relative:
            raise self.expected(path, "a file path relative to stacks/", relative)
        shown = self.project.show(self.project.stack_dir)
        # Stay under the stacks folder: no absolute path, no `..`, no symlink leading out of it.
        if Path(relative).is_absolute() or ".." in Path(relative).parts or "\0" in relative:
            raise self.expected(path, f"a file path under {shown}/ (no absolute path, no '..')", relative)
        try:
            target = (self.project.stack_dir / relative).resolve(strict=True)
        except (OSError, RuntimeError):   # missing, or a symlink loop
            target = None
        if target is None or not target.is_file():
            raise self.expected(path, f"an existing file under {shown}/", f"{relative} (not found)")
        if not target.is_relative_to(self.project.stack_dir):
            raise self.expected(path, f"a file under {shown}/", f"{relative} (a link leading out of it)")
        return target


# What an environment name means when `trainstack:profile` is not given (the names stacks used
# before the profile was its own option keep their meaning).
PROFILE_BY_ENVIRONMENT = {"prod": "production", "staging": "standard"}


def profile_of(values: dict) -> str:
    """The stack's profile: given, or from its environment name (see core/schema.yaml)."""
    return values.get("profile") or PROFILE_BY_ENVIRONMENT.get(values.get("environment", "dev"), "development")


def _decode_secure(value: Any) -> Any:
    if isinstance(value, dict):
        if set(value) == {"secure"} and isinstance(value["secure"], str):
            return SecureValue(value["secure"])
        return {k: _decode_secure(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_decode_secure(v) for v in value]
    return value


def _find_secure(value: Any, parts: list) -> list | None:
    if isinstance(value, SecureValue):
        return parts
    if isinstance(value, dict):
        for k, v in value.items():
            found = _find_secure(v, parts + [k])
            if found is not None:
                return found
    if isinstance(value, list):
        for i, v in enumerate(value):
            found = _find_secure(v, parts + [i])
            if found is not None:
                return found
    return None


def build_stack(project: Project, stack: str, flat: dict[str, Any], file: str,
                secret_keys: Iterable[str] = ()) -> StackConfig:
    """Validate a flat ``{"ns:key": value}`` map (stack file ``config:`` or Pulumi config)."""
    merged = dict(project.defaults)
    merged.update(flat)
    given: dict[str, Any] = {}
    other: dict[str, Any] = {}
    for key in sorted(merged, key=str):
        if not isinstance(key, str) or not key:
            raise expected(file, "config", "string keys such as trainstack:fabric", key)
        full = key if ":" in key else f"{project.name}:{key}"
        namespace, _, name = full.partition(":")
        value = _decode_secure(merged[key])
        if namespace == project.name or namespace == NAMESPACE:
            if not name:
                raise expected(file, full, "a key such as trainstack:fabric", key)
            if key in secret_keys or full in secret_keys:
                # decrypted by the Pulumi CLI: kept only where secrets belong, refused elsewhere
                value = _mark_decrypted(value) if name == "secrets" else SecureValue("")
            given[name] = value
        else:
            check_other_key(full, file)
            other[full] = value
    _check_secrets(given.get("secrets"), file)
    where = _find_secure({k: v for k, v in given.items() if k != "secrets"}, [])
    if where is not None:
        raise InputError(file, format_path(where),
                          "secure values are never decrypted by trainstack; keep the secret in a "
                          "Kubernetes Secret and reference it by name")
    _refuse_credentials(given, file)
    full_schema = stack_schema()
    # What the user wrote is validated, then the defaults are filled in: they are valid, and no
    # keyword of the schema turns on whether a defaulted key is there (a test holds both), so the
    # verdict is the one on the filled-in values, at half the cost.
    schemas.validate(full_schema, given, file, format_path)
    values = schemas.apply_defaults(full_schema, given)
    return StackConfig(project=project, name=stack, file=file, values=values, given=given, other=other)


# Keys Pulumi itself reads from the `pulumi:` namespace of a stack or project config (the engine's
# default-provider deny list, stack tags, the template a stack was created from, auto-naming).
PULUMI_KEYS = ("autonaming", "disable-default-providers", "tags", "template")


@functools.lru_cache(maxsize=None)
def kubernetes_provider_keys() -> tuple[str, ...]:
    """The `kubernetes:` configuration keys, as the installed pulumi-kubernetes provider declares
    them: the Pulumi names of its ProviderArgs properties (`context`, `kubeconfig`, ...). Importing
    the SDK costs about 0.3 s, so the names are kept in the user cache, keyed by the provider
    module's file, its size and modification time (a new provider version is a new entry)."""
    import importlib.util

    spec = importlib.util.find_spec("pulumi_kubernetes")   # locates the package without importing it
    source = Path(spec.origin).parent / "provider.py" if spec and spec.origin else None
    key = cache.files_key("kubernetes-provider-keys-1", [source]) if source else None
    names = cache.load_json("provider-keys", key, lambda d: isinstance(d, list) and all(
        isinstance(n, str) for n in d)) if key else None
    if not isinstance(names, list):
        from pulumi_kubernetes.provider import ProviderArgs

        names = sorted({getattr(v.fget, "_pulumi_name", k) for k, v in vars(ProviderArgs).items()
                        if isinstance(v, property)})
        if key:
            cache.store_json("provider-keys", key, names)
    return tuple(names)


def check_other_key(full: str, file: str) -> None:
    """A key of the `kubernetes:` or `pulumi:` namespace must be one that namespace knows: a typo such
    as `kubernetes:contxt` would make the provider fall back to the default kubeconfig context.
    Other namespaces belong to providers trainstack does not use and pass as they are."""
    namespace, _, name = full.partition(":")
    known = {"kubernetes": kubernetes_provider_keys, "pulumi": lambda: PULUMI_KEYS}.get(namespace)
    if known is None:
        return
    keys = known()
    if name not in keys:
        options = [f"{namespace}:{k}" for k in keys]
        raise InputError(file, full, f"unknown key {full!r}; {schemas._did_you_mean(full, options)}")


def _refuse_credentials(given: dict, file: str) -> None:
    """A credential written into any option (a GitOps repository or server, a chart repository, a
    registry, an endpoint, a workload's args or env) is refused before anything is rendered: the
    stack file is reviewed and its values end up in deploy/. The key is named, the value never."""
    from .secrets import find_credentials

    for path, what in find_credentials({k: v for k, v in given.items() if k != "secrets"}):
        raise InputError(file, f"{NAMESPACE}:{path}", f"looks like a credential ({what}; not shown); trainstack "
                          "never writes one: keep it in a Kubernetes Secret and reference the Secret by name",
                          rule="no-secrets-in-configmaps")


def _mark_decrypted(value: Any) -> Any:
    """``trainstack:secrets`` as the CLI hands it over (decrypted): wrap every data value."""
    if not isinstance(value, list):
        return value
    return [{**item, "data": {k: SecretText(v) if isinstance(v, str) else v for k, v in item["data"].items()}}
            if isinstance(item, dict) and isinstance(item.get("data"), dict) else item for item in value]


def _check_secrets(value: Any, file: str) -> None:
    """Secret data must be secure: a plain value would be a secret in clear in a reviewed file."""
    if not isinstance(value, list):
        return   # the schema names the problem
    for i, item in enumerate(value):
        data = item.get("data") if isinstance(item, dict) else None
        for key, leaf in (data.items() if isinstance(data, dict) else ()):
            if not isinstance(leaf, (SecureValue, SecretText)):
                path = format_path(["secrets", i, "data", key])
                raise InputError(file, path, "expected a secure value, got a plain one (not shown); set it with "
                                  f"`pulumi config set --secret --path '{path}' VALUE`")
        for k, v in (item.items() if isinstance(item, dict) else ()):
            if k != "data" and _find_secure(v, []) is not None:
                raise InputError(file, format_path(["secrets", i, k]), "only values under data may be secure")


def load_stack(project: Project, stack: str) -> StackConfig:
    """Read ``stacks/Pulumi.<stack>.yaml`` and validate it."""
    path = project.stack_file(stack)
    shown = project.show(path)
    if not path.is_file():
        known = ", ".join(project.stacks()) or "none"
        raise InputError(shown, "", f"no such stack {stack!r} (stacks here: {known})")
    check_stack_names([stack] + [s for s in project.stacks() if s.lower() == stack.lower() and s != stack])
    data = yamlio.load_file(path, shown)
    if data is None:
        raise InputError(shown, "(document)", "the file is empty; expected a mapping with a 'config' key")
    if not isinstance(data, dict):
        raise expected(shown, "(document)", "a mapping with a 'config' key", data)
    for key in data:
        if key not in STACK_FILE_KEYS:
            raise InputError(shown, str(key), f"unknown key {str(key)!r}; "
                              f"{schemas._did_you_mean(str(key), list(STACK_FILE_KEYS))}")
    config = data.get("config", {})
    if config is None:
        config = {}
    if not isinstance(config, dict):
        raise expected(shown, "config", "a mapping of keys such as trainstack:fabric", config)
    return build_stack(project, stack, config, shown)


def load_stack_from_pulumi(project: Project) -> StackConfig:
    """The same configuration, read inside the Pulumi program through ``pulumi.Config``."""
    import pulumi
    from pulumi.runtime import config as runtime_config

    every_key = set(runtime_config.CONFIG.get()) | set(runtime_config.get_config_env())
    secret_keys = set(runtime_config.get_config_secret_keys_env()) | set(runtime_config._SECRET_KEYS.get())
    config = {full: runtime_config.get_config(full) for full in sorted(every_key)}
    return stack_from_config_map(project, pulumi.get_stack(), config, secret_keys)


def stack_from_config_map(project: Project, stack: str, config: dict[str, Any],
                          secret_keys: Iterable[str] = ()) -> StackConfig:
    """A stack from Pulumi's flat config map (``{"trainstack:fabric": "<json>", ...}``), as the
    program (``pulumi.Config``) and the policy pack (``PULUMI_CONFIG``) receive it: values of the
    ``trainstack:`` (or project) namespace the schema knows are JSON-decoded, other keys pass
    through (unknown trainstack keys are named by validation)."""
    known = stack_schema()["properties"]
    flat: dict[str, Any] = {}
    for full, value in config.items():
        namespace, _, name = full.partition(":")
        if namespace in (NAMESPACE, project.name) and name in known and (value is None or isinstance(value, str)):
            flat[full] = _decode_pulumi_value(value, known[name])
        else:
            flat[full] = value
    return build_stack(project, stack, flat, project.show(project.stack_file(stack)), secret_keys)


def _decode_pulumi_value(text: str | None, sub_schema: dict) -> Any:
    """Pulumi passes every config value as a string; structured values are JSON-encoded."""
    if text is None or sub_schema.get("type") == "string":
        return text
    try:
        return json.loads(text, parse_constant=yamlio.refuse_constant)   # no NaN or infinities
    except (TypeError, ValueError, RecursionError):
        return text


def pulumi_config_map(stack: StackConfig) -> dict[str, str]:
    """The flat string map the Pulumi CLI would hand the program for this stack file (for tests
    and for ``trainstack preview``): objects JSON-encoded, strings as they are."""
    out: dict[str, str] = {}
    for name, value in stack.given.items():
        # secure secret data goes as the file holds it: the CLI would decrypt it, trainstack never does
        out[f"{NAMESPACE}:{name}"] = value if isinstance(value, str) else json.dumps(value, default=_secure_json)
    for key, value in stack.other.items():
        if isinstance(value, SecureValue):
            continue  # the CLI would decrypt it; trainstack never does
        out[key] = value if isinstance(value, str) else json.dumps(value)
    return out


def _secure_json(value: Any) -> Any:
    if isinstance(value, SecureValue):
        return {"secure": value.ciphertext}
    raise TypeError(f"cannot encode {type(value).__name__}")
