"""Reading ``.npy`` headers in Python: the one header reader of every entry point.

`npyio.dataset` (the element spec and the fast-path hint), `npyio.rows` (every file's rows),
`npyio.inspect` and the ``inspect``/``verify`` commands all read headers here, with the same
limits and the same words as the graph parser.

A file's first 4 KiB (more only for a header longer than that) and its size are read; the
reference parser (`npyio._format.npy.read_header`) checks them. Local paths are read with
``os.open`` and ``os.fstat``; any other path (``gs://``, ``ram://``, ...) through
``tf.io.gfile``, and only then is TensorFlow imported: this module imports no TensorFlow itself.
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from npyio._format import npy
from npyio._format.files import NO_SUCH_FILE, gfile, is_local, one_path
from npyio.errors import NpyFormatError

__all__ = [
    "Checked",
    "Hint",
    "Limits",
    "check_file",
    "check_files",
    "inspect",
    "make_hint",
    "read_checked",
]

#: Bytes read from the start of each file; a longer header costs one more read.
HEAD = 4096
#: Files handed to a worker thread at a time.
CHUNK = 256


@dataclass(frozen=True)
class Limits:
    """The size limits every reader applies (``max_file_size`` None: no limit)."""

    max_header_size: int = npy.MAX_HEADER_SIZE
    max_file_size: int | None = None

    def __post_init__(self) -> None:
        npy.parse_limit(self.max_header_size, "max_header_size", allow_none=False)
        npy.parse_limit(self.max_file_size, "max_file_size")


# --- reading the first bytes ------------------------------------------------------------------
def _data_offset(head: bytes, max_header_size: int) -> int | None:
    """Where the payload starts, by the fixed fields alone; None if they are not valid."""
    if head[: len(npy.MAGIC_PREFIX)] != npy.MAGIC_PREFIX or len(head) < npy.MAGIC_LEN:
        return None
    len_size = npy.HEADER_LEN_SIZE.get((head[6], head[7]))
    if len_size is None or len(head) < npy.MAGIC_LEN + len_size:
        return None
    hlen = int.from_bytes(head[npy.MAGIC_LEN : npy.MAGIC_LEN + len_size], "little")
    return npy.MAGIC_LEN + len_size + hlen if hlen <= max_header_size else None


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
        end = _data_offset(head, max_header_size)
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
            end = _data_offset(head, max_header_size)
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


# --- checking ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Checked:
    """One file's verdict: its header and size, or why it is bad."""

    path: str
    header: npy.NpyHeader | None
    size: int | None  # the file's size in bytes, None if it could not be read
    reason: str | None = None  # None for a good file
    prefix: bytes = b""  # the file's first data_offset bytes, when the header is good
    data: bytes = b""  # the payload, when asked for (`check_file`'s ``data``) and good

    @property
    def ok(self) -> bool:
        return self.reason is None

    def raise_if_bad(self) -> npy.NpyHeader:
        """The header of a good file; `NpyFormatError` naming the file otherwise."""
        if self.reason is not None or self.header is None:
            raise NpyFormatError(self.path, self.reason or "no header")
        return self.header


#: header bytes -> (parsed header, the file size it implies)
HeaderCache = dict[bytes, tuple[npy.NpyHeader, int]]


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
    end = _data_offset(head, limits.max_header_size)
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
    limits = Limits(max_header_size, max_file_size)
    header = read_checked(one_path(path, "path"), limits).header
    assert header is not None
    return header


# --- the header fast path ---------------------------------------------------------------------
@dataclass(frozen=True)
class Hint:
    """A header that files are expected to share byte for byte, already checked in Python.

    A file whose first ``len(header)`` bytes equal ``header`` and whose size is ``size`` is
    decoded without parsing; any other file goes through the full parser.
    """

    header: bytes
    size: int
    little_endian: bool
    fortran_order: bool

    def usable(self, limits: Limits) -> bool:
        """Whether files like this one pass ``limits`` (else the full parser says why not)."""
        # max_header_size limits the header text, not the magic, version and length field
        if len(self.header) - (10 if self.header[6] == 1 else 12) > limits.max_header_size:
            return False
        return limits.max_file_size is None or self.size <= limits.max_file_size


def make_hint(dt: np.dtype, shape: object, header: bytes | None = None) -> Hint | None:
    """A `Hint` for files of ``dt`` and fully static ``shape``.

    ``header`` is a file's first ``data_offset`` bytes (the dataset passes its first file's);
    by default the header numpy's ``np.save`` writes for ``dt`` and ``shape``. Returns None if
    the shape is not static or the header does not describe exactly ``dt`` and ``shape``.
    """
    dims = npy.parse_shape(shape)
    if dims is None or any(d is None for d in dims):
        return None
    if header is None:
        buf = io.BytesIO()
        descr = dt.newbyteorder(npy.NATIVE_ORDER).str  # type: ignore[arg-type]
        d = {"descr": descr, "fortran_order": False, "shape": dims}
        np.lib.format.write_array_header_1_0(buf, d)
        header = buf.getvalue()
    try:
        parsed = npy.read_header(io.BytesIO(header), "<hint>")
        npy.check_declared(parsed, dt, dims, "<hint>")
    except NpyFormatError:
        return None
    if parsed.data_offset != len(header):
        return None
    order = parsed.dtype.byteorder
    little = order == "<" or (order in "|=" and npy.NATIVE_ORDER == "<")
    return Hint(header, len(header) + parsed.nbytes, little, parsed.fortran_order)
