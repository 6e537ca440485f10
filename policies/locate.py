"""Where a finding is: file, line and column of the offending field.

Objects are loaded by ``modules.core.yamlio`` (plain dicts, no positions). Positions come from a
second, lazy pass here: a file's YAML is composed into nodes only when a finding on one of its
objects needs a line, and a dotted field path (``spec.template.spec.containers[0].image``) is
walked through the nodes. A path that goes past what the file has (a field the rule wants added)
lands on the deepest field that exists.

Objects the stack renders are located in their rendered file under ``deploy/<stack>/`` (the same
text `trainstack render` writes) and, as the place to change them, at the stack file key they come
from: the module's ``trainstack:<module>`` key, or the list entry under it that names the object.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

import yaml

from modules.core import yamlio
from modules.core.errors import InputError

_SEGMENT = re.compile(r"\[(\d+)\]")


@dataclass(frozen=True)
class Location:
    """A place in a file: line and column, both 1-based."""
    file: str
    line: int          # 1-based
    column: int        # 1-based


def documents(text: str) -> list[yaml.Node]:
    """The non-empty documents of a YAML stream as nodes, in the order yamlio.load_all returns
    their objects (it drops empty documents, and so does this). Text beyond yamlio's bounds (depth,
    aliases, size) has no positions: composing it could exhaust the C composer's stack."""
    try:
        yamlio.check_bounds(text, "(positions)")
    except InputError:
        return []
    out = []
    for node in yaml.compose_all(text, Loader=yaml.CSafeLoader):
        if isinstance(node, yaml.ScalarNode) and node.tag == "tag:yaml.org,2002:null":
            continue
        out.append(node)
    return out


def _mark(node: yaml.Node) -> tuple[int, int]:
    return node.start_mark.line + 1, node.start_mark.column + 1


def find(node: yaml.Node, path: str) -> tuple[int, int]:
    """Line and column of ``path`` below ``node`` (keys may contain dots: annotation names). Each
    step costs one dictionary lookup per segment boundary left, never a scan of the mapping."""
    here = _mark(node)
    ends = [i for i, c in enumerate(path) if c in ".["] + [len(path)]   # where a key may end
    at = 0
    while at < len(path):
        if path[at] == ".":
            at += 1
        match = _SEGMENT.match(path, at)
        if match:
            index = int(match.group(1))
            if not isinstance(node, yaml.SequenceNode) or index >= len(node.value):
                return here
            node = node.value[index]
            here = _mark(node)
            at = match.end()
            continue
        if not isinstance(node, yaml.MappingNode):
            return here
        keys = _keys(node)
        # the longest key that is the whole rest or ends where a segment does
        best = next((end for end in reversed(ends) if end > at and path[at:end] in keys), None)
        if best is None:
            return here
        key_node, node = keys[path[at:best]]
        here = _mark(key_node)
        at = best
    return here


def _keys(node: yaml.MappingNode) -> dict[str, tuple[yaml.Node, yaml.Node]]:
    """A mapping node's scalar keys, each with its key and value nodes (the first of a repeated
    key, as the old scan found it); built once per node."""
    keys = getattr(node, "_trainstack_keys", None)
    if keys is None:
        keys = {}
        for key_node, value_node in node.value:
            if isinstance(key_node, yaml.ScalarNode):
                keys.setdefault(key_node.value, (key_node, value_node))
        node._trainstack_keys = keys
    return keys


