"""``npyio.inspect``: read one file's header in Python, through ``tf.io.gfile``."""

from __future__ import annotations

import os

import tensorflow as tf

from npyio import _format as F
from npyio.errors import NpyFormatError


def inspect(
    path: str | os.PathLike[str],
    *,
    max_header_size: int = F.MAX_HEADER_SIZE,
    max_file_size: int | None = None,
) -> F.NpyHeader:
    """Reads and checks the header of a ``.npy`` file, without reading its payload.

    Pure Python: it reads only the header bytes, through ``tf.io.gfile``, so any TensorFlow
    filesystem path works (local, ``gs://``, ``ram://``, ...). It applies the same grammar and
    limits as the graph decoder, so a file ``inspect`` accepts has a header ``read_npy`` accepts.

    Args:
        path: The file to inspect.
        max_header_size: Refuse headers longer than this many bytes.
        max_file_size: Refuse files larger than this many bytes (from the file system's size,
            checked first); ``None`` for no limit.

    Returns:
        An `NpyHeader` with the version, dtype (with its byte order), shape, fortran_order and
        data_offset.

    Raises:
        NpyFormatError: if the file is missing or its header is not one npyio can decode; the
            message names the path and what is wrong.

    Example:
        >>> import numpy as np, npyio, tensorflow as tf
        >>> with tf.io.gfile.GFile("ram://doc/b.npy", "wb") as f:
        ...     np.save(f, np.zeros((4, 3), dtype=">f8"))
        >>> header = npyio.inspect("ram://doc/b.npy")
        >>> header.version, header.dtype, header.shape, header.fortran_order, header.data_offset
        ((1, 0), dtype('>f8'), (4, 3), False, 128)
    """
    path = os.fspath(path)
    try:
        with tf.io.gfile.GFile(path, "rb") as f:
            F.parse_limit(max_header_size, "max_header_size", allow_none=False)
            if F.parse_limit(max_file_size, "max_file_size") is not None:
                F.check_file_size(f.size(), max_file_size, path)
            return F.read_header(f, path, max_header_size=max_header_size)
    except tf.errors.NotFoundError as e:
        raise NpyFormatError(path, "no such file") from e
