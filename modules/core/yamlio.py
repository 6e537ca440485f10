"""YAML in and out with PyYAML's C loader and dumper.

Loading rejects duplicate keys (PyYAML silently keeps the last one) and reports the dotted path
and line of the mistake; dumping is deterministic and writes multi-line strings as literal blocks.

Every reader is bounded (docs/reliability.md): a file must be a regular file of at most
MAX_FILE_BYTES; nesting deeper than MAX_DEPTH is refused before PyYAML's C composer (which
recurses) sees the text; aliases may not expand to more than MAX_ALIAS_NODES nodes in all (an
alias bomb is a few hundred bytes); integers have at most MAX_INT_DIGITS digits; NaN and
infinities are refused.
"""
from __future__ import annotations

import io
import itertools
import json
import math
import re
from pathlib import Path
from typing import Any, Iterable, Iterator

import yaml

from . import files
from .errors import InputError

MAX_FILE_BYTES = 4 * 2**20      # stack files, manifests, workloads: parsing costs ~200 MiB per MiB
MAX_FABRIC_FILE_BYTES = 16 * 2**20   # a topograph model naming each of 64k nodes is about 2 MiB
MAX_DEPTH = 100                 # our own files nest about 12 deep
MAX_ALIAS_NODES = 100_000       # nodes that aliases may add by repeating their anchors
MAX_INT_DIGITS = 30             # beyond int64 and any count we use
MAX_FABRIC_NODES = 1_000_000    # nodes in one fabric (modules/fabric/hostlist.py counts them; init bounds by it)


class _Bounds:
    """Bounded integers and finite floats, for the C loader and the event loader alike."""

    def construct_yaml_int(self, node):
        digits = node.value.lstrip("+-").replace("_", "")
        if len(digits) > MAX_INT_DIGITS:
            raise yaml.constructor.ConstructorError(
                None, None, f"integer with {len(digits)} digits; at most {MAX_INT_DIGITS} are allowed",
                node.start_mark)
        return super().construct_yaml_int(node)

    def construct_yaml_float(self, node):
        value = super().construct_yaml_float(node)
        if not math.isfinite(value):
            raise yaml.constructor.ConstructorError(
                None, None, f"{node.value!r} is not a finite number", node.start_mark)
        return value


class _BoundedLoader(_Bounds, yaml.CSafeLoader):
    """The C safe loader with bounded integers and finite floats."""


_BoundedLoader.add_constructor("tag:yaml.org,2002:int", _BoundedLoader.construct_yaml_int)
_BoundedLoader.add_constructor("tag:yaml.org,2002:float", _BoundedLoader.construct_yaml_float)
_Loader = _BoundedLoader
BoundedLoader = _BoundedLoader   # for readers that keep PyYAML's own document loop

# Cheap upper bounds on nesting: block collections nest only by indentation or by the indicators
# `- `, `? ` and `: ` at the start of a line (at most two levels per column), flow collections by
# brackets. Text whose bound stays under MAX_DEPTH needs no exact check.
_LINE_PREFIX = re.compile(r"^[ \t?:-]*", re.M)
_MAYBE_ALIAS = re.compile(r"(?:^|[\s\[{,])\*[^\s\[\]{},]")


def marked_error(exc: "yaml.MarkedYAMLError", file: str, text: str) -> InputError:
    """PyYAML's error at its line and column; a tab where YAML wants a token (YAML never indents
    with tabs) is named as such."""
    mark = exc.problem_mark or exc.context_mark
    where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "(document)"
    problem = exc.problem or exc.context or "invalid YAML"
    if mark is not None and "cannot start any token" in problem:
        lines = text.splitlines()
        line = lines[mark.line] if mark.line < len(lines) else ""
        if line[mark.column:mark.column + 1] == "\t":
            return InputError(file, where, "invalid YAML: a tab character; YAML indents with spaces only")
    return InputError(file, where, f"invalid YAML: {problem}")


def _depth_bound(text: str) -> int:
    block = 2 * max((len(m) for m in _LINE_PREFIX.findall(text)), default=0) + 2
    # Bracket depth in C loops (a List of a million `{}` has two million brackets): the running sum
    # of +1/-1, plus the deepest it went below zero (a stray closer), bounds the clamped depth.
    sums = list(itertools.accumulate(map(_BRACKET_STEP.__getitem__, _NOT_BRACKET.sub("", text))))
    flow = max(sums, default=0) + max(0, -min(sums, default=0))
    return block + flow