class Locator:
    """Locations for findings, built lazily: nothing is parsed until a finding asks."""

    def __init__(self) -> None:
        self._objects: dict[int, tuple[str, Callable[[], str], int, int | None]] = {}
        self._strip: dict[int, str] = {}
        self._nodes: dict[str, list[yaml.Node]] = {}
        self._texts: dict[str, Callable[[], str]] = {}
        self._origins: dict[int, tuple[str, Callable[[], tuple[int, int]]]] = {}

    def add(self, obj: dict, file: str, text: Callable[[], str], doc: int, item: int | None = None,
            strip: str = "") -> None:
        """``obj`` is document ``doc`` (non-empty documents counted from 0) of ``file``, or item
        ``item`` of that document's ``items`` (a List). With ``strip``, the document holds only the
        part of the object below that path (a chart release's values file holds spec.values)."""
        self._objects[id(obj)] = (file, text, doc, item)
        self._texts.setdefault(file, text)
        if strip:
            self._strip[id(obj)] = strip

    def add_file(self, file: str, text: Callable[[], str]) -> None:
        self._texts.setdefault(file, text)

    def position(self, file: str, doc: int, item: int | None = None) -> tuple[int, int]:
        """Line and column of document ``doc`` of ``file`` (or of its List item ``item``)."""
        text = self._texts.get(file)
        node = self._document(file, text, doc, item) if text is not None else None
        return _mark(node) if node is not None else (1, 1)

    def add_origin(self, obj: dict, file: str, where: Callable[[], tuple[int, int]]) -> None:
        """The stack file line that produced a rendered object."""
        self._origins[id(obj)] = (file, where)

    def _node(self, obj: dict) -> tuple[str, yaml.Node] | None:
        entry = self._objects.get(id(obj))
        if entry is None:
            return None
        file, text, doc, item = entry
        node = self._document(file, text, doc, item)
        return (file, node) if node is not None else None

    def _document(self, file: str, text: Callable[[], str], doc: int, item: int | None) -> yaml.Node | None:
        """Document ``doc`` of ``file`` (or its List item ``item``); a file is composed once."""
        if file not in self._nodes:
            try:
                self._nodes[file] = documents(text())
            except yaml.YAMLError:
                self._nodes[file] = []
        nodes = self._nodes[file]
        if doc >= len(nodes):
            return None
        node = nodes[doc]
        if item is not None:
            items = next((v for k, v in node.value if isinstance(k, yaml.ScalarNode) and k.value == "items"),
                         None) if isinstance(node, yaml.MappingNode) else None
            if not isinstance(items, yaml.SequenceNode) or item >= len(items.value):
                return None
            node = items.value[item]
        return node

    def locate(self, obj: dict | None, path: str) -> Location | None:
        if obj is None:
            return None
        found = self._node(obj)
        if found is None:
            return None
        file, node = found
        strip = self._strip.get(id(obj))
        if strip:
            path = path[len(strip):].lstrip(".") if path.startswith(strip) else ""
        line, column = find(node, path)
        return Location(file, line, column)

    def origin(self, obj: dict | None) -> Location | None:
        entry = self._origins.get(id(obj)) if obj is not None else None
        if entry is None:
            return None
        file, where = entry
        line, column = where()
        return Location(file, line, column)


class StackMarks:
    """Lines of a stack file's keys: ``config: trainstack:<module>:`` and the list entries below it."""

    def __init__(self, file: str, text: Callable[[], str]):
        self.file, self._text, self._root = file, text, None

    def _config(self) -> yaml.Node | None:
        if self._root is None:
            try:
                docs = documents(self._text())
            except (yaml.YAMLError, OSError):
                docs = []
            self._root = docs[0] if docs else False
        if not self._root or not isinstance(self._root, yaml.MappingNode):
            return None
        return next((v for k, v in self._root.value if getattr(k, "value", None) == "config"), None)

    def module_key(self, module: str, name: str | None = None) -> tuple[int, int]:
        """The ``trainstack:<module>`` key, or the entry below it whose ``name`` is ``name``."""
        config = self._config()
        if not isinstance(config, yaml.MappingNode):
            return 1, 1
        for key_node, value in config.value:
            if getattr(key_node, "value", None) != f"trainstack:{module}":
                continue
            if name:
                hit = _named(value, name)
                if hit is not None:
                    return _mark(hit)
            return _mark(key_node)
        return 1, 1

    def path(self, path: str) -> tuple[int, int]:
        """A InputError's path (``trainstack:workloads.deployments[0].topology``; the namespace
        may be left out) in the stack file."""
        config = self._config()
        if not isinstance(config, yaml.MappingNode) or not path:
            return 1, 1
        module, _, rest = path.removeprefix("trainstack:").partition(".")
        module = _SEGMENT.split(module)[0]
        for key_node, value in config.value:
            if getattr(key_node, "value", None) == f"trainstack:{module}":
                return find(value, rest) if rest else _mark(key_node)
        return 1, 1


def _named(node: yaml.Node, name: str) -> yaml.Node | None:
    """The first mapping below ``node`` (breadth first) with ``name: <name>``."""
    queue = [node]
    while queue:
        current = queue.pop(0)
        if isinstance(current, yaml.MappingNode):
            for k, v in current.value:
                if getattr(k, "value", None) == "name" and isinstance(v, yaml.ScalarNode) and v.value == name:
                    return current
            queue.extend(v for _, v in current.value)
        elif isinstance(current, yaml.SequenceNode):
            queue.extend(current.value)
    return None


def document_path(text: str, path: str) -> tuple[int, int]:
    """``path`` in the first document of ``text`` (a fabric file's ``switches.leaf-01``); 1, 1 when
    the text does not parse or has no document."""
    try:
        docs = documents(text)
    except yaml.YAMLError:
        return 1, 1
    return find(docs[0], path) if docs and path else (1, 1)
