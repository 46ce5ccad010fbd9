r"""The ``"tfio"`` backend: tensorflow-io's C++ ``.npy`` reader, behind a guard.

tensorflow-io 0.37.1 (its last release; the ops load only with TensorFlow 2.16.x) reads ``.npy``
files with the op ``IO>NumpyRead``, which crashes the process, returns wrong data or ignores
trailing bytes on some files numpy writes (docs/backends.md has the table;
``tests/read/test_tfio.py`` keeps the evidence). So this module never hands tfio a file it has
not checked first. For every file it reads the size (``IO>FileInfo``), the first `HEAD_BYTES`
bytes and the last `ZIP_WINDOW` bytes (``IO>FileRead``, ranged reads), and calls
``IO>NumpyRead`` only if all of these hold:

- the header is byte for byte in the layout numpy's writer uses (`header_re`): version 1.0,
  shorter than 128 bytes, 16-byte aligned;
- the descr is the one tfio maps to the requested dtype (`TFIO_DTYPES`); the shape has at least
  one dim, every dim is between 1 and 999,999,999, and it matches the requested one;
- the file is exactly as long as the header says, and within the limits;
- its last 64 KiB hold no zip directory signature (`ZIP_SIGNATURES`);
- the machine is little-endian (tfio copies bytes without swapping).

Any other file goes to npyio's graph reader, which decodes every valid file bit for bit like
``np.load`` and refuses invalid ones naming the path. With ``fallback=False`` a *valid* file
that tfio cannot decode is refused instead, with the reason (for benchmarks that measure tfio
alone); invalid files are refused alike in both modes. The guard assumes files do not change
while they are read.

This module imports tensorflow-io only inside `load_ops`; ``import npyio`` never imports it.
"""

from __future__ import annotations

import functools
import io
import math
import os
import re
import sys
import tempfile
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import tensorflow as tf

from npyio._format import npy
from npyio._format.header import Limits, make_hint
from npyio._format.spec import Spec
from npyio._graph.ops import padded_bytes
from npyio._read import CAPABILITIES
from npyio._read.part import GraphReader, PathReader
from npyio._tf import noinline_function, split_values, stateless_call
from npyio.errors import BackendUnavailableError

__all__ = ["TFIO_DTYPES", "TfioOps", "TfioRead", "TfioReader", "load_ops", "read_tfio", "read_with"]

PAIRING = (
    "tensorflow-io 0.37.1 needs TensorFlow 2.16.x, e.g. "
    "pip install 'tensorflow-cpu==2.16.2' 'tensorflow-io==0.37.1'"
)

#: dtype name -> the descr numpy writes for it, which tfio maps to that dtype (and nothing else).
TFIO_DTYPES: dict[str, str] = {
    "int8": "|i1",
    "int16": "<i2",
    "int32": "<i4",
    "int64": "<i8",
    "uint8": "|u1",
    "uint16": "<u2",
    "uint32": "<u4",
    "uint64": "<u8",
    "float32": "<f4",
    "float64": "<f8",
}
#: The longest header tfio's 2-byte length reads right is 127 bytes (it goes through a signed
#: char); with 16-byte alignment that is 118, so the payload starts at byte 128 at the latest.
HEAD_BYTES = 128
#: minizip looks for a zip directory in a file's last 0xffff bytes; we look at one more.
ZIP_WINDOW = 65536
#: minizip's end-of-central-directory record and zip64 locator
ZIP_SIGNATURES = (b"PK\x05\x06", b"PK\x06\x07")
#: tfio parses dims into a C int: 9 digits stay below 2**31.
_DIM = "[1-9][0-9]{0,8}"
_LITTLE_ENDIAN_HOST = sys.byteorder == "little"


