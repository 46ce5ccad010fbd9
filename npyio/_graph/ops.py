"""Graph helpers shared by the ``.npy`` parser, and the ``.npz`` reader.

Everything here builds TensorFlow ops and nothing else: dtype tables, message splicing (the
reason functions of `npyio._format.npy` with tensors spliced in, so the graph says the same
words as Python), literal sharing (`Consts`), and *total* readers of fixed-size byte fields: ops
that cannot fail whatever the bytes are, because positions are clamped and short reads are
zero-padded. Validity assertions come after them; until then nothing may raise.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence

import numpy as np
import tensorflow as tf

from npyio._format import npy
from npyio._format.files import one_path
from npyio._tf import executing_eagerly_outside_functions

__all__ = [
    "HEX",
    "NATIVE_LE",
    "RAW_DTYPES",
    "TF_DTYPES",
    "Consts",
    "as_str",
    "assert_verdict",
    "clamped_substr",
    "decode_rows",
    "decode_values",
    "first_index",
    "fmt",
    "full_match",
    "group",
    "le_field",
    "le_field8",
    "native",
    "padded_bytes",
    "path_tensor",
    "reason_words",
    "require_tf2",
    "static_shape",
]

TF_DTYPES: dict[str, tf.DType] = {name: tf.as_dtype(name) for name in npy.CODES.values()}
# decode_raw has no uint32/uint64: read them as int32/int64 and bitcast; bool is read as uint8.
RAW_DTYPES: dict[str, tf.DType] = {
    **TF_DTYPES,
    "bool": tf.uint8,
    "uint32": tf.int32,
    "uint64": tf.int64,
}
HEX = [f"{i:02x}" for i in range(256)]
NATIVE_LE = npy.NATIVE_ORDER == "<"
_SENTINEL = "\x00"
#: 8-byte fields at or above this are read as this (past any end; no int64 overflow).
FIELD64_LIMIT = 2**62


# --- messages ---------------------------------------------------------------------------------
def _spliced(reason: Callable[..., str], nargs: int) -> tuple[list[str], list[int]]:
    """``reason``'s words and, between each two, which argument stands there."""
    parts = re.split(f"{_SENTINEL}([0-9]+){_SENTINEL}", reason(*map(_marker, range(nargs))))
    return parts[0::2], [int(i) for i in parts[1::2]]


def _marker(i: int) -> str:
    return f"{_SENTINEL}{i}{_SENTINEL}"


def reason_words(reason: Callable[..., str], nargs: int) -> list[str]:
    """The words of the reason function ``reason`` around its ``nargs`` arguments, for a
    message built by gathering words and values (the graph parser's failure message).

    Returns:
        ``nargs + 1`` strings, padded with "" to at least three: ``reason(a, b)`` is
        ``words[0] + a + words[1] + b + words[2]``.

    Raises:
        ValueError: When ``reason`` does not use each argument once, in order.

    Example:
        >>> from npyio._format import npy
        >>> reason_words(npy.payload_short, 2)
        ['payload is shorter than the header says -- expected ', ' bytes, got ', '']
    """
    words, order = _spliced(reason, nargs)
    if order != list(range(nargs)):
        raise ValueError(f"{reason.__name__} uses its arguments in the order {order}")
    return words + [""] * (3 - len(words))


def fmt(reason: Callable[..., str], *args: tf.Tensor | str) -> tf.Tensor:
    """The message ``reason(*args)`` as a string tensor, with tensors spliced in for the
    arguments wherever the reason puts them."""
    words, order = _spliced(reason, len(args))
    pieces: list[tf.Tensor | str] = [words[0]]
    for i, word in zip(order, words[1:]):
        pieces += [args[i], word]
    return tf.strings.join(pieces)


def assert_verdict(ok: tf.Tensor, message: tf.Tensor, *tensors: tf.Tensor) -> list[tf.Tensor]:
    """``tensors``, to be used only once the verdict ``(ok, message)`` (scalars) says ok.

    In a graph they come out of ``tf.identity`` under a control dependency on
    ``tf.debugging.Assert(ok, [message])``. Eagerly the verdict is known at once, and a refusal
    raises with the message itself, not ``Assert``'s ``"assertion failed: [...]"`` (which also
    escapes quotes and backslashes), so the error's first line is npyio's ``"PATH: reason"``.

    Raises:
        tf.errors.InvalidArgumentError: Eagerly, when ``ok`` is false (in a graph, when the
            assertion runs).
    """
    if tf.executing_eagerly():
        if not bool(ok):
            raise tf.errors.InvalidArgumentError(
                None, None, message.numpy().decode("utf-8", "replace")
            )
        return list(tensors)
    assertion = tf.debugging.Assert(ok, [message], summarize=1)
    with tf.control_dependencies([assertion]):
        return [tf.identity(t) for t in tensors]


