"""The package's structure: layers that import downward, no import cycles, no reaching into
another module's private names, and the modules that must not load TensorFlow do not; and the
test tree that mirrors it, a test module for every module with logic.

The import graph is read from the source with `ast`, so it counts function-level (lazy) imports
too: a cycle hidden in a function still bites the first time that function runs while one of
the modules is half-initialised.
"""

from __future__ import annotations

import ast
import io
import os
import subprocess
import sys
import textwrap
import tokenize
from collections.abc import Callable, Mapping
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
    ("npyio._tf",),  # TensorFlow's internals: raw ops, private names, its error text
    ("npyio._format",),  # the formats, no I/O: grammar, layouts, specs, paths, the wording
    ("npyio._io",),  # I/O, TF-free: listing, reading heads, .npz headers, writing shards
    ("npyio._graph",),  # graph ops: the parser, decoders, the .npz member
    ("npyio._native",),  # the native reader: its C++ op, built, cached and loaded
    ("npyio._read",),  # readers: a part of an element -> its tensor, by backend
    ("npyio._pipeline",),  # the loader: paths, options, the index stream, maps, storage
    ("npyio._sources",),  # the source kinds: their plans, units and reads, and entry points
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
        "npyio._graph.decode": {"npyio._format.npy", "npyio._pipeline.paths"},
        "npyio._pipeline.loader": {"npyio._format.spec", "npyio._sources.rows"},
        "npyio.cli.main": {"npyio"},
        "npyio._read.api": {"npyio"},
    }
    assert upward_imports(graph) == [
        "npyio._graph.decode -> npyio._pipeline.paths",
        "npyio._pipeline.loader -> npyio._sources.rows",
        "npyio._read.api -> npyio",
    ]
    assert layer_of("npyio._tf") == 1
    assert layer_of("npyio._format") == 2 and layer_of("npyio._format.npy") == 2
    assert layer_of("npyio._io.header") == layer_of("npyio._format") + 1
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
    for name in ("npyio", "npyio._pipeline.paths", "npyio._format.header", "npyio.cli.main"):
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


# --- the format layer does no I/O ------------------------------------------------------------
#: What a module of ``npyio._format`` may not import: file systems, threads, TensorFlow.
IO_MODULES = frozenset(
    {"concurrent", "glob", "shutil", "subprocess", "tempfile", "tensorflow", "threading"}
)
#: The names of ``os`` that are about path text, not files.
OS_TEXT = frozenset({"PathLike", "fsdecode", "fsencode", "fspath", "path", "sep"})
#: ... and of ``os.path``.
OS_PATH_TEXT = frozenset({"basename", "dirname", "join", "normpath", "split", "splitext", "sep"})


def io_uses(source: str) -> list[str]:
    """``"line N: what"`` for each use of I/O in ``source``: an import of `IO_MODULES` (or from
    ``os``), a call of ``open``, an ``os`` name other than `OS_TEXT` (``os.path``'s other than
    `OS_PATH_TEXT`)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        what = _io_use(node)
        if what is not None:
            found.append(f"line {getattr(node, 'lineno', 0)}: {what}")
    return found


def _io_use(node: ast.AST) -> str | None:
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names if _is_io(a.name)]
        return f"import {', '.join(names)}" if names else None
    if isinstance(node, ast.ImportFrom) and node.module:
        io = _is_io(node.module) or node.module in ("os", "os.path")
        return f"from {node.module} import ..." if io else None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "open":
        return "open(...)"
    if isinstance(node, ast.Attribute):
        owner = _dotted_name(node.value)
        if (owner == "os" and node.attr not in OS_TEXT) or (
            owner == "os.path" and node.attr not in OS_PATH_TEXT
        ):
            return f"{owner}.{node.attr}"
    return None


def _is_io(module: str) -> bool:
    return module.split(".")[0] in IO_MODULES


def _dotted_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        owner = _dotted_name(node.value)
        return None if owner is None else f"{owner}.{node.attr}"
    return None


def test_io_uses_finds_io():
    source = textwrap.dedent(
        """
        import os, threading
        from concurrent.futures import ThreadPoolExecutor
        def f(p):
            open(p).read()
            os.path.join(p, "x"), os.fspath(p), os.path.isdir(p)
            return os.listdir(p)
        """
    )
    assert sorted(x.split(": ", 1)[1] for x in io_uses(source)) == [
        "from concurrent.futures import ...",
        "import threading",
        "open(...)",
        "os.listdir",
        "os.path.isdir",
    ]


def test_the_format_layer_does_no_io():
    """``npyio._format`` is the grammar, the layouts and the wording; reading and writing
    files is ``npyio._io``'s."""
    found = [
        f"{name}: {use}"
        for name, path in module_files().items()
        if layer_of(name) == layer_of("npyio._format")
        for use in io_uses(path.read_text())
    ]
    assert not found, "I/O in npyio._format:\n" + "\n".join(found)


