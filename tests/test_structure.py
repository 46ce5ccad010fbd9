"""The package's structure: layers that import downward, no import cycles, no reaching into
another module's private names, and the modules that must not load TensorFlow do not.

The import graph is read from the source with `ast`, so it counts function-level (lazy) imports
too: a cycle hidden in a function still bites the first time that function runs while one of
the modules is half-initialised.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGE = "npyio"
#: The package facade re-exports lazily (``__getattr__``): it imports its submodules, and every
#: submodule's import runs it first, so as a *source* of edges it would close a cycle with every
#: module it names. It is exempt as a source; as a target it counts like any module.
FACADE = PACKAGE


def module_files(root: Path = REPO / PACKAGE) -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its ``__init__.py``)."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


@dataclass(frozen=True)
class Import:
    target: str  # the package module imported
    line: int


@dataclass(frozen=True)
class Parsed:
    imports: list[Import]
    private: list[str]  # "line N: what", for each use of another module's private name


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _absolute(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    """The module an ``ImportFrom`` names, relative imports resolved."""
    if not node.level:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def parse_module(
    source: str, module: str, modules: Mapping[str, object], is_package: bool = False
) -> Parsed:
    """The package imports of one module's source (at any depth: module level, functions,
    ``if TYPE_CHECKING``) and its uses of other modules' private names.

    ``from a.b import c`` imports module ``a.b.c`` when that is a module, else ``a.b``; the
    private names are ``from a.b import _c`` (``_c`` not a module) and ``m._c`` where ``m`` is
    bound to a package module by an import. Dunder names are public."""
    imports: list[Import] = []
    private: list[str] = []
    aliases: dict[str, str] = {}  # local name -> package module it is bound to
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in modules:
                    imports.append(Import(alias.name, node.lineno))
                    if alias.asname:
                        aliases[alias.asname] = alias.name
                    else:  # ``import a.b`` binds ``a``
                        top = alias.name.split(".")[0]
                        aliases[top] = top
        elif isinstance(node, ast.ImportFrom):
            source_module = _absolute(node, module, is_package)
            if source_module.split(".")[0] != PACKAGE:
                continue
            for alias in node.names:
                sub = f"{source_module}.{alias.name}"
                if sub in modules:
                    imports.append(Import(sub, node.lineno))
                    aliases[alias.asname or alias.name] = sub
                    continue
                if source_module in modules:
                    imports.append(Import(source_module, node.lineno))
                if _is_private(alias.name):
                    private.append(f"line {node.lineno}: from {source_module} import {alias.name}")
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _is_private(node.attr):
            owner = _dotted(node.value, aliases)
            if owner is not None and owner in modules and f"{owner}.{node.attr}" not in modules:
                private.append(f"line {node.lineno}: {owner}.{node.attr}")
    return Parsed(imports, private)


def _dotted(node: ast.expr, aliases: Mapping[str, str]) -> str | None:
    """The module an expression like ``m`` or ``npyio._format.npy`` stands for, if any."""
    if isinstance(node, ast.Name):
        return aliases.get(node.id)
    if isinstance(node, ast.Attribute):
        owner = _dotted(node.value, aliases)
        return None if owner is None else f"{owner}.{node.attr}"
    return None


def import_graph() -> tuple[dict[str, set[str]], dict[str, Parsed]]:
    """Each module's package imports, and what `parse_module` found in it.

    Importing ``a.b.c`` runs ``a/b/__init__.py`` first, so an import of a module of a
    subpackage is also an edge to that subpackage (the facade, as a target, has no edges out)."""
    files = module_files()
    parsed = {
        name: parse_module(path.read_text(), name, files, path.name == "__init__.py")
        for name, path in files.items()
    }
    graph: dict[str, set[str]] = {}
    for name, p in parsed.items():
        targets = set()
        for i in p.imports if name != FACADE else ():
            parts = i.target.split(".")
            targets |= {".".join(parts[:n]) for n in range(2, len(parts) + 1)}
        graph[name] = {t for t in targets if t in files and t != name}
    return graph, parsed


def find_cycle(graph: Mapping[str, set[str]]) -> list[str] | None:
    """A cycle of ``graph`` as a path ``[a, b, ..., a]``, or None if it has none."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state:
            found = visit(start)
            if found:
                return found
    return None


#: The layers, bottom first: a module imports only modules of its own layer or of those below.
LAYERS = (
    ("npyio.errors",),  # errors
    ("npyio._format",),  # the TF-free formats: grammar, headers, .npz, specs, file paths
    ("npyio._graph",),  # graph ops: the parser, decoders, the .npz member
    ("npyio._read",),  # readers: a part of an element -> its tensor, by backend
    ("npyio._data",),  # the pipeline: sources, paths, options, plans, builders
    (FACADE,),  # the public names, imported lazily from the layers below
    ("npyio.cli", "npyio.__main__"),  # the command line
)


def layer_of(module: str) -> int:
    """The index in `LAYERS` of the package (or module) that ``module`` belongs to."""
    best, depth = None, -1
    for i, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and prefix.count(".") > depth:
                best, depth = i, prefix.count(".")
    if best is None:
        raise AssertionError(f"{module} is in no layer of LAYERS")
    return best


def upward_imports(graph: Mapping[str, set[str]]) -> list[str]:
    """Every edge of ``graph`` that goes to a higher layer, as ``"a -> b"``."""
    return [
        f"{a} -> {b}"
        for a, targets in sorted(graph.items())
        for b in sorted(targets)
        if layer_of(b) > layer_of(a)
    ]


