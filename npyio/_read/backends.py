"""The backends by name, chosen once per pipeline (`reader`)."""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np
import tensorflow as tf

from npyio._format.header import Hint, Limits
from npyio._read.part import read_graph

__all__ = ["BACKENDS", "Reader", "reader"]

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
