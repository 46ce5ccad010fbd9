"""Decoding ``.npz`` members as ``.npy`` files: `decode_npz`, `read_npz`, and the per-element
reader of ``npyio.dataset(..., key=...)``. The archive itself is read by `npyio._graph.zip`."""

from __future__ import annotations

import os

import numpy as np
import tensorflow as tf

from npyio._format import npy
from npyio._format.header import Hint, Limits, make_hint
from npyio._graph.decode import decode_one, read_file
from npyio._graph.ops import path_tensor, static_shape
from npyio._graph.zip import key_tensor, npz_member

__all__ = ["decode_npz", "read_npz", "read_npz_member"]


def _decode(
    contents: tf.Tensor,
    key: tf.Tensor,
    name: tf.Tensor,
    dt: np.dtype,
    static: tf.TensorShape,
    hint: Hint | None,
) -> tf.Tensor:
    return decode_one(npz_member(contents, key, name), name, dt, static, hint, Limits())


@tf.autograph.experimental.do_not_convert
def decode_npz(
    contents: tf.Tensor | bytes,
    key: tf.Tensor | str,
    dtype: object,
    shape: object = None,
    *,
    name: str | None = None,
) -> tf.Tensor:
    """Decodes member ``key`` of the bytes of a whole ``.npz`` archive, with graph ops only.

    The member is found through the zip's central directory (zip64 included), inflated in the
    graph if it is deflated (``np.savez_compressed``) or sliced out if it is stored
    (``np.savez``), and decoded like `npyio.decode_npy`.

    Args:
        contents: A scalar string tensor holding the whole archive.
        key: The member's name, with or without its ``.npy`` suffix (as ``np.load(...)[key]``
            takes it): a str or a scalar string tensor. A member named exactly ``key`` is
            preferred to one named ``key + ".npy"``.
        dtype: The dtype the member must have; see `npyio.decode_npy`.
        shape: Optional static shape the member must have; ``None`` dims match any size.
        name: Optional name for the op's name scope.

    Returns:
        A tensor of ``dtype`` with the member's shape, in C order and native byte order.

    Raises:
        TypeError: When the op is built, for a dtype npyio does not decode or a bad ``shape``.
        tf.errors.InvalidArgumentError: When the op runs, for bytes that are not a zip
            archive, a corrupt archive (bad signatures, offsets or sizes past the end, a
            truncated archive), a missing member, an encrypted member, a compression method
            other than stored or deflated, or a member that is not a valid ``.npy`` file of
            ``dtype`` and ``shape``. The message starts with ``<bytes>[key]``.
        tf.errors.DataLossError: When the op runs, for a deflated member whose data is
            corrupt or whose CRC-32 or size does not match (from zlib). Eagerly, the message
            starts with ``<bytes>[key]``; inside a graph it is zlib's alone.

    Example:
        >>> import io, numpy as np, npyio
        >>> buf = io.BytesIO()
        >>> np.savez_compressed(buf, x=np.arange(4, dtype=np.int16), y=np.eye(2))
        >>> npyio.decode_npz(buf.getvalue(), "x", "int16").numpy()
        array([0, 1, 2, 3], dtype=int16)
    """
    dt = npy.parse_dtype(dtype)
    static = static_shape(shape)
    with tf.name_scope(name or "decode_npz"):
        contents = tf.convert_to_tensor(contents, tf.string, name="contents")
        if contents.shape.rank != 0:
            raise ValueError(f"contents must be a scalar string, got shape {contents.shape}")
        key_t = key_tensor(key)
        label_t = tf.strings.join(["<bytes>[", key_t, "]"])
        return _decode(contents, key_t, label_t, dt, static, make_hint(dt, static))


@tf.autograph.experimental.do_not_convert
def read_npz(
    path: tf.Tensor | str | bytes | os.PathLike[str],
    key: tf.Tensor | str,
    dtype: object,
    shape: object = None,
    *,
    name: str | None = None,
) -> tf.Tensor:
    """Reads member ``key`` of an ``.npz`` archive, with ``tf.io.read_file`` and graph ops.

    The whole archive is read into memory (one ``tf.io.read_file``), then the member is found,
    inflated if needed and decoded as in `decode_npz`. Memory is thus the archive's size plus
    the member's (inflated) size; for arrays larger than memory use ``.npy`` files and
    `npyio.rows`. ``tf.strings`` ops measure lengths in int32, so archives must be smaller
    than 2 GiB (zip64 structures are read, whatever the sizes they hold).

    Args:
        path: The archive: a ``str``, ``bytes``, ``os.PathLike`` or a scalar string tensor.
            Any TensorFlow filesystem path.
        key: The member's name, with or without ``.npy``; see `decode_npz`.
        dtype: The dtype the member must have.
        shape: Optional static shape the member must have; ``None`` dims match any size.
        name: Optional name for the op's name scope.

    Returns:
        A tensor of ``dtype`` with the member's shape.

    Raises:
        TypeError: When the op is built, for a dtype npyio does not decode or a bad ``shape``.
        tf.errors.NotFoundError: When the op runs, if the archive does not exist (eagerly,
            the message is ``"path: no such file"``).
        tf.errors.InvalidArgumentError: When the op runs, for the reasons `decode_npz` lists;
            the message starts with ``path[key]``.
        tf.errors.DataLossError: When the op runs, for corrupt deflated data (from zlib;
            eagerly, the message starts with ``path[key]``; inside a graph it is zlib's alone).

    Example:
        >>> import io, numpy as np, npyio, tensorflow as tf
        >>> buf = io.BytesIO(); np.savez(buf, x=np.ones((2, 2), ">f4"), y=np.arange(3))
        >>> with tf.io.gfile.GFile("ram://doc/c.npz", "wb") as f:
        ...     _ = f.write(buf.getvalue())
        >>> npyio.read_npz("ram://doc/c.npz", "x.npy", tf.float32, shape=(2, 2)).numpy()
        array([[1., 1.],
               [1., 1.]], dtype=float32)
        >>> npyio.read_npz("ram://doc/c.npz", "z", tf.int64)
        Traceback (most recent call last):
        ...
        tensorflow.python.framework.errors_impl.InvalidArgumentError: ...
    """
    dt = npy.parse_dtype(dtype)
    static = static_shape(shape)
    with tf.name_scope(name or "read_npz"):
        path_t = path_tensor(path)
        key_t = key_tensor(key)
        label_t = tf.strings.join([path_t, "[", key_t, "]"])
        contents = read_file(path_t)  # eagerly, a missing archive is "PATH: no such file"
        return _decode(contents, key_t, label_t, dt, static, make_hint(dt, static))


# --- for npyio.dataset --------------------------------------------------------------------------
def read_npz_member(
    path: tf.Tensor, key: str, dt: np.dtype, shape: tf.TensorShape, hint: Hint | None = None
) -> tf.Tensor:
    """The per-element reader of ``npyio.dataset(..., key=...)``: `read_npz` of one path.

    ``hint`` is a `npyio.Hint` for the member's header (from `inspect_npz_prefix`), or
    None for numpy's own header for ``dt`` and ``shape``.
    """
    key_t = key_tensor(key)
    label_t = tf.strings.join([path, "[", key_t, "]"])
    return _decode(
        tf.io.read_file(path),
        key_t,
        label_t,
        dt,
        shape,
        hint if hint is not None else make_hint(dt, shape),
    )