def test_importing_npyio_leaves_the_environment_alone():
    """``import npyio`` and every TF-free module change no environment variable."""
    r = run_without_tf(
        "import importlib, os\nbefore = dict(os.environ)\n"
        f"for m in {TF_FREE!r}:\n    importlib.import_module(m)\n"
        "changed = sorted(k for k in set(before) | set(os.environ) "
        "if before.get(k) != os.environ.get(k))\n"
        "assert not changed, changed\n"
    )
    assert r.returncode == 0, r.stderr[-3000:]


# --- TensorFlow's error text is read in one module --------------------------------------------
#: Fragments of TensorFlow's error text; only `npyio._tf` may hold them in code.
TF_TEXT = ("function_node", "[Op:", "assertion failed", "Detected at", "\n\t")
TF_TEXT_MODULE = "npyio._tf"


def tf_text_uses(source: str) -> list[str]:
    """``"line N: fragment"`` for each string constant of ``source`` (docstrings aside) that
    holds a fragment of `TF_TEXT`."""
    tree = ast.parse(source)
    docs = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
    }
    return [
        f"line {node.lineno}: {fragment!r}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs
        for fragment in TF_TEXT
        if fragment in node.value
    ]


def test_tf_text_uses_finds_fragments_outside_docstrings():
    source = 'def f(m):\n    """{{function_node}} in a docstring"""\n    return m.split("\\n\\t")\n'
    assert tf_text_uses(source) == ["line 3: '\\n\\t'"]


def uses_outside(module: str, uses: Callable[[str], list[str]]) -> list[str]:
    """``"module: use"`` for each of ``uses(source)`` in every module of the package but
    ``module``, the one where such uses belong."""
    return [
        f"{name}: {use}"
        for name, path in module_files().items()
        if name != module
        for use in uses(path.read_text())
    ]


def test_tensorflow_error_text_is_read_in_one_module():
    found = uses_outside(TF_TEXT_MODULE, tf_text_uses)
    assert not found, f"TensorFlow's error text read outside {TF_TEXT_MODULE}:\n" + "\n".join(found)


# --- one rule for where a path is --------------------------------------------------------------
#: The module whose predicates say where a path is (`is_local`: no scheme; `is_remote`: latency
#: per request): elsewhere a ``"://" in path`` test would be a copy of one, or a third rule.
PATH_RULE_MODULE = "npyio._format.files"


def scheme_tests(source: str) -> list[str]:
    """``"line N"`` for each ``"://" in x`` (or ``not in``) in ``source``."""
    return [
        f"line {node.lineno}"
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Compare)
        and isinstance(node.left, ast.Constant)
        and node.left.value == "://"
        and any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops)
    ]


def test_scheme_tests_finds_a_planted_test():
    source = 'def f(p):\n    a = p.split("://")\n    return "://" not in p\n'
    assert scheme_tests(source) == ["line 3"]


