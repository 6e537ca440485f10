"""User manifests as real repositories hold them.

Files and folders (every *.yaml / *.yml below a folder) or standard input (``-``). Documents that
are not Kubernetes objects (kustomization files, Helm Chart.yaml and values, strategic-merge patch
fragments without apiVersion/kind, a List's odd item) are skipped with one note each; a file that
does not parse is skipped with its error, unless nothing at all could be read (then that error
stops the run, exit 2). Parsing goes through ``modules.core.yamlio``; line marks come lazily from
``policies.locate``.
"""
from __future__ import annotations

import fnmatch
import sys
from dataclasses import dataclass, field
from pathlib import Path

from modules.core import yamlio
from modules.core.errors import InputError

from .locate import Locator

STDIN = "-"
STDIN_NAME = "<stdin>"
_KUSTOMIZE_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
_VALUES_FILES = ("values.yaml", "values.yml", "values-*.yaml", "values-*.yml", "*.values.yaml", "*.values.yml",
                 "values.*.yaml", "values.*.yml")
_NOT_OBJECTS = {"Kustomization": "a kustomization file", "Component": "a kustomize component"}


@dataclass
class Skipped:
    """Part of the user's manifests that no rule can judge, and why."""
    file: str
    document: int           # 1-based, as people count
    reason: str
    item: int | None = None
    count: int = 1          # consecutive items skipped for the same reason share one note
    line: int | None = None      # where the (first) item starts, when the reader knows it
    column: int | None = None

    def __str__(self) -> str:
        item = f" item {self.item}" if self.item is not None else ""
        if self.count > 1:
            item = f" items {self.item}-{self.item + self.count - 1} ({self.count} items)"
        return f"{self.file}: document {self.document}{item}: skipped, {self.reason}"


@dataclass
class Manifests:
    """The user's manifests: their objects, the file each came from, and what was skipped."""
    objects: list[dict] = field(default_factory=list)
    sources: dict[int, str] = field(default_factory=dict)      # id(obj) -> file
    skipped: list[Skipped] = field(default_factory=list)
    locator: Locator = field(default_factory=Locator)


def _files(raw: str) -> list[Path]:
    path = Path(raw)
    if not path.exists():
        raise InputError(raw, "", "no such file or folder")
    if path.is_dir():
        # not only regular files: a FIFO or device among them is refused by the reader, with a note
        return sorted(p for p in path.rglob("*") if p.suffix in (".yaml", ".yml", ".json") and not p.is_dir())
    return [path]


def _not_an_object(doc: object, file: str) -> str | None:
    """Why a document is not a Kubernetes object, or None when it is one."""
    name = Path(file).name
    if not isinstance(doc, dict):
        return f"not a mapping but {type(doc).__name__}"
    kind, api = doc.get("kind"), doc.get("apiVersion")
    if str(api).startswith("kustomize.config.k8s.io/") or (name in _KUSTOMIZE_FILES and not kind):
        return _NOT_OBJECTS.get(str(kind), "a kustomization file")
    if name == "Chart.yaml" and "kind" not in doc:
        return "a Helm Chart.yaml"
    if not kind or not api or not isinstance(kind, str) or not isinstance(api, str):
        if any(fnmatch.fnmatchcase(name, p) for p in _VALUES_FILES):
            return "Helm chart values (no apiVersion/kind)"
        odd = [k for k, v in (("apiVersion", api), ("kind", kind)) if v and not isinstance(v, str)]
        if odd:
            return f"{' and '.join(odd)} not a string: not a Kubernetes object"
        missing = " and ".join(k for k, v in (("apiVersion", api), ("kind", kind)) if not isinstance(v, str) or not v)
        return f"no {missing}: a patch fragment or other configuration, not a Kubernetes object"
    if not isinstance(doc.get("metadata"), dict):
        return f"a {kind} without metadata"
    return None


def _add(out: Manifests, obj: dict, file: str, text, doc: int, item: int | None) -> None:
    out.objects.append(obj)
    out.sources[id(obj)] = file
    out.locator.add(obj, file, text, doc, item)


def _read_one(out: Manifests, file: str, text: str) -> None:
    loader = lambda: text   # noqa: E731  (the locator parses again only if a finding asks)
    documents = yamlio.load_manifests(text, file)   # bounded: a file it refuses gets no positions either
    out.locator.add_file(file, loader)
    for i, doc in enumerate(documents):
        is_list = isinstance(doc, dict) and str(doc.get("kind", "")).endswith("List") and "items" in doc
        if not is_list:
            reason = _not_an_object(doc, file)
            if reason:
                out.skipped.append(Skipped(file, i + 1, reason))
            else:
                _add(out, doc, file, loader, i, None)
            continue
        items = doc.get("items")
        if not isinstance(items, list):
            out.skipped.append(Skipped(file, i + 1, f"a {doc.get('kind')} whose items is not a list"))
            continue
        stub_reasons: dict[type, str | None] = {}   # one reason per kind of stub, not per item
        run: Skipped | None = None   # consecutive items skipped for one reason share one note
        for j, item in enumerate(items):
            if isinstance(item, yamlio.KeylessItem):
                kind = type(item.value)
                if kind not in stub_reasons:
                    stub_reasons[kind] = _not_an_object({} if item.value is None else item.value, file)
                reason = stub_reasons[kind]
            else:
                reason = _not_an_object(item, file)
            if not reason:
                _add(out, item, file, loader, i, j)
                continue
            if run is not None and run.reason == reason and run.item + run.count == j:
                run.count += 1
                continue
            run = Skipped(file, i + 1, reason, item=j, line=getattr(item, "line", None),
                          column=getattr(item, "column", None))
            out.skipped.append(run)


def _read_stdin(stdin=None) -> str:
    """Standard input, bounded like a file; bytes are decoded as UTF-8 like a file (never by the
    locale: under LANG=C a stray byte would come back as a character no output can encode)."""
    source = stdin or sys.stdin
    if source is None:
        raise InputError(STDIN_NAME, "", "standard input is closed")
    data = getattr(source, "buffer", source).read(yamlio.MAX_FILE_BYTES + 1)
    if isinstance(data, bytes):
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(STDIN_NAME, "", f"not UTF-8 text (byte {exc.start})") from None
    return data


def load(paths: list[str], stdin=None) -> Manifests:
    """Every object in ``paths``; ``-`` reads ``stdin`` (sys.stdin by default)."""
    out = Manifests()
    errors: list[InputError] = []
    for raw in paths:
        if raw == STDIN:
            try:
                text = _read_stdin(stdin)
                if len(text) > yamlio.MAX_FILE_BYTES:
                    raise InputError(STDIN_NAME, "", f"larger than {yamlio.MAX_FILE_BYTES // 2**20} MiB")
                _read_one(out, STDIN_NAME, text)
            except InputError as err:
                errors.append(err)
            continue
        files = _files(raw)
        for path in files:
            shown = str(path)
            try:
                _read_one(out, shown, yamlio.read_text(path, shown))
            except InputError as err:
                if len(files) == 1 and Path(raw).is_file():
                    raise   # the file the user named does not parse: say so
                errors.append(err)
    if errors and not out.objects:
        raise errors[0]
    out.skipped.extend(Skipped(err.file, 1, f"does not parse ({err.path}: {err.message})") for err in errors)
    return out
