"""Paths as text, and the one place that tells local paths from other file systems.

No I/O: local paths are read with ``os`` and any other path (``gs://``, ``ram://``, ...) with
``tf.io.gfile`` by `npyio._io.files`; here are the rules that choose (`is_local`,
`is_remote`), the argument normalisers every entry point shares (`one_path`, `path_text`) and
the short descriptions errors use for bad arguments (`describe`, `short`, `shown`, `named`).
"""

from __future__ import annotations

import itertools
import os
import posixpath
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = [
    "NO_SUCH_FILE",
    "UnknownSchemeError",
    "describe",
    "empty_path",
    "is_local",
    "is_remote",
    "member_name",
    "named",
    "one_path",
    "path_text",
    "short",
    "shown",
]

NO_SUCH_FILE = "no such file or directory"
#: Names listed in an error (the rest are counted).
MAX_NAMED = 10
#: Items of a bad argument shown in an error.
MAX_SHOWN = 3
#: Characters of one item's repr shown in an error.
MAX_REPR = 80


def member_name(path: str, key: str) -> str:
    """How errors name a member of an ``.npz`` archive: ``path[key]``."""
    return f"{path}[{key}]"


def named(names: Sequence[str], limit: int = MAX_NAMED) -> str:
    """The first ``limit`` of ``names``, joined, the rest counted: ``a, b and 3 more``."""
    shown_names = ", ".join(names[:limit])
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return shown_names + more


def is_local(path: str) -> bool:
    """Whether ``path`` is on the local file system (read with ``os``, not ``tf.io.gfile``)."""
    return "://" not in path


def join(directory: str, name: str) -> str:
    """``name`` inside ``directory``: with ``os.path`` locally, with ``/`` in a URL."""
    return os.path.join(directory, name) if is_local(directory) else posixpath.join(directory, name)


def parent(path: str) -> str:
    """The directory that holds ``path`` (``""`` for a bare local name), as `join` builds it."""
    return os.path.dirname(path) if is_local(path) else posixpath.dirname(path)


class UnknownSchemeError(ValueError):
    """A path whose scheme this TensorFlow has no file system for."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path, self.reason = path, reason


#: Where the file systems TensorFlow itself lacks come from.
SCHEME_PROVIDERS = {
    scheme: "tensorflow-io (its file systems register on `import tensorflow_io`; tensorflow-io "
    "0.37.1, the last release, loads only with TensorFlow 2.16.x)"
    for scheme in ("s3", "hdfs", "viewfs", "har", "http", "https", "az", "oss")
}


def unknown_scheme(scheme: str, tf_version: str) -> str:
    provider = SCHEME_PROVIDERS.get(scheme, "a TensorFlow file-system plug-in that registers it")
    return (
        f"TensorFlow {tf_version} has no file system for {scheme}:// -- it is provided by "
        f"{provider}"
    )


def is_remote(path: str) -> bool:
    """Whether ``path`` is on a file system with latency per request (object storage, not the
    local disk and not TensorFlow's in-memory ``ram://``)."""
    return "://" in path and path.split("://", 1)[0] not in ("ram", "file")


def short(item: object) -> str:
    """One item's repr, cut short: a bad argument may hold a very long string."""
    text = repr(item)
    return text if len(text) <= MAX_REPR else text[: MAX_REPR - 3] + "..."


def shown(items: Sequence[Any], total: int | None = None) -> str:
    """The first few ``items`` (of ``total``, by default all of them) as a short list."""
    total = len(items) if total is None else total
    head = ", ".join(short(x) for x in itertools.islice(items, MAX_SHOWN))
    more = f", ... ({total} in all)" if total > MAX_SHOWN else ""
    return f"[{head}{more}]"


def is_array(spec: object) -> bool:
    """A numpy array or a tensor (eager or symbolic), told apart without importing TensorFlow."""
    return isinstance(spec, np.ndarray) or (
        hasattr(spec, "dtype") and hasattr(spec, "shape") and not isinstance(spec, np.generic)
    )


def describe(spec: object) -> str:
    """A short description of a bad argument: never a whole array, never iterating an object
    that is not a sequence (a generator or a ``tf.data.Dataset`` may be endless)."""
    if isinstance(spec, (str, bytes, os.PathLike)):
        return short(spec)
    name = type(spec).__name__
    if is_array(spec):
        dtype = spec.dtype  # type: ignore[attr-defined]
        dtype = dtype if isinstance(dtype, np.dtype) else getattr(dtype, "name", dtype)
        about = f"{name} of dtype {dtype} and shape {tuple(spec.shape)}"  # type: ignore[attr-defined]
        values = getattr(spec, "numpy", None)
        try:
            flat = np.asarray(values() if values is not None else spec).reshape(-1)
        except Exception:  # a symbolic tensor has no values to show
            return about
        return f"{about} {shown(flat[:MAX_SHOWN].tolist(), flat.size)}"
    if isinstance(spec, Sequence):
        return f"{name} {shown(spec)}"
    return f"{name} {short(spec)}"


def path_text(item: object) -> str | None:
    """One path as a str: str, bytes, os.PathLike (numpy str/bytes scalars are str/bytes);
    None for anything else, or an empty path."""
    if isinstance(item, (str, bytes, os.PathLike)):
        # str(): a str subclass (numpy.str_) is not one to os.scandir, which lists it as bytes
        text = str(os.fsdecode(item))
        return text if text else None
    return None


def as_array(spec: object, what: str) -> np.ndarray | None:
    """A numpy array or an eager tensor as a numpy array (None for anything else).

    Raises:
        TypeError: for a tensor with no value yet (a symbolic one, inside ``tf.function``).
    """
    if isinstance(spec, np.ndarray):
        return spec
    if not is_array(spec):
        return None
    values = getattr(spec, "numpy", None)  # an eager tf.Tensor or tf.Variable
    try:
        return np.asarray(values() if values is not None else spec)
    except NotImplementedError as e:  # a symbolic tf.Tensor: no value until the graph runs
        raise TypeError(
            f"{what}: a symbolic tensor has no value when the pipeline is built (inside "
            f"tf.function?); pass paths as Python values, a numpy array or an eager tensor, "
            f"got {describe(spec)}"
        ) from e


def scalar_path_text(spec: object, what: str) -> str | None:
    """A 0-d array or tensor of one path, as a str (None for anything else)."""
    if isinstance(spec, (str, bytes, os.PathLike)) or not is_array(spec):
        return None
    if len(tuple(getattr(spec, "shape", (0,)))) != 0:
        return None
    array = as_array(spec, what)
    return None if array is None else path_text(array.item())


def empty_path(what: str) -> ValueError:
    return ValueError(f"{what}: the path is empty ('')")


def one_path(spec: object, what: str = "path") -> str:
    """A single path argument as a str (``str``, ``bytes``, ``os.PathLike``, a 0-d array or
    eager tensor).

    Raises:
        TypeError: for anything else. ValueError: for an empty path.
    """
    text = path_text(spec)
    if text is None:
        text = scalar_path_text(spec, what)
    if text is None:
        if isinstance(spec, (str, bytes, os.PathLike)):
            raise empty_path(what)
        raise TypeError(
            f"{what}: expected a path (str, bytes or os.PathLike), got {describe(spec)}"
        )
    return text
