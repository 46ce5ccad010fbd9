"""Every Python example in README.md and in the guide (docs/**/*.md) runs; so do the shell
commands of the README's install check and of the CLI page, and the pictures' scripts.

A block preceded by ``<!-- not run: REASON -->`` is skipped (servers, other machines, minutes of
work, installs), and the reason must be given. The README's blocks run exactly as printed, in
order, each in a fresh namespace, in an empty temporary directory: its first example writes the
data the others read, so they run on anyone's machine as pasted. The guide's run in order in one
namespace per page, in a temporary directory holding ``data/`` as the pages lay it out; a page of
`CHILD_PAGES` runs in a child process of its own (Keras picks its backend once, at import).
Examples rot silently otherwise.
"""

from __future__ import annotations

import contextlib
import doctest
import importlib.util
import io
import json
import os
import re
import shlex
import subprocess
import sys
import warnings
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
README = ROOT / "README.md"
PAGES = [README, *sorted(DOCS.rglob("*.md"))]
_BLOCK = re.compile(r"(?:<!-- not run:([^>]*)-->\s*)?```(python|sh)\n(.*?)```", re.DOTALL)
_MARKER = re.compile(r"<!-- not run:([^>]*)-->\s*(```)?")


class Block(NamedTuple):
    line: int
    language: str
    code: str
    runs: bool


def blocks(page: Path, language: str = "python") -> list[Block]:
    """The ``language`` blocks of ``page``, each with its line and whether it runs."""
    text = page.read_text()
    return [
        Block(text[: m.start()].count("\n") + 1, m.group(2), m.group(3), m.group(1) is None)
        for m in _BLOCK.finditer(text)
        if m.group(2) == language
    ]


def _name(page: Path) -> str:
    return str(page.relative_to(ROOT))


#: docs/jax.md's samples, each filled with its number.
JAX_SAMPLES = 20


def make_data(root: Path, n: int = 12) -> None:
    """The README's sample layouts under ``root/data``."""
    data = root / "data"
    dirs = ("inputs", "labels", "img", "mask", "archives", "classes/cat", "classes/dog/more")
    for d in (*dirs, "seq/x", "seq/y"):
        (data / d).mkdir(parents=True, exist_ok=True)
    for i in range(n):
        name = f"{i:04d}.npy"
        np.save(data / "inputs" / name, np.full((64, 64, 3), i, np.float32))
        np.save(data / "labels" / name, np.eye(10, dtype=np.float32)[i % 10])
        np.save(data / "img" / name, np.full((32, 32, 3), i, np.float32))
        np.save(data / "mask" / name, np.full((32, 32, 1), i % 2, np.uint8))
        np.savez_compressed(
            data / "archives" / f"{i:04d}.npz", x=np.full((8,), i, np.float32), y=np.int64(i % 2)
        )
        # variable-length sequences: 2 to 6 steps of 8 features
        np.save(data / "seq" / "x" / name, np.full((i % 5 + 2, 8), i, np.float32))
        np.save(data / "seq" / "y" / name, np.float32(i % 2))
        cls = "cat" if i % 2 else "dog/more" if i % 3 == 0 else "dog"
        np.save(data / "classes" / cls / name, np.full((16,), i, np.float32))
    # docs/jax.md: unpadded numbered names, (64, 64, 1) float16 each, labels elsewhere
    (data / "jax" / "samples").mkdir(parents=True, exist_ok=True)
    for i in range(JAX_SAMPLES):
        np.save(data / "jax" / "samples" / f"sample_{i}.npy", np.full((64, 64, 1), i, np.float16))
    np.save(data / "jax" / "labels.npy", np.arange(JAX_SAMPLES, dtype=np.int64) % 10)
    np.save(data / "labels.npy", np.arange(n) % 3)
    np.save(data / "train_x.npy", np.arange(n * 1000 * 20, dtype=np.float32).reshape(-1, 20))
    np.save(data / "train_y.npy", np.arange(n * 1000) % 2)


def _run_block(page: Path, block: Block, namespace: dict[str, object]) -> str:
    """Run one Python block in ``namespace``; returns what it printed."""
    out = io.StringIO()
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(out):
            # Keras 3 warns that fit's default shuffle=True is ignored for a tf.data
            # dataset (npyio shuffles): its noise, not the example's.
            warnings.filterwarnings("ignore", "`shuffle=True` was passed", UserWarning)
            exec(compile(block.code, f"{_name(page)}:{block.line}", "exec"), namespace)
    except Exception as e:
        raise AssertionError(f"{_name(page)} line {block.line}: {type(e).__name__}: {e}") from e
    return out.getvalue()