def header_re(descr: str) -> str:
    """The header text (after the length field) tfio is trusted with: numpy's writer's layout."""
    return (
        rf"\{{'descr': '{re.escape(descr)}', 'fortran_order': False, "
        rf"'shape': \(({_DIM},|{_DIM}(?:, {_DIM})+)\), \}} *\n"
    )


# --- loading the ops --------------------------------------------------------------------------
@dataclass(frozen=True)
class TfioOps:
    """tensorflow-io's op wrappers that this backend uses.

    Attributes:
        numpy_read: ``IO>NumpyRead`` (``address, filename, array, shape, start, stop, dtype``).
        file_info: ``IO>FileInfo`` (``input``) -> ``(length, compression)``.
        file_read: ``IO>FileRead`` (``input, offset, length, compression``) -> bytes.
        version: tensorflow-io's version string.
    """

    numpy_read: Callable[..., tf.Tensor]
    file_info: Callable[..., Any]
    file_read: Callable[..., tf.Tensor]
    version: str


_LOADED: TfioOps | None = None


def _unavailable(cause: str) -> BackendUnavailableError:
    return BackendUnavailableError(
        f"the tfio backend needs tensorflow-io's ops, which are not usable here ({cause}) -- "
        f"{PAIRING}; installed: TensorFlow {tf.__version__}"
    )


def _one_line(e: BaseException) -> str:
    """The exception on one line (tensorflow-io puts the loader's reason on later lines)."""
    text = " ".join(line.strip() for line in str(e).splitlines() if line.strip())
    return f"{type(e).__name__}: {text}"[:600]


def load_ops() -> TfioOps:
    """Imports tensorflow-io, loads its op library and checks that ``IO>NumpyRead`` works.

    The library is really loaded and the op run once on a small file (the first call only;
    the result is cached), because tensorflow-io 0.37.1 installs with any TensorFlow but its
    ``.so`` loads only with TensorFlow 2.16.x.

    Returns:
        The op wrappers, as a `TfioOps`.

    Raises:
        BackendUnavailableError: if tensorflow-io is not installed, its ops do not load with the
            installed TensorFlow, or they do not read a ``.npy`` file correctly. The message
            names the installed TensorFlow version and the pairing that works.
    """
    global _LOADED
    if _LOADED is not None:
        return _LOADED
    caught: list[warnings.WarningMessage] = []
    try:
        # tensorflow-io warns (instead of raising) when its libraries fail to load on import.
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            import tensorflow_io
            from tensorflow_io.python.ops import core_ops

            # attribute access is what loads libtensorflow_io.so (core_ops is a lazy loader)
            ops = TfioOps(
                numpy_read=core_ops.io_numpy_read,
                file_info=core_ops.io_file_info,
                file_read=core_ops.io_file_read,
                version=str(getattr(tensorflow_io, "__version__", "unknown")),
            )
    except ImportError as e:
        raise _unavailable(f"tensorflow-io is not importable: {_one_line(e)}") from e
    except (NotImplementedError, OSError, AttributeError, RuntimeError, tf.errors.OpError) as e:
        loaded = [str(w.message).splitlines()[0][:200] for w in caught][:1]
        raise _unavailable(
            f"its op library did not load: {_one_line(e)}" + "".join(f"; {w}" for w in loaded)
        ) from e
    _smoke_test(ops)
    _LOADED = ops
    return ops


def _smoke_test(ops: TfioOps) -> None:
    """Runs the three ops once on a real file; raises BackendUnavailableError if they fail."""
    want = np.arange(6, dtype="<i4").reshape(2, 3)
    fd, name = tempfile.mkstemp(suffix=".npy", prefix="npyio-tfio-")
    try:
        with os.fdopen(fd, "wb") as f:
            np.save(f, want)
        expected_size = os.path.getsize(name)
        with tf.init_scope():  # run eagerly even when called while a graph is being built
            zero = tf.constant(0, tf.int64)
            got = ops.numpy_read(
                address=zero,
                filename=name,
                array="",
                shape=tf.constant(want.shape, tf.int64),
                start=zero,
                stop=tf.constant(-1, tf.int64),
                dtype=tf.int32,
            ).numpy()
            size = int(ops.file_info(name)[0].numpy())
            head = ops.file_read(name, zero, tf.constant(6, tf.int64), "").numpy()
    except (tf.errors.OpError, TypeError, ValueError, AttributeError) as e:
        raise _unavailable(f"its ops loaded but failed on a test file: {_one_line(e)}") from e
    finally:
        os.unlink(name)
    if got.tobytes() != want.tobytes() or size != expected_size or head != npy.MAGIC_PREFIX:
        raise _unavailable("its ops loaded but misread a test file")


