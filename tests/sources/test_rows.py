"""npyio.rows: bit-exact rows across shards and dtypes, batching, shuffling, row sharding,
build-time and iteration-time errors, no Python ops, and bounded memory on a large file."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

import npyio
from npyio._pipeline.options import DatasetOptions, LoaderOptions
from npyio._sources import rows_plan
from npyio._sources.rows import build_rows
from tests._graph_util import PYTHON_OPS as CALLBACK_OPS
from tests._graph_util import op_types
from tests._npy_testing import assert_same, header_text, native, tf_message, with_header


def save(path: Path | str, arr: np.ndarray) -> str:
    with tf.io.gfile.GFile(str(path), "wb") as f:
        np.save(f, arr)
    return str(path)


def collect(ds: tf.data.Dataset) -> list:
    return [tuple(t.numpy() for t in e) if isinstance(e, tuple) else e.numpy() for e in ds]


def stacked(ds: tf.data.Dataset, like: np.ndarray) -> np.ndarray:
    got = collect(ds)
    return np.stack(got) if got else np.zeros((0, *like.shape[1:]), native(like).dtype)


@pytest.fixture
def small_chunks(monkeypatch):
    """Chunks of a few rows and pieces of a few chunks, so small files exercise the chunking
    (whole chunks plus a remainder) and the cutting into pieces that big files get."""
    monkeypatch.setattr(rows_plan, "CHUNK_BYTES", 100)
    monkeypatch.setattr(rows_plan, "MAX_PIECE_BYTES", 700)


def sample(dtype: str, shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    raw = rng.integers(0, 256, int(np.prod(shape)) * dt.itemsize, dtype=np.uint8)
    return raw.view(dt).reshape(shape)


# --- bit-exact rows -----------------------------------------------------------------------------
DTYPES = ["|u1", "<f4", ">f8", "|b1", ">u4", "<u8", ">i2", ">f2", ">c8", "<c16", ">c16", "|i1"]


@pytest.mark.parametrize("dtype", DTYPES)
def test_one_file_bit_exact(tmp_path, small_chunks, dtype, row_backend):
    arr = sample(dtype, (23, 3, 2))
    ds = npyio.rows(save(tmp_path / "a.npy", arr), batch_size=None)
    assert ds.element_spec == tf.TensorSpec((3, 2), tf.as_dtype(native(arr).dtype.name))
    assert_same(stacked(ds, arr), arr, dtype)


def test_default_chunking_bit_exact_1d_and_wide_rows(tmp_path):
    for arr in (sample("<i8", (5000,)), sample(">f4", (3, 300_000)), sample("<f4", (1, 7))):
        assert_same(stacked(npyio.rows(save(tmp_path / "a.npy", arr), batch_size=None), arr), arr)


def test_shards_with_labels_uneven_and_mixed_headers(tmp_path, small_chunks, row_backend):
    """Shards of uneven sizes (one empty), mixed byte orders and header lengths, with labels."""
    sizes = [17, 0, 1, 40, 9]
    xs, ys, xa, ya = [], [], [], []
    for i, n in enumerate(sizes):
        x = sample(">f8" if i % 2 else "<f8", (n, 2, 3), seed=i)
        y = (np.arange(n) + sum(sizes[:i])).astype(">u2" if i % 2 else "<u2")
        xa.append(x)
        ya.append(y)
        xs.append(save(tmp_path / f"x{i}.npy", x))
        if i == 3:  # a hand-made header: no padding, so another data_offset
            text = header_text(y.dtype.str, False, y.shape)
            (tmp_path / f"y{i}.npy").write_bytes(with_header(text, y.tobytes()))
            ys.append(str(tmp_path / f"y{i}.npy"))
        else:
            ys.append(save(tmp_path / f"y{i}.npy", y))
    assert len({npyio.inspect(p).data_offset for p in ys}) == 2
    ds = npyio.rows(xs, ys, batch_size=None)
    assert ds.element_spec == (tf.TensorSpec((2, 3), tf.float64), tf.TensorSpec((), tf.uint16))
    got = collect(ds)
    assert_same(np.stack([x for x, _ in got]), np.concatenate([native(x) for x in xa]))
    assert_same(np.array([y for _, y in got]), np.concatenate([native(y) for y in ya]))


def test_directory_glob_and_pairing_by_name(tmp_path):
    for d in ("x", "y"):
        (tmp_path / d).mkdir()
    for i, n in ((2, 3), (10, 2), (1, 4)):  # sorted by name: 1, 10, 2
        save(tmp_path / "x" / f"{i}.npy", np.full((n, 2), i, np.int32))
        save(tmp_path / "y" / f"{i}.npy", np.full(n, i, np.int64))
    want = [1] * 4 + [10] * 2 + [2] * 3
    got = collect(npyio.rows(str(tmp_path / "x"), str(tmp_path / "y"), batch_size=None))
    assert [int(y) for _, y in got] == want
    assert all((x == y).all() for x, y in got)
    assert [
        int(x[0]) for x in collect(npyio.rows(str(tmp_path / "x" / "*.npy"), batch_size=None))
    ] == want


def test_single_paths_pair_by_position(tmp_path):
    x = save(tmp_path / "inputs.npy", np.arange(6, dtype=np.int16).reshape(3, 2))
    y = save(tmp_path / "targets.npy", np.array([7, 8, 9], np.uint8))
    assert [int(b) for _, b in collect(npyio.rows(x, y, batch_size=None))] == [7, 8, 9]


def test_the_default_batch_size_is_32_and_none_yields_single_rows(tmp_path):
    n = 70
    arr = np.arange(n * 2, dtype=np.float32).reshape(n, 2)
    x = save(tmp_path / "x.npy", arr)
    ds = npyio.rows(x)
    assert len(ds) == -(-n // 32)
    assert [int(b.shape[0]) for b in ds] == [min(32, n - start) for start in range(0, n, 32)]
    np.testing.assert_array_equal(np.concatenate([b.numpy() for b in ds]), arr)
    assert ds.element_spec.shape.as_list() == [None, 2]
    single = npyio.rows(x, batch_size=None)
    assert len(single) == n and single.element_spec.shape == (2,)
    assert_same(stacked(single, arr), arr)


def test_zero_rows(tmp_path):
    empty = save(tmp_path / "e.npy", np.zeros((0, 4), "<f4"))
    ds = npyio.rows([empty, empty], batch_size=None)
    assert ds.element_spec == tf.TensorSpec((4,), tf.float32)
    assert collect(ds) == []
    assert collect(npyio.rows(empty, batch_size=3)) == []
    assert (
        collect(npyio.rows(empty, shuffle=True, shuffle_buffer=5, shard=(2, 1), batch_size=None))
        == []
    )


def test_rows_of_zero_bytes(tmp_path, small_chunks, row_backend):
    # (TensorFlow's Dataset.unbatch crashes the process on such rows; npyio avoids it.)
    x = save(tmp_path / "x.npy", np.zeros((7, 0, 2), np.float32))
    y = save(tmp_path / "y.npy", np.arange(7, dtype=np.int64))
    got = collect(npyio.rows(x, y, batch_size=None))
    assert [int(b) for _, b in got] == list(range(7))
    assert all(a.shape == (0, 2) for a, _ in got)
    shuffled = collect(npyio.rows(x, y, shuffle=True, shuffle_buffer=3, batch_size=4, seed=0))
    assert sorted(np.concatenate([b for _, b in shuffled]).tolist()) == list(range(7))
    assert [a.shape for a, _ in shuffled] == [(4, 0, 2), (3, 0, 2)]
    assert [a.shape for a in collect(npyio.rows(x, batch_size=None))] == [(0, 2)] * 7
    assert [a.shape for a in collect(npyio.rows(x, batch_size=5))] == [(5, 0, 2), (2, 0, 2)]


def test_fortran_1d_is_fine(tmp_path):
    arr = np.arange(5, dtype="<i4")
    path = tmp_path / "f.npy"
    path.write_bytes(with_header(header_text("<i4", True, (5,)), arr.tobytes()))
    assert_same(stacked(npyio.rows(str(path), batch_size=None), arr), arr)


def test_file_much_larger_than_a_chunk(tmp_path):
    # 4 MiB in chunks of 1 MiB, rows that do not divide a chunk: whole chunks plus a remainder.
    arr = sample("<f4", (1000, 1031), seed=5)
    ds = npyio.rows(save(tmp_path / "big.npy", arr), batch_size=64)
    assert_same(np.concatenate([b.numpy() for b in ds]), arr)


# --- batching -----------------------------------------------------------------------------------
@pytest.mark.parametrize("shuffle_buffer", [None, 8], ids=["ordered", "shuffled"])
@pytest.mark.parametrize("drop_remainder", [False, True])
def test_batches(tmp_path, small_chunks, shuffle_buffer, drop_remainder, row_backend):
    xs = [save(tmp_path / f"x{i}.npy", np.full((n, 3), i, np.int8)) for i, n in enumerate((9, 14))]
    ys = [save(tmp_path / f"y{i}.npy", np.full(n, i, np.int8)) for i, n in enumerate((9, 14))]
    ds = npyio.rows(
        xs,
        ys,
        batch_size=5,
        drop_remainder=drop_remainder,
        shuffle=shuffle_buffer is not None,
        shuffle_buffer=shuffle_buffer,
        seed=1,
    )
    dim = 5 if drop_remainder else None
    assert ds.element_spec == (tf.TensorSpec((dim, 3), tf.int8), tf.TensorSpec((dim,), tf.int8))
    batches = collect(ds)
    assert [len(y) for _, y in batches] == [5] * 4 + ([] if drop_remainder else [3])
    for x, y in batches:
        assert (x == y[:, None]).all()
    if shuffle_buffer is None:
        assert (
            np.concatenate([y for _, y in batches]).tolist()
            == ([0] * 9 + [1] * 14)[: 20 if drop_remainder else 23]
        )


# --- shuffling ----------------------------------------------------------------------------------
def make_indexed(tmp_path: Path, sizes: tuple[int, ...]) -> tuple[list[str], list[str]]:
    """Shards whose rows hold their global row index, as inputs (float32 rows) and labels."""
    xs, ys, start = [], [], 0
    for i, n in enumerate(sizes):
        ids = np.arange(start, start + n)
        xs.append(save(tmp_path / f"x{i}.npy", np.repeat(ids[:, None], 3, 1).astype(np.float32)))
        ys.append(save(tmp_path / f"y{i}.npy", ids.astype(np.int64)))
        start += n
    return xs, ys


def ids_of(ds: tf.data.Dataset) -> list[int]:
    out = []
    for x, y in collect(ds):
        assert (x.reshape(len(np.atleast_1d(y)), -1) == np.atleast_1d(y)[:, None]).all()
        out.extend(np.atleast_1d(y).tolist())
    return out


def test_shuffle_exactly_once_seeded_and_reshuffled(tmp_path, small_chunks, row_backend):
    sizes = (60, 7, 33)
    ds = npyio.rows(
        *make_indexed(tmp_path, sizes), shuffle=True, shuffle_buffer=16, seed=7, batch_size=4
    )
    first, second = ids_of(ds), ids_of(ds)
    assert sorted(first) == sorted(second) == list(range(sum(sizes)))
    assert first != list(range(sum(sizes)))
    assert first != second, "each epoch should get a new order"
    again = npyio.rows(
        *make_indexed(tmp_path, sizes), shuffle=True, shuffle_buffer=16, seed=7, batch_size=4
    )
    assert ids_of(again) == first, "the same seed gives the same sequence of epochs"


def test_shuffle_mixes_a_single_file(tmp_path, small_chunks):
    xs, ys = make_indexed(tmp_path, (400,))
    ids = ids_of(npyio.rows(xs, ys, shuffle=True, shuffle_buffer=8, seed=3, batch_size=None))
    assert sorted(ids) == list(range(400))
    # pieces from all over the file are read at once: early rows come from far apart
    assert max(ids[:40]) - min(ids[:40]) > 100


def test_shuffle_alone_picks_its_window_and_holds_its_order_if_asked(tmp_path, small_chunks):
    xs, ys = make_indexed(tmp_path, (60, 7, 33))
    ds = npyio.rows(xs, ys, shuffle=True, seed=5, batch_size=None)
    first, second = ids_of(ds), ids_of(ds)
    assert sorted(first) == list(range(100)) and first != list(range(100))
    assert first != second, "each epoch should get a new order"
    fixed = npyio.rows(
        xs, ys, shuffle=True, seed=5, reshuffle_each_iteration=False, batch_size=None
    )
    once = ids_of(fixed)
    assert once != list(range(100)) and ids_of(fixed) == once, "the same order every epoch"
    with pytest.raises(ValueError, match=r"shuffle_buffer=8 .* needs shuffle=True"):
        npyio.rows(xs, ys, shuffle_buffer=8)


def test_unshuffled_is_strictly_ordered(tmp_path, small_chunks):
    xs, ys = make_indexed(tmp_path, (31, 5, 64))
    assert ids_of(npyio.rows(xs, ys, batch_size=None)) == list(range(100))


# --- sharding -----------------------------------------------------------------------------------
@pytest.mark.parametrize("sizes", [(100,), (17, 0, 3, 40, 1)], ids=["one-file", "uneven-shards"])
@pytest.mark.parametrize("num_shards", [3])
def test_shard_rows_exactly_once(tmp_path, small_chunks, sizes, num_shards):
    xs, ys = make_indexed(tmp_path, sizes)
    total = sum(sizes)
    parts = [
        ids_of(npyio.rows(xs, ys, shard=(num_shards, i), batch_size=None))
        for i in range(num_shards)
    ]
    assert [i for part in parts for i in part] == list(range(total))  # contiguous, in order
    assert max(map(len, parts)) - min(map(len, parts)) <= 1
    shuffled = [
        ids_of(
            npyio.rows(
                xs,
                ys,
                shard=(num_shards, i),
                shuffle=True,
                shuffle_buffer=4,
                seed=i,
                batch_size=None,
            )
        )
        for i in range(num_shards)
    ]
    assert [sorted(p) for p in shuffled] == parts


def test_shard_input_context_and_more_workers_than_rows(tmp_path):
    xs, ys = make_indexed(tmp_path, (2, 1))
    parts = [
        ids_of(npyio.rows(xs, ys, shard=tf.distribute.InputContext(5, i, 1), batch_size=None))
        for i in range(5)
    ]
    assert Counter(len(p) for p in parts) == {0: 2, 1: 3}
    assert sorted(i for p in parts for i in p) == [0, 1, 2]


# --- build-time errors --------------------------------------------------------------------------
def error_of(excinfo: pytest.ExceptionInfo) -> str:
    return str(excinfo.value)


def test_build_errors_name_the_file(tmp_path):
    good = save(tmp_path / "good.npy", np.zeros((4, 3), "<f4"))
    cases = {
        "scalar": (np.float32(1), "0-d array has no rows"),
        "fortran": (np.asfortranarray(np.zeros((4, 3), "<f4")), "rewrite the file in C order"),
        "dtype": (np.zeros((4, 3), "<f8"), "dtype mismatch -- expected float32, got float64"),
        "rowshape": (np.zeros((4, 2), "<f4"), "row shape mismatch -- expected (3,), got (2,)"),
    }
    for name, (arr, words) in cases.items():
        path = save(tmp_path / f"{name}.npy", arr)
        with pytest.raises(npyio.NpyFormatError) as e:
            npyio.rows([good, path])
        assert path in error_of(e) and words in error_of(e), name
    data = (tmp_path / "good.npy").read_bytes()
    (tmp_path / "short.npy").write_bytes(data[:-1])
    (tmp_path / "long.npy").write_bytes(data + b"\0")
    for name, words in (("short", "payload is shorter"), ("long", "trailing bytes")):
        with pytest.raises(npyio.NpyFormatError, match=words) as e:
            npyio.rows([good, str(tmp_path / f"{name}.npy")])
        assert str(tmp_path / f"{name}.npy") in error_of(e)
    with pytest.raises(npyio.NpyFormatError, match="no such file"):
        npyio.rows([good, str(tmp_path / "missing.npy")])
    (tmp_path / "x.txt").write_text("hello")
    with pytest.raises(npyio.NpyFormatError, match=r"not a \.npy file"):
        npyio.rows(str(tmp_path / "x.txt"))


def test_row_counts_must_match(tmp_path):
    x = save(tmp_path / "x.npy", np.zeros((4, 3)))
    y = save(tmp_path / "y.npy", np.zeros(5))
    with pytest.raises(ValueError, match="same number of rows") as e:
        npyio.rows(x, y)
    assert x in error_of(e) and y in error_of(e)


@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"shard": (2, 2)}, "shard"),
        ({"shard": "x"}, "shard"),
        ({"batch_size": 0}, "batch_size"),
        ({"shuffle": True, "shuffle_buffer": 0}, "shuffle_buffer"),
        ({"shuffle": True, "shuffle_buffer": 2.5}, "shuffle_buffer"),
        ({"num_parallel_reads": 0}, "num_parallel_reads"),
    ],
)
def test_bad_arguments(tmp_path, kwargs, words):
    x = save(tmp_path / "x.npy", np.zeros((4, 3)))
    with pytest.raises((ValueError, TypeError), match=words):
        npyio.rows(x, **kwargs)


def test_no_files(tmp_path):
    with pytest.raises(ValueError, match=r"no \*\.npy files"):
        npyio.rows(str(tmp_path))


# --- files that change after the dataset is built -----------------------------------------------
def append(path: str, n: int) -> None:
    with open(path, "ab") as f:
        f.write(b"\0" * n)


def truncate(path: str, n: int) -> None:
    size = os.path.getsize(path)
    with open(path, "r+b") as f:
        f.truncate(size - n)


ROW = 4 * 4  # bytes in a row of the (1000, 4) float32 file below


@pytest.mark.parametrize(
    "change, words",
    [
        (lambda p: truncate(p, 3), "not an exact multiple of the record length"),
        (lambda p: truncate(p, ROW), "not an exact multiple|file changed size"),
        (lambda p: truncate(p, 50 * ROW), "file changed size"),
        (lambda p: truncate(p, 1000 * ROW), "file changed size"),
        (lambda p: append(p, 5), "not an exact multiple of the record length"),
        (lambda p: append(p, 50 * ROW), "file changed size"),
    ],
    ids=["partial-row", "one-row", "fifty-rows", "all-rows", "grown-partial", "grown-50-rows"],
)
@pytest.mark.parametrize("shuffle_buffer", [None, 10], ids=["ordered", "shuffled"])
def test_file_changed_after_build_is_an_error(
    tmp_path, monkeypatch, change, words, shuffle_buffer, row_backend
):
    """Never short data: FixedLengthRecordDataset refuses a partial record, and npyio's row
    count refuses a file whose size changed by whole rows (both InvalidArgumentError, both
    naming the file)."""
    monkeypatch.setattr(rows_plan, "CHUNK_BYTES", 10 * ROW)
    path = save(tmp_path / "a.npy", np.arange(4000, dtype=np.float32).reshape(1000, 4))
    ds = npyio.rows(
        path,
        shuffle=shuffle_buffer is not None,
        shuffle_buffer=shuffle_buffer,
        seed=0,
        batch_size=None,
    )
    change(path)
    with pytest.raises(tf.errors.InvalidArgumentError) as e:
        collect(ds)
    message = tf_message(e.value)
    assert path in message and re.search(words, message), message


def test_file_changed_in_later_pieces_is_an_error(tmp_path, small_chunks, row_backend):
    """A file cut short before some of its pieces: an OpError (the kind depends on where the
    cut falls: InvalidArgumentError, or InternalError from FixedLengthRecordDataset when a
    piece starts past the new end), never short data."""
    path = save(tmp_path / "a.npy", np.arange(400, dtype=np.float32).reshape(100, 4))
    for cut in (ROW, 30 * ROW, 99 * ROW):
        save(path, np.arange(400, dtype=np.float32).reshape(100, 4))
        ds = npyio.rows(path, shuffle=True, shuffle_buffer=4, seed=1, batch_size=None)
        assert len(rows_plan.pieces([100], 0, 100, 700 // ROW)) > 2
        truncate(path, cut)
        with pytest.raises(tf.errors.OpError):
            collect(ds)


def test_file_removed_after_build(tmp_path, row_backend):
    path = save(tmp_path / "a.npy", np.zeros((3, 2)))
    ds = npyio.rows(path, batch_size=None)
    os.remove(path)
    with pytest.raises(tf.errors.NotFoundError, match=r"a\.npy"):
        collect(ds)


def test_rows_are_read_by_the_reader_layer(tmp_path, monkeypatch):
    """The pipeline asks the reader layer for a reader of row ranges (`Capabilities.rows`): a
    backend that says it reads none is refused, naming it, rather than read around."""
    from npyio._read import CAPABILITIES

    path = save(tmp_path / "a.npy", np.zeros((3, 2)))
    for name in ("native", "graph"):
        monkeypatch.setitem(CAPABILITIES, name, dataclasses.replace(CAPABILITIES[name], rows=False))
    with pytest.raises(ValueError, match=r"backend '(native|graph)' reads no row ranges"):
        npyio.rows(path)


def test_local_rows_read_natively_where_asked_and_remote_or_off_through_the_graph(
    tmp_path, monkeypatch
):
    """Local files read through the native backend's reader of row ranges (the default); files
    on another file system, or with the native reader off or the graph's asked for, through
    ``FixedLengthRecordDataset``."""
    from npyio._sources import rows

    arr = np.arange(12, dtype=np.float32).reshape(6, 2)
    local = save(tmp_path / "a.npy", arr)
    remote = "ram://rows-native/a.npy"
    with tf.io.gfile.GFile(remote, "wb") as f:
        np.save(f, arr)
    monkeypatch.delenv("NPYIO_NATIVE", raising=False)
    native = {"NpyioReadRows", "NpyioReadRanges"}  # batches of rows; pieces of a shuffle by cycles
    assert "NpyioReadRows" in op_types(npyio.rows(local))
    assert "NpyioReadRanges" in op_types(npyio.rows(local, shuffle=True, shuffle_buffer=4))
    monkeypatch.setattr(rows, "_BACKEND", "graph")
    assert not native & op_types(npyio.rows(local))
    monkeypatch.setattr(rows, "_BACKEND", "native")
    assert not native & op_types(npyio.rows(remote))
    monkeypatch.setenv("NPYIO_NATIVE", "0")
    assert not native & op_types(npyio.rows(local))
    for path in (local, remote):
        assert_same(stacked(npyio.rows(path, batch_size=None), arr), arr)


# --- graph only ---------------------------------------------------------------------------------
def test_no_python_ops(tmp_path):
    xs, ys = make_indexed(tmp_path, (5, 3))
    for kwargs in (
        {"batch_size": None},
        {"shuffle": True, "shuffle_buffer": 4, "batch_size": 2, "shard": (2, 1)},
    ):
        ds = npyio.rows(xs, ys, **kwargs)
        types = op_types(ds)
        assert "FixedLengthRecordDatasetV2" in types
        assert not types & CALLBACK_OPS
    ds = npyio.rows(
        save(tmp_path / "big.npy", np.zeros((2, 2), ">c8")), batch_size=None
    )  # the tf.cond path
    assert not op_types(ds) & CALLBACK_OPS


# --- bounded memory -----------------------------------------------------------------------------
_STREAM = textwrap.dedent(
    """
    import json, os, sys
    import numpy as np, tensorflow as tf
    import npyio
    path, = sys.argv[1:]
    PAGE = os.sysconf("SC_PAGE_SIZE")

    def rss():  # resident bytes now
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * PAGE

    def hwm():  # peak resident bytes since the last reset (ru_maxrss survives exec: unusable)
        with open("/proc/self/status") as f:
            return next(int(l.split()[1]) * 1024 for l in f if l.startswith("VmHWM:"))

    def reset():
        try:
            with open("/proc/self/clear_refs", "w") as f:
                f.write("5")
        except OSError:
            pass

    out = {}
    shuffled = {"shuffle": True, "shuffle_buffer": 4096, "seed": 0}
    for name, kwargs in (("ordered", {}), ("shuffled", shuffled)):
        it = iter(npyio.rows(path, batch_size=512, **kwargs))
        first = next(it).numpy()
        n, total = len(first), float(first[:, 0].astype("float64").sum())
        base = rss()
        reset()
        top = base
        for batch in it:
            col = batch.numpy()[:, 0]
            n += len(col)
            total += float(col.astype("float64").sum())
            top = max(top, rss())
        out[name] = {"rows": n, "sum": total, "growth": max(top, hwm()) - base}
    # The control: reading the file whole shows up, so the measure can see a full read.
    base = rss()
    reset()
    data = tf.io.read_file(path)
    out["read_file"] = {"growth": max(rss(), hwm()) - base, "size": int(tf.strings.length(data))}
    print(json.dumps(out))
    """
)


@pytest.mark.slow
def test_streaming_a_large_file_keeps_memory_bounded(tmp_path):
    """A 300 MB file streams with a peak RSS growth far below its size (in a fresh process,
    from the first batch on, with /proc's VmHWM and RSS samples); reading it whole does not."""
    rows_, width = 300 * 1024, 256  # 1 KiB rows: 300 MiB
    path = tmp_path / "large.npy"
    arr = np.lib.format.open_memmap(path, mode="w+", dtype="<f4", shape=(rows_, width))
    for start in range(0, rows_, 32768):
        stop = min(start + 32768, rows_)
        arr[start:stop] = np.arange(start, stop, dtype=np.float32)[:, None]
    arr.flush()
    del arr
    try:
        env = {
            **os.environ,
            "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
            "TF_CPP_MIN_LOG_LEVEL": "2",
        }
        proc = subprocess.run(
            [sys.executable, "-c", _STREAM, str(path)],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
        result = json.loads(proc.stdout.strip().splitlines()[-1])
    finally:
        path.unlink()
    control = result.pop("read_file")
    assert control["growth"] > 250 * 2**20, control
    for name, r in result.items():
        assert r["rows"] == rows_ and r["sum"] == rows_ * (rows_ - 1) / 2, name
        assert r["growth"] < 150 * 2**20, (name, r)


# --- a split's random subset: spans read, the rows between them dropped -----------------------
@pytest.fixture
def counted(tmp_path) -> tuple[list[str], list[str], np.ndarray]:
    """Three files of 23, 0 and 31 rows of 3 float32 (chunks of 8 rows), labels the row ids."""
    xs, ys, parts, start = [], [], [], 0
    for i, n in enumerate((23, 0, 31)):
        x = sample("<f4", (n, 3), seed=i)
        xs.append(save(tmp_path / f"x{i}.npy", x))
        ys.append(save(tmp_path / f"y{i}.npy", np.arange(start, start + n)))
        parts.append(x)
        start += n
    return xs, ys, np.concatenate(parts)


@pytest.mark.parametrize("shard", [None, (2, 1)])
@pytest.mark.parametrize("batch", [None, 5])
def test_a_random_subset_yields_its_rows_ascending(
    counted, small_chunks, shard, batch, row_backend
):
    xs, ys, every = counted
    subset = np.sort(np.random.RandomState(3).permutation(len(every))[:40])
    whole = rows_plan.plan_rows(xs, ys, DatasetOptions(loader=LoaderOptions(batch_size=batch)))
    assert not isinstance(whole, tuple)
    runs = rows_plan.row_runs(subset)
    cut, keep = rows_plan.subset_pieces([23, 0, 31], runs, shard, None, 12)
    assert keep is not None and len(cut) <= 2  # a piece per file, not one per run
    mine = tuple(rows_plan.shard_runs(runs, shard))
    ds = build_rows(dataclasses.replace(whole, pieces=tuple(cut), keep=keep, runs=mine))
    want = [a + r for a, e in rows_plan.shard_runs(runs, shard) for r in range(e - a)]
    got = collect(ds.unbatch() if batch else ds)
    assert [int(y) for _, y in got] == want and len(ds) == -(-len(want) // (batch or 1))
    assert_same(np.stack([x for x, _ in got]), every[want])


@pytest.mark.parametrize("buffer", [None, 16], ids=["by-row", "by-cycles"])
def test_a_shuffled_split_yields_the_rows_of_its_subsets(
    counted, small_chunks, row_backend, buffer
):
    xs, ys, every = counted
    subsets = npyio.rows(
        xs,
        ys,
        shuffle=True,
        shuffle_buffer=buffer,
        seed=2,
        validation_split=0.25,
        subset="both",
        batch_size=3,
    )
    order = np.random.RandomState(2).permutation(len(every))  # the split's
    for ds, want in zip(subsets, (order[:41], order[41:])):
        x, y = (np.concatenate(part) for part in zip(*collect(ds)))
        assert sorted(y.tolist()) == sorted(want.tolist())
        assert sum(1 for _ in ds) == -(-len(want) // 3)
        assert_same(x, every[y])


@pytest.mark.parametrize("shuffle", [False, True], ids=["ordered", "shuffled"])
def test_files_of_either_byte_order_read_row_by_row(tmp_path, row_backend, shuffle):
    """Each row decodes in its own file's byte order when a batch's runs span files of both
    (read as units by either reader, in order and shuffled)."""
    every = np.arange(40 * 3, dtype="<f4").reshape(40, 3)
    xs = [
        save(tmp_path / "x0.npy", every[:15]),
        save(tmp_path / "x1.npy", every[15:].astype(">f4")),
    ]
    ys = [
        save(tmp_path / "y0.npy", np.arange(15)),
        save(tmp_path / "y1.npy", np.arange(15, 40).astype(">i8")),
    ]
    got = collect(npyio.rows(xs, ys, batch_size=7, shuffle=shuffle, seed=3))
    x, y = (np.concatenate(part) for part in zip(*got))
    assert sorted(y.tolist()) == list(range(40)) and (y.tolist() != sorted(y.tolist())) == shuffle
    assert_same(x, every[y])
