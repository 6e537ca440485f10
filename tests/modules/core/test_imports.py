"""Dependencies run one way (docs/architecture.md): no import circle among the packages under
``modules/``, and no capability's renderer imports the simulator. Imports are read with ``ast``
(lazy imports inside functions count; imports under ``if TYPE_CHECKING:`` do not run, so they do
not)."""
from __future__ import annotations

import ast
import functools
from pathlib import Path

from modules.core.registry import MODULES
from tests.support.cli import ROOT

PACKAGES = sorted(p.name for p in (ROOT / "modules").iterdir() if (p / "__init__.py").is_file())


def _type_checking_only(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"))


@functools.lru_cache(maxsize=None)   # read by several tests: never modified
def imported_modules(path: Path) -> frozenset[str]:
    """Dotted names ``path`` imports at run time (relative imports resolved)."""
    package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
    out: set[str] = set()

    def visit(node: ast.AST) -> None:
        if _type_checking_only(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parent = ".".join(parts[:len(parts) - node.level + 1])
                base = f"{parent}.{base}" if base else parent
            out.add(base)
            out.update(f"{base}.{alias.name}" for alias in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(), str(path)))
    return frozenset(out)


@functools.lru_cache(maxsize=None)   # three tests read the same graph: never modified
def package_graph() -> dict[str, set[str]]:
    """modules package -> the other modules packages it imports."""
    graph: dict[str, set[str]] = {p: set() for p in PACKAGES}
    for package in PACKAGES:
        for path in (ROOT / "modules" / package).rglob("*.py"):
            for name in imported_modules(path):
                parts = name.split(".")
                if parts[0] == "modules" and len(parts) > 1 and parts[1] in graph and parts[1] != package:
                    graph[package].add(parts[1])
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one package (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def strong(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    return out


def test_the_finder_sees_a_circle():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_no_import_circle_among_modules_packages():
    graph = package_graph()
    assert graph["core"] == set(), f"core is the ground; it imports {sorted(graph['core'])}"
    assert circles(graph) == []


def test_renderers_do_not_import_the_simulator():
    graph = package_graph()
    offenders = sorted(name for name in MODULES if "simulate" in graph.get(name, ()))
    assert offenders == [], f"capabilities importing modules.simulate: {offenders}"


def test_the_semantic_core_sits_below_the_capabilities():
    # upstream: the port layer's vocabulary (Go's Atoi and quoting), which imports nothing above it
    assert package_graph()["semantics"] <= {"core", "upstream"}


def test_the_semantic_core_imports_neither_policies_nor_the_simulator():
    """Rules and the simulator call the semantic core, never the other way round."""
    for path in (ROOT / "modules" / "semantics").rglob("*.py"):
        names = imported_modules(path)
        assert not any(n == "policies" or n.startswith("policies.") for n in names), path
        assert not any(n.startswith("modules.simulate") for n in names), path


def test_every_dataclass_says_what_it_is():
    """A dataclass without a docstring gets one made from ``inspect.signature`` each time its module
    imports (about 0.05 ms a class, a millisecond of every `check`); ours say what they hold."""
    def is_dataclass(decorator: ast.expr) -> bool:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        return (target.id if isinstance(target, ast.Name) else getattr(target, "attr", None)) == "dataclass"

    bare = []
    for path in sorted((*(ROOT / "modules").rglob("*.py"), *(ROOT / "policies").rglob("*.py"))):
        text = path.read_text(encoding="utf-8")
        if "dataclass" not in text:
            continue
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ClassDef) and ast.get_docstring(node) is None \
                    and any(map(is_dataclass, node.decorator_list)):
                bare.append(f"{path.relative_to(ROOT)}: {node.name}")
    assert bare == []
