"""The ``"py_function"`` backend: ``np.load`` in a ``tf.py_function``, as users write it.

Kept for comparison and as an escape hatch; it applies npyio's checks (limits, header, exact
payload size, declared dtype and shape) with the Python header reader before ``np.load``, so it
accepts and refuses what the graph parser does, in the same words.
"""

from __future__ import annotations

import sys

import numpy as np
import tensorflow as tf

from npyio._format import npy
from npyio._format.spec import Spec
from npyio._graph.decode import SKIP_PREFIX
from npyio._io.header import read_checked
from npyio._read import CAPABILITIES
from npyio._read.part import PathReader

__all__ = ["PyFunctionReader", "load", "np_load"]

#: Tries of np.load that CPython 3.11's ast module can spoil (below).
_TRIES = 3


def np_load(file: object, **kwargs: object) -> np.ndarray:
    """``np.load``, tried again where CPython 3.11's ``ast`` fails it spuriously.

    numpy parses a header with ``ast.literal_eval``, and CPython 3.11 keeps the AST
    constructor's recursion depth in state that parallel threads share: under a parallel
    ``tf.py_function`` map, a parse now and then fails with ``SystemError: AST constructor
    recursion depth mismatch`` (CPython gh-106905 and its neighbours). It was seen in
    ``make test`` on Python 3.11.7. The parse itself is fine, so it is simply tried again.
    """
    for attempt in range(_TRIES):
        try:
            if hasattr(file, "seek"):
                file.seek(0)
            return np.load(file, **kwargs)  # type: ignore[arg-type]
        except SystemError as e:
            if "recursion depth mismatch" not in str(e) or attempt == _TRIES - 1:
                raise
    raise AssertionError("unreachable")


def load(name: str, spec: Spec) -> np.ndarray:
    """``np.load`` of ``name`` after npyio's checks; raises `npyio.NpyFormatError` naming it."""
    checked = read_checked(name, spec.limits)
    header = checked.raise_if_bad()
    layout = spec.file
    npy.check_declared(header, layout.dtype, layout.shape, name)  # in the graph parser's order
    npy.check_payload(header, checked.size or 0, name)
    with tf.io.gfile.GFile(name, "rb") as f:
        array = np_load(f, allow_pickle=False)
    return np.asarray(array, dtype=spec.output.dtype, order="C")  # keeps 0-d arrays 0-d


class PyFunctionReader(PathReader):
    """One file through ``tf.py_function(np.load)``. With ``report``, a refused file is also
    named on stderr (this backend runs Python per element anyway, so it prints from Python)."""

    capabilities = CAPABILITIES["py_function"]

    def read_path(self, path: tf.Tensor, spec: Spec) -> tf.Tensor:
        report = self.report

        def run(p: tf.Tensor) -> np.ndarray:
            name = p.numpy().decode()
            try:
                return load(name, spec)
            except (OSError, ValueError, tf.errors.OpError) as e:
                # tf.py_function turns the exception into an op error; keep the file in it.
                message = str(e) if name in str(e) else f"{name}: {e}"
                if report:
                    print(f"{SKIP_PREFIX}{message}", file=sys.stderr, flush=True)
                if name in str(e):
                    raise
                raise ValueError(message) from e

        out = tf.py_function(run, [path], tf.as_dtype(spec.output.dtype))
        out.set_shape(tf.TensorShape(spec.output.shape))
        return out
