"""The op `NpyioReadRows` (``npyio/_native/src/op.cc`` over the core's ``read_rows``), through
`npyio._native.library.read_rows`: rows of files numbered as one sequence come out as the files'
rows, in the batch's order, in the machine's byte order, whatever the files' order, count or
byte order; a row the core doubts gives ``ok=False`` and zeros, and only that row; never a
crash or a hang."""

from __future__ import annotations

import os

import numpy as np
import pytest
import tensorflow as tf

from npyio._native import library


def _save(path, arr) -> str:
    np.save(path, arr)
    return str(path)


def _table(paths, arrays):
    """(starts, paths, offsets, little) of files holding ``arrays``, as the op takes them."""
    counts = [len(a) for a in arrays]
    offsets = [os.path.getsize(p) - a.nbytes for p, a in zip(paths, arrays, strict=True)]
    little = [a.dtype.byteorder == "<" or (a.dtype.byteorder in "|=") for a in arrays]
    return np.concatenate([[0], np.cumsum(counts)]).astype(np.int64), paths, offsets, little


def _read(rows, table, dtype, shape):
    starts, paths, offsets, little = table
    values, ok = library.read_rows(
        tf.constant(rows, tf.int64),
        tf.constant(starts, tf.int64),
        tf.constant(paths, tf.string),
        tf.constant(offsets, tf.int64),
        tf.constant(little, tf.bool),
        dtype,
        shape,
    )
    return values.numpy(), list(ok.numpy())


@pytest.mark.parametrize(
    "dtype",
    ["<f4", ">f4", ">i8", ">c8", ">c16", "<u2", "|b1", ">f2"],
)
def test_rows_of_several_files_come_in_the_batchs_order_in_native_byte_order(
    native_ops, tmp_path, dtype
):
    rng = np.random.default_rng(0)
    native = np.dtype(dtype).newbyteorder("=")
    arrays = [(rng.standard_normal((n, 3, 2)) * 50).astype(native).astype(dtype) for n in (5, 1, 7)]
    if np.dtype(dtype).kind == "c":
        arrays = [(a + 1j * a[::-1]).astype(dtype) for a in arrays]
    paths = [_save(tmp_path / f"{k}.npy", a) for k, a in enumerate(arrays)]
    whole = np.concatenate(arrays)
    # in order (runs of neighbours), shuffled, repeated, across file edges
    rows = [0, 1, 2, 3, 4, 5, 6, 12, 11, 4, 4, 5, 6, 7, 0]
    values, ok = _read(rows, _table(paths, arrays), tf.as_dtype(native), (3, 2))
    assert ok == [True] * len(rows)
    np.testing.assert_array_equal(values, whole[rows])
    assert values.dtype == native


def test_files_of_mixed_byte_orders_swap_each_files_own(native_ops, tmp_path):
    arrays = [np.arange(6, dtype=">i4").reshape(3, 2), np.arange(6, 12, dtype="<i4").reshape(3, 2)]
    paths = [_save(tmp_path / f"{k}.npy", a) for k, a in enumerate(arrays)]
    values, ok = _read([5, 0, 3, 2], _table(paths, arrays), tf.int32, (2,))
    assert all(ok)
    np.testing.assert_array_equal(values, np.concatenate(arrays)[[5, 0, 3, 2]])


def test_more_files_than_are_kept_open_read_alike(native_ops, tmp_path):
    """Past the 64 files read_rows keeps open, each run opens its own."""
    arrays = [np.full((2, 3), k, np.float64) for k in range(80)]
    paths = [_save(tmp_path / f"{k}.npy", a) for k, a in enumerate(arrays)]
    rows = list(np.random.default_rng(1).permutation(160))
    values, ok = _read(rows, _table(paths, arrays), tf.float64, (3,))
    assert all(ok)
    np.testing.assert_array_equal(values, np.concatenate(arrays)[rows])


def test_a_large_batch_read_in_parallel_gives_the_same_rows(native_ops, tmp_path):
    arrays = [np.random.default_rng(k).standard_normal((64, 1024), np.float32) for k in range(4)]
    paths = [_save(tmp_path / f"{k}.npy", a) for k, a in enumerate(arrays)]
    rows = list(np.random.default_rng(2).permutation(256)) + list(range(256))
    values, ok = _read(rows, _table(paths, arrays), tf.float32, (1024,))  # 2 MiB
    assert all(ok)
    np.testing.assert_array_equal(values, np.concatenate(arrays)[rows])


def test_each_doubted_row_gives_ok_false_and_zeros_and_only_it(native_ops, tmp_path):
    good = np.arange(1, 9, dtype="<f4").reshape(4, 2)
    arrays, paths = [], []
    for name in ("good", "missing", "shrunk", "grown", "bools", "nul", "scheme", "fifo", "dir"):
        arr = good.copy()
        path = str(tmp_path / f"{name}.npy")
        if name not in ("fifo", "dir"):
            np.save(path, arr)
        arrays.append(arr)
        paths.append(path)
    os.remove(paths[1])
    np.save(paths[2], good[:3])
    np.save(paths[3], np.concatenate([good, good]))
    paths[5] = paths[0] + "\0x"
    paths[6] = "ram://" + paths[0]
    os.mkfifo(paths[7])
    os.mkdir(paths[8])
    starts, _, offsets, little = _table([paths[0]] * 9, arrays)
    rows = [0, 4, 8, 12, 20, 24, 28, 32, 1, -1, 36, 10**12]
    values, ok = _read(rows, (starts, paths, offsets, little), tf.float32, (2,))
    assert ok == [True, False, False, False, False, False, False, False, True, False, False, False]
    np.testing.assert_array_equal(values[[0, 8]], good[[0, 1]])
    assert not values[[r for r, o in enumerate(ok) if not o]].any()


def test_bools_other_than_0_or_1_are_doubted(native_ops, tmp_path):
    arr = np.array([[True, False], [False, True]])
    path = _save(tmp_path / "b.npy", arr)
    with open(path, "r+b") as f:  # the second row's first byte: 2
        f.seek(os.path.getsize(path) - 2)
        f.write(b"\x02")
    values, ok = _read([1, 0], _table([path], [arr]), tf.bool, (2,))  # two runs
    assert ok == [False, True] and values.tolist() == [[False, False], [True, False]]
    _, ok = _read([0, 1], _table([path], [arr]), tf.bool, (2,))  # one run: doubted whole
    assert ok == [False, False]


def test_inputs_that_do_not_fit_together_are_refused(native_ops):
    with pytest.raises((tf.errors.InvalidArgumentError, ValueError)):
        _read([0], ([0, 1, 2], ["a"], [0], [True]), tf.float32, (2,))
    with pytest.raises((tf.errors.InvalidArgumentError, ValueError)):
        _read([0], ([0, 1], ["a"], [0], [True]), tf.float32, (None,))
