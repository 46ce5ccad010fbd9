"""The backends by name: how one part of an element is read, chosen once per pipeline.

- ``"graph"``: npyio's pure-TensorFlow parser (`npyio._read.part.GraphReader`). The default.
- ``"tfio"``: tensorflow-io's C++ numpy op (`npyio._read.tfio`), imported only when asked for;
  files it cannot decode correctly fall back to the graph parser (table in docs/backends.md).
- ``"py_function"``: ``tf.py_function`` around ``np.load`` (`npyio._read.py_function`), the
  classic approach, kept for comparison and as an escape hatch. It runs Python per element
  (holding the GIL), and a graph that uses it cannot be serialized: it fails on tf.data service
  workers, in other processes and on TPU hosts.

Every backend applies the limits of each part's spec.
"""

from __future__ import annotations

from npyio._read import BACKENDS
from npyio._read.part import GraphReader, Reader

__all__ = ["BACKENDS", "reader"]


def reader(backend: str, report: bool = False, sized: bool = False) -> Reader:
    """The reader of ``backend``. With ``report`` (for ``ignore_errors``), it also names each
    file it refuses on stderr, as ``npyio: skipping PATH: reason``, whatever
    ``TF_CPP_MIN_LOG_LEVEL`` says. With ``sized`` (files on object storage), the graph reader
    reads files of known size in one request (`npyio._read.part.GraphReader`).

    Raises:
        ValueError: for an unknown backend name.
        BackendUnavailableError: for ``"tfio"`` without tensorflow-io ops that load with the
            installed TensorFlow.
    """
    if backend == "graph":
        return GraphReader(report, sized)
    if backend == "py_function":
        from npyio._read.py_function import PyFunctionReader

        return PyFunctionReader(report)
    if backend == "tfio":
        from npyio._read.tfio import TfioReader  # lazily: importing npyio never imports tfio

        return TfioReader(report)
    raise ValueError(f"unknown backend {backend!r} -- expected one of {', '.join(BACKENDS)}")