# --- reading one file -------------------------------------------------------------------------
def _has_zip_signature(tail: tf.Tensor) -> tf.Tensor:
    """Whether ``tail`` holds ``PK\\x05\\x06`` or ``PK\\x06\\x07`` (a byte-exact search)."""
    row = tf.reshape(tail, [1])
    found = [tf.size(split_values(row, sig, maxsplit=1)) > 1 for sig in ZIP_SIGNATURES]
    return tf.logical_or(*found)


def _layout(
    head: tf.Tensor, size: tf.Tensor, dt: np.dtype, shape: tf.TensorShape, limits: Limits
) -> tuple[tf.Tensor, tf.Tensor]:
    """Whether a file's first bytes and size are what tfio reads right; and the dims.

    ``head`` is the file's first ``min(size, HEAD_BYTES)`` bytes. Every op here is total.
    """
    lengths = padded_bytes(head, npy.MAGIC_LEN, 2)
    hlen = lengths[0] + 256 * lengths[1]
    offset = npy.MAGIC_LEN + 2 + hlen
    start = tf.minimum(tf.cast(tf.strings.length(head), tf.int64), npy.MAGIC_LEN + 2)
    text = tf.strings.substr(head, start, tf.minimum(hlen, HEAD_BYTES))  # pos clamped: total
    pattern = header_re(TFIO_DTYPES[dt.name])
    layout_ok = tf.reduce_all(
        [
            tf.strings.substr(head, 0, npy.MAGIC_LEN) == npy.MAGIC_PREFIX + b"\x01\x00",
            hlen < 128,
            offset % 16 == 0,
            tf.cast(tf.strings.length(text), tf.int64) == hlen,
            tf.strings.regex_full_match(text, pattern),
        ]
    )
    # dims are converted only from text the pattern accepted (to_number fails on anything else)
    group = tf.strings.regex_replace(text, pattern, r"\1")
    canon = tf.strings.regex_replace(tf.strings.regex_replace(group, " ", ""), ",$", "")
    tokens = tf.strings.split(tf.where(layout_ok, canon, "0"), ",")
    dims = tf.strings.to_number(tokens, tf.int64)
    # every dim < 1e9, so float64 bounds the product well enough to keep int64 from overflowing
    small = tf.reduce_prod(tf.cast(dims, tf.float64)) * dt.itemsize < float(npy.MAX_NBYTES)
    nbytes = tf.reduce_prod(dims) * dt.itemsize
    checks = [layout_ok, small, size - offset == nbytes, hlen <= limits.max_header_size]
    if limits.max_file_size is not None:  # a file over a limit goes to the graph parser,
        checks.append(size <= limits.max_file_size)  # which refuses it with npyio's words
    if shape.rank is not None:
        known = [(i, d) for i, d in enumerate(shape.as_list()) if d is not None]
        checks.append(tf.size(dims) == shape.rank)
        if known:
            padded = tf.concat([dims, tf.zeros([shape.rank], tf.int64)], 0)
            want = tf.constant([d for _, d in known], tf.int64)
            checks.append(tf.reduce_all(tf.gather(padded, [i for i, _ in known]) == want))
    return tf.reduce_all(checks), dims


