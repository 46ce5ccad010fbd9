"""``ignore_errors=True`` keeps the native reader: it reads batches, and only the elements of the
files it doubts go to the graph reader's skip-and-report. The survivors, their order, their
batches and the skip lines are the graph reader's (``backend="graph"`` reads every file so).
Lying headers and many refusals are in tests/graph/test_decode_limits.py."""

from __future__ import annotations

import os
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

import npyio
from npyio._graph.decode import SKIP_PREFIX
from npyio._pipeline.options import DatasetOptions
from npyio._read.backends import available
from npyio._sources import dataset as dataset_module
from npyio._sources.plan import BATCH_THEN_DECODE, plan
from tests._graph_util import graph_def, op_types
from tests._npy_testing import header_text, with_header

pytestmark = pytest.mark.skipif(not available("native"), reason="the native reader is not built")

N = 40


def _pairs(root: Path) -> tuple[str, str]:
    """N pairs (x: 3 float32 of the id, y: the id), written before the dataset is built."""
    for side in ("x", "y"):
        (root / side).mkdir()
    for i in range(N):
        np.save(root / "x" / f"{i:02d}.npy", np.full(3, i, np.float32))
        np.save(root / "y" / f"{i:02d}.npy", np.int64(i))
    return str(root / "x"), str(root / "y")


def _spoil(root: Path) -> None:
    """After the datasets are built: bad inputs, bad labels of good inputs, missing files, and
    files the kernel doubts that the graph reads (another byte order, another header)."""
    (root / "x" / "03.npy").write_bytes(b"junk")
    np.save(root / "x" / "07.npy", np.full(3, 7, np.float64))
    (root / "y" / "11.npy").write_bytes(b"\x93NUMPY\x01\x00")  # a bad label of a good input
    np.save(root / "y" / "12.npy", np.int32(12))
    os.remove(root / "x" / "20.npy")
    os.remove(root / "y" / "21.npy")
    np.save(root / "x" / "25.npy", np.full(3, 25, ">f4"))  # doubted, read by the graph
    with open(root / "x" / "26.npy", "wb") as f:  # a version 2.0 header: doubted, read
        np.lib.format.write_array(f, np.full(3, 26, np.float32), version=(2, 0))


def _elements(ds: tf.data.Dataset) -> list[list[list[object]]]:
    return [[np.asarray(t).tolist() for t in tf.nest.flatten(e)] for e in ds]


def _samples(epochs: list[list[list[object]]]) -> list[list[str]]:
    """Each epoch's samples (a batch's rows), sorted."""
    out = []
    for epoch in epochs:
        rows = [str(row) for e in epoch for row in zip(*e, strict=True)]
        out.append(sorted(rows))
    return out


KWARGS = [
    {"batch_size": 8},
    {"batch_size": 8, "drop_remainder": True},
    {"batch_size": 5, "shuffle": True, "seed": 3},
    {"batch_size": None, "shuffle": True, "seed": 4},
    {"batch_size": 4, "with_paths": True, "num_parallel_calls": 3, "deterministic": False},
]


@pytest.fixture(params=[1, 8, dataset_module.SKIP_BLOCK], ids=lambda n: f"block{n}")
def block(request, monkeypatch) -> int:
    """The most rows read at a time: one batch (one row without ``batch_size``), blocks of a
    few rows, some clean and some with doubted files, or every pair in one block."""
    monkeypatch.setattr(dataset_module, "SKIP_BLOCK", request.param)
    return request.param


