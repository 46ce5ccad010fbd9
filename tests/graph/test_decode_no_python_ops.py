"""Nothing in the graph path uses tf.py_function, tf.numpy_function or from_generator.

The op walker (``tests._graph_util``) looks into every nested function; the sanity tests show it
does find Python callbacks where there are some, so these tests can fail.
"""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

import npyio
from tests._graph_util import PYTHON_OPS, graph_def, op_types, python_ops
from tests._npy_testing import npy_bytes, write_file

#: Ops that only appear if the walker reached into cond branches / mapped functions.
NESTED = {"Assert", "DecodeRaw", "Transpose"}

SHAPES = [None, (2, None), (2, 3)]
SHAPE_IDS = ["any-shape", "partial-shape", "static-shape"]


@pytest.mark.parametrize("shape", SHAPES, ids=SHAPE_IDS)
@pytest.mark.parametrize("dtype", ["float32", "uint64", "bool"])
def test_decode_npy_in_tf_function(dtype, shape):
    scalar = tf.function(
        lambda b: npyio.decode_npy(b, dtype, shape), input_signature=[tf.TensorSpec([], tf.string)]
    )
    batch = tf.function(
        lambda b: npyio.decode_npy(b, dtype, shape),
        input_signature=[tf.TensorSpec([None], tf.string)],
    )
    for fn in (scalar, batch):
        types = op_types(fn)
        assert not types & PYTHON_OPS
        assert types >= NESTED, NESTED - types
        assert types & {"RegexFullMatch", "StaticRegexFullMatch"}


@pytest.mark.parametrize("shape", SHAPES, ids=SHAPE_IDS)
def test_read_npy_in_tf_function(shape):
    fn = tf.function(
        lambda p: npyio.read_npy(p, tf.int16, shape), input_signature=[tf.TensorSpec([], tf.string)]
    )
    types = op_types(fn.get_concrete_function())
    assert not types & PYTHON_OPS
    assert {"ReadFile", *NESTED} <= types


@pytest.mark.parametrize("shape", SHAPES, ids=SHAPE_IDS)
def test_read_npy_in_dataset_map(tmp_path, shape):
    paths = [write_file(tmp_path, f"{i}.npy", npy_bytes(np.zeros((2, 3), "<f8"))) for i in range(3)]
    ds = (
        tf.data.Dataset.from_tensor_slices(paths)
        .map(lambda p: npyio.read_npy(p, "float64", shape), num_parallel_calls=4)
        .batch(2)
        .prefetch(1)
    )
    types = op_types(ds)
    assert not types & PYTHON_OPS
    assert {"ParallelMapDatasetV2", "ReadFile", *NESTED} <= types
    # It serializes with no external state at all (a py_function would be external state).
    graph_def(ds, external_state_policy=tf.data.experimental.ExternalStatePolicy.FAIL)
    assert sum(int(b.shape[0]) for b in ds) == 3


def test_decode_npy_batched_dataset():
    files = [npy_bytes(np.ones((4,), ">u4"))] * 6
    ds = (
        tf.data.Dataset.from_tensor_slices(files)
        .batch(3)
        .map(lambda b: npyio.decode_npy(b, tf.uint32, (4,)))
    )
    assert not python_ops(ds)
    assert op_types(ds) >= NESTED
    assert [b.shape for b in ds] == [(3, 4), (3, 4)]


# --- the walker can fail -------------------------------------------------------------------------
def test_walker_finds_py_function_in_dataset():
    ds = tf.data.Dataset.range(3).map(lambda x: tf.py_function(lambda y: y, [x], tf.int64))
    assert python_ops(ds) == {"EagerPyFunc"}
    with pytest.raises(tf.errors.FailedPreconditionError, match="EagerPyFunc is stateful"):
        graph_def(ds, external_state_policy=tf.data.experimental.ExternalStatePolicy.FAIL)


def test_walker_finds_numpy_function_in_nested_cond():
    @tf.function(input_signature=[tf.TensorSpec([], tf.int64)])
    def fn(x):
        return tf.cond(x > 0, lambda: tf.numpy_function(lambda y: y, [x], tf.int64), lambda: x)

    assert "PyFunc" in python_ops(fn)
    gd = graph_def(fn)
    assert "PyFunc" not in {n.op for n in gd.node}  # only inside the branch function


def test_walker_finds_from_generator():
    ds = tf.data.Dataset.from_generator(
        lambda: iter([1, 2]), output_signature=tf.TensorSpec([], tf.int32)
    )
    assert "GeneratorDataset" in python_ops(ds)


def test_walker_finds_npyio_inside_a_python_callback_free_map_of_a_map():
    """npyio called from a tf.function called from Dataset.map: two levels of nesting."""
    inner = tf.function(
        lambda b: npyio.decode_npy(b, "int8"), input_signature=[tf.TensorSpec([], tf.string)]
    )
    ds = tf.data.Dataset.from_tensors(npy_bytes(np.arange(3, dtype="i1"))).map(inner)
    assert op_types(ds) >= NESTED
    assert not python_ops(ds)
