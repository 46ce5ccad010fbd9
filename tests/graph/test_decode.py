"""npyio._graph.decode: the header fast path and the full parser behind one shared cond
(`decode_group`, strict and reporting), the report-then-assert step, and `decode_one`."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

from npyio._format.header import make_hint
from npyio._format.spec import Spec
from npyio._graph.decode import (
    SKIP_PREFIX,
    Fetched,
    decode_group,
    decode_one,
    report_then_assert,
)
from tests._graph_util import graph_def
from tests._npy_testing import assert_same, npy_bytes, tf_message

X = np.arange(6, dtype=np.float32).reshape(2, 3)
Y = np.arange(4, dtype=np.int16)
FILES = tf.TensorSpec([None], tf.string)
CONDS = {"If", "StatelessIf"}
CALLS = {"PartitionedCall", "StatefulPartitionedCall"}


def spec(arr: np.ndarray, hinted: bool = True) -> Spec:
    dt = arr.dtype
    return Spec.whole(dt, arr.shape, make_hint(dt, arr.shape) if hinted else None)


def top_conds(fn) -> list[tuple[list[str], list[str]]]:
    """The op types of each top-level cond's branches: [(then ops, else ops)]."""
    gd = graph_def(fn)
    functions = {f.signature.name: [n.op for n in f.node_def] for f in gd.library.function}
    return [
        (functions[n.attr["then_branch"].func.name], functions[n.attr["else_branch"].func.name])
        for n in gd.node
        if n.op in CONDS
    ]


def is_fast_path(then_ops: list[str], else_ops: list[str]) -> bool:
    """A fast-path cond: decodes without the parser when true, calls it when false."""
    return "DecodeRaw" in then_ops and not CALLS & set(then_ops) and bool(CALLS & set(else_ops))


# --- the shared fast-path cond ------------------------------------------------------------------
def test_hinted_parts_share_one_fast_path_cond():
    @tf.function(input_signature=[FILES, FILES], autograph=False)
    def decode(xs, ys):
        return decode_group(
            [Fetched(None, xs), Fetched(None, ys)], [spec(X), spec(Y)], batched=True
        )

    conds = top_conds(decode)
    assert len(conds) == 1 and is_fast_path(*conds[0])
    _, else_ops = conds[0]
    assert sum(op in CALLS for op in else_ops) == 2  # the full parser for both parts
    xs, ys = [npy_bytes(X)] * 3, [npy_bytes(Y)] * 3
    x, y = decode(tf.constant(xs), tf.constant(ys))
    assert_same(x, np.stack([X] * 3))
    assert_same(y, np.stack([Y] * 3))
    # one file of the second part in another header style: the full parser for both parts
    x, y = decode(tf.constant(xs), tf.constant([*ys[:2], npy_bytes(Y, (2, 0))]))
    assert_same(x, np.stack([X] * 3))
    assert_same(y, np.stack([Y] * 3))


def test_a_part_without_a_hint_is_decoded_outside_the_cond():
    @tf.function(input_signature=[FILES, FILES], autograph=False)
    def decode(xs, ys):
        fetched = [Fetched(None, xs), Fetched(None, ys)]
        return decode_group(fetched, [spec(X, hinted=False), spec(Y)], batched=True)

    conds = top_conds(decode)
    assert len(conds) == 1 and is_fast_path(*conds[0])
    assert sum(op in CALLS for op in conds[0][1]) == 1
    assert sum(n.op in CALLS for n in graph_def(decode).node) == 1
    x, y = decode(tf.constant([npy_bytes(X, (3, 0))]), tf.constant([npy_bytes(Y)]))
    assert_same(x, X[None]) and assert_same(y, Y[None])


def test_static_shapes_are_set():
    @tf.function(input_signature=[tf.TensorSpec([4], tf.string)] * 2, autograph=False)
    def decode(xs, ys):
        fetched = [Fetched(None, xs), Fetched(None, ys)]
        outs = decode_group(fetched, [spec(X), spec(Y, hinted=False)], batched=True)
        assert [o.shape for o in outs] == [(4, 2, 3), (4, 4)]
        return outs

    decode.get_concrete_function()