@pytest.mark.parametrize("kwargs", KWARGS, ids=repr)
def test_the_native_reader_skips_what_the_graph_reader_skips(tmp_path, capfd, kwargs, block):
    x, y = _pairs(tmp_path)
    native = npyio.dataset(x, y, ignore_errors=True, **kwargs)
    graph = npyio.dataset(x, y, ignore_errors=True, backend="graph", **kwargs)
    assert native.element_spec == graph.element_spec
    _spoil(tmp_path)
    capfd.readouterr()
    got = [_elements(native) for _ in range(2)]  # two epochs: the same skips each
    native_lines = Counter(ln for ln in capfd.readouterr().err.splitlines() if SKIP_PREFIX in ln)
    want = [_elements(graph) for _ in range(2)]
    graph_lines = Counter(ln for ln in capfd.readouterr().err.splitlines() if SKIP_PREFIX in ln)
    if kwargs.get("deterministic") is False:  # the same samples, in any order
        assert _samples(got) == _samples(want)
    else:
        assert got == want
    assert native_lines == graph_lines
    skipped = {f"x/{i:02d}.npy" for i in (3, 7, 20)} | {f"y/{i:02d}.npy" for i in (11, 12, 21)}
    paths = {line.split(SKIP_PREFIX, 1)[1].split(": ")[0] for line in native_lines}
    named = {os.path.relpath(path, tmp_path) for path in paths}
    assert named == skipped, native_lines
    assert all(count == 2 for count in native_lines.values()), native_lines
    ids = [i for e in got[0] for i in np.reshape(e[1], -1).tolist()]
    survivors = set(range(N)) - {3, 7, 11, 12, 20, 21}
    if kwargs.get("drop_remainder"):  # the last, short batch of survivors is dropped
        assert set(ids) <= survivors and len(ids) == len(survivors) // 8 * 8
    else:
        assert sorted(ids) == sorted(survivors)


@pytest.mark.parametrize("batch_size", [8, None])
def test_the_plan_keeps_the_native_reader_and_reads_batches(tmp_path, batch_size):
    x, y = _pairs(tmp_path)
    options = DatasetOptions.from_arguments(
        {"ignore_errors": True, "batch_size": batch_size, "backend": "native"}
    )
    planned = plan(x, y, options)
    assert not isinstance(planned, tuple)
    assert (planned.backend, planned.strategy) == ("native", BATCH_THEN_DECODE)
    ds = npyio.dataset(x, y, ignore_errors=True, batch_size=batch_size)
    types = op_types(ds)
    assert "NpyioReadFiles" in types  # the kernel reads the batches
    assert "IgnoreErrorsDataset" in types  # where the doubted elements are skipped


def test_a_random_crop_with_ignore_errors_reads_the_same_windows(tmp_path, capfd, block):
    for side in ("x", "y"):
        (tmp_path / side).mkdir()
    for i in range(N):
        np.save(tmp_path / "x" / f"{i:02d}.npy", np.arange(64, dtype=np.float32) + 1000 * i)
        np.save(tmp_path / "y" / f"{i:02d}.npy", np.int64(i))
    kwargs = {"crop": (8,), "label_crop": None, "seed": 5, "batch_size": 6, "shuffle": True}
    native = npyio.dataset(str(tmp_path / "x"), str(tmp_path / "y"), ignore_errors=True, **kwargs)
    graph = npyio.dataset(
        str(tmp_path / "x"), str(tmp_path / "y"), ignore_errors=True, backend="graph", **kwargs
    )
    (tmp_path / "x" / "05.npy").write_bytes(b"junk")
    np.save(tmp_path / "x" / "09.npy", np.arange(64, dtype=">f4") + 9000)  # doubted, read
    assert _elements(native) == _elements(graph)
    assert capfd.readouterr().err.count(SKIP_PREFIX) == 2


@pytest.mark.parametrize(
    "batch_size, pairs, steps",
    [(4, N, 3), (4, 300, 68), (None, N, 3), (None, 300, 280)],
    ids=["batch-mid", "batch-near-the-end", "unbatched-mid", "unbatched-near-the-end"],
)
def test_a_checkpoint_with_ignore_errors_restores_exactly(
    tmp_path, batch_size, pairs, steps, monkeypatch, block
):
    """After a second of read-ahead (which reaches the epoch's end, but in the first case): the
    rest of the epoch and the next epoch's order. (Blocks cut into smaller elements lost the
    next epoch's order behind a ``flat_map``: `npyio._pipeline.map.interleave` says why.)"""
    monkeypatch.setattr(sys.modules[__name__], "N", pairs)
    x, y = _pairs(tmp_path)
    ds = npyio.dataset(x, y, ignore_errors=True, batch_size=batch_size, shuffle=True, seed=2)
    ds = ds.repeat(2)
    _spoil(tmp_path)
    it = iter(ds)
    for _ in range(steps):
        next(it)
    time.sleep(1)
    saved = tf.train.Checkpoint(iterator=it).write(str(tmp_path / "ckpt" / "c"))
    rest = _elements(it)
    again = iter(ds)
    tf.train.Checkpoint(iterator=again).read(saved).assert_consumed()
    assert _elements(again) == rest


