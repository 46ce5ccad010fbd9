"""The op `NpyioReadRanges` (``npyio/_native/src/op.cc`` over the core's ``read_range``), through
`npyio._native.library.read_ranges`: a range of a file whose size is still the plan's comes out
as its bytes, large and many ranges alike; anything else gives ``ok=False`` and no bytes, never a
crash or a hang; a length of -1 passes the given bytes through."""

from __future__ import annotations

import os

import numpy as np
import pytest
import tensorflow as tf

from npyio._native import library


def _ranges(paths, offsets, lengths, sizes, given=None):
    values, ok = library.read_ranges(
        tf.constant(paths, tf.string),
        tf.constant(offsets, tf.int64),
        tf.constant(lengths, tf.int64),
        tf.constant(sizes, tf.int64),
        None if given is None else tf.constant(given, tf.string),
    )
    return list(values.numpy()), list(ok.numpy())


def test_ranges_read_the_files_bytes(native_ops, tmp_path):
    data = np.random.default_rng(0).bytes(5000)
    path = str(tmp_path / "a.bin")
    with open(path, "wb") as f:
        f.write(data)
    cases = [(0, 5000), (7, 100), (4999, 1), (5000, 0), (123, 0)]
    values, ok = _ranges([path] * 5, [a for a, _ in cases], [n for _, n in cases], [5000] * 5)
    assert ok == [True] * 5
    assert values == [data[a : a + n] for a, n in cases]


def test_large_ranges_read_in_parallel_give_the_same_bytes(native_ops, tmp_path):
    data = np.random.default_rng(1).bytes(3 << 20)
    path = str(tmp_path / "big.bin")
    with open(path, "wb") as f:
        f.write(data)
    starts = [i * (256 << 10) for i in range(12)]
    values, ok = _ranges([path] * 12, starts, [256 << 10] * 12, [3 << 20] * 12)
    assert all(ok) and b"".join(values) == data


def test_each_doubted_range_gives_ok_false_and_no_bytes(native_ops, tmp_path):
    path = str(tmp_path / "a.bin")
    with open(path, "wb") as f:
        f.write(b"x" * 100)
    os.mkfifo(tmp_path / "fifo")
    cases = {
        "another size (shrunk since the plan)": (path, 0, 10, 101),
        "another size (grown since the plan)": (path, 0, 10, 99),
        "past the recorded end": (path, 95, 10, 100),
        "a negative offset": (path, -1, 10, 100),
        "a negative size": (path, 0, 0, -1),
        "missing": (str(tmp_path / "missing"), 0, 10, 100),
        "a directory": (str(tmp_path), 0, 0, 0),
        "a FIFO (not waited on)": (str(tmp_path / "fifo"), 0, 0, 0),
        "a NUL in the path": (path + "\0x", 0, 10, 100),
    }
    values, ok = _ranges(*(list(column) for column in zip(*cases.values(), strict=True)))
    assert dict(zip(cases, ok, strict=True)) == dict.fromkeys(cases, False)
    assert values == [b""] * len(cases)


def test_a_length_of_minus_one_passes_the_given_bytes_through(native_ops, tmp_path):
    path = str(tmp_path / "a.bin")
    with open(path, "wb") as f:
        f.write(b"0123456789")
    values, ok = _ranges(
        [path, "/nowhere", path], [2, 0, 0], [3, -1, -1], [10, 0, 0], [b"", b"given", b"kept"]
    )
    assert values == [b"234", b"given", b"kept"] and ok == [True] * 3


def test_inputs_of_different_lengths_are_refused(native_ops):
    with pytest.raises((tf.errors.InvalidArgumentError, ValueError)):
        _ranges(["a", "b"], [0], [0, 0], [0, 0], [b"", b""])
