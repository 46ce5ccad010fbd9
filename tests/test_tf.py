"""npyio._tf: TensorFlow's internals behind one module. Its error text read in one place,
pinned to the forms this TensorFlow writes; the raw ops and private names npyio uses, each
doing what npyio's callers rely on."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

from npyio import _tf


def test_undecorated_drops_the_function_node_and_the_op():
    message = "{{function_node __inference_f_12}} a.npy; Is a directory [Op:ReadFile] name: "
    assert _tf.undecorated(message) == "a.npy; Is a directory"
    assert _tf.undecorated("plain") == "plain"


def test_undecorated_reads_an_eager_read_file_error():
    with pytest.raises(tf.errors.OpError) as info:
        tf.io.read_file("ram://npyio-tf-errors/missing.npy")
    assert "[Op:" not in _tf.undecorated(info.value.message)


def test_function_reason_is_the_last_paragraph_without_its_node():
    message = "Graph execution error:\n\nDetected at node x\n\ninflate failed\n\t [[{{node y}}]]"
    assert _tf.function_reason(message) == "inflate failed"
    assert _tf.function_reason("") == ""


def test_graph_assertion_unescapes_npyio_s_message():
    message = 'x\nassertion failed: [a.npy: caf\\303\\251 \\"x\\"]\n\t [[{{node Assert}}]]'
    assert _tf.graph_assertion(message) == 'a.npy: café "x"'
    assert _tf.graph_assertion("some other error") is None


def test_graph_assertion_reads_a_failed_assert_in_a_graph():
    @tf.function
    def check(x):
        tf.debugging.Assert(x > 0, ["a.npy: bad"])
        return x

    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        check(tf.constant(0))
    assert _tf.graph_assertion(info.value.message) == "a.npy: bad"


def test_last_line_drops_annotations():
    assert _tf.last_line("first\n{{node a}} it broke {{function b}}here\n") == ("it broke here")


# --- the raw ops and private names ------------------------------------------------------------
INT = tf.TensorSpec([], tf.int64)


def _ops(fn, *specs) -> set[str]:
    """The op types of ``fn`` traced as a graph function."""
    return {op.type for op in tf.function(fn).get_concrete_function(*specs).graph.get_operations()}


def test_split_values_splits_every_string_flat():
    got = _tf.split_values(tf.constant(["52,20,3", "", "7"]), ",")
    assert got.numpy().tolist() == [b"52", b"20", b"3", b"", b"7"]


def test_split_values_splits_at_most_maxsplit_times_at_a_byte_string():
    sig = b"PK\x05\x06"
    assert _tf.split_values(tf.constant(["a,b,c"]), ",", maxsplit=1).numpy().tolist() == [
        b"a",
        b"b,c",
    ]
    found = _tf.split_values(tf.constant([b"\x00PK\x05\x06PK\x05\x06"]), sig, maxsplit=1)
    assert found.numpy().tolist() == [b"\x00", b"PK\x05\x06"]
    assert _tf.split_values(tf.constant([b"PK\x05\x07"]), sig, maxsplit=1).shape == [1]


@pytest.mark.parametrize("values", [[0, 1, 5, 6, 9, 10, 11], [-3], []], ids=["many", "one", "none"])
def test_lower_bound_is_searchsorted_left(values):
    at = np.array([1, 5, 5, 9, 10], np.int64)
    got = _tf.lower_bound(tf.constant(at), tf.constant(values, tf.int64))
    assert got.dtype == tf.int64
    assert got.numpy().tolist() == np.searchsorted(at, values, side="left").tolist()


@pytest.mark.parametrize("max_index", [1, 2, 9, 100, 2**12 - 1])
def test_random_index_shuffle_is_a_permutation_set_by_its_key(max_index):
    index = tf.range(max_index + 1, dtype=tf.int64)
    key = tf.constant([1, 2, 3], tf.int64)
    once = _tf.random_index_shuffle(index, key, max_index, 8).numpy()
    assert sorted(once.tolist()) == list(range(max_index + 1))
    again = _tf.random_index_shuffle(index, key, max_index, 8).numpy()
    assert once.tolist() == again.tolist()
    if max_index >= 100:
        other = _tf.random_index_shuffle(index, tf.constant([1, 2, 4], tf.int64), max_index, 8)
        assert other.numpy().tolist() != once.tolist()


def _concrete(fn, signature):
    return tf.function(fn, input_signature=signature, autograph=False).get_concrete_function()


def _checked(x):
    tf.debugging.Assert(x > 0, ["npyio: not positive"])
    return x * 2, tf.strings.as_string(x)


def test_stateless_call_returns_the_function_s_result_eagerly_and_in_a_graph():
    f = _concrete(_checked, [INT])
    out_types = [tf.int64, tf.string]
    eager = _tf.stateless_call(f, [tf.constant(3, tf.int64)], out_types)
    assert [t.numpy() for t in eager] == [6, b"3"]

    @tf.function
    def graph(x):
        return _tf.stateless_call(f, [x], out_types)

    assert [t.numpy() for t in graph(tf.constant(4, tf.int64))] == [8, b"4"]
    with pytest.raises(tf.errors.InvalidArgumentError, match="npyio: not positive"):
        graph(tf.constant(0, tf.int64))
    ops = _ops(lambda x: _tf.stateless_call(f, [x], out_types), INT)
    assert "PartitionedCall" in ops and "StatefulPartitionedCall" not in ops


def test_stateless_call_flattens_nested_arguments_and_passes_captures():
    c = tf.constant(10, tf.int64)
    f = _concrete(lambda pair: pair[0] * pair[1] + c, [(INT, INT)])
    assert f.captured_inputs
    args = [(tf.constant(2, tf.int64), tf.constant(3, tf.int64))]
    assert _tf.stateless_call(f, args, [tf.int64])[0].numpy() == 16
    traced = tf.function(lambda a, b: _tf.stateless_call(f, [(a, b)], [tf.int64])[0])
    assert traced(*args[0]).numpy() == 16


def test_executing_eagerly_outside_functions_is_false_only_in_a_tf1_graph():
    assert _tf.executing_eagerly_outside_functions() is True
    assert tf.function(lambda: tf.constant(_tf.executing_eagerly_outside_functions()))()
    with tf.Graph().as_default():
        assert _tf.executing_eagerly_outside_functions() is False


def test_single_device_function_carries_the_attributes():
    f = _tf.single_device_function(lambda x: x + 1, [INT])
    for key, value in _tf.SINGLE_DEVICE.items():
        assert f.function_def.attr[key].b is value


@pytest.mark.parametrize("calls", [None, 1, 4])
def test_map_dataset_keeps_order_and_passes_captures(calls):
    c = tf.constant(5, tf.int64)
    f = _tf.single_device_function(lambda x: (x * 2, x + c), [INT])
    ds = _tf.map_dataset(tf.data.Dataset.range(50), f, (INT, INT), calls, True)
    assert ds.element_spec == (INT, INT)
    assert [(int(a), int(b)) for a, b in ds.as_numpy_iterator()] == [
        (i * 2, i + 5) for i in range(50)
    ]
    want = "MapDataset" if calls is None else "ParallelMapDatasetV2"
    nodes = {
        n.op: n for n in tf.compat.v1.GraphDef.FromString(ds._as_serialized_graph().numpy()).node
    }
    assert want in nodes
    if calls is not None:
        assert nodes[want].attr["deterministic"].s == b"true"


def test_flat_map_dataset_and_interleave_dataset_read_the_inner_datasets():
    def inner(x):
        return _tf.dataset_variant(tf.data.Dataset.range(x).map(lambda i: i + 10 * x))

    f = _tf.single_device_function(inner, [INT])
    ds = tf.data.Dataset.range(1, 4)
    flat = _tf.flat_map_dataset(ds, f, INT)
    assert list(flat.as_numpy_iterator()) == [10, 20, 21, 30, 31, 32]
    mixed = _tf.interleave_dataset(ds, f, INT, cycle_length=2, block_length=1, num_parallel_calls=2)
    want = ds.interleave(
        lambda x: tf.data.Dataset.range(x).map(lambda i: i + 10 * x),
        cycle_length=2,
        block_length=1,
        num_parallel_calls=2,
        deterministic=True,
    )
    assert list(mixed.as_numpy_iterator()) == list(want.as_numpy_iterator())


def test_scan_dataset_carries_its_state():
    f = _tf.single_device_function(lambda s, x: (s + x, s + x), [INT, INT])
    ds = _tf.scan_dataset(tf.data.Dataset.range(5), tf.constant(0, tf.int64), f, INT)
    assert list(ds.as_numpy_iterator()) == [0, 1, 3, 6, 10]


def test_fixed_length_records_cut_between_header_and_footer(tmp_path):
    path = tmp_path / "records"
    path.write_bytes(b"HEAD" + b"abcdef" + b"FT")

    def const(n):
        return tf.constant(n, tf.int64)

    ds = _tf.fixed_length_records(tf.constant(str(path)), const(4), const(2), const(2), const(3))
    assert list(ds.as_numpy_iterator()) == [b"ab", b"cd", b"ef"]


def test_options_are_set_and_returned():
    options = tf.data.Options()
    assert _tf.no_injected_prefetch(options) is options
    assert options.experimental_optimization.inject_prefetch is False
    assert _tf.ignore_external_state(options) is options
    policy = tf.data.experimental.ExternalStatePolicy.IGNORE
    assert options.experimental_external_state_policy == policy


def test_get_seed_reads_the_global_seed_and_counts_its_calls():
    before, _ = _tf.get_seed()
    tf.random.set_seed(7)
    try:
        (g1, op1), (g2, op2) = _tf.get_seed(), _tf.get_seed()
        assert g1 == g2 == 7 and op1 != op2
    finally:
        tf.random.set_seed(before)


def test_print_to_stderr_writes_the_text_as_it_is(capfd):
    capfd.readouterr()
    _tf.print_to_stderr(tf.constant("npyio: 'a'\tb\n"))
    assert capfd.readouterr().err.endswith("npyio: 'a'\tb\n")
