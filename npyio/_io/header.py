"""Reading ``.npy`` heads in Python: the one header reader of every entry point.

`npyio.dataset` (the element spec and the fast-path hint), `npyio.rows` (every file's rows),
`npyio.inspect` and the ``inspect``/``verify`` commands all read headers here, with the same
limits and the same words as the graph parser (`npyio._format.header` holds what is checked).

A file's first 4 KiB (more only for a header longer than that) and its size are read; the
reference parser (`npyio._format.npy.read_header`) checks them. Local paths are read with
``os.open`` and ``os.fstat``; any other path (``gs://``, ``ram://``, ...) through
``tf.io.gfile``, and only then is TensorFlow imported: this module imports no TensorFlow itself.
Many files are read on a thread pool (`check_files`).
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor

from npyio._format import npy
from npyio._format.files import NO_SUCH_FILE, is_local, one_path
from npyio._format.header import CHUNK, HEAD, Checked, HeaderCache, Limits, data_offset
from npyio._io.files import gfile
from npyio.errors import NpyFormatError

__all__ = ["check_file", "check_files", "inspect", "read_checked", "read_prefix"]


def _read_local(path: str, max_header_size: int, whole: int) -> tuple[bytes, int]:
    fd = os.open(path, os.O_RDONLY)
    try:
        head = os.read(fd, HEAD)
        # A short read, then nothing: the whole file, its size known without an fstat (a
        # syscall that costs as much as the read on a VM, for every file of a dataset).
        if len(head) < HEAD:
            more = os.read(fd, HEAD)
            if not more:
                return head, len(head)
            head += more
        size = os.fstat(fd).st_size
        if size <= whole:  # the whole file
            while len(head) < size and (more := os.read(fd, size - len(head))):
                head += more
            return head, size
        end = data_offset(head, max_header_size)
        while end is not None and len(head) < min(end, size):  # a header longer than HEAD
            more = os.read(fd, end - len(head))
            if not more:
                break
            head += more
        return head, size
    finally:
        os.close(fd)


def _read_gfile(path: str, max_header_size: int, whole: int) -> tuple[bytes, int]:
    import tensorflow as tf

    try:
        with gfile(path).GFile(path, "rb") as f:
            size = f.size()
            if size <= whole:
                return f.read(), int(size)
            head = f.read(HEAD)
            end = data_offset(head, max_header_size)
            if end is not None and end > len(head) == HEAD:
                head += f.read(end - len(head))
        return head, int(size)
    except tf.errors.NotFoundError as e:
        raise FileNotFoundError(NO_SUCH_FILE) from e
    except tf.errors.OpError as e:
        raise OSError(e.message) from e


def read_prefix(
    path: str, max_header_size: int = npy.MAX_HEADER_SIZE, whole: int = -1
) -> tuple[bytes, int]:
    """A file's first bytes (at least the whole header, or the whole file) and its size; the
    whole file if it has at most ``whole`` bytes.

    Raises:
        FileNotFoundError: if there is no such file.
        OSError: if it cannot be read (a directory, no permission, ...).
    """
    return (_read_local if is_local(path) else _read_gfile)(path, max_header_size, whole)


def check_file(
    path: str,
    cache: HeaderCache | None = None,
    limits: Limits = Limits(),
    *,
    payload: bool = True,
    data: bool = False,
) -> Checked:
    """Checks one file: its size limit, its header and (with ``payload``) that its size is
    exactly what the header declares, in the graph parser's order; with ``data``, a good file's
    payload is read too (in the same reads, and within ``limits``), for `npy.payload_array`.

    ``cache`` maps header bytes already parsed (by any thread) to their verdict, so a dataset
    whose files share one header is parsed once; a file's own checks are then a dict lookup and
    a size comparison.
    """
    try:
        # with ``data``, the whole file when the size limit allows it (else the limit fails it)
        limit = npy.MAX_NBYTES if limits.max_file_size is None else limits.max_file_size
        whole = limit if data else -1
        head, size = read_prefix(path, limits.max_header_size, whole)
    except FileNotFoundError:
        return Checked(path, None, None, NO_SUCH_FILE)
    except OSError as e:  # a directory named *.npy, no permission, an I/O error, ...
        return Checked(path, None, None, e.strerror.lower() if e.strerror else str(e))
    try:
        npy.check_file_size(size, limits.max_file_size, path)
    except NpyFormatError as e:
        return Checked(path, None, size, e.reason)
    end = data_offset(head, limits.max_header_size)
    key = head[:end] if end is not None and end <= len(head) else None
    known = None if key is None or cache is None else cache.get(key)
    if known is None:
        try:
            # ``head`` holds every byte read_header reads (or the whole file): same verdict.
            header = npy.read_header(io.BytesIO(head), path, max_header_size=limits.max_header_size)
        except NpyFormatError as e:
            return Checked(path, None, size, e.reason)
        known = (header, header.data_offset + header.nbytes)
        if key is not None and cache is not None:
            cache[key] = known
    header, expected = known
    prefix = head[: header.data_offset]
    if payload and size != expected:
        try:
            npy.check_payload(header, size, path)
        except NpyFormatError as e:
            return Checked(path, header, size, e.reason, prefix)
        raise AssertionError(f"{path}: check_payload accepted {size} bytes, not {expected}")
    if not data:
        return Checked(path, header, size, None, prefix)
    if len(head) != expected:  # the file shrank between its stat and its read
        try:
            npy.check_payload(header, len(head), path)
        except NpyFormatError as e:
            return Checked(path, header, size, e.reason, prefix)
    return Checked(path, header, size, None, prefix, head[header.data_offset :])


def _chunks(items: Sequence[str], n: int) -> Iterator[Sequence[str]]:
    for i in range(0, len(items), n):
        yield items[i : i + n]


def check_files(
    paths: Sequence[str],
    jobs: int = 1,
    on_chunk: Callable[[int], None] = lambda n: None,
    limits: Limits = Limits(),
    per_task: int = CHUNK,
) -> list[Checked]:
    """Checks every file, ``jobs`` threads at a time, ``per_task`` files per task; results in the
    order of ``paths``."""
    cache: HeaderCache = {}

    def work(chunk: Sequence[str]) -> list[Checked]:
        return [check_file(p, cache, limits) for p in chunk]

    out: list[Checked] = []
    if jobs <= 1 or len(paths) <= per_task:
        for chunk in _chunks(paths, per_task):
            out += work(chunk)
            on_chunk(len(chunk))
        return out
    pool = ThreadPoolExecutor(jobs, thread_name_prefix="npyio-check")
    try:
        for done in pool.map(work, _chunks(paths, per_task)):
            out += done
            on_chunk(len(done))
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()
    return out


def read_checked(path: str, limits: Limits = Limits(), *, payload: bool = False) -> Checked:
    """One file's header, as `check_file`, raising for a bad file.

    Raises:
        NpyFormatError: naming ``path`` and what is wrong (``no such file or directory`` for a
            missing file).
    """
    checked = check_file(path, None, limits, payload=payload)
    checked.raise_if_bad()
    return checked


def inspect(
    path: str | os.PathLike[str] | bytes,
    *,
    max_header_size: int = npy.MAX_HEADER_SIZE,
    max_file_size: int | None = None,
) -> npy.NpyHeader:
    """Reads and checks the header of a ``.npy`` file, without reading its payload.

    Pure Python: it reads only the header bytes (local files with ``os``, other paths through
    ``tf.io.gfile``, so any TensorFlow filesystem path works: ``gs://``, ``ram://``, ...). It
    applies the same grammar and limits as the graph decoder, so a file ``inspect`` accepts has
    a header ``read_npy`` accepts.

    Args:
        path: The file to inspect (``str``, ``bytes`` or ``os.PathLike``).
        max_header_size: Refuse headers longer than this many bytes.
        max_file_size: Refuse files larger than this many bytes (from the file system's size,
            checked first); ``None`` for no limit.

    Returns:
        An `npyio.NpyHeader` with the version, dtype (with its byte order), shape, fortran_order and
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
    limits = Limits(max_header_size, max_file_size)
    header = read_checked(one_path(path, "path"), limits).header
    assert header is not None
    return header
