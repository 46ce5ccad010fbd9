"""Decoding backends: how one file path becomes one tensor inside a ``tf.data`` map.

- ``"graph"``: npyio's pure-TensorFlow parser (`npyio.read_npy`). The default.
- ``"tfio"``: tensorflow-io's C++ numpy op (``npyio._tfio``), imported only when asked for;
  files it cannot decode correctly fall back to the graph parser (table in README.md).
- ``"py_function"``: ``tf.py_function`` around ``np.load``, the classic approach, kept for
  comparison and as an escape hatch. It runs Python per element (holding the GIL), and a
  pipeline that uses it cannot be serialized: it fails on tf.data service workers, in
  ``Dataset.save`` and snapshots, and on TPU hosts.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np
import tensorflow as tf

from npyio import _format as F
from npyio import _ops
from npyio._ops import read_npy

Reader = Callable[[tf.Tensor, np.dtype, tf.TensorShape, '_ops.Hint | None'], tf.Tensor]
BACKENDS = ("graph", "tfio", "py_function")


def _py_load(
    path: bytes, dt: np.dtype, shape: tf.TensorShape, max_file_size: int | None = None
) -> np.ndarray:
    name = path.decode()
    with tf.io.gfile.GFile(name, "rb") as f:
        F.check_file_size(f.size(), max_file_size, name)
        header = F.read_header(f, name)
        F.check_declared(header, dt, None if shape.rank is None else tuple(shape.as_list()), name)
        F.check_payload(header, f.size(), name)  # the same policy as the graph parser
        f.seek(0)
        array = np.load(f, allow_pickle=False)
    return np.asarray(array, dtype=dt, order="C")  # keeps 0-d arrays 0-d


def _read_py_function(
    path: tf.Tensor,
    dt: np.dtype,
    shape: tf.TensorShape,
    hint: _ops.Hint | None = None,
    max_file_size: int | None = None,
) -> tf.Tensor:
    def load(p: tf.Tensor) -> np.ndarray:
        name = p.numpy().decode()
        try:
            return _py_load(p.numpy(), dt, shape, max_file_size)
        except (OSError, ValueError, tf.errors.OpError) as e:
            # tf.py_function turns the exception into an op error; keep the file in its message.
            if name in str(e):
                raise
            raise ValueError(f"{name}: {e}") from e

    out = tf.py_function(load, [path], tf.as_dtype(dt))
    out.set_shape(shape)
    return out


def _read_graph(
    path: tf.Tensor,
    dt: np.dtype,
    shape: tf.TensorShape,
    hint: _ops.Hint | None = None,
    max_file_size: int | None = None,
    max_header_size: int = F.MAX_HEADER_SIZE,
) -> tf.Tensor:
    header = None if hint is None else hint.header
    return read_npy(
        path, dt, shape, max_file_size=max_file_size, max_header_size=max_header_size,
        _hint_header=header,
    )


def reader(
    backend: str, max_file_size: int | None = None, max_header_size: int = F.MAX_HEADER_SIZE
) -> Reader:
    """The per-file read function of ``backend``, refusing files over ``max_file_size``.

    Raises:
        ValueError: for an unknown backend name, or ``max_file_size`` with ``"tfio"``.
    """
    if backend == "graph":
        return functools.partial(
            _read_graph, max_file_size=max_file_size, max_header_size=max_header_size
        )
    if backend == "py_function":
        return functools.partial(_read_py_function, max_file_size=max_file_size)
    if backend == "tfio" and max_file_size is not None:
        raise ValueError("max_file_size is not supported by the tfio backend")
    if backend == "tfio":
        from npyio import _tfio  # lazily: importing npyio never imports tensorflow_io

        _tfio.load_ops()  # BackendUnavailableError now, when the pipeline is built

        def read_tfio(
            path: tf.Tensor, dt: np.dtype, shape: tf.TensorShape, hint: _ops.Hint | None = None
        ) -> tf.Tensor:
            return _tfio.read_tfio(path, dt, shape, None if hint is None else hint.header)

        return read_tfio
    raise ValueError(f"unknown backend {backend!r} -- expected one of {', '.join(BACKENDS)}")