_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_BRACKET_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def check_bounds(text: str, file: str, loader_class: type = yaml.CSafeLoader) -> None:
    """Refuse nesting deeper than MAX_DEPTH, alias expansion beyond MAX_ALIAS_NODES and an alias
    inside the collection its anchor names (``a: &a [1, *a]``: a cycle, which no walk of the data
    would end), from the C parser's events (the parser keeps its own stack; only the composer
    recurses)."""
    if len(text) > MAX_FABRIC_FILE_BYTES:
        raise InputError(file, "", f"the text is larger than {MAX_FABRIC_FILE_BYTES // 2**20} MiB")
    if not _MAYBE_ALIAS.search(text) and _depth_bound(text) <= MAX_DEPTH:
        return
    sizes: dict[str, int] = {}     # anchor -> nodes it stands for, aliases expanded
    frames: list[list] = [[0, None]]
    expanded = 0
    try:
        for event in yaml.parse(text, Loader=loader_class):
            if isinstance(event, yaml.CollectionStartEvent):
                frames.append([1, event.anchor])
                if len(frames) - 1 > MAX_DEPTH:
                    raise _bound(file, event, f"nested more than {MAX_DEPTH} levels deep")
            elif isinstance(event, yaml.CollectionEndEvent):
                count, anchor = frames.pop()
                if anchor is not None:
                    sizes[anchor] = count
                frames[-1][0] += count
            elif isinstance(event, yaml.ScalarEvent):
                if event.anchor is not None:
                    sizes[event.anchor] = 1
                frames[-1][0] += 1
            elif isinstance(event, yaml.AliasEvent):
                if event.anchor not in sizes and any(frame[1] == event.anchor for frame in frames):
                    raise _bound(file, event, f"the alias *{event.anchor} is inside the collection its anchor "
                                 "names (a cycle)")
                size = sizes.get(event.anchor, 1)
                expanded += size
                if expanded > MAX_ALIAS_NODES:
                    raise _bound(file, event, f"aliases expand to more than {MAX_ALIAS_NODES} nodes "
                                 "(an alias bomb?)")
                frames[-1][0] += size
            elif isinstance(event, yaml.DocumentEndEvent):
                sizes.clear()   # anchors are local to a document
    except yaml.YAMLError:
        return   # the composer reports syntax errors with their line


