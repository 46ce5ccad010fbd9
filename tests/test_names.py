"""Docstrings and docs that stay true: every backticked ``npyio`` name resolves, and so does
every class or constant a docstring names in its module.

A name such as `npyio.dataset`, `npyio.errors.NpyFormatError` or
`npyio._sources.rows_plan.CHUNK_BYTES` written in backticks (single or double, with or without a
call's arguments after it) in a docstring under ``npyio/``, in README.md or in ``docs/**/*.md`` must
be importable: the longest
module prefix imports and the rest are its attributes. A rename or a move that leaves a
docstring behind fails here, naming the file, the line and the name.

Within a module, a class or constant in single backticks (`Spec`, `INDEX`, `Spec.hint`) and a
private constant in backticks (``_CHUNK_BYTES``) must be a name of the module, of the class
whose docstring it is in, or a builtin (`ValueError`).
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import importlib
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
#: `npyio.x.y`, ``npyio.x.y``, `npyio.x.y(...)`: a dotted name under npyio in backticks.
NAME = re.compile(r"(?<!`)`{1,2}(npyio(?:\.[A-Za-z_]\w*)+)(?:\([^`]*\))?`{1,2}")
#: `Spec`, `INDEX`, `Spec.hint` (a class or constant, maybe an attribute of it), and
#: ``_CHUNK_BYTES`` (a private constant, in either kind of backticks).
LOCAL = re.compile(
    r"(?<![`\w])`([A-Z][A-Za-z0-9_]*(?:\.[A-Za-z_]\w*)*)`(?![`\w])"
    r"|(?<![`\w])`{1,2}(_[A-Z][A-Z0-9_]*)`{1,2}(?![`\w])"
)


def names_in(text: str, first_line: int = 1) -> list[tuple[int, str]]:
    """``(line, name)`` for each backticked npyio name of ``text``."""
    return [(first_line + text.count("\n", 0, m.start()), m.group(1)) for m in NAME.finditer(text)]


def docstrings(source: str) -> list[tuple[int, str, str | None]]:
    """``(line, docstring, class)`` for every docstring of ``source``; ``class`` is the class
    it belongs to (its own, or its method's), else None."""
    tree = ast.parse(source)
    owner: dict[int, str] = {}
    for cls in ast.walk(tree):
        if isinstance(cls, ast.ClassDef):
            for node in ast.walk(cls):
                owner.setdefault(id(node), cls.name)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if (
                body
                and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)
            ):
                found.append((body[0].lineno, body[0].value.value, owner.get(id(node))))
    return found


def docstring_names(path: Path) -> list[tuple[int, str]]:
    """The backticked npyio names of every docstring of the module at ``path``."""
    return [n for line, text, _ in docstrings(path.read_text()) for n in names_in(text, line)]


def _has(obj: object, name: str) -> bool:
    """``obj.name`` exists, or ``obj`` is a dataclass with a field ``name`` (no default)."""
    if hasattr(obj, name):
        return True
    return dataclasses.is_dataclass(obj) and name in {f.name for f in dataclasses.fields(obj)}


