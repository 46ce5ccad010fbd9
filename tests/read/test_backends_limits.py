"""Every size limit reaches every backend: ``max_file_size`` and ``max_header_size`` through
``npyio.read_npy(..., backend=b)`` and ``npyio.dataset(..., backend=b)``.

A file over a limit is refused with npyio's own message, naming the file; at the limit it decodes
bit for bit as ``np.load`` reads it. The files are numpy's own (v1.0 header, little-endian
float32, C order), the ones the native reader reads itself when the shape is static.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

import npyio
from npyio._format import npy
from tests._npy_testing import assert_same, tf_message
from tests.read.test_backends import BACKENDS

SHAPE = (4, 3)
#: A static shape (the native reader reads the file itself) and a partial one (its fallback,
#: the graph parser, reads it).
SHAPES = [pytest.param(SHAPE, id="static"), pytest.param((None, 3), id="partial")]


def save(path: Path, arr: np.ndarray) -> str:
    np.save(path, arr)
    return str(path)


def one_file(tmp_path: Path) -> tuple[str, np.ndarray, int, int]:
    """A numpy-written float32 (4, 3) file: (path, array, file size, header length)."""
    arr = np.arange(12, dtype=np.float32).reshape(SHAPE) * 1.5
    path = save(tmp_path / "f.npy", arr)
    size = Path(path).stat().st_size
    hlen = size - arr.nbytes - 10  # v1.0: magic (6), version (2), length field (2)
    assert npyio.inspect(path).data_offset == size - arr.nbytes
    return path, arr, size, hlen


def refusal(fn, *args, **kwargs) -> str:
    """Runs ``fn``, which must raise InvalidArgumentError; returns its text."""
    with pytest.raises(tf.errors.OpError) as info:
        fn(*args, **kwargs)
    assert type(info.value) is tf.errors.InvalidArgumentError, repr(info.value)
    return tf_message(info.value)


def drain(ds: tf.data.Dataset) -> list[np.ndarray]:
    return [x.numpy() for x in ds]


# --- read_npy -------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("backend", BACKENDS)
def test_read_npy_max_file_size(backend, shape, tmp_path):
    path, arr, size, _ = one_file(tmp_path)
    for limit in (size, size + 1, None):
        got = npyio.read_npy(path, "float32", shape, backend=backend, max_file_size=limit)
        assert_same(got, arr, limit)
    message = refusal(
        npyio.read_npy, path, "float32", shape, backend=backend, max_file_size=size - 1
    )
    assert f"{path}: {npy.file_too_large(str(size - 1), str(size))}" in message, message
    # traced, as in a tf.data map
    traced = tf.function(
        lambda p: npyio.read_npy(p, "float32", shape, backend=backend, max_file_size=size - 1),
        input_signature=[tf.TensorSpec([], tf.string)],
    )
    message = refusal(traced, tf.constant(path))
    assert f"{path}: {npy.file_too_large(str(size - 1), str(size))}" in message, message


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("backend", BACKENDS)
def test_read_npy_max_header_size(backend, shape, tmp_path):
    path, arr, _, hlen = one_file(tmp_path)
    for limit in (hlen, hlen + 1):
        got = npyio.read_npy(path, "float32", shape, backend=backend, max_header_size=limit)
        assert_same(got, arr, limit)
    message = refusal(
        npyio.read_npy, path, "float32", shape, backend=backend, max_header_size=hlen - 1
    )
    assert f"{path}: {npy.header_too_large(str(hlen - 1), str(hlen))}" in message, message


# --- dataset --------------------------------------------------------------------------------
@pytest.fixture
def files(tmp_path) -> tuple[Path, list[np.ndarray], int, int]:
    """d/000..003.npy float32 (4, 3), and d/004.npy float32 (40, 3), a larger file.
    Returns (d, arrays, size of a small file, size of the large one)."""
    d = tmp_path / "d"
    d.mkdir()
    arrays = [np.full(SHAPE, i, np.float32) + np.arange(3, dtype=np.float32) for i in range(4)]
    arrays.append(np.arange(120, dtype=np.float32).reshape(40, 3))
    for i, arr in enumerate(arrays):
        save(d / f"{i:03d}.npy", arr)
    return d, arrays, (d / "000.npy").stat().st_size, (d / "004.npy").stat().st_size


@pytest.mark.parametrize("backend", BACKENDS)
def test_dataset_max_file_size(backend, files):
    d, arrays, _, large = files
    # shape=(None, 3) takes both sizes; the first file is small, so the spec is read fine
    got = drain(
        npyio.dataset(
            str(d), shape=(None, 3), backend=backend, max_file_size=large, batch_size=None
        )
    )
    assert len(got) == len(arrays)
    for g, want in zip(got, arrays, strict=True):
        assert_same(g, want)
    # the large file is refused when the dataset reaches it, by name
    ds = npyio.dataset(
        str(d), shape=(None, 3), backend=backend, max_file_size=large - 1, batch_size=None
    )
    message = refusal(drain, ds)
    assert f"{d / '004.npy'}: {npy.file_too_large(str(large - 1), str(large))}" in message, message


def refused_at_the_first_file(d: Path, backend: str, reason: str, **limit: int) -> None:
    """A limit the first file breaks: refused, naming the file, when the dataset is built (the
    spec is derived from that file's header, read with the limit), and with the spec given (no
    header read when built) when the backend first reads it."""
    want = f"{d / '000.npy'}: {reason}"
    with pytest.raises(npyio.NpyFormatError) as info:
        npyio.dataset(str(d), backend=backend, **limit)
    assert str(info.value) == want
    ds = npyio.dataset(
        str(d), dtype="float32", shape=SHAPE, backend=backend, batch_size=None, **limit
    )
    message = refusal(drain, ds)
    assert want in message, message


@pytest.mark.parametrize("backend", BACKENDS)
def test_dataset_max_file_size_first_file(backend, files):
    d, _, small, _ = files
    reason = npy.file_too_large(str(small - 1), str(small))
    refused_at_the_first_file(d, backend, reason, max_file_size=small - 1)


@pytest.mark.parametrize("backend", BACKENDS)
def test_dataset_max_header_size(backend, files):
    d, arrays, _, _ = files
    hlen = npyio.inspect(str(d / "000.npy")).data_offset - 10
    got = drain(
        npyio.dataset(
            str(d), shape=(None, 3), backend=backend, max_header_size=hlen, batch_size=None
        )
    )
    for g, want in zip(got, arrays, strict=True):
        assert_same(g, want)
    reason = npy.header_too_large(str(hlen - 1), str(hlen))
    refused_at_the_first_file(d, backend, reason, max_header_size=hlen - 1)