def _run_page(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> int:
    """Run the page's Python blocks in order, in one namespace; returns how many ran."""
    make_data(tmp_path)
    monkeypatch.chdir(tmp_path)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    namespace: dict[str, object] = {"__name__": "docs"}
    runnable = [b for b in blocks(page) if b.runs]
    for block in runnable:
        _run_block(page, block, namespace)
    return len(runnable)


_PRINTED = re.compile(r"^print\(.*\)[ \t]+#[ \t]+(.+)$", re.MULTILINE)


def printed_claims(code: str) -> list[str]:
    """What a block's ``print(...)  # OUTPUT`` lines say they print, in order."""
    return _PRINTED.findall(code)


def test_printed_claims_are_found():
    code = "x = 1\nprint(x)  # 1\nprint(x, 'a')  # 1 a\nprint(x)\n# print(x)  # 2\n"
    assert printed_claims(code) == ["1", "1 a"]


@pytest.mark.slow
def test_readme_examples_run_as_printed(tmp_path, monkeypatch):
    """The README's Python blocks, each in a fresh namespace, in order, in an empty directory:
    as a reader pastes them. Each prints what its ``# OUTPUT`` comments say."""
    monkeypatch.chdir(tmp_path)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    runnable = [b for b in blocks(README) if b.runs]
    assert len(runnable) >= 5, "the README's examples are not found"
    claims = 0
    for block in runnable:
        printed = iter(_run_block(README, block, {"__name__": "__main__"}).splitlines())
        expected = printed_claims(block.code)
        # each claim is a line it printed, in order (npyio may print more: "Found 12 files")
        missing = [claim for claim in expected if claim not in printed]
        assert not missing, f"README.md line {block.line} did not print {missing}"
        claims += len(expected)
    assert claims >= 4, "the README's printed claims are not found"


_GUIDE = [p for p in PAGES[1:] if any(b.runs for b in blocks(p))]

#: Pages whose examples run in a child process, with this environment over this one's: Keras
#: picks its backend once, at import, and a JAX process joins its peers once, at start. None
#: removes a variable: jax.md sets KERAS_BACKEND itself, as a user's script must.
CHILD_PAGES: dict[str, dict[str, str | None]] = {
    "jax.md": {"KERAS_BACKEND": None, "JAX_PLATFORMS": "cpu"}
}

_CHILD = """
import json, sys
from pathlib import Path
from tests.test_readme import run_blocks
page, picked, prelude, postlude, names = sys.argv[1:6]
print(json.dumps(run_blocks(Path(page), json.loads(picked), prelude, postlude, json.loads(names))))
"""


def run_blocks(
    page: Path, picked: list[int] | None, prelude: str, postlude: str, names: list[str]
) -> dict[str, object]:
    """In a `CHILD_PAGES` child, in the current directory: ``prelude``, then the page's
    runnable blocks (those ``picked`` by their index among them, or all), then ``postlude``,
    in one namespace. Returns what the blocks printed (``printed``, line by line) and the
    namespace's ``names`` (NumPy values as lists)."""
    namespace: dict[str, object] = {"__name__": "docs"}
    exec(prelude, namespace)
    runnable = [b for b in blocks(page) if b.runs]
    printed: list[str] = []
    for index in range(len(runnable)) if picked is None else picked:
        printed += _run_block(page, runnable[index], namespace).splitlines()
    exec(postlude, namespace)
    values = {name: np.asarray(namespace[name]).tolist() for name in names}
    return {"printed": printed, **values}


def start_child(
    page: Path,
    cwd: Path,
    picked: list[int] | None = None,
    prelude: str = "",
    postlude: str = "",
    names: tuple[str, ...] = (),
    extra: tuple[str, ...] = (),
) -> subprocess.Popen[str]:
    """`run_blocks` of ``page`` in a new Python process in ``cwd`` (`CHILD_PAGES`'s
    environment), with ``extra`` at the end of its ``sys.argv``; `child_result` waits for it."""
    env = {
        **os.environ,
        "TF_CPP_MIN_LOG_LEVEL": "2",
        "PYTHONPATH": str(ROOT),
        "PYTHONWARNINGS": "ignore",  # warnings go to stderr; only the result line is read
    }
    for name, value in CHILD_PAGES[page.name].items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    args = [str(page), json.dumps(picked), prelude, postlude, json.dumps(list(names)), *extra]
    return subprocess.Popen(
        [sys.executable, "-c", _CHILD, *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def require_jax() -> None:
    """jax is in the ``test`` extra for Python >= 3.11 (as jax itself): there its page must run,
    never skip; below, it is skipped where jax is missing."""
    if sys.version_info < (3, 11):
        pytest.importorskip("jax", reason="jax (the test extra's) needs Python >= 3.11")


def child_result(proc: subprocess.Popen[str], timeout: float = 600) -> dict:
    """What `run_blocks` returned in ``proc``; a failed child fails the test with its stderr."""
    out, err = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, err[-3000:]
    return json.loads(out.strip().splitlines()[-1])


@pytest.mark.slow
@pytest.mark.parametrize("page", _GUIDE, ids=[p.name for p in _GUIDE])
def test_guide_examples_run(page, tmp_path, monkeypatch):
    if page.name not in CHILD_PAGES:
        assert _run_page(page, tmp_path, monkeypatch) >= 1
        return
    require_jax()
    make_data(tmp_path)
    printed = child_result(start_child(page, tmp_path))["printed"]
    claims = [claim for b in blocks(page) if b.runs for claim in printed_claims(b.code)]
    missing = [claim for claim in claims if claim not in printed]
    assert not missing, f"{_name(page)} did not print {missing}"


_JAX = DOCS / "jax.md"
#: docs/jax.md's runnable blocks, by their index: what each is checked for below.
JAX_SETUP, JAX_LOOP, JAX_SHAPES, JAX_SAVE, JAX_RESTORE, JAX_KERAS = range(6)

_JOIN = """
import sys, jax
jax.distributed.initialize(coordinator_address=sys.argv[-2], num_processes=2,
                           process_id=int(sys.argv[-1]))
"""
_SEEN = """
hosts = [jax.process_count(), jax.process_index(), len(ds)]
seen = [[int(v) for v in x[:, 0, 0, 0]] for x, _ in ds.repeat(2).as_numpy_iterator()]
"""


def _jax_blocks() -> list[Block]:
    runnable = [b for b in blocks(_JAX) if b.runs]
    assert "shard=(jax.process_count(), jax.process_index())" in runnable[JAX_SETUP].code
    assert "as_numpy_iterator()" in runnable[JAX_LOOP].code
    assert ".write(" in runnable[JAX_SAVE].code and ".read(" in runnable[JAX_RESTORE].code
    return runnable


@pytest.mark.slow
def test_the_jax_page_shards_over_two_processes(tmp_path):
    """docs/jax.md's dataset and loop on two JAX processes joined by jax.distributed, as the
    page says: each host its own half of the samples, shuffled in an order of its own, the same
    number of batches on both, every sample at most once per epoch across them."""
    from tests._service import free_port

    require_jax()
    _jax_blocks()
    make_data(tmp_path)
    address = f"localhost:{free_port()}"
    picked = [JAX_SETUP, JAX_LOOP]
    names = ("hosts", "seen")
    procs = [
        start_child(_JAX, tmp_path, picked, _JOIN, _SEEN, names, extra=(address, str(i)))
        for i in range(2)
    ]
    results = [child_result(p) for p in procs]
    for i, result in enumerate(results):
        assert result["hosts"] == [2, i, 2], "2 hosts; 10 samples each: 2 batches of 4"
        assert "(4, 64, 64, 1) float16 int64" in result["printed"]
    first, second = (r["seen"] for r in results)
    assert len(first) == len(second) == 4, "2 epochs of 2 batches on each host"
    for e in range(2):
        one = [v for batch in first[2 * e : 2 * e + 2] for v in batch]
        two = [v for batch in second[2 * e : 2 * e + 2] for v in batch]
        assert {v % 2 for v in one} == {0} and {v % 2 for v in two} == {1}, "its own files"
        assert len(set(one + two)) == 16, f"epoch {e}: a sample twice"
    assert first != [[v - 1 for v in b] for b in second], "the hosts step in lockstep"


@pytest.mark.slow
def test_the_jax_page_restores_in_a_new_process(tmp_path):
    """docs/jax.md's checkpoint, written by one process and restored by a new one: the batch
    after the restore is the one the saving process had next."""
    require_jax()
    _jax_blocks()
    make_data(tmp_path)
    saved = child_result(
        start_child(_JAX, tmp_path, [JAX_SETUP, JAX_SAVE], names=("x_next", "y_next"))
    )
    restored = child_result(start_child(_JAX, tmp_path, [JAX_SETUP, JAX_RESTORE], names=("x", "y")))
    assert np.array_equal(restored["x"], saved["x_next"])
    assert restored["y"] == saved["y_next"]


def test_the_guide_has_runnable_examples():
    """The pages with examples are found: a broken block pattern would run nothing."""
    assert {p.name for p in _GUIDE} >= {"layouts.md", "keras.md", "packing.md", "errors.md"}


@pytest.mark.parametrize("page", PAGES, ids=[_name(p) for p in PAGES])
def test_a_block_that_does_not_run_says_why(page):
    for m in _MARKER.finditer(page.read_text()):
        line = page.read_text()[: m.start()].count("\n") + 1
        assert m.group(1).strip(), f"{_name(page)} line {line}: a not-run marker without reason"
        assert m.group(2), f"{_name(page)} line {line}: a not-run marker not before a block"


def _commands(block: Block) -> list[str]:
    """The block's command lines, without their comments."""
    lines = (re.split(r"\s+#\s", line, maxsplit=1)[0].strip() for line in block.code.splitlines())
    return [line for line in lines if line]


#: Runs each command line of ``sys.argv[1]`` (JSON) through the CLI's ``main``, in order, and
#: prints their exit statuses (JSON) last; each command's output follows a ``$ command`` line.
_CLI_CHILD = """
import json, shlex, sys
from npyio.cli.main import main
statuses = []
for command in json.loads(sys.argv[1]):
    for stream in (sys.stdout, sys.stderr):
        print("$", command, file=stream, flush=True)
    try:
        statuses.append(main(shlex.split(command)[1:]))
    except SystemExit as e:
        statuses.append(e.code)
print(json.dumps(statuses))
"""


@pytest.mark.slow
def test_the_cli_page_commands_run(tmp_path):
    """The CLI page's shell commands exit 0 on the sample tree, in order, as argv to the CLI's
    ``main`` in one child process: a process per command spent most of its time importing
    TensorFlow. The ``npyio`` entry point itself runs as a process in the README's install
    check (`test_the_readme_install_check_prints_what_it_says`)."""
    make_data(tmp_path)
    commands = [c for b in blocks(DOCS / "cli.md", "sh") if b.runs for c in _commands(b)]
    assert len(commands) >= 4
    assert all(shlex.split(command)[0] == "npyio" for command in commands), commands
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2", "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", _CLI_CHILD, json.dumps(commands)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    statuses = json.loads(done.stdout.strip().splitlines()[-1])
    for command, status in zip(commands, statuses, strict=True):
        said = done.stderr[done.stderr.find(f"$ {command}") :][:3000]  # its own output
        assert status in (0, None), f"{command}: exit {status}\n{said}"


def _shell(command: str, cwd: Path) -> subprocess.Popen[str]:
    """Start a documented ``python ...`` or ``npyio ...`` line as this Python, with this
    checkout's npyio first on its path."""
    argv = shlex.split(command)
    prefix = {"python": [sys.executable], "npyio": [sys.executable, "-m", "npyio"]}
    assert argv[0] in prefix, command
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2", "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        prefix[argv[0]] + argv[1:],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.slow
def test_the_readme_install_check_prints_what_it_says(tmp_path):
    """The README's install check, line by line, in an empty directory: each exits 0, the first
    prints the version, the second what the README says it prints. The three lines share
    nothing, so they run at once (each process mostly imports TensorFlow)."""
    import npyio

    (block,) = [b for b in blocks(README, "sh") if b.runs]
    commands = _commands(block)
    assert len(commands) == 3, commands
    started = [_shell(command, tmp_path) for command in commands]
    done = [(run.communicate(timeout=300), run.returncode) for run in started]
    for command, ((_, err), code) in zip(commands, done):
        assert code == 0, f"{command}: exit {code}\n{err}"
    claim = re.search(r"The second line prints `([^`]+)`", README.read_text())
    assert claim, "the README no longer says what the install check prints"
    assert done[0][0][0].strip() == npyio.__version__
    assert done[1][0][0].strip() == claim.group(1)
    assert "usage: npyio" in done[2][0][0]


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, DOCS / "gen" / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_pipeline_diagram_is_the_scripts():
    """docs/img/pipeline.svg is what docs/gen/diagram.py draws: rerun it after a change."""
    assert (DOCS / "img" / "pipeline.svg").read_text() == _load("diagram").svg()


def test_the_chart_is_drawn_from_the_recorded_run(tmp_path):
    run = json.loads((DOCS / "bench" / "run.json").read_text())
    title = _load("chart").draw(DOCS / "bench" / "run.json", tmp_path / "bench.svg")
    assert run["date"] in title and run["machine"] in title
    assert "<svg" in (tmp_path / "bench.svg").read_text()


def test_the_docstring_rewrite():
    """The build's griffe extension: its doctest (npyio's ``Example:`` and grouped params)."""
    pytest.importorskip("griffe", reason="the docs extra (make test's .venv has it)")
    module = _load("griffe_npyio")
    assert doctest.testmod(module).failed == 0


def test_the_api_reference_lists_every_public_name():
    import npyio
    import npyio.errors

    api = (DOCS / "api.md").read_text()
    assert "::: npyio.errors\n" in api
    missing = [
        name
        for name in npyio.__all__
        if f"::: npyio.{name}\n" not in api and name not in npyio.errors.__all__
    ]
    assert not missing, f"docs/api.md lacks {missing}"