def test_where_a_path_is_is_decided_in_one_module():
    found = uses_outside(PATH_RULE_MODULE, scheme_tests)
    assert not found, f'"://" tested outside {PATH_RULE_MODULE}:\n' + "\n".join(found)


# --- TensorFlow's internals are used in one module -------------------------------------------
#: TensorFlow's raw ops and private or experimental names: only `npyio._tf` may use them (as an
#: attribute, an import, a keyword or a string that is one of them), each with its reason.
TF_INTERNALS = frozenset(
    {
        "raw_ops",
        "experimental_ints_on_device",
        "_noinline",
        "inject_prefetch",
        "experimental_external_state_policy",
        "external_state_policy",
        "from_variant",
        "to_variant",
    }
)
TF_INTERNALS_MODULE = "npyio._tf"


def _is_compat_v1(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and node.attr == "v1"
        and isinstance(node.value, ast.Attribute)
        and node.value.attr == "compat"
    )


def _names_internal(module: str) -> bool:
    """Whether the dotted ``module`` goes through one of `TF_INTERNALS` or ``compat.v1``."""
    return bool(TF_INTERNALS & set(module.split("."))) or ".compat.v1." in f".{module}."


def _tf_internal_use(node: ast.AST) -> str | None:
    if isinstance(node, ast.Attribute) and (node.attr in TF_INTERNALS or _is_compat_v1(node)):
        return _dotted_name(node) or f"....{node.attr}"
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names if _names_internal(a.name)]
        return f"import {', '.join(names)}" if names else None
    if isinstance(node, ast.ImportFrom) and node.module:
        names = [a.name for a in node.names if _names_internal(f"{node.module}.{a.name}")]
        return f"from {node.module} import {', '.join(names)}" if names else None
    if isinstance(node, ast.keyword) and node.arg in TF_INTERNALS:
        return f"{node.arg}="
    if isinstance(node, ast.Constant) and node.value in TF_INTERNALS:
        return repr(node.value)
    return None


def tf_internal_uses(source: str) -> list[str]:
    """``"line N: what"`` for each use in ``source`` of `TF_INTERNALS` or ``compat.v1``: an
    attribute (``tf.raw_ops.X``, ``tf.compat.v1.f``), an import of one, a keyword argument, or a
    string constant that is one (``{"_noinline": True}``), in source order. Docstrings,
    comments and prose in strings do not count."""
    found = []
    for node in ast.walk(ast.parse(source)):
        what = _tf_internal_use(node)
        if what is not None:
            found.append((getattr(node, "lineno", 0), getattr(node, "col_offset", 0), what))
    return [f"line {line}: {what}" for line, _, what in sorted(found)]


def test_tf_internal_uses_finds_planted_uses():
    source = textwrap.dedent(
        '''
        """tf.raw_ops and tf.compat.v1 in a docstring, _noinline too."""
        import tensorflow as tf
        import tensorflow.compat.v1 as tf1
        from tensorflow import raw_ops
        from tensorflow.compat import v1

        def f(x, options):
            # tf.raw_ops.LowerBound in a comment
            a = tf.raw_ops.LowerBound(sorted_inputs=x, values=x)
            b = tf.compat.v1.get_seed(None)
            options.experimental_optimization.inject_prefetch = False
            g = tf.function(f, experimental_attributes={"_noinline": True})
            h = dict(experimental_ints_on_device=True)
            return tf.data.experimental.from_variant(a, b), "prose: tf.compat.v1 sessions"
        '''
    )
    assert [x.split(": ", 1)[1] for x in tf_internal_uses(source)] == [
        "import tensorflow.compat.v1",
        "from tensorflow import raw_ops",
        "from tensorflow.compat import v1",
        "tf.raw_ops",
        "tf.compat.v1",
        "options.experimental_optimization.inject_prefetch",
        "'_noinline'",
        "experimental_ints_on_device=",
        "tf.data.experimental.from_variant",
    ]
    assert tf_internal_uses("import tensorflow as tf\nx = tf.raw_opsx, tf.compat.v2\n") == []