# --- reporting ---------------------------------------------------------------------------------
def test_reporting_takes_the_fast_path_only_when_every_part_has_a_hint():
    def traced(hinted_y: bool):
        @tf.function(input_signature=[FILES, FILES], autograph=False)
        def decode(xs, ys):
            fetched = [Fetched(None, xs), Fetched(None, ys)]
            specs = [spec(X), spec(Y, hinted=hinted_y)]
            return decode_group(fetched, specs, batched=True, report=True)

        return decode

    conds = top_conds(traced(True))
    assert len(conds) == 1 and is_fast_path(*conds[0])
    assert not any(is_fast_path(*c) for c in top_conds(traced(False)))
    x, y = traced(False)(tf.constant([npy_bytes(X)]), tf.constant([npy_bytes(Y)]))
    assert_same(x, X[None]) and assert_same(y, Y[None])


def test_reporting_prints_every_refusal_then_asserts(capfd):
    @tf.function(input_signature=[FILES, FILES], autograph=False)
    def decode(xs, ys):
        names = tf.constant(["x0.npy"]), tf.constant(["y0.npy"])
        fetched = [Fetched(names[0], xs), Fetched(names[1], ys)]
        return decode_group(fetched, [spec(X), spec(Y)], batched=True, report=True)

    with pytest.raises(tf.errors.InvalidArgumentError) as e:
        decode(tf.constant([b"junk"]), tf.constant([npy_bytes(Y.astype(np.int32))]))
    err = capfd.readouterr().err
    assert f"{SKIP_PREFIX}x0.npy: not a .npy file" in err
    assert f"{SKIP_PREFIX}y0.npy: dtype mismatch -- expected int16, got int32" in err
    assert tf_message(e.value).startswith(("x0.npy: ", "y0.npy: "))


def test_a_failing_fetch_verdict_is_the_refusal_reported(capfd):
    @tf.function(input_signature=[FILES], autograph=False)
    def decode(xs):
        pre = (tf.constant([True, False, False]), tf.constant(["", "a: first", "b: second"]))
        return decode_group([Fetched(None, xs, pre)], [spec(X)], batched=True, report=True)

    with pytest.raises(tf.errors.InvalidArgumentError) as e:
        decode(tf.constant([npy_bytes(X), b"", b""]))
    assert tf_message(e.value) == "a: first"
    err = capfd.readouterr().err
    assert f"{SKIP_PREFIX}a: first\n" in err and "second" not in err


def test_report_then_assert_prints_each_message_once_then_fails(capfd):
    @tf.function(input_signature=[tf.TensorSpec([3], tf.bool)], autograph=False)
    def check(oks):
        messages = ["p.npz[x]: missing", "q.npy: fine", "p.npz[x]: missing"]
        verdicts = [(oks[i], tf.constant(m)) for i, m in enumerate(messages)]
        with tf.control_dependencies(report_then_assert(verdicts)):
            return tf.constant(1)

    assert int(check(tf.constant([True, True, True]))) == 1
    assert SKIP_PREFIX not in capfd.readouterr().err
    with pytest.raises(tf.errors.InvalidArgumentError) as e:
        check(tf.constant([False, True, False]))
    assert tf_message(e.value) == "p.npz[x]: missing"
    assert capfd.readouterr().err.count(f"{SKIP_PREFIX}p.npz[x]: missing\n") == 1


# --- decode_one -----------------------------------------------------------------------------------
def test_decode_one_eagerly_and_its_errors():
    got = decode_one(Fetched(tf.constant("a.npy"), tf.constant(npy_bytes(X))), spec(X))
    assert_same(got, X)
    with pytest.raises(tf.errors.InvalidArgumentError) as e:
        decode_one(Fetched(tf.constant("a.npy"), tf.constant(b"junk")), spec(X))
    assert e.value.message.startswith("a.npy: not a .npy file")  # the message itself
