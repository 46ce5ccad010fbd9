"""Decoding backends: how one file path becomes one tensor, and the public `read_npy`.

- ``"graph"``: npyio's pure-TensorFlow parser (`npyio._graph.decode`). The default.
- ``"tfio"``: tensorflow-io's C++ numpy op (`npyio._read.tfio`), imported only when asked
  for; files it cannot decode correctly fall back to the graph parser (table in README.md).
- ``"py_function"``: ``tf.py_function`` around ``np.load`` (`npyio._read.py_function`), the
  classic approach, kept for comparison and as an escape hatch. It runs Python per element
  (holding the GIL), and a graph that uses it cannot be serialized: it fails on tf.data service
  workers, in other processes and on TPU hosts.

A backend is chosen once, by `reader`, with the size limits: every backend applies them.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable

import numpy as np
import tensorflow as tf

from npyio._format import npy
from npyio._format.header import Hint, Limits, make_hint
from npyio._graph.decode import parse_args, read_graph
from npyio._graph.ops import path_tensor

__all__ = ["BACKENDS", "Reader", "read_npy", "reader"]

#: path (scalar string tensor), dtype, static shape, hint -> the decoded tensor
Reader = Callable[[tf.Tensor, np.dtype, tf.TensorShape, "Hint | None"], tf.Tensor]
BACKENDS = ("graph", "tfio", "py_function")


def reader(backend: str, limits: Limits = Limits(), report: bool = False) -> Reader:
    """The per-file read function of ``backend``, applying ``limits``. With ``report`` (for
    ``ignore_errors``), every backend also names each file it refuses on stderr, as
    ``npyio: skipping PATH: reason``, whatever ``TF_CPP_MIN_LOG_LEVEL`` says.

    Raises:
        ValueError: for an unknown backend name.
        BackendUnavailableError: for ``"tfio"`` without tensorflow-io ops that load with the
            installed TensorFlow.
    """
    if backend == "graph":
        return functools.partial(read_graph, limits=limits, report=report)
    if backend == "py_function":
        from npyio._read.py_function import read_py_function

        return functools.partial(read_py_function, limits=limits, report=report)
    if backend == "tfio":
        # lazily: importing npyio never imports tensorflow_io
        from npyio._read.tfio import load_ops
        from npyio._read.tfio import read_tfio as tfio_read

        load_ops()  # BackendUnavailableError now, when the pipeline is built

        def read(
            path: tf.Tensor, dt: np.dtype, shape: tf.TensorShape, hint: Hint | None = None
        ) -> tf.Tensor:
            header = None if hint is None else hint.header
            return tfio_read(path, dt, shape, header, limits=limits, report=report)

        return read
    raise ValueError(f"unknown backend {backend!r} -- expected one of {', '.join(BACKENDS)}")


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
        backend: ``"graph"`` (npyio's parser, the default), ``"tfio"`` (tensorflow-io's numpy
            op where it decodes correctly, else the graph parser) or ``"py_function"``
            (``np.load`` in a ``tf.py_function``: not serializable). Every backend applies
            the size limits.

    Returns:
        A tensor of ``dtype`` and the file's shape, in C order.

    Raises:
        TypeError: When the op is built, for a dtype npyio does not decode, a bad ``shape`` or
            a path of another type.
        ValueError: When the op is built, for an unknown backend.
        BackendUnavailableError: When the op is built, for ``backend="tfio"`` without
            tensorflow-io ops that load with the installed TensorFlow.
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
    read = reader(backend, limits)
    with tf.name_scope(name or "read_npy"):
        path_t = path_tensor(path)
        return read(path_t, dt, static, make_hint(dt, static))
