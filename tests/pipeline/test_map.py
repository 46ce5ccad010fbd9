"""npyio._pipeline.map: Dataset.map, flat_map and interleave semantics, run as single-device
functions."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

import npyio
from npyio._pipeline.map import flat_map, interleave, parallel_map
from npyio._tf import SINGLE_DEVICE
from tests._graph_util import graph_def


def _map_functions(ds: tf.data.Dataset) -> list[tf.compat.v1.FunctionDef]:
    """The functions of the map (and map-and-batch) nodes in ``ds``'s graph, and the fallback
    of the native batch source (``NpyioBatchDataset``)."""
    gd = graph_def(ds)
    names = {n.attr["f"].func.name for n in gd.node if "Map" in n.op}
    names |= {n.attr["fallback"].func.name for n in gd.node if n.op == "NpyioBatchDataset"}
    return [f for f in gd.library.function if f.signature.name in names]


@pytest.mark.parametrize("calls", [None, 1, 3, tf.data.AUTOTUNE])
def test_same_elements_as_dataset_map(calls):
    ds = tf.data.Dataset.range(50).map(lambda i: (i, tf.strings.as_string(i)))

    def fn(i, s):
        return {"sum": i * 2}, (tf.strings.join([s, "!"]), tf.fill([2], i))

    order = None if calls is None else True
    ours = parallel_map(ds, fn, calls, deterministic=order)
    theirs = ds.map(fn, num_parallel_calls=calls, deterministic=order)
    assert ours.element_spec == theirs.element_spec
    assert ours.cardinality().numpy() == 50
    got, want = list(ours.as_numpy_iterator()), list(theirs.as_numpy_iterator())
    assert len(got) == len(want) == 50
    for a, b in zip(got, want):
        tf.nest.map_structure(np.testing.assert_array_equal, a, b)


def test_single_argument_and_captured_tensors():
    table = tf.constant([10, 20, 30], tf.int64)
    ds = parallel_map(tf.data.Dataset.range(3), lambda i: tf.gather(table, i))
    assert list(ds.as_numpy_iterator()) == [10, 20, 30]


def test_unordered_keeps_every_element():
    ds = parallel_map(tf.data.Dataset.range(500), lambda i: i + 1, 4, deterministic=False)
    assert sorted(ds.as_numpy_iterator()) == list(range(1, 501))


def test_refuses_ragged_elements():
    ds = tf.data.Dataset.from_tensors(tf.ragged.constant([[1], [2, 3]]))
    with pytest.raises(TypeError, match="dense tensor elements"):
        parallel_map(ds, lambda r: r)


def test_function_carries_the_single_device_attributes():
    ds = parallel_map(tf.data.Dataset.range(3), lambda i: i * 2, 2)
    (f,) = _map_functions(ds)
    for key, value in SINGLE_DEVICE.items():
        assert f.attr[key].b is value, key


def test_npyio_dataset_maps_are_single_device_except_ignore_errors(tmp_path):
    # The decode maps must keep the attributes (they save Grappler and partitioning at every
    # iterator start); ignore_errors and the py_function baseline use Dataset.map.
    for i in range(4):
        np.save(tmp_path / f"{i}.npy", np.full((2, 2), i, np.float32))
        np.save(tmp_path / f"big{i}.npy", np.zeros((400, 400), np.float32))  # per-file path
    small = sorted(str(p) for p in tmp_path.glob("?.npy"))
    big = sorted(str(p) for p in tmp_path.glob("big*.npy"))

    def single_device(ds: tf.data.Dataset) -> list[bool]:
        return [f.attr["experimental_ints_on_device"].b for f in _map_functions(ds)]

    # the graph parser: a map that fetches each file, then one that decodes each batch; the
    # native reader: its batch source's fallback (called only for a batch with a doubted file),
    # or one map per batch of paths (large files, here too), nothing per element
    assert single_device(npyio.dataset(small, batch_size=2, backend="graph")) == [True, True]
    assert single_device(npyio.dataset(small, batch_size=2)) == [True]
    assert single_device(npyio.dataset(small, batch_size=None)) == [True]
    assert single_device(npyio.dataset(big, batch_size=2)) == [True]
    # ignore_errors: the graph parser's Dataset.map; the native reader's map of its blocks and
    # the map that keeps their survivors (the doubted files' fetches are inside an interleave)
    graph = npyio.dataset(small, ignore_errors=True, batch_size=None, backend="graph")
    assert single_device(graph) == [False]
    assert single_device(npyio.dataset(small, ignore_errors=True, batch_size=None)) == [True, True]
    assert single_device(npyio.dataset(small, backend="py_function", batch_size=None)) == [False]


def test_pipelines_built_inside_a_tf_function(tmp_path):
    # tf.data optimizes the functions of a pipeline built inside a tf.function; a map function
    # with an int32 output among several, with both experimental_ints_on_device and
    # _tf_data_function set, failed there ("Expected only one fetch node"), so the maps carry
    # only the first.
    xs, ys = [], []
    for i in range(5):
        xs.append(str(tmp_path / f"x{i}.npy"))
        ys.append(str(tmp_path / f"y{i}.npy"))
        np.save(xs[-1], np.full((2, 2), i, np.float32))
        np.save(ys[-1], np.int32(i))

    @tf.function
    def totals():
        pairs = parallel_map(tf.data.Dataset.range(3), lambda i: (i, tf.cast(i * 2, tf.int32)))
        pair_total = pairs.reduce(tf.constant(0, tf.int32), lambda a, e: a + e[1])
        ds = npyio.dataset(
            xs, ys, dtype="float32", shape=(2, 2), label_dtype="int32", label_shape=(), batch_size=2
        )
        label_total = ds.reduce(tf.constant(0, tf.int32), lambda a, e: a + tf.reduce_sum(e[1]))
        return pair_total, label_total

    assert [t.numpy() for t in totals()] == [6, 10]


def _inner(i: tf.Tensor, s: tf.Tensor) -> tf.data.Dataset:
    """A dataset of a different length per element, with a captured tensor."""
    table = tf.constant([5, 1, 3], tf.int64)
    n = tf.gather(table, i % 3)
    return tf.data.Dataset.range(n).map(lambda k: (i * 100 + k, s))


@pytest.mark.parametrize("calls", [1, tf.data.AUTOTUNE])
@pytest.mark.parametrize("cycle, block", [(1, 1), (2, 1), (3, 2)])
def test_flat_map_and_interleave_give_dataset_s_elements(calls, cycle, block):
    ds = tf.data.Dataset.range(7).map(lambda i: (i, tf.strings.as_string(i)))
    theirs = ds.interleave(
        _inner, cycle_length=cycle, block_length=block, num_parallel_calls=calls, deterministic=True
    )
    ours = interleave(ds, _inner, cycle, calls, block_length=block)
    assert ours.element_spec == theirs.element_spec
    assert list(ours.as_numpy_iterator()) == list(theirs.as_numpy_iterator())
    flat = flat_map(ds, _inner)
    assert list(flat.as_numpy_iterator()) == list(ds.flat_map(_inner).as_numpy_iterator())


def test_shuffled_rows_read_pieces_through_a_single_device_interleave(tmp_path):
    # the function that makes every piece's dataset, started again at each iterator start
    np.save(tmp_path / "x.npy", np.arange(64, dtype=np.float32).reshape(32, 2))
    ds = npyio.rows(
        str(tmp_path / "x.npy"), shuffle=True, shuffle_buffer=4, seed=1, batch_size=None
    )
    gd = graph_def(ds)
    names = {n.attr["f"].func.name for n in gd.node if "Interleave" in n.op}
    names |= {
        n.attr["f"].func.name
        for f in gd.library.function
        for n in f.node_def
        if "Interleave" in n.op
    }
    functions = [f for f in gd.library.function if f.signature.name in names]
    assert functions and all(f.attr["experimental_ints_on_device"].b for f in functions)
    assert sorted(x[0] for x in ds.as_numpy_iterator()) == list(range(0, 64, 2))
