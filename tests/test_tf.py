"""npyio._tf: TensorFlow's internals behind one module. Its error text read in one place,
pinned to the forms this TensorFlow writes; the raw ops and private names npyio uses, each
doing what npyio's callers rely on."""

from __future__ import annotations

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
