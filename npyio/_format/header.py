"""What the Python header reader works with, without any I/O: the size limits every reader
applies (`Limits`), how much of a file's head to read (`HEAD`, `CHUNK`) and where its payload
starts (`data_offset`), one file's verdict (`Checked`), and the fast-path `Hint` that lets files
sharing a checked header skip the parser.

The reader itself, which opens files and reads their heads, is `npyio._io.header` (used by
`npyio.dataset`, `npyio.rows`, `npyio.inspect` and the ``inspect``/``verify`` commands); the
reference parser that checks a head is `npyio._format.npy.read_header`.
"""

from __future__ import annotations

import io
from dataclasses import dataclass

import numpy as np

from npyio._format import npy
from npyio.errors import NpyFormatError

__all__ = [
    "CHUNK",
    "HEAD",
    "Checked",
    "HeaderCache",
    "Hint",
    "Limits",
    "data_offset",
    "make_hint",
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
def data_offset(head: bytes, max_header_size: int) -> int | None:
    """Where the payload starts, by the fixed fields alone; None if they are not valid."""
    if head[: len(npy.MAGIC_PREFIX)] != npy.MAGIC_PREFIX or len(head) < npy.MAGIC_LEN:
        return None
    len_size = npy.HEADER_LEN_SIZE.get((head[6], head[7]))
    if len_size is None or len(head) < npy.MAGIC_LEN + len_size:
        return None
    hlen = int.from_bytes(head[npy.MAGIC_LEN : npy.MAGIC_LEN + len_size], "little")
    return npy.MAGIC_LEN + len_size + hlen if hlen <= max_header_size else None


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
    #: the shape the header says: a part whose files' sizes vary (a window's axes sized by
    #: each file) keeps its first file's hint, for the files like it
    shape: tuple[int, ...] = ()

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
    return Hint(header, len(header) + parsed.nbytes, little, parsed.fortran_order, parsed.shape)