def as_str(x: tf.Tensor) -> tf.Tensor:
    return tf.strings.as_string(x)


def full_match(text: tf.Tensor, pattern: str) -> tf.Tensor:
    return tf.strings.regex_full_match(text, pattern)


def group(text: tf.Tensor, pattern: str, index: int = 1) -> tf.Tensor:
    """Group ``index`` of a full-match ``pattern`` (the text itself where it does not match)."""
    return tf.strings.regex_replace(text, pattern, f"\\{index}")


# --- literals ---------------------------------------------------------------------------------
class Consts:
    """One Const node per distinct literal in the graph being built.

    tf.data reads every node of the parser again at each iterator start (``Dataset.reduce``
    even rewrites the whole graph each time), and Python literals otherwise become a Const node
    at every use. A cache made for a ``tf.cond`` branch takes its parent's constants first
    (they enter the branch as inputs) and creates only the ones its parent lacks.
    """

    def __init__(self, parent: Consts | None = None) -> None:
        self._parent = parent
        self._cache: dict[tuple[str, str], tf.Tensor] = {}

    def _find(self, key: tuple[str, str]) -> tf.Tensor | None:
        if key in self._cache:
            return self._cache[key]
        return None if self._parent is None else self._parent._find(key)

    def __call__(self, value: object, dtype: tf.DType = tf.int64) -> tf.Tensor:
        key = (repr(value), dtype.name)
        found = self._find(key)
        if found is None:
            found = self._cache[key] = tf.constant(value, dtype)
        return found

    def str(self, value: object) -> tf.Tensor:
        return self(value, tf.string)

    def i32(self, value: object) -> tf.Tensor:
        return self(value, tf.int32)


def first_index(flags: tf.Tensor, k: Consts | None = None) -> tf.Tensor:
    """The index of the first True in a rank-1 bool tensor, as int64 (its size if none)."""
    k = k or Consts()
    n = tf.size(flags, out_type=tf.int64)
    # (the minimum with n: reduce_min of nothing is the largest int64)
    return tf.minimum(tf.reduce_min(tf.where(flags, tf.range(k(0), n, k(1)), n), axis=k.i32(0)), n)


# --- total byte-field readers -----------------------------------------------------------------
def clamped_substr(
    contents: tf.Tensor, size: tf.Tensor, pos: tf.Tensor, n: tf.Tensor | int
) -> tf.Tensor:
    """``contents[pos:pos + n]`` for any ``pos`` and ``n``: positions are clamped, never an op
    error (``tf.strings.substr`` out of range raises an error that embeds raw bytes)."""
    n = tf.maximum(tf.cast(n, tf.int64), 0)
    return tf.strings.substr(contents, tf.clip_by_value(pos, 0, size), n)


def padded_bytes(
    contents: tf.Tensor, pos: tf.Tensor | int, n: int, size: tf.Tensor | None = None
) -> tf.Tensor:
    """The ``n`` bytes at ``pos`` as int64 ``[n]``, zero past the end of ``contents``."""
    if size is None:
        raw = tf.strings.substr(tf.strings.join([contents, "\0" * (n + int(pos))]), pos, n)
    else:
        raw = clamped_substr(contents, size, pos, n)
    padded = tf.strings.substr(tf.strings.join([raw, b"\0" * n]), 0, n)
    return tf.cast(tf.io.decode_raw(padded, tf.uint8), tf.int64)


def le_field(b: tf.Tensor, at: int, n: int) -> tf.Tensor:
    """Little-endian unsigned field of ``n <= 4`` bytes of ``b`` at ``at`` (exact in int64)."""
    value = b[at]
    for k in range(1, n):
        value += b[at + k] * (256**k)
    return value


