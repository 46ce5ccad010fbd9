"""The op `NpyioReadFiles` (``npyio/_native/src/op.cc`` over the core ``npy_read.cc``), through
`npyio._native.library.read_files`: good files come out bit-identical to ``np.load``; every file
the kernel must doubt gives ``ok=False`` and a zero slice, never a crash or a hang."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

from npyio._native import library

#: Native-order, C-order dtypes (the only hints the readers send the kernel).
DTYPES = [
    "bool",
    "uint8",
    "int16",
    "float16",
    "float32",
    "int64",
    "uint64",
    "float64",
    "complex64",
    "complex128",
]
SHAPE = (3, 5)


def _header(path: Path) -> bytes:
    """The file's header bytes: magic, version, length field and the dict text."""
    data = path.read_bytes()
    field = 2 if data[6] == 1 else 4
    return data[: 8 + field + int.from_bytes(data[8 : 8 + field], "little")]


def _array(dtype: str, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.integers(0, 2, SHAPE).astype(bool)
    raw = rng.integers(0, 256, (*SHAPE, np.dtype(dtype).itemsize), dtype=np.uint8)
    return raw.view(dtype).reshape(SHAPE)  # every bit pattern, NaNs included


def _read(paths: list[str], dtype: str, header: bytes) -> tuple[np.ndarray, np.ndarray]:
    values, ok = library.read_files(tf.constant(paths), tf.as_dtype(dtype), SHAPE, header)
    return values.numpy(), ok.numpy()


@pytest.mark.parametrize("dtype", DTYPES)
def test_good_files_read_bit_identical_to_np_load(native_ops, tmp_path, dtype):
    paths = []
    for i in range(3):
        paths.append(str(tmp_path / f"{i}.npy"))
        np.save(paths[-1], _array(dtype, i))
    values, ok = _read(paths, dtype, _header(Path(paths[0])))
    assert ok.tolist() == [True] * 3
    assert values.shape == (3, *SHAPE) and values.dtype == np.dtype(dtype)
    for got, path in zip(values, paths):
        assert got.tobytes() == np.load(path).tobytes()


def _doubts(tmp_path: Path) -> dict[str, str]:
    """One file the kernel must doubt per case, beside a good float32 file ``good.npy``."""
    good = tmp_path / "good.npy"
    np.save(good, _array("float32"))
    data = good.read_bytes()
    cases = {
        name: str(tmp_path / f"{name}.npy")
        for name in ("missing", "directory", "fifo", "truncated", "grown", "header", "v2", "empty")
    }
    os.mkdir(cases["directory"])
    os.mkfifo(cases["fifo"])  # no writer: opening must not wait for one
    Path(cases["truncated"]).write_bytes(data[:-1])
    Path(cases["grown"]).write_bytes(data + b"\0")
    Path(cases["header"]).write_bytes(data.replace(b"False", b"True "))  # fortran_order
    with open(cases["v2"], "wb") as f:
        np.lib.format.write_array(f, _array("float32"), version=(2, 0))
    Path(cases["empty"]).write_bytes(b"")
    return cases


def test_each_doubted_file_gives_ok_false_and_zeros(native_ops, tmp_path):
    cases = _doubts(tmp_path)
    good = str(tmp_path / "good.npy")
    header = _header(Path(good))
    names = list(cases)
    values, ok = _read([good, *cases.values(), good], "float32", header)
    assert dict(zip(["good", *names, "good2"], ok.tolist())) == {
        "good": True,
        **dict.fromkeys(names, False),
        "good2": True,
    }
    assert not values[1:-1].any()  # a doubted file's slice is zeros, not a partial read
    assert values[0].tobytes() == np.load(good).tobytes()


def test_a_bool_byte_other_than_0_or_1_is_doubted(native_ops, tmp_path):
    good = tmp_path / "good.npy"
    np.save(good, _array("bool"))
    data = bytearray(good.read_bytes())
    data[-1] = 2  # np.load reads it; the graph path decides what it means
    bad = tmp_path / "bad.npy"
    bad.write_bytes(bytes(data))
    _, ok = _read([str(good), str(bad)], "bool", _header(good))
    assert ok.tolist() == [True, False]


def test_large_batches_read_in_parallel_give_the_same_bytes(native_ops, tmp_path):
    """Over the op's parallel threshold (1 MiB a batch), files are read on TF's worker threads:
    each lands in its own slice."""
    shape = (256, 256, 4)
    paths = []
    for i in range(6):
        paths.append(str(tmp_path / f"{i}.npy"))
        np.save(paths[-1], np.full(shape, i, "f4"))
    values, ok = library.read_files(tf.constant(paths), tf.float32, shape, _header(Path(paths[0])))
    assert ok.numpy().all()
    assert [float(v.numpy()[0, 0, 0]) for v in values] == list(range(6))


def test_the_op_has_static_shapes_and_runs_in_a_dataset(native_ops, tmp_path):
    paths = []
    for i in range(4):
        paths.append(str(tmp_path / f"{i}.npy"))
        np.save(paths[-1], _array("int64", i))
    header = _header(Path(paths[0]))
    ds = tf.data.Dataset.from_tensor_slices(paths).batch(2)
    ds = ds.map(lambda p: library.read_files(p, tf.int64, SHAPE, header))
    assert ds.element_spec[0].shape.as_list() == [None, *SHAPE]
    got = [v for v, ok in ds.as_numpy_iterator() if ok.all()]
    assert np.concatenate(got).tobytes() == b"".join(np.load(p).tobytes() for p in paths)


def test_the_op_is_not_stateful(native_ops):
    """A stateful op would stop tf.data from checkpointing the iterator."""
    graph = (
        tf.function(lambda p: library.read_files(p, tf.uint8, (1,), b"x"))
        .get_concrete_function(tf.TensorSpec([None], tf.string))
        .graph
    )
    (op,) = [o for o in graph.get_operations() if o.type == "NpyioReadFiles"]
    assert not op.op_def.is_stateful
