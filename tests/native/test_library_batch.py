"""The dataset op `NpyioBatchDataset` (``npyio/_native/src/batch_dataset.cc``), through
`npyio.dataset`, whose files of one static shape on the local disk it reads: batches equal to
the graph path's, the files it doubts decided by the graph path (its values or its error, naming
the file), exact resume from checkpoints that hold units, not data, and a graph that serializes.
"""

from __future__ import annotations

import gc
import os
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf
from tensorflow.core.framework import graph_pb2

import npyio

pytestmark = pytest.mark.usefixtures("native_ops")


def _ops(ds: tf.data.Dataset) -> list[str]:
    graph = graph_pb2.GraphDef()
    graph.ParseFromString(ds._as_serialized_graph().numpy())
    return [node.op for node in graph.node if node.op.endswith("Dataset")]


def _flat(ds: tf.data.Dataset) -> list[list[np.ndarray]]:
    return [[np.asarray(t) for t in tf.nest.flatten(e)] for e in ds]


def _same(a: tf.data.Dataset, b: tf.data.Dataset) -> None:
    got, want = _flat(a), _flat(b)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert len(g) == len(w)
        for x, y in zip(g, w):
            assert x.dtype == y.dtype and x.shape == y.shape
            if x.dtype == object:  # paths
                assert x.tolist() == y.tolist()
            else:
                assert x.tobytes() == y.tobytes()


@pytest.fixture(scope="module")
def pairs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """37 pairs with unpadded names (so sorted by name: 0, 1, 10, 11, ...) and a stray file."""
    root = tmp_path_factory.mktemp("pairs")
    rng = np.random.default_rng(0)
    for d in ("x", "y"):
        (root / d).mkdir()
    for i in range(37):
        np.save(root / "x" / f"{i}.npy", rng.random((6, 5), np.float32))
        np.save(root / "y" / f"{i}.npy", rng.integers(0, 9, (3,), np.int16))
    (root / "x" / "notes.txt").write_text("not an array")
    return root / "x", root / "y"


@pytest.mark.parametrize("batch_size", [1, 8, 37, 64])
@pytest.mark.parametrize("drop_remainder", [False, True])
def test_batches_equal_the_graph_paths(pairs, batch_size, drop_remainder):
    x, y = pairs
    common = dict(batch_size=batch_size, drop_remainder=drop_remainder, shuffle=True, seed=5)
    native = npyio.dataset(str(x), str(y), **common)
    assert "NpyioBatchDataset" in _ops(native)
    _same(native, npyio.dataset(str(x), str(y), backend="graph", **common))
    lead = batch_size if drop_remainder else None
    assert native.element_spec[0].shape.as_list() == [lead, 6, 5]
    batches = 37 // batch_size if drop_remainder else -(-37 // batch_size)
    assert int(native.cardinality()) == batches


def test_dicts_values_and_paths_take_their_places(pairs):
    x, _ = pairs
    common = dict(batch_size=5, with_paths=True)
    files = [str(x / f"{i}.npy") for i in range(37)]  # a list keeps the values' order
    inputs, labels = {"a": files, "b": files}, list(range(37))
    native = npyio.dataset(inputs, labels, **common)
    assert "NpyioBatchDataset" in _ops(native)
    _same(native, npyio.dataset(inputs, labels, backend="graph", **common))
    first = next(iter(native))
    assert set(first[0]) == {"a", "b"} and first[1].numpy().tolist() == [0, 1, 2, 3, 4]
    assert first[2].numpy()[1].decode().endswith(os.sep + "1.npy")


def test_large_batches_read_on_the_pool_equal_the_graph_paths(tmp_path):
    # 24 files of 128 KiB: a batch of 16 passes the op's 1 MiB, so its reads go to the pool
    rng = np.random.default_rng(1)
    for i in range(24):
        np.save(tmp_path / f"{i:02d}.npy", rng.random((128, 256), np.float32))
    native = npyio.dataset(str(tmp_path), batch_size=16)
    assert "NpyioBatchDataset" in _ops(native)
    _same(native, npyio.dataset(str(tmp_path), batch_size=16, backend="graph"))


