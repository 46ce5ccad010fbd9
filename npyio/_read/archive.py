"""`decode_npz`: a member of an ``.npz`` archive's bytes, read by the same `GraphReader` steps
as `npyio.read_npz` (which reads the archive from its path first)."""

from __future__ import annotations

import tensorflow as tf

from npyio._format import npy
from npyio._format.header import make_hint
from npyio._format.spec import Spec
from npyio._graph.zip import key_tensor
from npyio._read.part import GraphReader, member_name

__all__ = ["decode_npz"]


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
    dims = npy.parse_shape(shape)
    with tf.name_scope(name or "decode_npz"):
        contents = tf.convert_to_tensor(contents, tf.string, name="contents")
        if contents.shape.rank != 0:
            raise ValueError(f"contents must be a scalar string, got shape {contents.shape}")
        key_t = key_tensor(key)
        graph = GraphReader()
        fetched = graph.take_member(contents, key_t, member_name(tf.constant("<bytes>"), key_t))
        return graph.decode([fetched], [Spec.whole(dt, dims, make_hint(dt, dims))])[0]
