"""YAML in and out with PyYAML's C loader and dumper.

Loading rejects duplicate keys (PyYAML silently keeps the last one) and reports the dotted path
and line of the mistake; dumping is deterministic and writes multi-line strings as literal blocks.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

import yaml

from .errors import ConfigError

_Loader = yaml.CSafeLoader


def join_path(base: str, key: object) -> str:
    """Dotted path with list indices: ``a.b[0].c``."""
    if isinstance(key, int):
        return f"{base}[{key}]"
    return f"{base}.{key}" if base else str(key)


def _check_duplicates(node: yaml.Node, path: str, file: str) -> None:
    # Iterative walk: fabric files can be large and deeply nested.
    stack = [(node, path)]
    seen_nodes: set[int] = set()
    while stack:
        current, where = stack.pop()
        if id(current) in seen_nodes:  # anchors/aliases share nodes
            continue
        seen_nodes.add(id(current))
        if isinstance(current, yaml.MappingNode):
            keys: set[Any] = set()
            for key_node, value_node in current.value:
                key = key_node.value if isinstance(key_node, yaml.ScalarNode) else id(key_node)
                if key == "<<":
                    stack.append((value_node, where))
                    continue
                if key in keys:
                    mark = key_node.start_mark
                    raise ConfigError(file, join_path(where, key),
                                      f"duplicate key {key!r} (line {mark.line + 1}); each key may appear once")
                keys.add(key)
                if not isinstance(value_node, yaml.ScalarNode):
                    stack.append((value_node, join_path(where, key)))
        elif isinstance(current, yaml.SequenceNode):  # scalars hold no keys: skip them (long node lists)
            stack.extend((item, join_path(where, i)) for i, item in enumerate(current.value)
                         if not isinstance(item, yaml.ScalarNode))


_STR, _NULL = "tag:yaml.org,2002:str", "tag:yaml.org,2002:null"
_SEQ, _MAP = "tag:yaml.org,2002:seq", "tag:yaml.org,2002:map"


class _NotPlain(Exception):
    """The document uses something the plain-string builder leaves to PyYAML (tags, merge keys)."""


def _build_plain(root: yaml.Node) -> Any:
    """Objects from a node graph whose scalars all resolved to strings or null, in one pass.

    PyYAML's generic constructor costs several times the C parse on large fabric models; this
    handles the plain subset (aliases included) and raises _NotPlain for anything else. A
    duplicate key also raises _NotPlain, so the careful path reports it with its dotted path.
    """
    built: dict[int, Any] = {}

    def build(node: yaml.Node) -> Any:
        if id(node) in built:
            return built[id(node)]
        if isinstance(node, yaml.ScalarNode):
            if node.tag == _STR:
                return node.value
            if node.tag == _NULL:
                return None
            raise _NotPlain
        if isinstance(node, yaml.SequenceNode) and node.tag == _SEQ:
            items: list = []
            built[id(node)] = items
            items.extend(build(item) for item in node.value)
            return items
        if isinstance(node, yaml.MappingNode) and node.tag == _MAP:
            mapping: dict = {}
            built[id(node)] = mapping
            for key_node, value_node in node.value:
                if not isinstance(key_node, yaml.ScalarNode) or key_node.tag != _STR or key_node.value == "<<":
                    raise _NotPlain
                if key_node.value in mapping:
                    raise _NotPlain
                mapping[key_node.value] = build(value_node)
            return mapping
        raise _NotPlain

    return build(root)


def loads(text: str, file: str, loader_class: type = _Loader, plain_strings: bool = False) -> Any:
    """Parse one YAML document. Syntax errors and duplicate keys raise ConfigError.

    ``loader_class`` lets a reader of a foreign format resolve scalars its own way (a subclass of
    the C safe loader with other implicit resolvers); ``plain_strings`` says that loader resolves
    every scalar to a string or null, which allows a much faster way to build the objects."""
    loader = loader_class(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        if plain_strings:
            try:
                return _build_plain(node)
            except (_NotPlain, RecursionError):
                pass   # the general path below handles it, and names any duplicate key
        _check_duplicates(node, "", file)
        return loader.construct_document(node)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "(document)"
        problem = exc.problem or exc.context or "invalid YAML"
        raise ConfigError(file, where, f"invalid YAML: {problem}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(file, "(document)", f"invalid YAML: {exc}") from None
    finally:
        loader.dispose()


def read_text(path: Path, shown_as: str) -> str:
    """A user's file as text; a missing or unreadable file is a ConfigError naming it."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(shown_as, "", "file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(shown_as, "", f"cannot read file: {exc.__class__.__name__}") from None


def load_file(path: Path, shown_as: str, loader_class: type = _Loader, plain_strings: bool = False) -> Any:
    """Read and parse a YAML file; a missing or unreadable file is a ConfigError too."""
    return loads(read_text(path, shown_as), shown_as, loader_class, plain_strings)


def load_all(text: str, file: str) -> list[Any]:
    """Parse a multi-document YAML stream (user manifests, workload files), skipping empty documents."""
    try:
        docs = list(yaml.load_all(text, Loader=_Loader))
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "(document)"
        raise ConfigError(file, where, f"invalid YAML: {exc.problem or exc.context}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(file, "(document)", f"invalid YAML: {exc}") from None
    return [d for d in docs if d is not None]


class _Dumper(yaml.CSafeDumper):
    """C dumper; multi-line strings become literal blocks so configs stay readable in diffs."""


def _represent_str(dumper: yaml.SafeDumper, data: str) -> yaml.Node:
    if "\n" in data:
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", data)


_Dumper.add_representer(str, _represent_str)


def dump(obj: Any) -> str:
    """One YAML document, keys in the order the renderer built them (deterministic)."""
    return yaml.dump(obj, Dumper=_Dumper, sort_keys=False, default_flow_style=False,
                     allow_unicode=True, width=4096)


def dump_all(objs: Iterable[Any]) -> str:
    return yaml.dump_all(list(objs), Dumper=_Dumper, sort_keys=False, default_flow_style=False,
                         allow_unicode=True, width=4096)