def test_files_it_doubts_are_the_graph_paths_values(tmp_path):
    # the same arrays in headers the kernel does not compare equal to the first file's
    rng = np.random.default_rng(2)
    arrays = [rng.random((4, 3), np.float32) for _ in range(12)]
    for i, a in enumerate(arrays):
        np.save(tmp_path / f"{i:02d}.npy", a)
    np.save(tmp_path / "03.npy", arrays[3].astype(">f4"))  # byte-swapped
    np.save(tmp_path / "07.npy", np.asfortranarray(arrays[7]))  # Fortran order
    # a header with other padding (another writer): version 2.0, same dict
    with open(tmp_path / "09.npy", "wb") as f:
        np.lib.format.write_array(f, arrays[9], version=(2, 0))
    ds = npyio.dataset(str(tmp_path), batch_size=5)
    assert "NpyioBatchDataset" in _ops(ds)
    got = np.concatenate([b.numpy() for b in ds])
    np.testing.assert_array_equal(got, np.stack(arrays))


def test_a_bad_file_fails_with_the_graph_paths_error_naming_it(tmp_path):
    rng = np.random.default_rng(3)
    for i in range(10):
        np.save(tmp_path / f"{i}.npy", rng.random((4, 3), np.float32))
    (tmp_path / "6.npy").write_bytes((tmp_path / "6.npy").read_bytes()[:-4])  # truncated
    native = npyio.dataset(str(tmp_path), batch_size=4)
    assert "NpyioBatchDataset" in _ops(native)
    graph = npyio.dataset(str(tmp_path), batch_size=4, backend="graph")
    errors = []
    for ds in (native, graph):
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            list(ds)
        errors.append(info.value.message.splitlines()[0])
    # the graph path's words (TensorFlow prefixes the map's with where its function ran)
    reason = errors[1][errors[1].index("assertion failed: ") :]
    assert str(tmp_path / "6.npy") in reason and errors[0].endswith(reason)


@pytest.mark.parametrize("symbolic", [False, True])
def test_resume_is_exact_and_the_checkpoint_holds_units_not_data(pairs, tmp_path, symbolic):
    x, y = pairs
    ds = npyio.dataset(str(x), str(y), batch_size=4, shuffle=True, seed=9)
    if symbolic:
        options = tf.data.Options()
        options.experimental_symbolic_checkpoint = True
        ds = ds.with_options(options)
    it = iter(ds)
    for _ in range(3):
        next(it)
    path = tf.train.Checkpoint(it=it).write(str(tmp_path / "ckpt"))
    rest = [e[0].numpy() for e in it]
    again = iter(ds)
    tf.train.Checkpoint(it=again).read(path).assert_consumed()
    resumed = [e[0].numpy() for e in again]
    assert len(resumed) == len(rest) == 7
    for a, b in zip(resumed, rest):
        np.testing.assert_array_equal(a, b)
    size = sum(p.stat().st_size for p in tmp_path.glob("ckpt*"))
    # the batches in flight are saved as their units (paths), not their 4x(6x5) data
    assert size < 16 * 1024


def test_the_graph_serializes_and_reloads(pairs, tmp_path):
    x, y = pairs
    ds = npyio.dataset(str(x), str(y), batch_size=8)
    ds.save(str(tmp_path / "saved"))
    loaded = tf.data.Dataset.load(str(tmp_path / "saved"))
    _same(loaded, ds)


def test_an_iterator_deleted_mid_epoch_stops_its_reads(pairs):
    x, y = pairs
    ds = npyio.dataset(str(x), str(y), batch_size=2)
    for _ in range(20):
        it = iter(ds)
        next(it)
        del it
        gc.collect()
    assert len(list(ds)) == 19
