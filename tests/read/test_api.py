"""`npyio._read.api`: the public readers, a path in and its tensor out: `read_npy` on every form
of path, with its arguments checked when the op is built and the file's errors naming it when
it runs; `read_npz` by the member's exact name first. (Every backend against numpy's writer:
``tests/read/test_backends.py``; the ``.npz`` graph reader: ``tests/graph/test_zip.py``.)"""

from __future__ import annotations

import io
import zipfile

import numpy as np
import pytest
import tensorflow as tf

import npyio
from tests._npy_testing import assert_same, npy_bytes
from tests._npz_testing import write


def test_read_npy_takes_every_form_of_path(tmp_path):
    arr = np.arange(6, dtype=">i4").reshape(2, 3)
    path = tmp_path / "a.npy"
    np.save(path, arr)
    for form in (str(path), path, str(path).encode(), tf.constant(str(path))):
        assert_same(npyio.read_npy(form, tf.int32, shape=(2, None)), arr)
    with pytest.raises(TypeError):
        npyio.read_npy(1, tf.int32)


def test_read_npy_checks_its_arguments_when_built(tmp_path):
    path = str(tmp_path / "a.npy")
    with pytest.raises(TypeError, match="unsupported dtype"):
        npyio.read_npy(path, "U4")
    with pytest.raises(ValueError, match="unknown backend 'numpy'"):
        npyio.read_npy(path, tf.int32, backend="numpy")
    with pytest.raises(ValueError, match="max_header_size"):
        npyio.read_npy(path, tf.int32, max_header_size=-1)


def test_read_npy_names_the_file_when_it_runs(tmp_path):
    path = tmp_path / "a.npy"
    np.save(path, np.zeros(3, np.float32))
    with pytest.raises(tf.errors.NotFoundError):
        npyio.read_npy(str(tmp_path / "missing.npy"), tf.float32)
    with pytest.raises(tf.errors.InvalidArgumentError, match=f"^{path}: dtype mismatch"):
        npyio.read_npy(str(path), tf.int32)
    with pytest.raises(tf.errors.InvalidArgumentError, match=f"^{path}: .*max_file_size"):
        npyio.read_npy(str(path), tf.float32, max_file_size=64)


def test_read_npz_paths_and_exact_names(tmp_path):
    a, b = np.arange(3, dtype=np.int16), np.arange(5, dtype=np.int16)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:  # both "x" and "x.npy": the exact name wins
        zf.writestr("x.npy", npy_bytes(b))
        zf.writestr("x", npy_bytes(a))
        zf.writestr("dir/y.npy", npy_bytes(a), compress_type=zipfile.ZIP_DEFLATED)
    path = write(tmp_path / "a.npz", buf.getvalue())
    assert_same(npyio.read_npz(path, "x", tf.int16), a)
    assert_same(npyio.read_npz(tmp_path / "a.npz", "x.npy", np.int16), b)
    assert_same(npyio.read_npz(path, "dir/y", "int16"), a)
    ram = "ram://npz/a.npz"
    with tf.io.gfile.GFile(ram, "wb") as f:
        f.write(buf.getvalue())
    assert_same(npyio.read_npz(tf.constant(ram), tf.constant("x"), tf.int16, shape=(None,)), a)