def tfio_reads(header: bytes, dt: np.dtype, dims: tuple[int, ...]) -> bool:
    """Whether tfio reads a file with exactly this header (its first data_offset bytes) right.

    The Python twin of `_layout` (less the payload size), for a hint header.
    """
    if dt.name not in TFIO_DTYPES or header[:8] != npy.MAGIC_PREFIX + b"\x01\x00":
        return False
    hlen = int.from_bytes(header[8:10], "little")
    if hlen >= 128 or (10 + hlen) % 16 or len(header) != 10 + hlen:
        return False
    m = re.fullmatch(header_re(TFIO_DTYPES[dt.name]), header[10:].decode("latin-1"))
    if m is None:
        return False
    return tuple(int(t) for t in m.group(1).replace(" ", "").rstrip(",").split(",")) == dims


def _static_hint(
    dt: np.dtype, shape: tf.TensorShape, hint_header: bytes | None, limits: Limits
) -> tuple[bytes, int] | None:
    """A header that tfio reads right for files of ``dt`` and fully static ``shape``, and the
    size of such a file: ``hint_header`` if it is one, else the header numpy's writer makes."""
    if not shape.is_fully_defined() or dt.name not in TFIO_DTYPES:
        return None
    dims = tuple(int(d) for d in shape.as_list())
    buf = io.BytesIO()
    header = {"descr": TFIO_DTYPES[dt.name], "fortran_order": False, "shape": dims}
    np.lib.format.write_array_header_1_0(buf, header)
    for candidate in (hint_header, buf.getvalue()):
        size = None if candidate is None else len(candidate) + math.prod(dims) * dt.itemsize
        if (
            candidate is not None
            and size is not None
            and tfio_reads(candidate, dt, dims)
            # max_header_size bounds the header's length field, as the parser reads it: a
            # v1.0 header (tfio_reads checked it) is 10 bytes of magic, version and length more
            and len(candidate) - 10 <= limits.max_header_size
            and (limits.max_file_size is None or size <= limits.max_file_size)
        ):
            return candidate, size
    return None


