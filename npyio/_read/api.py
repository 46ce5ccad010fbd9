"""The public readers: `read_npy` and `read_npz` (a path in, its tensor out)."""

from __future__ import annotations

import os

import tensorflow as tf

from npyio._format import npy
from npyio._format.header import make_hint
from npyio._format.spec import Spec
from npyio._graph.decode import parse_args
from npyio._graph.ops import path_tensor
from npyio._graph.zip import key_tensor
from npyio._read import choose_backend
from npyio._read.backends import reader, usable
from npyio._read.part import GraphReader

__all__ = ["read_npy", "read_npz"]


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
    dims = npy.parse_shape(shape)
    spec = Spec.whole(dt, dims, make_hint(dt, dims))
    graph = GraphReader()
    with tf.name_scope(name or "read_npz"):
        # eagerly, a missing archive is "PATH: no such file or directory"
        fetched = graph.fetch_member(path_tensor(path), key_tensor(key))
        return graph.decode([fetched], [spec])[0]


@tf.autograph.experimental.do_not_convert
def read_npy(
    path: tf.Tensor | str | bytes | os.PathLike[str],
    dtype: object,
    shape: object = None,
    *,
    name: str | None = None,
    max_header_size: int = npy.MAX_HEADER_SIZE,
    max_file_size: int | None = None,
    backend: str = "graph",
) -> tf.Tensor:
    """Reads a ``.npy`` file with ``tf.io.read_file`` and decodes it with graph ops only.

    Any TensorFlow filesystem path works (local, ``gs://``, ``ram://``, ...).

    Args:
        path: The file to read: a ``str``, ``bytes``, ``os.PathLike`` or a scalar string
            tensor.
        dtype: The dtype the file must have; see `decode_npy`.
        shape: Optional static shape the file must have; ``None`` dims match any size.
        name: Optional name for the op's name scope.
        max_header_size: Refuse headers longer than this many bytes.
        max_file_size: Refuse files larger than this many bytes (``None``: no limit). The file
            is read before it is refused: to avoid reading huge files, check sizes first
            (``npyio verify``).
        backend: ``"graph"`` (npyio's parser, the default), ``"native"`` (npyio's C++ reader
            where it serves the file: a local file of a static native-order C-order shape;
            the graph parser otherwise, and for a file it doubts) or ``"py_function"``
            (``np.load`` in a ``tf.py_function``: not serializable). Every backend applies
            the size limits.

    Returns:
        A tensor of ``dtype`` and the file's shape, in C order.

    Raises:
        TypeError: When the op is built, for a dtype npyio does not decode, a bad ``shape`` or
            a path of another type.
        ValueError: When the op is built, for an unknown backend.
        tf.errors.NotFoundError: When the op runs, if the file does not exist (TensorFlow's
            message names the path).
        tf.errors.InvalidArgumentError: When the op runs, for a file that is not a valid
            ``.npy`` file of ``dtype`` and ``shape``; the message starts with the path.

    Example:
        >>> import numpy as np, npyio, tensorflow as tf
        >>> with tf.io.gfile.GFile("ram://doc/a.npy", "wb") as f:
        ...     np.save(f, np.eye(2, dtype=np.float32))
        >>> npyio.read_npy("ram://doc/a.npy", tf.float32, shape=(2, 2)).numpy()
        array([[1., 0.],
               [0., 1.]], dtype=float32)
    """
    dt, static, limits = parse_args(dtype, shape, max_header_size, max_file_size)
    dims = npy.parse_shape(shape)
    spec = Spec.whole(dt, dims, make_hint(dt, static), None, limits)
    # a path given as a tensor may be anywhere: the native reader doubts what it cannot open
    where = (os.fsdecode(path),) if isinstance(path, (str, bytes, os.PathLike)) else ()
    read = reader(usable(choose_backend(backend, (spec,), where, False)))
    with tf.name_scope(name or "read_npy"):
        return read.read([path_tensor(path)], [spec])[0]
