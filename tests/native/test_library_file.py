"""The op `NpyioReadFile` (one file of any shape, its header parsed by the core's
``npy_header.cc``), through `npyio._native.library.read_file`: files of per-case shapes come out
bit-identical to ``np.load``; every file the kernel must doubt gives ``ok=False`` and an empty
value, never a crash, a hang or an allocation its header alone asked for."""

from __future__ import annotations

import io
import os

import numpy as np
import pytest
import tensorflow as tf

from npyio._native import library
from tests.native.test_library_op import DTYPES


def _read(path, dtype, shape=None, max_header_size=10_000, max_file_size=None):
    value, ok = library.read_file(
        tf.constant(str(path)), tf.as_dtype(dtype), shape, max_header_size, max_file_size
    )
    return value.numpy(), bool(ok)


def _array(dtype: str, shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    n = int(np.prod(shape))
    return (
        rng.integers(0, 256, n * np.dtype(dtype).itemsize, dtype=np.uint8)
        .view(dtype)
        .reshape(shape)
    )


@pytest.mark.parametrize("dtype", DTYPES)
def test_files_of_per_case_shapes_read_bit_identical_to_np_load(native_ops, tmp_path, dtype):
    for i, shape in enumerate([(3, 5), (7, 1), (0, 4), (2, 2)]):
        a = _array(dtype, shape, i)
        np.save(tmp_path / f"{i}.npy", a)
        for declared in [None, (None, None), (None, shape[1])]:
            got, ok = _read(tmp_path / f"{i}.npy", dtype, declared)
            assert ok and got.shape == shape and got.dtype == np.dtype(dtype)
            assert got.tobytes() == a.tobytes()


def test_headers_of_other_writers_and_versions_are_parsed(native_ops, tmp_path):
    """Another writer's spacing and key order, format 2.0 and 3.0, and a header past the 4 KiB
    the kernel reads first."""
    a = np.arange(12, dtype="<i4").reshape(3, 4)
    texts = [
        '{"shape":(3,4),"descr":"<i4","fortran_order":False}\n',
        "{'descr': '<i4', 'fortran_order': False, 'shape': (3, 4), }" + " " * 5000 + "\n",
    ]
    for i, text in enumerate(texts):
        raw = text.encode()
        head = b"\x93NUMPY\x02\x00" + len(raw).to_bytes(4, "little") + raw
        (tmp_path / f"w{i}.npy").write_bytes(head + a.tobytes())
        got, ok = _read(tmp_path / f"w{i}.npy", "int32", (None, 4))
        assert ok and (got == a).all()
    buf = io.BytesIO()
    np.lib.format.write_array(buf, a, version=(3, 0))
    (tmp_path / "v3.npy").write_bytes(buf.getvalue())
    got, ok = _read(tmp_path / "v3.npy", "int32")
    assert ok and (got == a).all()


def _lying(tmp_path, shape_text: str, payload: bytes = b"\0" * 16) -> str:
    text = f"{{'descr': '<f4', 'fortran_order': False, 'shape': {shape_text}, }}".encode()
    path = tmp_path / f"lie{abs(hash(shape_text))}.npy"
    path.write_bytes(b"\x93NUMPY\x01\x00" + len(text).to_bytes(2, "little") + text + payload)
    return str(path)


def test_files_the_kernel_must_doubt(native_ops, tmp_path):
    a = np.arange(6, dtype="<f4").reshape(2, 3)
    np.save(tmp_path / "good.npy", a)
    np.save(tmp_path / "swapped.npy", a.astype(">f4"))
    np.save(tmp_path / "fortran.npy", np.asfortranarray(a))
    np.save(tmp_path / "f8.npy", a.astype("<f8"))
    good = (tmp_path / "good.npy").read_bytes()
    (tmp_path / "trailing.npy").write_bytes(good + b"\0")
    (tmp_path / "short.npy").write_bytes(good[:-1])
    (tmp_path / "py2.npy").write_bytes(good.replace(b"(2, 3)", b"(2L,3)"))  # the graph decides
    os.mkfifo(tmp_path / "fifo.npy")
    os.mkdir(tmp_path / "dir.npy")
    doubted = [
        ("swapped.npy", None),
        ("fortran.npy", None),
        ("f8.npy", None),
        ("trailing.npy", None),
        ("short.npy", None),
        ("py2.npy", None),
        ("fifo.npy", None),
        ("dir.npy", None),
        ("missing.npy", None),
        ("good.npy", (None,)),  # another rank
        ("good.npy", (3, None)),  # another dim
    ]
    for name, shape in doubted:
        got, ok = _read(tmp_path / name, "float32", shape)
        assert not ok and got.size == 0, name
    got, ok = _read(tmp_path / "good.npy", "float32", None, max_header_size=60)
    assert not ok  # its header text is longer than the limit
    got, ok = _read(tmp_path / "good.npy", "float32", None, max_file_size=len(good) - 1)
    assert not ok
    got, ok = _read(tmp_path / "good.npy", "float32", None, max_file_size=len(good))
    assert ok and (got == a).all()
    got, ok = _read("gs://bucket/good.npy", "float32", None)
    assert not ok  # objects in a store: the graph path reads them


def test_a_header_that_lies_allocates_nothing(native_ops, tmp_path):
    """A 100-byte file that claims 2**40 floats: doubted before any output is allocated (an
    allocation of 4 TiB would fail, or be the process's end under a memory limit)."""
    for claim in ["(1099511627776,)", "(65536, 65536, 256)", "(4611686018427387903,)"]:
        got, ok = _read(_lying(tmp_path, claim), "float32", (None,) * claim.count(","))
        assert not ok and got.size == 0


def test_a_bool_byte_other_than_0_or_1_is_doubted(native_ops, tmp_path):
    np.save(tmp_path / "b.npy", np.array([True, False, True]))
    raw = bytearray((tmp_path / "b.npy").read_bytes())
    raw[-1] = 7
    (tmp_path / "b.npy").write_bytes(bytes(raw))
    _, ok = _read(tmp_path / "b.npy", "bool", (None,))
    assert not ok


def test_the_op_in_a_graph_keeps_the_declared_shape(native_ops, tmp_path):
    np.save(tmp_path / "a.npy", np.zeros((4, 2, 3), "f4"))

    @tf.function
    def f(path):
        value, ok = library.read_file(path, tf.float32, (None, 2, None), 10_000, None)
        assert value.shape.as_list() == [None, 2, None] and ok.shape.rank == 0
        return value, ok

    value, ok = f(tf.constant(str(tmp_path / "a.npy")))
    assert bool(ok) and value.shape == (4, 2, 3)
