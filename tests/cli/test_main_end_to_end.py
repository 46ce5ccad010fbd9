"""The ``npyio`` command line: ``inspect`` and ``verify`` on generated trees, end to end.

Three real ``python -m npyio`` runs (each starts Python and TensorFlow, so one module fixture
starts them two at a time) check outputs, ``--json`` and exit codes end to end. The others
call ``npyio.cli.main.main`` in-process. The parser is tested in ``test_main.py``, the
argument types in ``test_args.py``, the modules behind the commands in ``test_inspect.py``,
``test_verify.py`` and ``test_report.py``, the header check in ``tests/io/test_header.py``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

from npyio._format import npy
from npyio.cli import main as cli
from tests._npy_testing import npy_bytes

ROOT = Path(__file__).resolve().parents[2]


def _save(path: Path, arr: np.ndarray) -> bytes:
    data = npy_bytes(arr)
    path.write_bytes(data)
    return data


def make_tree(root: Path) -> Path:
    """The generated tree::

    good/    a.npy (float32 (2, 3)), b.npy (the same, Fortran order),
             c.npy (>f8 (3,), holds NaN and inf)
    inputs/  000..005.npy float32 (2, 3): 004 truncated, 005 bad magic; notes.txt
    labels/  000..005.npy int64 (), and 007.npy, which has no input
    empty/   notes.txt only: no .npy files
    """
    for d in ("good", "inputs", "labels", "empty"):
        (root / d).mkdir()
    _save(root / "good/a.npy", np.arange(6, dtype="<f4").reshape(2, 3))
    _save(root / "good/b.npy", np.asfortranarray(np.arange(6, dtype="<f4").reshape(2, 3)))
    _save(root / "good/c.npy", np.array([1.0, np.nan, np.inf], ">f8"))
    for i in range(6):
        data = _save(root / f"inputs/{i:03d}.npy", np.full((2, 3), i, "<f4"))
        _save(root / f"labels/{i:03d}.npy", np.int64(i))
    (root / "inputs/004.npy").write_bytes(data[:-4])
    (root / "inputs/005.npy").write_bytes(b"PK\x03\x04" + data[4:])
    (root / "inputs/notes.txt").write_text("not an array\n")
    (root / "empty/notes.txt").write_text("not an array\n")
    _save(root / "labels/007.npy", np.int64(7))
    return root


# --- real subprocess runs -------------------------------------------------------------------------
RUNS = {
    "verify": ["verify", "inputs", "empty", "nope.npy", "inputs/notes.txt"],
    "verify-inputs-labels": ["verify", "inputs", "labels"],
    "verify-json-full": ["verify", "--json", "--full", "--each", "good", "inputs"],
    "inspect": ["inspect", "good", "inputs/notes.txt", "nope.npy"],
}


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    return make_tree(tmp_path_factory.mktemp("cli"))


@pytest.fixture(scope="module")
def runs(tree) -> dict[str, subprocess.CompletedProcess[str]]:
    """Every run in RUNS, from inside the tree (so paths print as given), two at a time."""
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2", "PYTHONPATH": str(ROOT)}

    def run(argv: list[str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "npyio", *argv],
            cwd=tree,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )

    with ThreadPoolExecutor(2) as pool:
        return dict(zip(RUNS, pool.map(run, RUNS.values()), strict=True))


def problems(r: subprocess.CompletedProcess[str]) -> list[str]:
    """The ``path: reason`` lines of a run that found bad files."""
    assert r.returncode == cli.EXIT_BAD_FILES, r.stderr
    return [line for line in r.stdout.splitlines() if ": " in line and not line[0].isspace()]


def test_verify_lists_each_bad_file_with_its_reason(runs):
    r = runs["verify"]
    assert problems(r)[:5] == [
        "inputs/004.npy: " + npy.payload_short("24", "20"),
        "inputs/005.npy: " + npy.bad_magic("50 4b 03 04 50 59"),
        "empty: directory has no .npy files",
        "nope.npy: no such file or directory",
        "inputs/notes.txt: " + npy.bad_magic("6e 6f 74 20 61 6e"),
    ]
    # notes.txt is ignored in the directory (6 files, not 7) but bad when named
    assert "inputs: 6 files, 2 bad, " in r.stdout
    assert r.stdout.rstrip().splitlines()[-1].endswith("headers and sizes: 5 bad files"), r.stdout
    assert "checking: 7/7" in r.stderr  # plain progress lines: stderr is not a terminal


def test_verify_inputs_labels_lists_bad_and_unpaired_files(runs):
    r = runs["verify-inputs-labels"]
    bad = problems(r)
    assert bad[:3] == [
        "inputs/004.npy: " + npy.payload_short("24", "20"),
        "inputs/005.npy: " + npy.bad_magic("50 4b 03 04 50 59"),
        "labels/007.npy: unpaired -- no file of this name in the inputs directory inputs",
    ]
    assert bad[3].startswith("npyio.dataset(INPUTS, LABELS) refuses them: "), bad
    assert "inputs: 6 files, 2 bad, " in r.stdout
    assert "labels: 7 files, 1 bad, " in r.stdout
    assert r.stdout.rstrip().splitlines()[-1].endswith("headers and sizes: 3 bad files"), r.stdout
    assert "checking: 13/13" in r.stderr


def test_verify_json_full(runs, tree):
    r = runs["verify-json-full"]
    assert r.returncode == cli.EXIT_BAD_FILES, r.stderr
    doc = json.loads(r.stdout)
    assert doc["ok"] is False
    assert doc["checks"] == "headers, sizes and payloads"
    assert (doc["files"], doc["bad_files"]) == (9, 2)
    assert [b["path"] for b in doc["bad"]] == ["inputs/004.npy", "inputs/005.npy"]
    assert doc["nonfinite"] == [{"path": "good/c.npy", "count": 2}]
    assert doc["groups"] == [
        {"dtype": "float32", "shape": [2, 3], "count": 6},
        {"dtype": "float64", "shape": [3], "count": 1},
    ]
    assert [d["path"] for d in doc["directories"]] == ["good", "inputs"]
    assert doc["bytes"] == sum(
        p.stat().st_size for d in ("good", "inputs") for p in (tree / d).glob("*.npy")
    )
    assert "decoding: 7/7" in r.stderr


def in_tree(tree: Path, monkeypatch, capsys, *argv: str) -> tuple[int, str, str]:
    """``main(argv)`` run in-process from inside the tree: (exit status, stdout, stderr)."""
    monkeypatch.chdir(tree)
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_verify_all_good_exits_0(tree, monkeypatch, capsys):
    # good/ mixes dtypes and shapes, which npyio.dataset refuses: --allow-mixed accepts them
    # (--each: two PATHs would otherwise be INPUTS and LABELS)
    code, out, _ = in_tree(
        tree, monkeypatch, capsys, "verify", "good", "labels/000.npy", "--allow-mixed", "--each"
    )
    assert code == cli.EXIT_OK
    lines = out.splitlines()
    assert lines[:3] == ["good: 3 files, 456 B", "  2  float32  (2, 3)", "  1  float64  (3,)"]
    assert lines[-1].startswith("verified 4 files (592 B) in ")
    assert lines[-1].endswith(", headers and sizes: all good")


def test_inspect_rows_summary_and_errors(runs):
    r = runs["inspect"]
    assert r.returncode == cli.EXIT_BAD_FILES
    assert r.stdout.splitlines() == [
        "version  dtype          shape   order  header  payload  path",
        "1.0      float32        (2, 3)  C         128       24  good/a.npy",
        "1.0      float32        (2, 3)  F         128       24  good/b.npy",
        "1.0      float64 (>f8)  (3,)    C         128       24  good/c.npy",
        "",
        "good: 3 files, 456 B",
        "  2  float32  (2, 3)",
        "  1  float64  (3,)",
    ]
    errors = [line for line in r.stderr.splitlines() if line.startswith("npyio inspect: ")]
    assert errors == [
        "npyio inspect: inputs/notes.txt: " + npy.bad_magic("6e 6f 74 20 61 6e"),
        "npyio inspect: nope.npy: no such file or directory",
    ]


def test_inspect_json(tree, monkeypatch, capsys):
    code, out, _ = in_tree(tree, monkeypatch, capsys, "inspect", "--json", "inputs", "empty")
    assert code == cli.EXIT_BAD_FILES
    doc = json.loads(out)
    assert [f["path"] for f in doc["files"]] == [f"inputs/00{i}.npy" for i in range(4)]
    assert doc["files"][0] == {
        "path": "inputs/000.npy",
        "version": "1.0",
        "dtype": "float32",
        "descr": "<f4",
        "shape": [2, 3],
        "order": "C",
        "header_bytes": 128,
        "payload_bytes": 24,
        "file_bytes": 152,
    }
    assert [(b["path"], b["reason"].split(" --")[0]) for b in doc["bad"]] == [
        ("inputs/004.npy", "payload is shorter than the header says"),
        ("inputs/005.npy", "not a .npy file: bad magic string"),
        ("empty", "directory has no .npy files"),
    ]
    assert doc["directories"] == [
        {
            "path": "inputs",
            "files": 6,
            "bad": 2,
            "bytes": 4 * 152 + 148 + 152,
            "groups": [{"dtype": "float32", "shape": [2, 3], "count": 4}],
        }
    ]


# --- in-process ----------------------------------------------------------------------------
def test_any_tf_filesystem_and_glob_patterns(capsys):
    root = "ram://npyio-test-cli"
    for i in range(3):
        with tf.io.gfile.GFile(f"{root}/d/{i}.npy", "wb") as f:
            np.save(f, np.full((4,), i, np.int16))
    with tf.io.gfile.GFile(f"{root}/d/3.npy", "wb") as f:
        f.write(npy_bytes(np.zeros(4, np.int16))[:-1])
    code = cli.main(["verify", "-q", "--full", f"{root}/d", f"{root}/d/*.npy", f"{root}/e*"])
    out = capsys.readouterr().out
    assert code == cli.EXIT_BAD_FILES
    assert out.splitlines()[:2] == [
        f"{root}/d/3.npy: " + npy.payload_short("8", "7"),
        f"{root}/e*: no file matches this pattern",
    ]
    assert "verified 4 files" in out  # the directory and the pattern name the same files


def test_a_path_given_twice_is_summarised_and_checked_once(tree, monkeypatch, capsys):
    code, out, _ = in_tree(tree, monkeypatch, capsys, "verify", "-q", "good", "good")
    assert code == cli.EXIT_BAD_FILES
    assert [line.split(":")[0] for line in out.splitlines() if " mismatch -- " in line] == [
        "good/c.npy"
    ]
    assert out.count("good: 3 files") == 1
    assert out.rstrip().endswith(": 1 file npyio.dataset would refuse")
    code, out, _ = in_tree(tree, monkeypatch, capsys, "inspect", "-q", "-s", "good", "good")
    assert code == cli.EXIT_OK
    assert out.count("good: 3 files") == 1