def test_the_length_is_unknown(tmp_path):
    """How many pairs survive is known only once their files are read (docs/errors.md)."""
    x, y = _pairs(tmp_path)
    assert npyio.dataset(x, y, batch_size=8).cardinality().numpy() == 5
    ds = npyio.dataset(x, y, ignore_errors=True, batch_size=8)
    assert ds.cardinality().numpy() == tf.data.UNKNOWN_CARDINALITY


@pytest.mark.parametrize("batch_size", [2, None])
def test_a_header_claiming_a_terabyte_is_skipped_without_allocating_it(tmp_path, capfd, batch_size):
    """The declared shape is 1 TB: the kernel allocates nothing (no file has that size) and
    the graph reader refuses each file by its own words; no int32 shape of those dims is ever
    taken (it used to raise 'Shape output type is 32-bit')."""
    path = tmp_path / "claims-1TB.npy"
    path.write_bytes(with_header(header_text("<f8", False, (125_000_000_000,)), bytes(16)))
    kwargs = {"dtype": "float64", "shape": (125_000_000_000,), "batch_size": batch_size}
    planned = plan(
        [str(path)] * 3, None, DatasetOptions.from_arguments({"ignore_errors": True, **kwargs})
    )
    assert not isinstance(planned, tuple) and planned.backend == "native"
    ds = npyio.dataset([str(path)] * 3, ignore_errors=True, **kwargs)
    capfd.readouterr()
    assert list(ds) == []
    lines = [ln for ln in capfd.readouterr().err.splitlines() if SKIP_PREFIX in ln]
    assert len(lines) == 3 and all(f"{SKIP_PREFIX}{path}: " in ln for ln in lines), lines


def test_a_block_of_doubted_files_keeps_the_ones_the_graph_accepts(tmp_path, capfd, block):
    """Every file of a block doubted (another byte order), one of them bad: the others are
    decoded by the graph reader, in their places among the kernel's."""
    x, y = _pairs(tmp_path)
    kwargs = {"batch_size": 8, "shuffle": True, "seed": 1}
    native = npyio.dataset(x, y, ignore_errors=True, **kwargs)
    graph = npyio.dataset(x, y, ignore_errors=True, backend="graph", **kwargs)
    for i in range(0, N, 2):
        np.save(tmp_path / "x" / f"{i:02d}.npy", np.full(3, i, ">f4"))
    (tmp_path / "x" / "10.npy").write_bytes(b"junk")
    capfd.readouterr()
    got = _elements(native)
    assert capfd.readouterr().err.count(SKIP_PREFIX) == 1
    assert got == _elements(graph)
    assert sorted(i for e in got for i in e[1]) == [i for i in range(N) if i != 10]


def test_a_file_that_cannot_be_read_skips_its_pair_alone(tmp_path, capfd):
    """A directory named ``*.npy`` fails TensorFlow's read (no npyio line: its log names it,
    as for the graph reader); the rest of its block survives."""
    x, y = _pairs(tmp_path)
    native = npyio.dataset(x, y, ignore_errors=True, batch_size=8)
    graph = npyio.dataset(x, y, ignore_errors=True, batch_size=8, backend="graph")
    os.remove(tmp_path / "x" / "05.npy")
    (tmp_path / "x" / "05.npy").mkdir()
    (tmp_path / "x" / "06.npy").write_bytes(b"junk")
    got = _elements(native)
    assert got == _elements(graph)
    assert [i for e in got for i in e[1]] == [i for i in range(N) if i not in (5, 6)]
    assert capfd.readouterr().err.count(SKIP_PREFIX) == 2  # 06, once per pipeline


def test_no_refusal_raises_an_error(tmp_path):
    """The native reader's pipeline skips without an error per refused file: no
    ``IgnoreErrorsDataset`` at its top level (only the one around the doubted files'
    fetches, for files that cannot be read at all), and no ``Dataset.map``, whose function
    tf.data would optimize again at every iterator start."""
    x, y = _pairs(tmp_path)
    ds = npyio.dataset(x, y, ignore_errors=True, batch_size=8)
    nodes = [n.op for n in graph_def(ds).node]
    assert "IgnoreErrorsDataset" not in nodes and "MapDataset" not in nodes
    assert "InterleaveDataset" in nodes and "RebatchDatasetV2" in nodes
