"""`npyio._read.py_function`: ``np.load`` after npyio's checks (`load`), tried again where
CPython 3.11's ``ast`` spoils a parse (`np_load`), and a refused file named on stderr when the
reader reports. (The backend against numpy's writer: ``tests/read/test_backends.py``.)"""

from __future__ import annotations

import io

import numpy as np
import pytest
import tensorflow as tf

from npyio._format.header import Limits
from npyio._format.spec import Spec
from npyio._read import py_function
from npyio._read.py_function import PyFunctionReader, load, np_load
from npyio.errors import NpyFormatError

SPOILED = SystemError("AST constructor recursion depth mismatch (before=1, after=2)")


def flaky_np_load(monkeypatch, failures: list[BaseException]) -> list[int]:
    """``np.load`` in `np_load` fails with ``failures`` first; returns the list of calls."""
    real, calls = np.load, []

    def fake(file, **kwargs):
        calls.append(1)
        if len(calls) <= len(failures):
            file.read(3)  # a failed parse leaves the file part-read
            raise failures[len(calls) - 1]
        return real(file, **kwargs)

    monkeypatch.setattr(py_function.np, "load", fake)
    return calls


def npy_file() -> io.BytesIO:
    buf = io.BytesIO()
    np.save(buf, np.arange(3))
    return buf


def test_np_load_tries_a_spoiled_parse_again(monkeypatch):
    calls = flaky_np_load(monkeypatch, [SPOILED, SPOILED])
    assert np_load(npy_file()).tolist() == [0, 1, 2]
    assert len(calls) == 3


def test_np_load_gives_up_after_its_tries_or_on_another_error(monkeypatch):
    calls = flaky_np_load(monkeypatch, [SPOILED] * 3)
    with pytest.raises(SystemError, match="recursion depth mismatch"):
        np_load(npy_file())
    assert len(calls) == 3
    calls = flaky_np_load(monkeypatch, [SystemError("something else")])
    with pytest.raises(SystemError, match="something else"):
        np_load(npy_file())
    assert len(calls) == 1


def test_load_checks_before_np_load(tmp_path):
    path = tmp_path / "a.npy"
    np.save(path, np.asfortranarray(np.arange(6, dtype=">f4").reshape(2, 3)))
    got = load(str(path), Spec.whole(np.dtype("float32"), (2, None)))
    assert got.dtype == np.dtype("float32") and got.flags.c_contiguous
    assert got.tolist() == np.arange(6).reshape(2, 3).tolist()
    np.save(tmp_path / "s.npy", np.float64(2.5))
    assert load(str(tmp_path / "s.npy"), Spec.whole(np.dtype("float64"), ())).shape == ()
    for spec, words in (
        (Spec.whole(np.dtype("int32"), None), "dtype mismatch"),
        (Spec.whole(np.dtype("float32"), (3, 2)), "shape mismatch"),
        (Spec.whole(np.dtype("float32"), None, limits=Limits(max_file_size=10)), "max_file_size"),
    ):
        with pytest.raises(NpyFormatError, match=f"^{path}: .*{words}"):
            load(str(path), spec)


@pytest.mark.parametrize("report", [False, True])
def test_a_refused_file_is_named_on_stderr_when_reporting(tmp_path, capfd, report):
    path = tmp_path / "a.npy"
    np.save(path, np.zeros(2, np.int64))
    spec = Spec.whole(np.dtype("float32"), (2,))
    with pytest.raises(tf.errors.InvalidArgumentError, match=str(path)):
        PyFunctionReader(report).read_path(tf.constant(str(path)), spec)
    stderr = capfd.readouterr().err
    assert (f"npyio: skipping {path}: dtype mismatch" in stderr) == report
