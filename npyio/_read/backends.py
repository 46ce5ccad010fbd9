"""The backends by name: how one part of an element is read, chosen once per pipeline.

- ``"graph"``: npyio's pure-TensorFlow parser (`npyio._read.part.GraphReader`). The default.
- ``"tfio"``: tensorflow-io's C++ numpy op (`npyio._read.tfio`), imported only when asked for;
  files it cannot decode correctly fall back to the graph parser (table in docs/backends.md).
- ``"py_function"``: ``tf.py_function`` around ``np.load`` (`npyio._read.py_function`), the
  classic approach, kept for comparison and as an escape hatch. It runs Python per element
  (holding the GIL), and a graph that uses it cannot be serialized: it fails on tf.data service
  workers, in other processes and on TPU hosts.

Every backend applies the limits of each part's spec. What each can do is data
(`npyio._read.CAPABILITIES`): code asks a reader's ``capabilities``, never its name.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import tensorflow as tf

from npyio._format.spec import Spec
from npyio._graph.decode import Fetched
from npyio._read import BACKENDS, Capabilities, capabilities
from npyio._read.part import GraphReader
from npyio._read.rows import RowLayout, RowReader

__all__ = ["BACKENDS", "Reader", "reader", "row_reader"]


class Reader(Protocol):
    """What every builder reads a part through: *fetch* (a path -> its ``.npy`` bytes, or
    the path itself for readers that read it), then *decode* (fetched parts -> tensors,
    checked against their specs). ``capabilities`` says what the reader can do: with
    ``batched``, ``decode`` takes a batch of fetched parts."""

    capabilities: Capabilities
    report: bool

    def fetch(self, path: tf.Tensor, spec: Spec) -> Fetched: ...

    def decode(
        self, fetched: Sequence[Fetched], specs: Sequence[Spec], batched: bool = False
    ) -> list[tf.Tensor]: ...

    def read(self, paths: Sequence[tf.Tensor], specs: Sequence[Spec]) -> list[tf.Tensor]: ...


def reader(backend: str, report: bool = False, one_get: bool = False) -> Reader:
    """The reader of ``backend``. With ``report`` (for ``ignore_errors``), it also names each
    file it refuses on stderr, as ``npyio: skipping PATH: reason``, whatever
    ``TF_CPP_MIN_LOG_LEVEL`` says. With ``one_get`` (files on object storage), a reader that
    can (``capabilities.one_get``) reads files of known size in one request.

    Raises:
        ValueError: for an unknown backend name.
        BackendUnavailableError: for ``"tfio"`` without tensorflow-io ops that load with the
            installed TensorFlow.
    """
    capabilities(backend)  # ValueError for an unknown name
    if backend == "py_function":
        from npyio._read.py_function import PyFunctionReader

        return PyFunctionReader(report)
    if backend == "tfio":
        from npyio._read.tfio import TfioReader  # lazily: importing npyio never imports tfio

        return TfioReader(report)
    return GraphReader(report, one_get)


def row_reader(
    backend: str, layouts: Sequence[RowLayout], chunk: int, remote: bool = False
) -> RowReader:
    """The reader of row ranges of ``backend`` (`npyio._read.rows`), for pieces whose sides'
    rows look like ``layouts``, in records of ``chunk`` rows; ``remote`` for files on object
    storage.

    Raises:
        ValueError: for an unknown backend name, or one that reads no row ranges
            (``capabilities.rows``).
    """
    if not capabilities(backend).rows:
        able = ", ".join(name for name in BACKENDS if capabilities(name).rows)
        raise ValueError(f"backend {backend!r} reads no row ranges -- expected one of {able}")
    return RowReader(layouts, chunk, remote)