def _reads(ops: TfioOps, path: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
    """A file's size, its first ``HEAD_BYTES`` bytes, and whether its tail holds a zip
    signature: one ``IO>FileInfo`` and two ranged ``IO>FileRead``."""
    zero = tf.constant(0, tf.int64)
    size = ops.file_info(path)[0]
    head = ops.file_read(path, zero, tf.minimum(size, HEAD_BYTES), "")
    tail_len = tf.minimum(size, ZIP_WINDOW)
    tail = ops.file_read(path, size - tail_len, tail_len, "")
    return size, head, _has_zip_signature(tail)


def _numpy_read(ops: TfioOps, path: tf.Tensor, dt: np.dtype, dims: tf.Tensor) -> tf.Tensor:
    """``IO>NumpyRead`` of a file that passed the checks (its dims are ``dims``)."""
    zero = tf.constant(0, tf.int64)
    out = ops.numpy_read(
        address=zero,
        filename=path,
        array="",
        shape=dims,
        start=zero,
        stop=tf.constant(-1, tf.int64),
        dtype=tf.as_dtype(dt),
    )
    return tf.reshape(out, dims)  # a no-op, but it gives the result the static rank


@dataclass(frozen=True)
class TfioRead:
    """How the tfio backend reads a file: the part's spec, and whether a valid file tfio cannot
    decode falls back to the graph parser (``fallback``) and refusals are named on stderr
    (``report``). Hashable: the graph functions below are made once per ``TfioRead``."""

    spec: Spec
    fallback: bool = True
    report: bool = False

    @property
    def dt(self) -> np.dtype:
        return self.spec.file.dtype

    @property
    def shape(self) -> tf.TensorShape:
        return tf.TensorShape(self.spec.file.shape)

    @property
    def limits(self) -> Limits:
        return self.spec.limits

    @property
    def hint_header(self) -> bytes | None:
        return None if self.spec.hint is None else self.spec.hint.header


def _decide(
    path: tf.Tensor, head: tf.Tensor, size: tf.Tensor, zip_found: tf.Tensor, how: TfioRead
) -> tf.Tensor:
    """The general path: check the layout, then tfio or the graph branch."""
    ok, dims = _layout(head, size, how.dt, how.shape, how.limits)
    graph = _graph_branch(how)
    return tf.cond(
        tf.logical_and(ok, tf.logical_not(zip_found)),
        lambda: _numpy_read(load_ops(), path, how.dt, dims),
        lambda: graph(path, zip_found),
    )


@functools.lru_cache(maxsize=256)
def _decide_call(how: TfioRead) -> Callable[..., tf.Tensor]:
    """`_decide` as a graph function that is never inlined (one op in a ``tf.cond`` branch)."""
    function = noinline_function(
        lambda path, head, size, zip_found: _decide(path, head, size, zip_found, how),
        [
            tf.TensorSpec([], tf.string),
            tf.TensorSpec([], tf.string),
            tf.TensorSpec([], tf.int64),
            tf.TensorSpec([], tf.bool),
        ],
    )
    return _caller(function, tf.as_dtype(how.dt), how.shape)


def _caller(function: Any, out_type: tf.DType, shape: tf.TensorShape) -> Callable[..., tf.Tensor]:
    """``function`` as a call op that tf.data can checkpoint (`npyio._tf.stateless_call`),
    its output shaped ``shape``."""

    def call(*args: tf.Tensor) -> tf.Tensor:
        out = stateless_call(function, args, [out_type])[0]
        if not tf.executing_eagerly():  # a call op's output has no static shape
            out.set_shape(shape)
        return out

    return call


def _refusal(
    path: tf.Tensor, contents: tf.Tensor, zip_found: tf.Tensor, itemsize: int
) -> tf.Tensor:
    """Why tfio cannot decode a file that npyio's parser accepted (scalar string)."""
    pb = padded_bytes(contents, 0, 12)
    v1 = tf.logical_and(pb[6] == 1, pb[7] == 0)
    hlen = tf.where(
        v1, pb[8] + 256 * pb[9], pb[8] + 256 * pb[9] + 65536 * pb[10] + 16777216 * pb[11]
    )
    header = tf.strings.substr(contents, tf.where(v1, tf.constant(10, tf.int64), 12), hlen)
    order = tf.strings.regex_replace(header, npy.DESCR_EXTRACT, r"\1")
    fortran = tf.strings.regex_replace(header, npy.FORTRAN_EXTRACT, r"\1") == "True"
    canon = tf.strings.regex_replace(
        tf.strings.regex_replace(
            tf.strings.regex_replace(header, npy.SHAPE_EXTRACT, r"\1"), npy.SHAPE_NOISE, ""
        ),
        ",$",
        "",
    )
    version = tf.strings.join([tf.strings.as_string(pb[6]), ".", tf.strings.as_string(pb[7])])
    reasons = [
        (
            tf.logical_not(v1),
            tf.strings.join(["format version ", version, " (tfio reads only 1.0)"]),
        ),
        (fortran, tf.constant("Fortran-order data (tfio reads only C order)")),
        (
            tf.logical_and(order == ">", itemsize > 1),
            tf.constant("big-endian data (tfio copies bytes without swapping)"),
        ),
        (canon == "", tf.constant("a 0-d array (tfio crashes on these)")),
        (
            tf.strings.regex_full_match(canon, r"(.*,)?-?0(,.*)?"),
            tf.constant("an empty array (tfio refuses dims of 0)"),
        ),
        (
            zip_found,
            tf.constant(
                "a zip signature in the last 64 KiB (tfio would read the file as a zip archive)"
            ),
        ),
        (
            tf.constant(True),
            tf.constant(
                "a header that is not byte for byte in numpy's own v1.0 layout under 128 bytes "
                "(tfio's parser refuses or misreads others)"
            ),
        ),
    ]
    conds = tf.stack([c for c, _ in reasons])
    index = tf.argmax(tf.cast(conds, tf.int32))
    reason = tf.gather(tf.stack([r for _, r in reasons]), index)
    return tf.strings.join(
        [
            path,
            ": the tfio backend cannot decode this file (fallback=False) -- expected a "
            "little-endian C-order .npy 1.0 file in numpy's own header layout, got ",
            reason,
        ]
    )


@tf.autograph.experimental.do_not_convert
def read_tfio(
    path: tf.Tensor | str,
    dt: np.dtype,
    shape: tf.TensorShape,
    hint_header: bytes | None = None,
    *,
    fallback: bool = True,
    name: str | None = None,
    limits: Limits = Limits(),
    report: bool = False,
) -> tf.Tensor:
    """Reads one ``.npy`` file with tensorflow-io's ``IO>NumpyRead`` where that is correct.

    Made for a ``tf.data`` map (it builds graph ops only; it also runs eagerly). Each file is
    checked first (see the module docstring); files tfio would misread, crash on or refuse go
    to `npyio.read_npy` instead, or are refused with ``fallback=False``.

    Args:
        path: A scalar string tensor (or str): the file.
        dt: The dtype the file must have, a supported numpy dtype (see
            ``npyio._format.npy.parse_dtype``).
        shape: The static shape the file must have (``None`` dims match any size; an unknown
            rank matches any shape).
        hint_header: Optional first ``data_offset`` bytes of a typical file, for the graph
            decoder's fast path (see `npyio._format.header.make_hint`).
        fallback: If False, refuse valid files that tfio cannot decode instead of decoding
            them with the graph parser (for measuring tfio alone).
        name: Optional name for the op's name scope.
        limits: The size limits. A file over one is never handed to tfio: the graph parser
            refuses it with npyio's message.
        report: Also name each file the graph parser refuses on stderr (``ignore_errors``).

    Returns:
        A tensor of ``dt`` and the file's shape, in C order and native byte order, bit for bit
        what ``np.load`` returns.

    Raises:
        BackendUnavailableError: When the op is built, if tensorflow-io's ops are not usable.
        TypeError: When the op is built, with ``fallback=False`` and a dtype tfio cannot decode.
        tf.errors.NotFoundError: When the op runs, for a missing file (the message names it).
        tf.errors.InvalidArgumentError: When the op runs, for a file that is not a valid
            ``.npy`` file of ``dt`` and ``shape`` (npyio's message), or that tfio cannot decode
            with ``fallback=False``; the message starts with the path.
    """
    dt = npy.parse_dtype(dt)
    dims = npy.parse_shape(shape)
    hint = None if hint_header is None else make_hint(dt, dims, hint_header)
    how = TfioRead(
        Spec.whole(dt, dims, hint or make_hint(dt, dims), None, limits), fallback, report
    )
    with tf.name_scope(name or "read_tfio"):
        path = tf.convert_to_tensor(path, tf.string, name="path")
        if path.shape.rank != 0:
            raise ValueError(f"path must be a scalar string, got shape {path.shape}")
        return read_with(path, how)


def _refuse_when_built(how: TfioRead) -> None:
    """Refuses, when the op is built, what tfio can never decode with ``fallback=False``."""
    if how.fallback:
        return
    if not _LITTLE_ENDIAN_HOST:
        raise BackendUnavailableError(
            "the tfio backend cannot decode anything on a big-endian machine (it copies "
            "bytes without swapping) -- expected fallback=True"
        )
    if how.dt.name not in TFIO_DTYPES:
        raise TypeError(
            f"the tfio backend cannot decode {how.dt.name} (fallback=False) -- expected one "
            f"of {', '.join(TFIO_DTYPES)}"
        )


def _never_tfio(how: TfioRead) -> bool:
    """Whether no file of this spec can go to tfio (decided when the op is built: no tfio op,
    no extra reads): dtypes it lacks, a big-endian host, 0-d and empty shapes."""
    shape = how.shape
    dims = shape.as_list() if shape.rank is not None else []
    return (
        how.dt.name not in TFIO_DTYPES
        or not _LITTLE_ENDIAN_HOST
        or shape.rank == 0
        or any(d == 0 for d in dims)
    )


def read_with(path: tf.Tensor, how: TfioRead) -> tf.Tensor:
    """`read_tfio` of a scalar string ``path``, as ``how`` says."""
    ops = load_ops()
    _refuse_when_built(how)
    if _never_tfio(how):
        if how.fallback:
            return _read_graph(path, how, how.report)
        return _graph_branch(how)(path, tf.constant(False))
    size, head, zip_found = _reads(ops, path)
    hint = _static_hint(how.dt, how.shape, how.hint_header, how.limits)
    if hint is None:
        out = _decide(path, head, size, zip_found, how)
    else:
        # Files with the hint's exact header and size skip the layout check.
        header, expected_size = hint
        fast = tf.reduce_all(
            [
                tf.strings.substr(head, 0, len(header)) == header,
                size == expected_size,
                tf.logical_not(zip_found),
            ]
        )
        general = _decide_call(how)
        dims = tf.constant(how.shape.as_list(), tf.int64)
        out = tf.cond(
            fast,
            lambda: _numpy_read(ops, path, how.dt, dims),
            lambda: general(path, head, size, zip_found),
        )
    out.set_shape(how.shape)
    return out


def _read_graph(path: tf.Tensor, how: TfioRead, report: bool) -> tf.Tensor:
    """npyio's graph reader, with the header fast path of the spec's hint."""
    return GraphReader(report).read([path], [how.spec])[0]


def _refuse_all(path: tf.Tensor, how: TfioRead, zip_found: tf.Tensor) -> tf.Tensor:
    """npyio's error for an invalid file, else the tfio refusal (never returns normally)."""
    decoded = _read_graph(path, how, report=False)
    with tf.control_dependencies([decoded]):
        message = _refusal(path, tf.io.read_file(path), zip_found, how.dt.itemsize)
    assertion = tf.debugging.Assert(tf.constant(False), [message], summarize=1)
    with tf.control_dependencies([] if assertion is None else [assertion]):
        return tf.identity(decoded)


@functools.lru_cache(maxsize=256)
def _graph_branch(how: TfioRead) -> Callable[[tf.Tensor, tf.Tensor], tf.Tensor]:
    """The branch for files tfio is not given: the graph reader, or the refusal.

    It is a graph function that is never inlined (`npyio._tf.noinline_function`), so that in
    the ``tf.cond`` it stays one call op: files that tfio decodes then pay nothing for the
    graph parser's ops.
    """

    def body(path: tf.Tensor, zip_found: tf.Tensor) -> tf.Tensor:
        if how.fallback:
            return _read_graph(path, how, how.report)
        return _refuse_all(path, how, zip_found)

    function = noinline_function(body, [tf.TensorSpec([], tf.string), tf.TensorSpec([], tf.bool)])
    return _caller(function, tf.as_dtype(how.dt), how.shape)


class TfioReader(PathReader):
    """The tfio backend as a `npyio._read.backends.Reader`: each file through `read_with`, valid
    files tfio cannot decode falling back to the graph parser."""

    capabilities = CAPABILITIES["tfio"]

    def __init__(self, report: bool = False) -> None:
        super().__init__(report)
        load_ops()  # BackendUnavailableError now, when the pipeline is built

    def read_path(self, path: tf.Tensor, spec: Spec) -> tf.Tensor:
        return read_with(path, TfioRead(spec, fallback=True, report=self.report))