def _bound(file: str, event: yaml.Event, what: str) -> InputError:
    mark = event.start_mark
    return InputError(file, f"line {mark.line + 1}, column {mark.column + 1}" if mark else "(document)", what)


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
                    raise InputError(file, join_path(where, key),
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
    """Parse one YAML document. Syntax errors and duplicate keys raise InputError.

    ``loader_class`` lets a reader of a foreign format resolve scalars its own way (a subclass of
    the C safe loader with other implicit resolvers); ``plain_strings`` says that loader resolves
    every scalar to a string or null, which allows a much faster way to build the objects."""
    check_bounds(text, file, loader_class)
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
    except yaml.YAMLError as exc:
        raise _yaml_error(exc, file, text) from None
    finally:
        loader.dispose()


def safe_load(text: str, file: str) -> Any:
    """``yaml.safe_load`` with the C loader and this module's bounds (depth, aliases, integers):
    for text embedded in another document (a scheduler conf string), where a repeated key keeps
    its last value as PyYAML does. Bounds raise InputError, syntax errors yaml.YAMLError."""
    check_bounds(text, file)
    return yaml.load(text, Loader=_Loader)


def read_text(path: Path, shown_as: str, limit: int = MAX_FILE_BYTES) -> str:
    """A user's file as text; a missing or unreadable file is an InputError naming it. Only a
    regular file of at most ``limit`` bytes is read (a FIFO or /dev/zero would never end)."""
    data = read_bytes(path, shown_as, limit)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(shown_as, "", "cannot read file: not UTF-8 text") from None


def read_bytes(path: Path, shown_as: str, limit: int = MAX_FILE_BYTES) -> bytes:
    """A regular file's bytes, at most ``limit`` of them, or an InputError naming the file."""
    try:
        return files.read_regular(path, limit, follow_links=True)
    except files.Unreadable as why:
        raise InputError(shown_as, "", _unreadable(why, limit)) from None


def _unreadable(why: files.Unreadable, limit: int) -> str:
    """``files.read_regular``'s reason in a user's words (links are followed here: never LINK)."""
    if why.reason == files.MISSING:
        return "file not found"
    if why.reason == files.NOT_REGULAR:
        return "not a regular file (a folder, device or pipe)"
    if why.reason == files.TOO_LARGE:
        return f"file is {why.size} bytes; at most {limit} are read"
    if why.reason == files.GREW:
        return f"file is larger than {limit} bytes"
    return f"cannot read file: {why.detail}"


def load_file(path: Path, shown_as: str, loader_class: type = _Loader, plain_strings: bool = False,
              limit: int = MAX_FILE_BYTES) -> Any:
    """Read and parse a YAML file; a missing or unreadable file is an InputError too."""
    return loads(read_text(path, shown_as, limit), shown_as, loader_class, plain_strings)


def load_all(text: str, file: str) -> list[Any]:
    """Parse a multi-document YAML stream (user manifests, workload files), skipping empty
    documents; duplicate keys are refused as in ``loads``."""
    check_bounds(text, file)
    loader = _Loader(text)
    docs = []
    try:
        while loader.check_node():
            node = loader.get_node()
            if node is None:
                continue
            index = len(docs) + 1
            _check_duplicates(node, "" if index == 1 else f"(document {index})", file)
            docs.append(loader.construct_document(node))
    except yaml.YAMLError as exc:
        raise _yaml_error(exc, file, text) from None
    finally:
        loader.dispose()
    return [d for d in docs if d is not None]


class KeylessItem:
    """Stands for a ``List`` item that cannot be a Kubernetes object and is not built as one: a
    mapping with neither ``apiVersion`` nor ``kind`` (``value`` None), or a scalar (``value``).
    Only where it starts is kept (1-based line and column)."""

    __slots__ = ("line", "column", "value")

    def __init__(self, line: int, column: int, value: Any = None) -> None:
        self.line, self.column, self.value = line, column, value

    def __repr__(self) -> str:
        return f"KeylessItem({self.line}, {self.column}, {self.value!r})"


_OBJECT_KEYS = frozenset({"apiVersion", "kind"})


class _EventLoader(_Bounds, yaml.composer.Composer, yaml.constructor.SafeConstructor, yaml.resolver.Resolver):
    """Composes and constructs one document from events already parsed (the C parser's)."""

    def __init__(self, events: list) -> None:
        self._events = events
        self._next = 0
        yaml.composer.Composer.__init__(self)
        yaml.constructor.SafeConstructor.__init__(self)
        yaml.resolver.Resolver.__init__(self)

    def check_event(self, *choices) -> bool:
        if self._next >= len(self._events):
            return False
        return not choices or isinstance(self._events[self._next], choices)

    def peek_event(self):
        return self._events[self._next]

    def get_event(self):
        self._next += 1
        return self._events[self._next - 1]


_EventLoader.add_constructor("tag:yaml.org,2002:int", _EventLoader.construct_yaml_int)
_EventLoader.add_constructor("tag:yaml.org,2002:float", _EventLoader.construct_yaml_float)

_MAP_START, _MAP_END = yaml.MappingStartEvent, yaml.MappingEndEvent
_SEQ_START, _SEQ_END, _SCALAR = yaml.SequenceStartEvent, yaml.SequenceEndEvent, yaml.ScalarEvent
_STREAM_EDGES = (yaml.StreamStartEvent(), yaml.DocumentStartEvent())
_STREAM_ENDS = (yaml.DocumentEndEvent(), yaml.StreamEndEvent())


def _build(events: list, path: str, file: str) -> Any:
    loader = _EventLoader([*_STREAM_EDGES, *events, *_STREAM_ENDS])
    node = loader.get_single_node()
    if node is None:
        return None
    _check_duplicates(node, path, file)
    return loader.construct_document(node)


def _scalar(loader: _EventLoader, event: yaml.ScalarEvent, seen: dict) -> Any:
    """One scalar built as the composer and constructor would build it (scalars are immutable:
    a value met before is reused; a List of a million `1` builds one)."""
    key = (event.value, event.tag, event.implicit, event.style)
    if key in seen:
        return seen[key]
    tag = event.tag
    if tag is None or tag == "!":
        tag = loader.resolve(yaml.ScalarNode, event.value, event.implicit)
    node = yaml.ScalarNode(tag, event.value, event.start_mark, event.end_mark, style=event.style)
    value = loader.construct_document(node)
    if len(seen) < 4096:
        seen[key] = value
    return value


class _NotAList(Exception):
    """A document's ``items`` held keyless entries but the document is no ``List``: read it as written."""


class _ManifestEvents:
    """The one pass of ``load_manifests`` over the parser's events. A document's events are kept for
    the composer, except the items of its top-level ``items`` list: each item is built as soon as it
    ends (or stands as a ``KeylessItem``), so memory and time stay per item. ``depth`` counts the
    nesting inside the document (1: the root collection, 2: the ``items`` list, 3: an item's top)."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.docs: list[Any] = []
        self.scalars, self.seen_scalars = _EventLoader([]), {}
        self._start_document()

    def _start_document(self) -> None:
        self.body: list = []             # the document's events, with its items list left empty
        self.items: list | None = None
        self.item: list = []             # the current item's events
        self.item_keys: set = set()      # the current item's top-level keys
        self.depth = 0
        self.root_key: str | None = None
        self.expect_key = False          # at depth 1 inside a root mapping: the next scalar is a key
        self.in_items = self.item_key_next = self.keyless = False

    def feed(self, event: yaml.Event) -> None:
        cls = type(event)
        if self.in_items:
            self._item_event(event, cls)
        elif cls is yaml.DocumentStartEvent:
            self._start_document()
        elif cls is yaml.DocumentEndEvent:
            self._end_document()
        elif cls is not yaml.StreamStartEvent and cls is not yaml.StreamEndEvent:
            self._body_event(event)

    def _deeper(self, event: yaml.Event) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:   # counted before anything is composed (the composer recurses)
            raise _bound(self.file, event, f"nested more than {MAX_DEPTH} levels deep")

    def _item_event(self, event: yaml.Event, cls: type) -> None:
        """An event inside the ``items`` list: the hot path, plain type tests."""
        if self.depth == 2 and cls is _SEQ_END:   # the items list ends
            self.in_items = False
            self.depth -= 1
            self.body.append(event)
            self.expect_key = True
            return
        self.item.append(event)
        if cls is _MAP_START or cls is _SEQ_START:
            self._deeper(event)
            self.item_key_next = self.depth == 3 and cls is _MAP_START
        elif cls is _MAP_END or cls is _SEQ_END:
            self.depth -= 1
            if self.depth == 3:   # a collection at the item's top level ended: a key or a value
                self.item_key_next = not self.item_key_next
        elif self.depth == 3 and cls is _SCALAR:
            if self.item_key_next:
                self.item_keys.add(event.value)
            self.item_key_next = not self.item_key_next
        if self.depth == 2:
            self._end_item(cls)

    def _end_item(self, cls: type) -> None:
        """The current item is complete: a scalar or a mapping without ``apiVersion`` and ``kind``
        stands as a ``KeylessItem`` (no composer needed); anything else is built."""
        first, item = self.item[0], self.item
        mark = first.start_mark
        if cls is _SCALAR and len(item) == 1:
            self.items.append(KeylessItem(mark.line + 1, mark.column + 1,
                                          _scalar(self.scalars, first, self.seen_scalars)))
            self.keyless = True
        elif type(first) is _MAP_START and first.tag is None and not self.item_keys & _OBJECT_KEYS:
            self.items.append(KeylessItem(mark.line + 1, mark.column + 1))
            self.keyless = True
        else:
            self.items.append(_build(item, f"items[{len(self.items)}]", self.file))
        self.item = []
        if self.item_keys:
            self.item_keys = set()

    def _end_document(self) -> None:
        index = len(self.docs) + 1
        doc = _build(self.body, "" if index == 1 else f"(document {index})", self.file)
        if self.items is not None and isinstance(doc, dict) and isinstance(doc.get("items"), list):
            if self.keyless and not str(doc.get("kind", "")).endswith("List"):
                raise _NotAList
            doc["items"] = self.items
        self.docs.append(doc)

    def _body_event(self, event: yaml.Event) -> None:
        """An event of the document outside its ``items`` list: kept, and the root's keys followed
        so the ``items`` list is found."""
        self.body.append(event)
        if isinstance(event, yaml.CollectionStartEvent):
            self._deeper(event)
            if self.depth == 1:
                self.expect_key = isinstance(event, yaml.MappingStartEvent)
            elif self.depth == 2 and self.root_key == "items" and isinstance(event, yaml.SequenceStartEvent) \
                    and self.items is None:
                self.items, self.in_items, self.item, self.item_keys = [], True, [], set()
                return
            if self.depth == 2:
                self.expect_key = False
        elif isinstance(event, yaml.CollectionEndEvent):
            self.depth -= 1
            if self.depth == 1:
                self.expect_key = True
        elif self.depth == 1 and isinstance(event, yaml.ScalarEvent):
            if self.expect_key:
                self.root_key = event.value
            self.expect_key = not self.expect_key


def load_manifests(text: str, file: str, limit: int = MAX_FABRIC_FILE_BYTES) -> list[Any]:
    """``load_all`` for manifests, in one pass over the parser's events (``_ManifestEvents``): the
    items of a document's top-level ``items`` list are built one at a time, and an item mapping with
    neither ``apiVersion`` nor ``kind``, or a scalar, stands as a ``KeylessItem`` (a ``List`` of a
    million ``{}`` is read in seconds, not minutes). Text with aliases takes ``load_all``: an alias
    may point from one item into another."""
    if _MAYBE_ALIAS.search(text):
        return load_all(text, file)
    if len(text) > limit:   # ``limit``: a snapshot's; memory stays per item (load_all keeps its own cap)
        raise InputError(file, "", f"the text is larger than {limit // 2**20} MiB")
    reader = _ManifestEvents(file)
    try:
        for event in yaml.parse(text, Loader=yaml.CSafeLoader):
            reader.feed(event)
    except _NotAList:
        return load_all(text, file)
    except yaml.YAMLError as exc:
        raise _yaml_error(exc, file, text) from None
    return [d for d in reader.docs if d is not None]


def _yaml_error(exc: yaml.YAMLError, file: str, text: str = "") -> InputError:
    """A parser or constructor error as one line naming the file and, when known, the position."""
    if isinstance(exc, yaml.MarkedYAMLError):
        return marked_error(exc, file, text)
    return InputError(file, "(document)", f"invalid YAML: {exc}")


def refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a finite number")


def loads_json(text: str, file: str, what: str = "invalid JSON") -> Any:
    """JSON with the same bounds: no NaN or infinities, nesting limited, one line on a mistake."""
    if len(text) > MAX_FILE_BYTES:
        raise InputError(file, "", f"the text is larger than {MAX_FILE_BYTES // 2**20} MiB")
    if _json_depth(text) > MAX_DEPTH:
        raise InputError(file, "(document)", f"nested more than {MAX_DEPTH} levels deep")
    try:
        return json.loads(text, parse_constant=refuse_constant)
    except (ValueError, RecursionError) as exc:
        raise InputError(file, "(document)", f"{what}: {str(exc)[:120]}") from None


def _json_depth(text: str) -> int:
    """Bracket depth outside JSON strings."""
    deepest = depth = 0
    for token in re.finditer(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', text):
        char = token.group()
        if char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def finite(value: Any) -> Any:
    """A copy for JSON output with NaN and infinities as null: ``NaN`` is not JSON."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


def dumps_json(value: Any, **options: Any) -> str:
    """JSON that every parser accepts, whatever the numbers."""
    return json.dumps(finite(value), allow_nan=False, **options)


def load_json(path: Path, shown_as: str, what: str = "invalid JSON") -> Any:
    return loads_json(read_text(path, shown_as), shown_as, what)


class _Dumper(yaml.CSafeDumper):
    """C dumper; multi-line strings become literal blocks so configs stay readable in diffs."""


def _represent_str(dumper: yaml.SafeDumper, data: str) -> yaml.Node:
    if "\n" in data:
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", data)


_Dumper.add_representer(str, _represent_str)


_DUMP_OPTIONS = {"sort_keys": False, "default_flow_style": False, "allow_unicode": True, "width": 4096}


def dump(obj: Any) -> str:
    """One YAML document, keys in the order the renderer built them (deterministic)."""
    return yaml.dump(obj, Dumper=_Dumper, **_DUMP_OPTIONS)


def dump_all(objs: Iterable[Any]) -> str:
    return yaml.dump_all(list(objs), Dumper=_Dumper, **_DUMP_OPTIONS)


# A kept final line break (``|+``) makes a lone document end with ``...``; in a stream it does not.
_KEEP_CHOMP = re.compile(r"[|>][1-9]?\+\n")


def dump_each(objs: Iterable[Any]) -> Iterator[str]:
    """``dump(obj)`` for each object, from one PyYAML dumper for them all, as ``dump_all`` writes a
    stream: setting a dumper up costs about as much as dumping a small object (thousands of
    HyperNodes). Each document is taken from the stream as it ends (the emitter flushes there);
    one that would read differently on its own (see _KEEP_CHOMP; not a mapping after ``---``) is
    dumped on its own."""
    stream = io.StringIO()
    dumper = _Dumper(stream, **_DUMP_OPTIONS)
    try:
        dumper.open()
        for i, obj in enumerate(objs):
            dumper.represent(obj)
            text = stream.getvalue()
            stream.seek(0)
            stream.truncate()
            if i:   # documents after the first start with ---
                text = text[4:] if text.startswith("---\n") else None
            if text is None or ("+\n" in text and _KEEP_CHOMP.search(text)):
                text = dump(obj)
            yield text
    finally:
        dumper.dispose()
