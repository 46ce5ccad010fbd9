"""The backends by name: how one part of an element is read, chosen once per pipeline.

- ``"native"``: npyio's C++ op (`npyio._read.native`), a batch of files (local, or objects
  of any TensorFlow file system: ``gs://``, ``ram://``) straight into one tensor; the graph
  parser decides every file it doubts, and reads every plan it does not serve. The default
  of `npyio.dataset`. Where the op cannot be built (no compiler, Windows, ``NPYIO_NATIVE=0``),
  the graph parser reads instead (`available`).
- ``"graph"``: npyio's pure-TensorFlow parser (`npyio._read.part.GraphReader`).
- ``"py_function"``: ``tf.py_function`` around ``np.load`` (`npyio._read.py_function`), the
  classic approach, kept for comparison and as an escape hatch. It runs Python per element
  (holding the GIL), and a graph that uses it cannot be serialized: it fails on tf.data service
  workers, in other processes and on TPU hosts.

Every backend applies the limits of each part's spec. What each can do is data
(`npyio._read.CAPABILITIES`): code asks a reader's ``capabilities``, never its name.
"""

from __future__ import annotations

from collections.abc import Sequence

from npyio._format.files import is_local, is_remote
from npyio._read import BACKENDS, capabilities
from npyio._read.part import GraphReader, Reader
from npyio._read.rows import NativeRowReader, RowLayout, RowReader

__all__ = ["BACKENDS", "Reader", "available", "reader", "row_reader", "usable"]


def reader(backend: str, report: bool = False, one_get: bool = False) -> Reader:
    """The reader of ``backend``. With ``report`` (for ``ignore_errors``), it also names each
    file it refuses on stderr, as ``npyio: skipping PATH: reason``, whatever
    ``TF_CPP_MIN_LOG_LEVEL`` says. With ``one_get`` (files on object storage), a reader that
    can (``capabilities.one_get``) reads files of known size in one request.

    Raises:
        ValueError: for an unknown backend name.
    """
    capabilities(backend)  # ValueError for an unknown name
    if backend == "py_function":
        from npyio._read.py_function import PyFunctionReader

        return PyFunctionReader(report)
    if backend == "native":
        from npyio._read.native import NativeReader  # lazily: it loads the op

        return NativeReader(report, one_get)
    return GraphReader(report, one_get)


def available(backend: str) -> bool:
    """Whether ``backend``'s reader can be built here: False for ``"native"`` when the op
    cannot be built or loaded (`npyio._native.ops` has then said why, once, on stderr), or
    is turned off (``NPYIO_NATIVE=0``).

    Raises:
        BackendUnavailableError: for ``"native"`` with ``NPYIO_NATIVE=1``, naming why not.
    """
    if backend != "native":
        return True
    from npyio import _native  # lazily: a build, at first use

    return _native.ops() is not None


def usable(backend: str) -> str:
    """``backend``, or the backend it falls back to when it is not `available` here."""
    fallback = capabilities(backend).fallback
    if fallback is None or available(backend):
        return backend
    return usable(fallback)


def row_reader(
    backend: str, layouts: Sequence[RowLayout], chunk: int, firsts: Sequence[str] = ()
) -> RowReader:
    """The reader of row ranges of ``backend`` (`npyio._read.rows`), for pieces whose sides'
    rows look like ``layouts``, in records of ``chunk`` rows, of files whose first paths (one
    per side: a side's files share a file system) are ``firsts``.

    The one rule of which reader reads rows where: the native backend's reader
    (`NativeRowReader`) reads local files only; for files of another file system (``ram://``,
    ``gs://``) it gives the graph's, told whether they are on object storage.

    Raises:
        ValueError: for an unknown backend name, or one that reads no row ranges
            (``capabilities.rows``).
    """
    if not capabilities(backend).rows:
        able = ", ".join(name for name in BACKENDS if capabilities(name).rows)
        raise ValueError(f"backend {backend!r} reads no row ranges -- expected one of {able}")
    if backend == "native" and all(is_local(path) for path in firsts):
        return NativeRowReader(layouts, chunk)
    return RowReader(layouts, chunk, any(is_remote(path) for path in firsts))