# --- self-checks: the checks below would fail on what they look for ---------------------------
def test_upward_imports_finds_imports_of_higher_layers():
    graph = {
        "npyio._graph.decode": {"npyio._format.npy", "npyio._data.paths"},
        "npyio._data.plan": {"npyio._format.spec", "npyio._read"},
        "npyio.cli.main": {"npyio"},
        "npyio._read.api": {"npyio"},
    }
    assert upward_imports(graph) == [
        "npyio._graph.decode -> npyio._data.paths",
        "npyio._read.api -> npyio",
    ]
    assert layer_of("npyio._format") == 1 and layer_of("npyio._format.npy") == 1
    with pytest.raises(AssertionError, match="in no layer"):
        layer_of("elsewhere.x")


def test_find_cycle_finds_cycles_and_only_cycles():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) in (
        ["a", "b", "c", "a"],
        ["b", "c", "a", "b"],
        ["c", "a", "b", "c"],
    )
    assert find_cycle({"a": {"a"}}) == ["a", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set(), "d": {"a", "c"}}) is None


def test_parse_module_sees_lazy_imports_and_private_names():
    modules = {"npyio": 0, "npyio.a": 0, "npyio.b": 0, "npyio.pkg": 0, "npyio.pkg.c": 0}
    source = textwrap.dedent(
        """
        from npyio.pkg import c as C
        from npyio import a
        import npyio.b as B

        def later():
            from npyio.b import _hidden, __version__, public
            return C._private, C.__name__, a.public, B._x, npyio.pkg.c._y
        """
    )
    parsed = parse_module(source, "npyio.z", modules)
    assert {i.target for i in parsed.imports} == {"npyio.pkg.c", "npyio.a", "npyio.b"}
    assert sorted(p.split(": ", 1)[1] for p in parsed.private) == [
        "from npyio.b import _hidden",
        "npyio.b._x",
        "npyio.pkg.c._private",
    ]
    # ``npyio.pkg.c._y`` through an unbound ``npyio`` name is not an alias of this module;
    # with ``import npyio.pkg.c`` it is
    parsed = parse_module("import npyio.pkg.c\nnpyio.pkg.c._y\n", "npyio.z", modules)
    assert [p.split(": ", 1)[1] for p in parsed.private] == ["npyio.pkg.c._y"]
    # relative imports resolve like absolute ones; private *modules* are not private names
    parsed = parse_module("from . import c\nfrom .._x import y\n", "npyio.pkg", modules, True)
    assert [i.target for i in parsed.imports] == ["npyio.pkg.c"]
    parsed = parse_module("from npyio import pkg\n", "npyio.a", {**modules, "npyio._m": 0})
    assert parsed.private == []


# --- the package ------------------------------------------------------------------------------
def test_module_files_lists_the_package():
    files = module_files()
    for name in ("npyio", "npyio._data.paths", "npyio._format.header", "npyio.cli.main"):
        assert name in files


def test_no_import_cycles():
    graph, _ = import_graph()
    assert sum(map(len, graph.values())) > 20, "the import graph is suspiciously small"
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_every_module_is_in_a_layer():
    for name in module_files():
        layer_of(name)


def test_layers_import_downward():
    """Lazy imports included: an import inside a function is an edge too."""
    graph, _ = import_graph()
    found = upward_imports(graph)
    assert not found, "imports of a higher layer:\n" + "\n".join(found)


def test_no_module_uses_another_modules_private_names():
    _, parsed = import_graph()
    found = [f"{name}: {p}" for name, one in parsed.items() for p in one.private]
    assert not found, "private names used across modules:\n" + "\n".join(found)


# --- no TensorFlow where none is needed -------------------------------------------------------
#: The modules that import no TensorFlow: every module of the bottom layers, planning, and the
#: ``inspect``/``verify`` commands (TensorFlow is imported only for a path that is not local).
TF_FREE = sorted(
    {"npyio", "npyio._read", "npyio.cli.main", "npyio.cli.verify"}
    | {
        name
        for name in module_files()
        if layer_of(name) <= layer_of("npyio._format")
        or name
        in (
            "npyio._data.capabilities",
            "npyio._data.options",
            "npyio._data.packed",
            "npyio._data.paths",
            "npyio._data.plan",
            "npyio._data.rows_plan",
            "npyio._data.structure",
        )
    }
)

#: Run first in a subprocess: any import of TensorFlow raises ImportError from then on.
BLOCK_TF = "import sys\nsys.modules['tensorflow'] = None\n"


def run_without_tf(code: str) -> subprocess.CompletedProcess[str]:
    """Runs ``code`` in a fresh interpreter where TensorFlow cannot be imported, importing this
    checkout's npyio (not an installed one)."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }
    return subprocess.run(
        [sys.executable, "-c", BLOCK_TF + code],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_blocking_tensorflow_works():
    r = run_without_tf("import tensorflow")
    assert r.returncode != 0 and "import of tensorflow halted" in r.stderr


@pytest.mark.parametrize("module", TF_FREE)
def test_imports_no_tensorflow(module):
    r = run_without_tf(
        f"import importlib\nm = importlib.import_module({module!r})\n"
        f"assert m.__file__.startswith({str(REPO)!r}), m.__file__\n"
    )
    assert r.returncode == 0, f"importing {module} needs TensorFlow:\n{r.stderr[-3000:]}"