def test_tensorflow_internals_are_used_in_one_module():
    """Raw ops and private or experimental TensorFlow names go through `npyio._tf`, where each
    says why the public API does not serve (CONTRIBUTING.md, "Where a change goes")."""
    found = uses_outside(TF_INTERNALS_MODULE, tf_internal_uses)
    assert not found, f"TensorFlow's internals used outside {TF_INTERNALS_MODULE}:\n" + "\n".join(
        found
    )
    own = module_files()[TF_INTERNALS_MODULE].read_text()
    assert tf_internal_uses(own), "the finder finds nothing"


# --- named steps: no long functions ------------------------------------------------------------
#: The most lines of code a function's body may have (its docstring, comments and blank lines
#: not counted; nested functions counted). The signature is not counted: a public entry point
#: takes flat keyword arguments (Keras's convention), one line each, which are its API and not
#: its logic.
MAX_FUNCTION_LINES = 60


def _docstring_lines(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> set[int]:
    first = fn.body[0]
    if (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    ):
        return set(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    return set()


def _code_lines(source: str) -> set[int]:
    """The lines of ``source`` that hold a token of code (not a comment, not blank)."""
    layout = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT}
    found: set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type not in layout and token.type != tokenize.ENDMARKER:
            found.update(range(token.start[0], token.end[0] + 1))
    return found


def long_functions(source: str, module: str) -> list[str]:
    """``"module.function (line N): M lines of code"`` for each function of ``source`` over
    the limit (a method is named by its own name)."""
    code = _code_lines(source)
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            span = set(range(node.body[0].lineno, (node.end_lineno or node.lineno) + 1))
            n = len((span & code) - _docstring_lines(node))
            if n > MAX_FUNCTION_LINES:
                found.append(f"{module}.{node.name} (line {node.lineno}): {n} lines of code")
    return found


def test_long_functions_counts_code_only():
    body = "\n".join(f"    x{i} = {i}  # a comment" for i in range(MAX_FUNCTION_LINES))
    signature = "def f(\n    a,\n    b,\n):\n"
    source = f'{signature}    """A docstring.\n\n    more.\n    """\n\n    # a note\n{body}\n'
    assert long_functions(source, "m") == []  # the body: at the limit
    longer = source + "    return (\n        x0\n    )\n"
    limit = MAX_FUNCTION_LINES
    assert long_functions(longer, "m") == [f"m.f (line 1): {limit + 3} lines of code"]
    nested = "class C:\n    def g(self):\n" + textwrap.indent(longer, "        ")
    assert [x.split(" (")[0] for x in long_functions(nested, "m")] == ["m.g", "m.f"]


def test_no_function_is_longer_than_the_limit():
    found = [
        line
        for name, path in module_files().items()
        for line in long_functions(path.read_text(), name)
    ]
    assert not found, f"functions over {MAX_FUNCTION_LINES} lines of code:\n" + "\n".join(found)


# --- no TensorFlow where none is needed -------------------------------------------------------
#: The modules that import no TensorFlow: every module of the bottom layers, planning, and the
#: command line's table and its ``inspect``/``verify``/``pack`` commands (TensorFlow is imported
#: only for a path that is not local, or when ``pack`` runs).
TF_FREE = sorted(
    {"npyio", "npyio._read", "npyio._read.local", "npyio.cli.main", "npyio.cli.peers"}
    | {"npyio._native", "npyio._native.library"}  # TensorFlow only once a build or load runs
    | {"npyio.cli.verify"}
    | {"npyio.cli.args", "npyio.cli.inspect", "npyio.cli.pack"}
    | {
        name
        for name in module_files()
        if layer_of(name) <= layer_of("npyio._io")
        or name
        in (
            "npyio._pipeline.capabilities",
            "npyio._pipeline.options",
            "npyio._pipeline.paths",
            "npyio._pipeline.structure",
            "npyio._sources.pack_plan",
            "npyio._sources.plan",
            "npyio._sources.rows_plan",
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


# --- the test tree mirrors the package -------------------------------------------------------
#: Suites under ``tests/`` that test no one module, so stand outside the mirror, and why.
OUTSIDE_MIRROR = {
    "fuzz": "fuzzes the parsers through every entry point (and keeps its regression cases)",
    "gcs": "the GCS fake, run across the modules that read object storage",
    "bench": "tests the bench/ scripts at the repository's root, not a module of the package",
    "test_install.py": "the project: builds and installs npyio offline",
    "test_readme.py": "the project: the README's and docs' examples run",
    "test_names.py": "the project: every backticked npyio name in the docs resolves",
    "test_structure.py": "the project: its layers, and this mirror",
}


def mirror_of(directory: Path, package: Path, tests: Path) -> Path:
    """The test directory of a package directory: ``npyio/_X/`` -> ``tests/X/`` (each leading
    underscore dropped), ``npyio/`` -> ``tests/``."""
    parts = directory.relative_to(package).parts
    return tests.joinpath(*(p.lstrip("_") for p in parts))


def module_name(path: Path) -> str:
    """The name a module's test modules carry: its stem with any leading underscore dropped,
    as for directories (``_tf.py`` -> ``test_tf.py``), ``init`` for an ``__init__.py``."""
    return "init" if path.stem == "__init__" else path.stem.lstrip("_")


def has_logic(source: str) -> bool:
    """Whether a module defines a function or class of its own; one that does not (a package
    that re-exports, ``__main__.py`` that calls ``main``) needs no test module."""
    return any(
        isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        for node in ast.parse(source).body
    )


def missing_test_modules(package: Path, tests: Path) -> list[str]:
    """``"npyio/_X/m.py: tests/X/test_m.py"`` for each module with logic that has no test
    module of its name in its mirror."""
    return [
        f"{path.relative_to(package.parent)}: {want.relative_to(tests.parent)}"
        for path in sorted(package.rglob("*.py"))
        if has_logic(path.read_text())
        for want in [mirror_of(path.parent, package, tests) / f"test_{module_name(path)}.py"]
        if not want.is_file()
    ]


def stray_tests(package: Path, tests: Path, outside: Mapping[str, str]) -> list[str]:
    """What breaks the mirror: a test module under a mirrored directory that names no module
    of its package directory (``test_m.py`` or ``test_m_topic.py``), and a directory under
    ``tests/`` that mirrors no package directory and is not one of the suites in ``outside``."""
    mirrors = {
        mirror_of(d, package, tests): d
        for d in [package, *sorted(package.rglob("*"))]
        if d.is_dir() and (d / "__init__.py").is_file()
    }
    found = []
    for path in sorted(tests.rglob("*")):
        rel = path.relative_to(tests)
        if rel.parts[0] in outside or any(p.startswith((".", "__pycache__")) for p in rel.parts):
            continue
        if path.is_dir() and path not in mirrors:
            found.append(f"{rel}/: a directory that mirrors no package directory")
        elif path.is_file() and path.name.startswith("test_") and path.suffix == ".py":
            source = mirrors.get(path.parent)
            names = {module_name(m) for m in source.glob("*.py")} if source is not None else set()
            stem = path.stem.removeprefix("test_")
            if not any(stem == n or stem.startswith(n + "_") for n in names):
                found.append(f"{rel}: names no module of its package directory")
    return found


def _plant(root: Path, files: list[str]) -> None:
    for name in files:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("def f():\n    pass\n" if "npyio/" in name else "")


def test_missing_test_modules_finds_a_module_without_one(tmp_path):
    planted = """npyio/__init__.py npyio/errors.py npyio/_io/__init__.py npyio/_io/spec.py
        npyio/_io/files.py tests/test_init.py tests/test_errors.py tests/io/test_spec_matrix.py
        tests/io/test_files.py npyio/_tf.py tests/test_tf.py npyio/_io/_raw.py"""
    _plant(tmp_path, planted.split())
    (tmp_path / "npyio/_io/__init__.py").write_text(
        '"""Re-exports: no logic."""\nfrom x import y\n'
    )
    found = missing_test_modules(tmp_path / "npyio", tmp_path / "tests")
    assert found == [
        "npyio/_io/_raw.py: tests/io/test_raw.py",
        "npyio/_io/spec.py: tests/io/test_spec.py",
    ]


def test_stray_tests_finds_stray_files_and_directories(tmp_path):
    planted = """npyio/__init__.py npyio/errors.py npyio/_data/__init__.py npyio/_data/rows.py
        tests/test_errors.py tests/test_install.py tests/data/test_rows_length.py
        tests/data/test_rows.py tests/data/helpers.py tests/data/test_keras.py
        tests/datasets/test_rows.py tests/fuzz/test_anything.py tests/test_erro.py
        tests/fuzz/cases/x.npy tests/data/__pycache__/x.pyc tests/data/test_rowsy.py"""
    _plant(tmp_path, planted.split())
    found = stray_tests(tmp_path / "npyio", tmp_path / "tests", {"fuzz": "", "test_install.py": ""})
    assert found == [
        "data/test_keras.py: names no module of its package directory",
        "data/test_rowsy.py: names no module of its package directory",
        "datasets/: a directory that mirrors no package directory",
        "datasets/test_rows.py: names no module of its package directory",
        "test_erro.py: names no module of its package directory",
    ]


def test_every_module_with_logic_has_its_test_module():
    """``npyio/_X/m.py`` is tested in ``tests/X/test_m.py`` (further modules about it:
    ``tests/X/test_m_topic.py``); ``npyio/m.py`` in ``tests/test_m.py``."""
    found = missing_test_modules(REPO / PACKAGE, REPO / "tests")
    assert not found, "modules with no test module:\n" + "\n".join(found)


def test_the_test_tree_mirrors_the_package():
    found = stray_tests(REPO / PACKAGE, REPO / "tests", OUTSIDE_MIRROR)
    assert not found, "tests outside the mirror:\n" + "\n".join(found)
    for name in OUTSIDE_MIRROR:
        assert (REPO / "tests" / name).exists(), f"OUTSIDE_MIRROR names a missing {name}"


# --- the TF 2.16 leg ----------------------------------------------------------------------------
def tf216_tests(makefile: str) -> list[str]:
    """The paths the Makefile's ``TF216_TESTS`` names (node ids cut to their file)."""
    text = makefile.replace("\\\n", " ")
    line = next(ln for ln in text.splitlines() if ln.startswith("TF216_TESTS"))
    return [w.strip('"').split("::")[0] for w in line.split(":=", 1)[1].split()]


def covered(path: str, legs: list[str]) -> bool:
    return any(path == leg or path.startswith(leg.rstrip("/") + "/") for leg in legs)


def test_tf216_tests_reads_the_makefiles_list():
    planted = 'X := 1\nTF216_TESTS := tests/a.py tests/read \\\n\t"tests/b.py::test_c"\nY := 2\n'
    assert tf216_tests(planted) == ["tests/a.py", "tests/read", "tests/b.py"]
    assert covered("tests/read/test_x.py", ["tests/read"])
    assert not covered("tests/reader/test_x.py", ["tests/read"])


def test_the_tf216_leg_runs_every_tfio_test_and_names_only_what_exists():
    legs = tf216_tests((REPO / "Makefile").read_text())
    for leg in legs:
        assert (REPO / leg).exists(), f"Makefile's TF216_TESTS names {leg}, which does not exist"
    tfio = [
        str(p.relative_to(REPO))
        for p in (REPO / "tests").rglob("test_*.py")
        if p != Path(__file__) and "mark.tfio" in p.read_text(encoding="utf-8")
    ]
    assert tfio, "no test is marked tfio: the finder is broken"
    missed = [p for p in tfio if not covered(p, legs)]
    assert not missed, f"tfio tests outside the TF 2.16 leg (Makefile, TF216_TESTS): {missed}"