def le_field8(b: tf.Tensor, at: int | tf.Tensor) -> tf.Tensor:
    """An 8-byte little-endian field, or `FIELD64_LIMIT` if it is at least that."""
    at = tf.convert_to_tensor(at, tf.int64)
    part = tf.gather(b, at + tf.range(8, dtype=tf.int64))
    lo = tf.reduce_sum(part[:4] * tf.constant([1, 256, 65536, 16777216], tf.int64))
    hi = tf.reduce_sum(part[4:] * tf.constant([1, 256, 65536, 16777216], tf.int64))
    return tf.where(hi >= 2**30, tf.constant(FIELD64_LIMIT, tf.int64), lo + hi * 2**32)


# --- values -----------------------------------------------------------------------------------
def native(values: tf.Tensor, dt: np.dtype) -> tf.Tensor:
    """decode_raw's output (see `RAW_DTYPES`) as ``dt``: bool is nonzero, uint32/64 bitcast."""
    if dt.name == "bool":
        return tf.not_equal(values, 0)
    if values.dtype != TF_DTYPES[dt.name]:
        return tf.bitcast(values, TF_DTYPES[dt.name])
    return values


def decode_values(
    raw: tf.Tensor, dt: np.dtype, little_endian: bool | tf.Tensor = NATIVE_LE
) -> tf.Tensor:
    """The bytes of a string tensor as the values of ``dt`` (one more dim than ``raw``, of
    items), in native order: ``tf.io.decode_raw`` (see `RAW_DTYPES`), then `native`.

    ``little_endian`` is the bytes' order: a bool, or a scalar bool tensor when it is known only
    when the op runs (then one ``tf.cond``). One-byte dtypes have no order."""

    def read(little: bool) -> tf.Tensor:
        return native(tf.io.decode_raw(raw, RAW_DTYPES[dt.name], little_endian=little), dt)

    if dt.itemsize == 1:
        return read(True)
    if isinstance(little_endian, bool):
        return read(little_endian)
    return tf.cond(little_endian, lambda: read(True), lambda: read(False))


def decode_rows(
    raw: tf.Tensor,
    count: tf.Tensor,
    row_shape: Sequence[int],
    dt: np.dtype,
    little_endian: bool | tf.Tensor = NATIVE_LE,
) -> tf.Tensor:
    """``count`` rows (a scalar int64) of ``row_shape`` from their bytes (a scalar string) as
    a ``[count, *row_shape]`` tensor of ``dt``; the byte order as in `decode_values`."""
    shape = tf.concat([count[None], tf.constant(row_shape, tf.int64)], 0)
    if int(np.prod(row_shape, dtype=np.int64)) * dt.itemsize == 0:
        return tf.zeros(shape, TF_DTYPES[dt.name])
    out = tf.reshape(decode_values(raw, dt, little_endian), shape)
    out.set_shape(tf.TensorShape([None]).concatenate(row_shape))
    return out


def static_shape(shape: object) -> tf.TensorShape:
    """A shape argument as a ``tf.TensorShape`` (``None``: unknown rank)."""
    return tf.TensorShape(npy.parse_shape(shape))


def path_tensor(path: object, name: str = "path") -> tf.Tensor:
    """A path argument as a scalar string tensor: a ``str``, ``bytes``, ``os.PathLike``, a 0-d
    array, or a scalar string tensor (inside a graph, the usual case).

    Raises:
        TypeError: for another type; ValueError: for a tensor that is not a scalar string.
    """
    if tf.is_tensor(path):
        t = tf.convert_to_tensor(path)
        if t.dtype != tf.string or t.shape.rank != 0:
            raise ValueError(f"{name} must be a scalar string, got {t.dtype.name} {t.shape}")
        return t
    if isinstance(path, (list, tuple, np.ndarray)) and np.ndim(path) > 0:
        raise ValueError(f"{name} must be a scalar string (one path), got {np.size(path)} paths")
    # As bytes: a file name that is not UTF-8 (bytes, or a str with surrogate escapes from
    # os.fsdecode) has no UTF-8 str form that tf.constant could encode.
    return tf.constant(os.fsencode(one_path(path, name)), tf.string, name=name)


def require_tf2() -> None:
    """Refuses to build graph ops in a TF1-style graph (``tf.Graph().as_default()``, a session,
    ``disable_eager_execution``), where ``tensor == value`` compares identities, not values:
    the checks would be wrong there, so npyio says so instead of failing obscurely."""
    if not executing_eagerly_outside_functions():
        raise RuntimeError(
            "npyio builds its ops for TensorFlow 2 (eager execution, tf.function, tf.data); "
            "it does not support TF1-style graphs (tf.Graph().as_default(), tf.compat.v1 "
            "sessions, disable_eager_execution)"
        )
