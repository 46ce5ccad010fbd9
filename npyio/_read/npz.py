"""The per-element reader of ``npyio.dataset(..., key=...)``."""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from npyio._format.header import Hint, make_hint
from npyio._graph.zip import decode_member, key_tensor

__all__ = ["read_npz_member"]


def read_npz_member(
    path: tf.Tensor, key: str, dt: np.dtype, shape: tf.TensorShape, hint: Hint | None = None
) -> tf.Tensor:
    """The per-element reader of ``npyio.dataset(..., key=...)``: `read_npz` of one path.

    ``hint`` is a `npyio.Hint` for the member's header (from `inspect_npz_prefix`), or
    None for numpy's own header for ``dt`` and ``shape``.
    """
    key_t = key_tensor(key)
    label_t = tf.strings.join([path, "[", key_t, "]"])
    return decode_member(
        tf.io.read_file(path),
        key_t,
        label_t,
        dt,
        shape,
        hint if hint is not None else make_hint(dt, shape),
    )