def resolves_in(module: object, cls: str | None, name: str) -> bool:
    """Whether ``name`` (``A`` or ``A.b``) is a name of ``module``, of its class ``cls``, or a
    builtin, with its attributes."""
    first, *rest = name.split(".")
    scopes = [module] + ([getattr(module, cls)] if cls and hasattr(module, cls) else [])
    scopes.append(builtins)
    owner = next((s for s in scopes if _has(s, first)), None)
    if owner is None:
        return False
    obj = getattr(owner, first, None)
    for attr in rest:
        if obj is None or not _has(obj, attr):
            return False
        obj = getattr(obj, attr, None)
    return True


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def resolves(name: str) -> bool:
    """Whether ``name`` is a module, or an attribute (chain) of the longest module prefix of it
    that imports."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


def documents() -> list[Path]:
    return [
        *sorted((REPO / "npyio").rglob("*.py")),
        REPO / "README.md",
        *sorted((REPO / "docs").rglob("*.md")),
    ]


def test_names_in_finds_backticked_npyio_names():
    text = "a `npyio.dataset` and ``npyio.errors.NpyFormatError``\n`npyio.rows(x, y)`, `npyio`"
    assert names_in(text, 10) == [
        (10, "npyio.dataset"),
        (10, "npyio.errors.NpyFormatError"),
        (11, "npyio.rows"),
    ]
    assert names_in("```python\nnpyio.dataset(x)\n```") == []  # code blocks are run instead


def test_resolves_modules_and_their_attributes():
    assert resolves("npyio._sources.rows_plan.CHUNK_BYTES")
    assert resolves("npyio.errors.NpyFormatError.__init__")
    assert not resolves("npyio._sources.rows._CHUNK_BYTES")
    assert not resolves("npyio._format.packed.Writer")


def test_resolves_in_looks_in_the_module_its_class_and_builtins():
    import npyio._format.spec as spec

    assert resolves_in(spec, None, "Spec") and resolves_in(spec, None, "Spec.hint")
    assert resolves_in(spec, "Layout", "reason") and resolves_in(spec, None, "ValueError")
    assert resolves_in(spec, None, "Spec.file")  # a dataclass field without a default
    assert not resolves_in(spec, None, "Writer") and not resolves_in(spec, None, "Spec.nope")
    method = 'class C:\n    def f(self):\n        """`X`"""\n'
    assert docstrings(method) == [(3, "`X`", "C")]
    assert [m.group(1) or m.group(2) for m in LOCAL.finditer("`Spec` ``_CHUNK`` `x` ``Y``")] == [
        "Spec",
        "_CHUNK",
    ]


@pytest.mark.parametrize(
    "path", sorted((REPO / "npyio").rglob("*.py")), ids=lambda p: str(p.relative_to(REPO))
)
def test_every_class_or_constant_a_docstring_names_is_in_its_module(path):
    module = importlib.import_module(module_name(path))
    bad = [
        f"line {line}: {m.group(1) or m.group(2)}"
        for line, text, cls in docstrings(path.read_text())
        for m in LOCAL.finditer(text)
        if not resolves_in(module, cls, m.group(1) or m.group(2))
    ]
    assert not bad, f"{path.relative_to(REPO)}: names its module lacks:\n" + "\n".join(bad)


@pytest.mark.parametrize("path", documents(), ids=lambda p: str(p.relative_to(REPO)))
def test_every_backticked_npyio_name_resolves(path):
    found = docstring_names(path) if path.suffix == ".py" else names_in(path.read_text())
    bad = [f"line {line}: {name}" for line, name in found if not resolves(name)]
    assert not bad, f"{path.relative_to(REPO)}: names that do not resolve:\n" + "\n".join(bad)


# --- cited files --------------------------------------------------------------------------------
#: A repository path cited in a module, a test, a benchmark or a page: ``docs/keras.md``,
#: ``tests/pipeline/test_shuffle.py``, ``bench/README.md``, ``README.md``.
CITED = re.compile(
    r"(?<![\w./-])((?:docs|tests|bench|npyio|\.ci)/[\w./-]*\w\.(?:md|py|json|txt|svg|png|toml)"
    r"|(?:README|CONTRIBUTING|SECURITY)\.md)(?![\w/])"
)
#: Paths that stand for any module in the mirror rule's wording (``npyio/_X/m.py``).
PLACEHOLDER = re.compile(r"(?:^|/)_?X/|(?:^|/)(?:test_)?m(?:_topic)?\.py$")
#: Texts whose paths are planted on purpose (the structure test's own fake trees).
PLANTED = {"tests/test_structure.py"}


def cited_paths(text: str) -> list[tuple[int, str]]:
    """``(line, path)`` for each repository path ``text`` cites, placeholders left out."""
    return [
        (text.count("\n", 0, m.start()) + 1, m.group(1))
        for m in CITED.finditer(text)
        if not PLACEHOLDER.search(m.group(1))
    ]


def citing_texts() -> list[Path]:
    found = [*REPO.glob("*.md"), *(REPO / "docs").rglob("*.md"), *(REPO / "bench").rglob("*.md")]
    for top in ("npyio", "tests", "bench"):
        found += (REPO / top).rglob("*.py")
    return sorted(p for p in found if str(p.relative_to(REPO)) not in PLANTED)


def test_cited_paths_finds_paths_and_skips_placeholders():
    text = (
        "see docs/keras.md, and `tests/pipeline/test_shuffle.py`;\n"
        "npyio/_X/m.py goes to tests/X/test_m.py (README.md, docs/img/pipeline.svg)\n"
        "not a path: mydocs/x.md, docs/ alone, www.docs/x.md"
    )
    assert cited_paths(text) == [
        (1, "docs/keras.md"),
        (1, "tests/pipeline/test_shuffle.py"),
        (2, "README.md"),
        (2, "docs/img/pipeline.svg"),
    ]


@pytest.mark.parametrize("path", citing_texts(), ids=lambda p: str(p.relative_to(REPO)))
def test_every_cited_file_exists(path):
    missing = [
        f"{path.relative_to(REPO)}:{line}: {cited}"
        for line, cited in cited_paths(path.read_text(encoding="utf-8"))
        if not (REPO / cited).exists()
    ]
    assert not missing, "cited files that do not exist:\n" + "\n".join(missing)
