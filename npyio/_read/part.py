"""Readers: how one part of an element (a file, or a member of an ``.npz`` archive) becomes
its tensor."""

from __future__ import annotations

import re

import numpy as np
import tensorflow as tf

from npyio._format.files import NO_SUCH_FILE
from npyio._format.header import Hint, Limits
from npyio._graph.decode import decode_one

__all__ = ["read_error", "read_file", "read_graph"]


# TensorFlow's eager ReadFile errors: "{{function_node ...}} PATH; REASON [Op:ReadFile] name: "
_TF_PREFIX = re.compile(r"^\{\{function_node [^}]*\}\}\s*")
_TF_SUFFIX = re.compile(r"\s*\[Op:\w+\].*$", re.DOTALL)


def read_error(error: tf.errors.OpError, name: str) -> str:
    """The reason in a ``tf.io.read_file`` error about ``name``, without TensorFlow's
    decorations: `NO_SUCH_FILE` for a missing file (whose message some file systems, ram://,
    leave empty), else TensorFlow's words ("is a directory", ...)."""
    if isinstance(error, tf.errors.NotFoundError):
        return NO_SUCH_FILE
    reason = _TF_SUFFIX.sub("", _TF_PREFIX.sub("", error.message))
    for separator in ("; ", ": "):
        if reason.startswith(name + separator):
            reason = reason[len(name) + len(separator) :]
    return reason[:1].lower() + reason[1:] if reason else type(error).__name__


def read_file(path: tf.Tensor) -> tf.Tensor:
    """``tf.io.read_file(path)`` (a scalar string); eagerly, an error's message is
    ``"PATH: reason"``, as npyio's own are, not TensorFlow's ``"{{function_node ...}} PATH;
    No such file or directory [Op:ReadFile]"``. (In a graph its error is TensorFlow's.)"""
    if not tf.executing_eagerly():
        return tf.io.read_file(path)
    try:
        return tf.io.read_file(path)
    except tf.errors.OpError as e:
        name = path.numpy().decode("utf-8", "replace")
        raise type(e)(None, None, f"{name}: {read_error(e, name)}") from None


def read_graph(
    path: tf.Tensor,
    dt: np.dtype,
    shape: tf.TensorShape,
    hint: Hint | None,
    limits: Limits,
    report: bool = False,
) -> tf.Tensor:
    """The graph backend: ``tf.io.read_file`` and `decode_one` (``path``: a scalar string);
    with ``report``, a refused file is also named on stderr (for ``ignore_errors``)."""
    return decode_one(read_file(path), path, dt, shape, hint, limits, report)
