"""Files, local or not: local paths with ``os``, any other with ``tf.io.gfile`` (`gfile`,
which imports TensorFlow on first use and names a scheme this TensorFlow lacks)."""

from __future__ import annotations

import contextlib
import os
from typing import Any, BinaryIO, cast

from npyio._format.files import UnknownSchemeError, is_local, unknown_scheme

__all__ = [
    "TF_GCS_BLOCK_MB",
    "exists",
    "gcs_block_mb",
    "gfile",
    "listdir",
    "makedirs",
    "open_read",
    "open_write",
    "read_text",
    "remove",
    "rename",
]


def gfile(path: str) -> Any:
    """``tf.io.gfile``, for ``path`` (not local), importing TensorFlow on first use.

    Raises:
        ValueError: naming the scheme, and what provides it, when this TensorFlow has no file
            system for ``path``'s (``s3://`` on TF 2.21, say), instead of TensorFlow's bare
            "not found" or "not implemented".
    """
    import tensorflow as tf

    scheme = path.split("://", 1)[0]
    if scheme not in tf.io.gfile.get_registered_schemes():
        raise UnknownSchemeError(path, unknown_scheme(scheme, tf.__version__))
    return tf.io.gfile


#: TensorFlow's GCS read block when ``GCS_READ_CACHE_BLOCK_SIZE_MB`` is not set.
TF_GCS_BLOCK_MB = 64


def gcs_block_mb() -> int:
    """The read block, in MiB, of TensorFlow's GCS file system, as far as npyio can tell: the
    environment's ``GCS_READ_CACHE_BLOCK_SIZE_MB`` (0 reads as 1 MiB, as TensorFlow's reader
    then fetches what each read asks, at least 1 MiB), else TensorFlow's default."""
    try:
        return max(int(os.environ.get("GCS_READ_CACHE_BLOCK_SIZE_MB", TF_GCS_BLOCK_MB)), 1)
    except ValueError:
        return TF_GCS_BLOCK_MB


def exists(path: str) -> bool:
    """Whether ``path`` exists (a broken symlink counts: it is there, though unreadable)."""
    return os.path.lexists(path) if is_local(path) else bool(gfile(path).exists(path))


def open_read(path: str) -> BinaryIO:
    """``path`` opened for reading: with ``open`` locally, ``tf.io.gfile`` elsewhere.

    Raises:
        FileNotFoundError: if there is no such file.
        OSError: for TensorFlow's other errors (its message).
    """
    if is_local(path):
        return open(path, "rb")
    import tensorflow as tf

    if not gfile(path).exists(path):
        raise FileNotFoundError(path)
    try:
        return cast(BinaryIO, gfile(path).GFile(path, "rb"))
    except tf.errors.OpError as e:
        raise OSError(e.message) from e


def open_write(path: str) -> Any:
    if is_local(path):
        return open(path, "wb")
    return gfile(path).GFile(path, "wb")


def read_text(path: str) -> str:
    if is_local(path):
        with open(path, encoding="utf-8") as f:
            return f.read()
    with gfile(path).GFile(path, "r") as f:
        return str(f.read())


def listdir(directory: str) -> list[str]:
    """The names in ``directory`` ([] when it is not a directory)."""
    if is_local(directory):
        return os.listdir(directory) if os.path.isdir(directory) else []
    fs = gfile(directory)
    return [n.rstrip("/") for n in fs.listdir(directory)] if fs.isdir(directory) else []


def rename(src: str, dst: str) -> None:
    if is_local(src):
        os.replace(src, dst)
    else:
        gfile(src).rename(src, dst, overwrite=True)


def remove(path: str) -> None:
    """Removes the file ``path``, if it is there."""
    if is_local(path):
        with contextlib.suppress(FileNotFoundError):
            os.remove(path)
    elif gfile(path).exists(path):
        gfile(path).remove(path)


def makedirs(path: str) -> None:
    if is_local(path):
        os.makedirs(path, exist_ok=True)
    else:
        gfile(path).makedirs(path)
