"""npyio._graph.ops: the shared graph helpers: message splicing, the verdict assertion, literal
sharing, and the total byte-field readers (no op error and no allocation from any position)."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given
from hypothesis import strategies as st

import npyio
from npyio._format import npy, npz
from npyio._graph import ops
from tests._graph_util import graph_def
from tests._npy_testing import npy_bytes, tf_message, write_file

#: The reason functions of the format modules: their words are spliced around tensors.
NPY_REASONS = [
    *("file_too_large", "bad_magic", "too_short", "bad_version", "header_too_large"),
    *("header_past_end", "not_a_dict", "bad_keys", "bad_descr", "bad_fortran", "bad_shape"),
    *("negative_dim", "too_large", "dtype_mismatch", "shape_mismatch", "payload_short"),
    "payload_trailing",
]
NPZ_REASONS = [
    *("not_a_zip", "bad_zip64_record", "directory_past_end", "bad_entry", "no_member"),
    *("encrypted", "bad_method", "bad_zip64_extra", "bad_local", "local_name"),
    *("data_past_end", "stored_sizes", "inflated_size"),
]
REASON_CASES = [
    (f"{module.__name__.rsplit('.', 1)[-1]}.{name}", fn, len(inspect.signature(fn).parameters))
    for module, names in ((npy, NPY_REASONS), (npz, NPZ_REASONS))
    for name in names
    for fn in [getattr(module, name)]
]
#: Reasons whose words name their arguments in another order than they are passed.
REORDERED = {"npz.directory_past_end", "npz.data_past_end"}
IDS = [name for name, _, _ in REASON_CASES]


# --- messages ----------------------------------------------------------------------------------
@pytest.mark.parametrize("name, reason, nargs", REASON_CASES, ids=IDS)
def test_reason_words_put_the_arguments_back(name, reason, nargs):
    if name in REORDERED:
        with pytest.raises(ValueError, match=r"in the order \[1, 0\]"):
            ops.reason_words(reason, nargs)
        return
    words = ops.reason_words(reason, nargs)
    assert len(words) == max(3, nargs + 1)
    args = ["<a>", "<b>"][:nargs]
    rebuilt = words[0] + "".join(arg + word for arg, word in zip(args, words[1:]))
    assert rebuilt == reason(*args)
    assert all(w == "" for w in words[nargs + 1 :])


@pytest.mark.parametrize("name, reason, nargs", REASON_CASES, ids=IDS)
def test_fmt_splices_tensors_like_python(name, reason, nargs):
    args = ["12", "it's \\ 'quoted'"][:nargs]
    tensors = [tf.constant(a) for a in args]
    assert ops.fmt(reason, *tensors).numpy().decode() == reason(*args)
    traced = tf.function(lambda *t: ops.fmt(reason, *t), autograph=False)
    assert traced(*tensors).numpy().decode() == reason(*args)


def test_fmt_takes_python_strings_too():
    want = npy.payload_short("3", "1")
    assert ops.fmt(npy.payload_short, "3", tf.constant("1")).numpy().decode() == want


# --- assert_verdict ----------------------------------------------------------------------------
def test_assert_verdict_eagerly_raises_the_message_itself():
    message = tf.constant('a/b.npy: it\'s "bad" -- expected x, got y')
    with pytest.raises(tf.errors.InvalidArgumentError) as e:
        ops.assert_verdict(tf.constant(False), message, tf.constant(1))
    assert e.value.message == message.numpy().decode()  # no "assertion failed", no escapes
    x, y = tf.constant([1, 2]), tf.constant("s")
    assert ops.assert_verdict(tf.constant(True), message, x, y) == [x, y]


def test_assert_verdict_in_a_graph_holds_the_outputs_back():
    @tf.function(input_signature=[tf.TensorSpec([], tf.bool)], autograph=False)
    def checked(ok):
        (out,) = ops.assert_verdict(ok, tf.constant("p.npy: 'bad' \\ reason"), tf.constant(7))
        return out

    assert int(checked(tf.constant(True))) == 7
    with pytest.raises(tf.errors.InvalidArgumentError) as e:
        checked(tf.constant(False))
    assert tf_message(e.value) == "p.npy: 'bad' \\ reason"
    types = {n.op for n in graph_def(checked).node}
    assert {"Assert", "Identity"} <= types


# --- Consts and first_index --------------------------------------------------------------------
def _consts(fn: tf.types.experimental.ConcreteFunction) -> list[tf.compat.v1.NodeDef]:
    return [n for n in graph_def(fn).node if n.op == "Const"]


def test_consts_makes_one_node_per_literal_and_dtype():
    @tf.function(input_signature=[tf.TensorSpec([], tf.int64)], autograph=False)
    def fn(x):
        k = ops.Consts()
        assert k(3) is k(3) and k.str("a") is k.str("a") and k.i32(3) is k.i32(3)
        assert k(3) is not k.i32(3) and k(3).dtype == tf.int64
        return (
            x
            + k(3)
            + k(3)
            + tf.cast(k.i32(3), tf.int64)
            + tf.cast(tf.strings.length(k.str("a")), tf.int64)
        )

    assert len(_consts(fn.get_concrete_function())) == 3
    assert int(fn(tf.constant(1, tf.int64))) == 1 + 3 + 3 + 3 + 1


def test_consts_of_a_branch_take_the_parents_first():
    @tf.function(input_signature=[tf.TensorSpec([], tf.bool)], autograph=False)
    def fn(flag):
        k = ops.Consts()
        one = k(1)

        def branch():
            kb = ops.Consts(k)
            assert kb(1) is one  # the parent's: it enters the branch as an input
            return kb(1) + kb(2)

        return tf.cond(flag, branch, lambda: one)

    gd = graph_def(fn)
    true_branch = next(f for f in gd.library.function if "true" in f.signature.name)
    assert sum(n.op == "Const" for n in true_branch.node_def) == 1  # only the 2
    assert int(fn(tf.constant(True))) == 3 and int(fn(tf.constant(False))) == 1


@pytest.mark.parametrize(
    "flags, want",
    [([], 0), ([False], 1), ([True], 0), ([False, True, True], 1), ([False] * 5, 5)],
)
def test_first_index(flags, want):
    t = tf.constant(flags, tf.bool, shape=[len(flags)])
    assert int(ops.first_index(t)) == want
    assert int(ops.first_index(t, ops.Consts())) == want
    traced = tf.function(ops.first_index, input_signature=[tf.TensorSpec([None], tf.bool)])
    assert traced(t).dtype == tf.int64 and int(traced(t)) == want


# --- total byte-field readers --------------------------------------------------------------------
def _clamped(data: bytes, pos: int, n: int) -> bytes:
    start = min(max(pos, 0), len(data))
    return data[start : start + max(n, 0)]


POSITIONS = st.integers(-(2**40), 2**40) | st.integers(-3, 40)
LENGTHS = st.integers(-(2**40), 2**40) | st.integers(-3, 40)


@given(data=st.binary(max_size=32), pos=POSITIONS, n=LENGTHS)
def test_clamped_substr_is_total(data, pos, n):
    got = ops.clamped_substr(
        tf.constant(data), tf.constant(len(data), tf.int64), tf.constant(pos, tf.int64), n
    )
    assert got.numpy() == _clamped(data, pos, n)


@given(data=st.binary(max_size=32), pos=POSITIONS, n=st.integers(1, 24))
def test_padded_bytes_is_total_and_zero_past_the_end(data, pos, n):
    want = list(_clamped(data, pos, n).ljust(n, b"\0"))
    size = tf.constant(len(data), tf.int64)
    got = ops.padded_bytes(tf.constant(data), tf.constant(pos, tf.int64), n, size)
    assert got.dtype == tf.int64 and got.numpy().tolist() == want
    if pos >= 0:  # without a size: a Python position, padded by joining
        small = min(pos, 64)
        want = list(_clamped(data, small, n).ljust(n, b"\0"))
        assert ops.padded_bytes(tf.constant(data), small, n).numpy().tolist() == want


@given(value=st.integers(0, 2**32 - 1), at=st.integers(0, 4))
def test_le_field_reads_little_endian(value, at):
    raw = bytes(at) + value.to_bytes(4, "little") + b"\xff\xff"
    b = ops.padded_bytes(tf.constant(raw), 0, len(raw))
    assert int(ops.le_field(b, at, 4)) == value
    assert int(ops.le_field(b, at, 2)) == value & 0xFFFF
    assert int(ops.le_field(b, at, 1)) == value & 0xFF


@given(value=st.integers(0, 2**64 - 1), at=st.integers(0, 3))
def test_le_field8_stops_at_the_limit(value, at):
    raw = b"\x07" * at + value.to_bytes(8, "little") + b"\x07"
    b = ops.padded_bytes(tf.constant(raw), 0, len(raw))
    want = value if value < ops.FIELD64_LIMIT else ops.FIELD64_LIMIT
    assert int(ops.le_field8(b, at)) == want
    assert int(ops.le_field8(b, tf.constant(at, tf.int64))) == want


def test_le_field8_limit_leaves_room_to_add():
    # an 8-byte field plus fixed lengths and 2- or 4-byte fields does not overflow int64
    assert ops.FIELD64_LIMIT + 2**40 < 2**63 and ops.FIELD64_LIMIT >= 2**62


# --- values and arguments ------------------------------------------------------------------------
def test_native_turns_raw_values_into_the_dtype():
    raw = tf.io.decode_raw(tf.constant(b"\x00\x01\x02\xff"), tf.uint8)
    assert ops.native(raw, np.dtype(bool)).numpy().tolist() == [False, True, True, True]
    raw = tf.io.decode_raw(tf.constant(b"\xff\xff\xff\xff"), ops.RAW_DTYPES["uint32"])
    assert ops.native(raw, np.dtype(np.uint32)).numpy().tolist() == [2**32 - 1]
    raw = tf.io.decode_raw(tf.constant(b"\x01\x00"), ops.RAW_DTYPES["int16"])
    assert ops.native(raw, np.dtype(np.int16)).numpy().tolist() == [1]


@pytest.mark.parametrize("little", [True, False, tf.constant(True), tf.constant(False)])
@pytest.mark.parametrize("dtype", ["bool", "uint8", "int16", "uint32", "float64", "complex64"])
def test_decode_rows_reads_rows_of_either_byte_order(dtype, little):
    """The decoder `npyio.rows` and the fast path share: bytes of either order (known when
    built, or only when run) -> [count, *row_shape] in native order."""
    want = (np.arange(12) % 3).astype(dtype).reshape(3, 2, 2)
    order = "<" if bool(little) else ">"
    raw = tf.constant(want.astype(want.dtype.newbyteorder(order)).tobytes())
    got = ops.decode_rows(raw, tf.constant(3, tf.int64), (2, 2), want.dtype, little)
    assert got.dtype == ops.TF_DTYPES[want.dtype.name] and got.shape == (3, 2, 2)
    np.testing.assert_array_equal(got.numpy(), want)


def test_decode_rows_of_no_bytes_are_zeros():
    got = ops.decode_rows(tf.constant(b""), tf.constant(4, tf.int64), (0, 3), np.dtype("<f4"))
    assert got.shape == (4, 0, 3) and got.dtype == tf.float32


def test_raw_dtypes_decode_every_dtype():
    for name in npy.CODES.values():
        raw = ops.RAW_DTYPES[name]
        assert raw.size == np.dtype(name).itemsize or name.startswith("complex"), name
        assert ops.TF_DTYPES[name].as_numpy_dtype == np.dtype(name), name


def test_static_shape_and_path_tensor():
    assert ops.static_shape(None).rank is None
    assert ops.static_shape((2, None)).as_list() == [2, None]
    assert ops.path_tensor("a.npy").numpy() == b"a.npy"
    assert ops.path_tensor(b"\xff.npy").numpy() == b"\xff.npy"
    with pytest.raises(ValueError, match="scalar string"):
        ops.path_tensor(tf.constant(["a", "b"]))
    with pytest.raises(ValueError, match="one path"):
        ops.path_tensor(["a", "b"])
    with pytest.raises(TypeError):
        ops.path_tensor(3)


def test_tf1_style_graphs_are_refused_clearly(tmp_path):
    # In a TF1-style graph `tensor == value` compares identities, so npyio's checks would be
    # wrong there: every entry point says so when it is built instead.
    path = write_file(tmp_path, "a.npy", npy_bytes(np.zeros((2, 2), np.float32)))
    calls = {
        "decode_npy": lambda: npyio.decode_npy(tf.constant(b"x"), "float32", (2, 2)),
        "read_npy": lambda: npyio.read_npy(path, "float32", (2, 2)),
        "dataset": lambda: npyio.dataset([path], batch_size=2),
        "rows": lambda: npyio.rows(path, batch_size=None),
        "read_npz": lambda: npyio.read_npz(path, "x", "float32"),
    }
    for name, call in calls.items():
        with tf.Graph().as_default(), pytest.raises(RuntimeError, match="TF1-style graphs"):
            call()
            pytest.fail(name)
    assert npyio.read_npy(path, "float32", (2, 2)).shape == (2, 2)  # eager again: fine
