r"""``.npz`` archives: find one member with graph ops, inflate it if needed, decode it as ``.npy``.

An ``.npz`` file is a zip archive of ``.npy`` members (``np.savez`` stores them, method 0;
``np.savez_compressed`` deflates them, method 8). The member is found the way a zip reader
does, with ``tf.strings`` ops on the whole archive::

    end of central directory (EOCD)   b"PK\x05\x06", in the last 22 + 65535 bytes (the last one)
      [zip64 EOCD locator]            b"PK\x06\x07", 20 bytes just before the EOCD: points to
      [zip64 EOCD record]             b"PK\x06\x06": entry count, directory size and offset
    central directory                 one 46-byte entry b"PK\x01\x02" per member + name, extra
                                      field, comment; the entry carries flags, method, CRC-32,
                                      sizes and the local header's offset (0xFFFFFFFF: the
                                      value is in the zip64 extra field 0x0001 instead)
    local header                      b"PK\x03\x04", 30 bytes + name + extra, then the data

Sizes and CRC are taken from the central directory, never from the local header (whose sizes
are 0 when the writer used a data descriptor, flag bit 3, as Python's zipfile does on an
unseekable stream; and 0xFFFFFFFF with a zip64 extra field whenever ``force_zip64`` is set, as
numpy always sets it).

A deflated member is inflated by ``tf.io.decode_compressed(..., "GZIP")``: a zip DEFLATE member
plus its CRC-32 and size is exactly the body of a gzip member, so npyio wraps the raw deflate
data in a 10-byte gzip header and an 8-byte trailer (the CRC-32 and the size mod 2**32, copied
from the central directory). zlib then checks the CRC and the size when it reaches the end of
the stream. TensorFlow returns short output without an error for a stream that ends early, so
npyio also checks the inflated length. Stored members are sliced out as they are, without a
CRC check (the ``.npy`` decoder still checks their header and exact payload size).

Safety, as in ``npyio._ops``: every op that runs before the archive's validity assertion is
total (positions are clamped into the archive before ``tf.strings.substr`` sees them, integer
fields are read from zero-padded copies), and the ops that slice or inflate the member run under
a control dependency on that assertion.
"""

from __future__ import annotations

import functools
import os
import zipfile
from collections.abc import Callable
from typing import BinaryIO, cast

import numpy as np
import tensorflow as tf

from npyio import _format as F
from npyio import _ops
from npyio.errors import NpyFormatError

__all__ = ["decode_npz", "read_npz"]

EOCD_SIG, EOCD_LEN = b"PK\x05\x06", 22
MAX_COMMENT = 0xFFFF
LOCATOR_SIG, LOCATOR_LEN = b"PK\x06\x07", 20
EOCD64_SIG, EOCD64_LEN = b"PK\x06\x06", 56
CENTRAL_SIG, CENTRAL_LEN = b"PK\x01\x02", 46
LOCAL_SIG, LOCAL_LEN = b"PK\x03\x04", 30
ZIP64_EXTRA = 0x0001
STORED, DEFLATED = 0, 8
#: Compression methods named in error messages (APPNOTE 4.4.5).
METHOD_NAMES = {
    1: "shrunk", 6: "imploded", 9: "deflate64", 12: "bzip2", 14: "lzma", 93: "zstandard",
    95: "xz", 98: "ppmd", 99: "AE-x encrypted",
}
#: Member names listed in a missing-member error.
MAX_LISTED = 10
#: gzip member header: magic, CM=8 (deflate), no flags, mtime 0, XFL 0, OS 255 (unknown).
GZIP_HEADER = b"\x1f\x8b\x08\x00" + b"\x00" * 4 + b"\x00\xff"
_FIELD64_LIMIT = 2**62  # 8-byte values at or above this are treated as this (past any end)


# --- error wording, shared by the graph parser and the Python-side inspect_npz --------------
def not_a_zip() -> str:
    return (
        "not a zip archive -- expected an end of central directory record (50 4b 05 06) "
        "in its last 65557 bytes, got none"
    )


def bad_zip64_record(where: str, size: str) -> str:
    return (
        "corrupt zip64 end of central directory -- expected a record (50 4b 06 06) "
        f"at byte {where} of {size}, got none"
    )


def directory_past_end(end: str, limit: str) -> str:
    return (
        "central directory runs past its end record -- expected it to end by byte "
        f"{limit}, got {end}"
    )


def bad_entry(where: str) -> str:
    return (
        "corrupt central directory -- expected an entry (50 4b 01 02) that fits in the "
        f"directory at byte {where}, got none"
    )


def no_member(names: str, key: str) -> str:
    return f"no such member in the archive -- expected one of {names}, got {key}"


def encrypted() -> str:
    return "member is encrypted -- expected an unencrypted member, got flag bit 0 set"


def bad_method(got: str) -> str:
    return (
        "unsupported compression method -- expected 0 (stored) or 8 (deflated, as "
        f"np.savez_compressed writes), got {got}"
    )


def bad_zip64_extra(need: str, got: str) -> str:
    return (
        "zip64 extra field (0x0001) is missing or short -- expected "
        f"{need} bytes, got {got}"
    )


def bad_local(where: str) -> str:
    return f"corrupt local header -- expected a local file header (50 4b 03 04) at byte {where}"


def local_name(expected: str, got: str) -> str:
    return f"local header names another member -- expected {expected}, got {got}"


def data_past_end(end: str, size: str) -> str:
    return (
        "member data runs past the end of the archive -- expected at most "
        f"{size} bytes, got {end}"
    )


def stored_sizes(csize: str, usize: str) -> str:
    return (
        "stored member's sizes differ -- expected equal compressed and uncompressed sizes, "
        f"got {csize} and {usize}"
    )


def inflated_size(expected: str, got: str) -> str:
    return f"inflated member has the wrong size -- expected {expected} bytes, got {got}"


def method_text(method: int) -> str:
    name = METHOD_NAMES.get(method)
    return f"{method} ({name})" if name else str(method)


def label(path: str, key: str) -> str:
    """How errors name a member: ``path[key]``."""
    return f"{path}[{key}]"


# --- graph parser -----------------------------------------------------------------------------
def _clamp(pos: tf.Tensor, size: tf.Tensor) -> tf.Tensor:
    return tf.clip_by_value(pos, 0, size)


def _substr(contents: tf.Tensor, size: tf.Tensor, pos: tf.Tensor, n: tf.Tensor | int) -> tf.Tensor:
    """contents[pos:pos + n] for any pos and n: positions are clamped, never an op error."""
    n = tf.maximum(tf.cast(n, tf.int64), 0)
    return tf.strings.substr(contents, _clamp(pos, size), n)


def _fields(contents: tf.Tensor, size: tf.Tensor, pos: tf.Tensor, n: int) -> tf.Tensor:
    """The n bytes at pos as int64 [n], zero past the end of contents."""
    raw = _substr(contents, size, pos, n)
    padded = tf.strings.substr(tf.strings.join([raw, b"\0" * n]), 0, n)
    return tf.cast(tf.io.decode_raw(padded, tf.uint8), tf.int64)


def _le(b: tf.Tensor, at: int, n: int) -> tf.Tensor:
    """Little-endian unsigned field of n <= 4 bytes of b at ``at`` (exact in int64)."""
    value = b[at]
    for k in range(1, n):
        value += b[at + k] * (256**k)
    return value


def _le8(b: tf.Tensor, at: int | tf.Tensor) -> tf.Tensor:
    """An 8-byte field, or _FIELD64_LIMIT if it is at least that (no overflow)."""
    at = tf.convert_to_tensor(at, tf.int64)
    part = tf.gather(b, at + tf.range(8, dtype=tf.int64))
    lo = tf.reduce_sum(part[:4] * tf.constant([1, 256, 65536, 16777216], tf.int64))
    hi = tf.reduce_sum(part[4:] * tf.constant([1, 256, 65536, 16777216], tf.int64))
    return tf.where(hi >= 2**30, tf.constant(_FIELD64_LIMIT, tf.int64), lo + hi * 2**32)


def _str(x: tf.Tensor) -> tf.Tensor:
    return tf.strings.as_string(x)


def _quote(x: tf.Tensor) -> tf.Tensor:
    return tf.strings.join(["'", x, "'"])


def _method_text(method: tf.Tensor) -> tf.Tensor:
    names = list(METHOD_NAMES.items())
    text = tf.strings.join([_str(method), ""])
    for code, name in names:
        text = tf.where(method == code, f"{code} ({name})", text)
    return text


def _find_eocd(contents: tf.Tensor, size: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
    """(found, position) of the end of central directory record in the archive's last
    22 + 65535 bytes: the last signature whose comment length reaches exactly the end of the
    archive, else (trailing bytes) the last signature with room for the record after it."""
    window = EOCD_LEN + MAX_COMMENT
    start = tf.maximum(size - window, 0)
    tail = tf.strings.substr(contents, start, window)
    n = size - start
    b = tf.cast(tf.io.decode_raw(tf.strings.join([tail, b"\0" * EOCD_LEN]), tf.uint8), tf.int64)
    idx = tf.range(n)
    hit = idx + EOCD_LEN <= n
    for k, byte in enumerate(EOCD_SIG):
        hit = tf.logical_and(hit, tf.equal(b[k : k + n], byte))
    comment = b[20 : 20 + n] + 256 * b[21 : 21 + n]
    exact = tf.logical_and(hit, tf.equal(idx + EOCD_LEN + comment, n))

    def last(mask: tf.Tensor) -> tf.Tensor:
        return tf.reduce_max(tf.concat([tf.where(mask, idx, -1), [-1]], 0))

    at = tf.where(last(exact) >= 0, last(exact), last(hit))
    return at >= 0, start + tf.maximum(at, 0)


def _scan_directory(
    contents: tf.Tensor,
    size: tf.Tensor,
    start: tf.Tensor,
    end: tf.Tensor,
    entries: tf.Tensor,
    key: tf.Tensor,
) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor, tf.Tensor]:
    """Walks the central directory [start, end) for ``key`` (exact name first, else key.npy).

    Returns (entry position or -1, ok, position of the first bad entry, quoted names listing).
    """
    key_npy = tf.strings.join([key, ".npy"])
    minus1 = tf.constant(-1, tf.int64)

    def cond(*state: tf.Tensor) -> tf.Tensor:
        i, _, exact, _, ok, _ = state
        return tf.logical_and(tf.logical_and(i < entries, ok), exact < 0)

    def body(*state: tf.Tensor) -> tuple[tf.Tensor, ...]:
        i, p, exact, npy, _, names = state
        b = _fields(contents, size, p, CENTRAL_LEN)
        nlen, xlen, clen = _le(b, 28, 2), _le(b, 30, 2), _le(b, 32, 2)
        nxt = p + CENTRAL_LEN + nlen + xlen + clen
        good = tf.logical_and(
            _substr(contents, size, p, 4) == CENTRAL_SIG, nxt <= end
        )
        name = _substr(contents, size, p + CENTRAL_LEN, nlen)
        exact = tf.where(tf.logical_and(good, name == key), p, exact)
        npy = tf.where(tf.logical_and(tf.logical_and(good, npy < 0), name == key_npy), p, npy)
        listed = tf.where(
            i < MAX_LISTED,
            tf.strings.join([names, tf.where(i > 0, ", ", ""), _quote(name)]),
            tf.where(tf.equal(i, MAX_LISTED), tf.strings.join([names, ", ..."]), names),
        )
        return (
            i + 1, tf.where(good, nxt, p), exact, npy, good, tf.where(good, listed, names)
        )

    _, p, exact, npy, ok, names = tf.while_loop(
        cond, body,
        [tf.constant(0, tf.int64), start, minus1, minus1, tf.constant(True), tf.constant("")],
    )
    return tf.where(exact >= 0, exact, npy), ok, p, names


def _zip64_extra(
    contents: tf.Tensor, size: tf.Tensor, start: tf.Tensor, length: tf.Tensor
) -> tuple[tf.Tensor, tf.Tensor]:
    """(position, size) of the zip64 extra field's data in the extra field [start, +length),
    or (-1, 0) if there is none."""
    end = start + length

    def cond(r: tf.Tensor, found: tf.Tensor, data_size: tf.Tensor) -> tf.Tensor:
        return tf.logical_and(r + 4 <= end, found < 0)

    def body(r: tf.Tensor, found: tf.Tensor, data_size: tf.Tensor) -> tuple[tf.Tensor, ...]:
        b = _fields(contents, size, r, 4)
        tag, n = _le(b, 0, 2), _le(b, 2, 2)
        hit = tf.logical_and(tf.equal(tag, ZIP64_EXTRA), r + 4 + n <= end)
        return r + 4 + n, tf.where(hit, r + 4, found), tf.where(hit, n, data_size)

    _, found, data_size = tf.while_loop(
        cond, body, [start, tf.constant(-1, tf.int64), tf.constant(0, tf.int64)]
    )
    return found, data_size


def _fmt(reason: Callable[..., str], *args: tf.Tensor | str) -> tf.Tensor:
    return _ops._fmt(reason, *args)


def _extract(contents: tf.Tensor, key: tf.Tensor, name: tf.Tensor) -> tf.Tensor:
    """The bytes of member ``key`` (or ``key.npy``) of the zip archive ``contents``, inflated.

    ``name`` (``path[key]``) starts every error message.
    """
    size = tf.cast(tf.strings.length(contents), tf.int64)

    # End of central directory, and the zip64 one if a locator precedes it.
    has_eocd, e = _find_eocd(contents, size)
    eb = _fields(contents, size, e, EOCD_LEN)
    entries, cd_size, cd_off = _le(eb, 10, 2), _le(eb, 12, 4), _le(eb, 16, 4)
    has_locator = tf.logical_and(
        e >= LOCATOR_LEN, _substr(contents, size, e - LOCATOR_LEN, 4) == LOCATOR_SIG
    )
    z = _le8(_fields(contents, size, e - LOCATOR_LEN, LOCATOR_LEN), 8)
    zb = _fields(contents, size, z, EOCD64_LEN)
    zip64_ok = tf.logical_and(
        z + EOCD64_LEN <= e - LOCATOR_LEN, _substr(contents, size, z, 4) == EOCD64_SIG
    )
    entries = tf.where(has_locator, _le8(zb, 32), entries)
    cd_size = tf.where(has_locator, _le8(zb, 40), cd_size)
    cd_off = tf.where(has_locator, _le8(zb, 48), cd_off)
    cd_limit = tf.where(has_locator, z, e)
    cd_end = cd_off + cd_size

    # The central directory entry of the member.
    q, entries_ok, bad_at, names = _scan_directory(
        contents, size, cd_off, tf.minimum(cd_end, cd_limit), entries, key
    )
    found = q >= 0
    cb = _fields(contents, size, q, CENTRAL_LEN)
    flags, method = _le(cb, 8, 2), _le(cb, 10, 2)
    csize, usize = _le(cb, 20, 4), _le(cb, 24, 4)
    nlen, xlen = _le(cb, 28, 2), _le(cb, 30, 2)
    offset = _le(cb, 42, 4)
    central_name = _substr(contents, size, q + CENTRAL_LEN, nlen)

    # Values of 0xFFFFFFFF are in the zip64 extra field, in this order: uncompressed size,
    # compressed size, local header offset (8 bytes each).
    x_at, x_len = _zip64_extra(contents, size, q + CENTRAL_LEN + nlen, xlen)
    need_u, need_c, need_o = (tf.cast(v == 0xFFFFFFFF, tf.int64) for v in (usize, csize, offset))
    need = 8 * (need_u + need_c + need_o)
    extra_ok = tf.logical_or(tf.equal(need, 0), tf.logical_and(x_at >= 0, x_len >= need))
    xb = _fields(contents, size, x_at, 24)
    isize_bytes = tf.where(
        need_u > 0, _substr(contents, size, x_at, 4), _substr(contents, size, q + 24, 4)
    )
    usize = tf.where(need_u > 0, _le8(xb, 0), usize)
    csize = tf.where(need_c > 0, _le8(xb, 8 * need_u), csize)
    offset = tf.where(need_o > 0, _le8(xb, 8 * (need_u + need_c)), offset)

    # The local header: only its name and extra field lengths are used, to find the data.
    lb = _fields(contents, size, offset, LOCAL_LEN)
    lnlen, lxlen = _le(lb, 26, 2), _le(lb, 28, 2)
    start = offset + LOCAL_LEN + lnlen + lxlen
    local = _substr(contents, size, offset + LOCAL_LEN, lnlen)

    checks: list[tuple[tf.Tensor, Callable[[], tf.Tensor]]] = [
        (has_eocd, lambda: tf.constant(not_a_zip())),
        (
            tf.logical_or(tf.logical_not(has_locator), zip64_ok),
            lambda: _fmt(bad_zip64_record, _str(z), _str(size)),
        ),
        (cd_end <= cd_limit, lambda: _fmt(directory_past_end, _str(cd_end), _str(cd_limit))),
        (entries_ok, lambda: _fmt(bad_entry, _str(bad_at))),
        (found, lambda: _fmt(no_member, tf.where(names == "", "nothing", names), _quote(key))),
        (tf.equal(flags % 2, 0), lambda: tf.constant(encrypted())),
        (
            tf.logical_or(tf.equal(method, STORED), tf.equal(method, DEFLATED)),
            lambda: _fmt(bad_method, _method_text(method)),
        ),
        (extra_ok, lambda: _fmt(bad_zip64_extra, _str(need), _str(x_len))),
        (
            tf.logical_and(
                offset + LOCAL_LEN <= size, _substr(contents, size, offset, 4) == LOCAL_SIG
            ),
            lambda: _fmt(bad_local, _str(offset)),
        ),
        (local == central_name, lambda: _fmt(local_name, _quote(central_name), _quote(local))),
        (start + csize <= size, lambda: _fmt(data_past_end, _str(start + csize), _str(size))),
        (
            tf.logical_or(tf.equal(method, DEFLATED), tf.equal(csize, usize)),
            lambda: _fmt(stored_sizes, _str(csize), _str(usize)),
        ),
    ]
    ok = tf.stack([c for c, _ in checks])
    all_ok = tf.reduce_all(ok)

    def failure() -> tf.Tensor:
        messages = tf.stack([build() for _, build in checks])
        return tf.strings.join(
            [name, ": ", tf.gather(messages, _ops._first_index(tf.logical_not(ok)))]
        )

    message = tf.cond(all_ok, lambda: tf.constant(""), failure)
    assertion = tf.debugging.Assert(all_ok, [message], summarize=1)
    with tf.control_dependencies([] if assertion is None else [assertion]):
        data = tf.strings.substr(contents, start, csize)

        def inflate() -> tf.Tensor:
            crc = _substr(contents, size, q + 16, 4)
            out = tf.io.decode_compressed(
                tf.strings.join([GZIP_HEADER, data, crc, isize_bytes]), compression_type="GZIP"
            )
            got = tf.cast(tf.strings.length(out), tf.int64)
            same = tf.equal(got, usize)
            check = tf.debugging.Assert(
                same,
                [tf.strings.join([name, ": ", _fmt(inflated_size, _str(usize), _str(got))])],
                summarize=1,
            )
            with tf.control_dependencies([] if check is None else [check]):
                return tf.identity(out)

        return tf.cond(tf.equal(method, DEFLATED), inflate, lambda: tf.identity(data))


@functools.lru_cache(maxsize=1)
def _extractor() -> Callable[..., tf.Tensor]:
    """`_extract` as one graph function (eagerly it then runs as a graph, not op by op)."""
    return tf.function(
        _extract,
        input_signature=[tf.TensorSpec([], tf.string)] * 3,
        autograph=False,
    )


def _key_tensor(key: tf.Tensor | str) -> tf.Tensor:
    if isinstance(key, (str, bytes)) and not key:
        raise ValueError("key must be a non-empty member name")
    key = tf.convert_to_tensor(key, tf.string, name="key")
    if key.shape.rank != 0:
        raise ValueError(f"key must be a scalar string, got shape {key.shape}")
    return key


def npz_member(contents: tf.Tensor, key: tf.Tensor | str, name: tf.Tensor) -> tf.Tensor:
    """The ``.npy`` bytes of member ``key`` of the archive ``contents`` (scalar string tensors).

    Errors (``tf.errors.InvalidArgumentError`` when it runs) start with ``name``, which should
    be ``path[key]``. For `npyio.dataset`'s batched path: read with ``tf.io.read_file``, take
    the member with this, then batch and decode the ``.npy`` bytes.
    """
    _ops.require_tf2()
    return _extractor()(contents, _key_tensor(key), name)


def _decode(
    contents: tf.Tensor,
    key: tf.Tensor,
    name: tf.Tensor,
    dt: np.dtype,
    static: tf.TensorShape,
    hint: _ops.Hint | None,
) -> tf.Tensor:
    member = npz_member(contents, key, name)
    return _ops._decode_hinted(
        member[None], name[None], dt, static, F.MAX_HEADER_SIZE, False, hint
    )


@tf.autograph.experimental.do_not_convert
def decode_npz(
    contents: tf.Tensor | bytes,
    key: tf.Tensor | str,
    dtype: object,
    shape: object = None,
    *,
    name: str | None = None,
) -> tf.Tensor:
    """Decodes member ``key`` of the bytes of a whole ``.npz`` archive, with graph ops only.

    The member is found through the zip's central directory (zip64 included), inflated in the
    graph if it is deflated (``np.savez_compressed``) or sliced out if it is stored
    (``np.savez``), and decoded like `npyio.decode_npy`.

    Args:
        contents: A scalar string tensor holding the whole archive.
        key: The member's name, with or without its ``.npy`` suffix (as ``np.load(...)[key]``
            takes it): a str or a scalar string tensor. A member named exactly ``key`` is
            preferred to one named ``key + ".npy"``.
        dtype: The dtype the member must have; see `npyio.decode_npy`.
        shape: Optional static shape the member must have; ``None`` dims match any size.
        name: Optional name for the op's name scope.

    Returns:
        A tensor of ``dtype`` with the member's shape, in C order and native byte order.

    Raises:
        TypeError: When the op is built, for a dtype npyio does not decode or a bad ``shape``.
        tf.errors.InvalidArgumentError: When the op runs, for bytes that are not a zip
            archive, a corrupt archive (bad signatures, offsets or sizes past the end, a
            truncated archive), a missing member, an encrypted member, a compression method
            other than stored or deflated, or a member that is not a valid ``.npy`` file of
            ``dtype`` and ``shape``. The message starts with ``<bytes>[key]``.
        tf.errors.DataLossError: When the op runs, for a deflated member whose data is
            corrupt or whose CRC-32 or size does not match (from zlib).

    Example:
        >>> import io, numpy as np, npyio
        >>> buf = io.BytesIO()
        >>> np.savez_compressed(buf, x=np.arange(4, dtype=np.int16), y=np.eye(2))
        >>> npyio.decode_npz(buf.getvalue(), "x", "int16").numpy()
        array([0, 1, 2, 3], dtype=int16)
    """
    dt = F.parse_dtype(dtype)
    static = _ops._static_shape(shape)
    with tf.name_scope(name or "decode_npz"):
        contents = tf.convert_to_tensor(contents, tf.string, name="contents")
        if contents.shape.rank != 0:
            raise ValueError(f"contents must be a scalar string, got shape {contents.shape}")
        key_t = _key_tensor(key)
        label_t = tf.strings.join(["<bytes>[", key_t, "]"])
        return _decode(contents, key_t, label_t, dt, static, _ops.make_hint(dt, static))


@tf.autograph.experimental.do_not_convert
def read_npz(
    path: tf.Tensor | str | os.PathLike[str],
    key: tf.Tensor | str,
    dtype: object,
    shape: object = None,
    *,
    name: str | None = None,
) -> tf.Tensor:
    """Reads member ``key`` of an ``.npz`` archive, with ``tf.io.read_file`` and graph ops.

    The whole archive is read into memory (one ``tf.io.read_file``), then the member is found,
    inflated if needed and decoded as in `decode_npz`. Memory is thus the archive's size plus
    the member's (inflated) size; for arrays larger than memory use ``.npy`` files and
    `npyio.rows`. ``tf.strings`` ops measure lengths in int32, so archives must be smaller
    than 2 GiB (zip64 structures are read, whatever the sizes they hold).

    Args:
        path: A scalar string tensor (or str): the archive. Any TensorFlow filesystem path.
        key: The member's name, with or without ``.npy``; see `decode_npz`.
        dtype: The dtype the member must have.
        shape: Optional static shape the member must have; ``None`` dims match any size.
        name: Optional name for the op's name scope.

    Returns:
        A tensor of ``dtype`` with the member's shape.

    Raises:
        TypeError: When the op is built, for a dtype npyio does not decode or a bad ``shape``.
        tf.errors.NotFoundError: When the op runs, if the archive does not exist.
        tf.errors.InvalidArgumentError: When the op runs, for the reasons `decode_npz` lists;
            the message starts with ``path[key]``.
        tf.errors.DataLossError: When the op runs, for corrupt deflated data (from zlib).

    Example:
        >>> import io, numpy as np, npyio, tensorflow as tf
        >>> buf = io.BytesIO(); np.savez(buf, x=np.ones((2, 2), ">f4"), y=np.arange(3))
        >>> with tf.io.gfile.GFile("ram://doc/c.npz", "wb") as f:
        ...     _ = f.write(buf.getvalue())
        >>> npyio.read_npz("ram://doc/c.npz", "x.npy", tf.float32, shape=(2, 2)).numpy()
        array([[1., 1.],
               [1., 1.]], dtype=float32)
        >>> npyio.read_npz("ram://doc/c.npz", "z", tf.int64)
        Traceback (most recent call last):
        ...
        tensorflow.python.framework.errors_impl.InvalidArgumentError: ...
    """
    dt = F.parse_dtype(dtype)
    static = _ops._static_shape(shape)
    with tf.name_scope(name or "read_npz"):
        path_t = tf.convert_to_tensor(
            os.fspath(path) if isinstance(path, os.PathLike) else path, tf.string, name="path"
        )
        if path_t.shape.rank != 0:
            raise ValueError(f"path must be a scalar string, got shape {path_t.shape}")
        key_t = _key_tensor(key)
        label_t = tf.strings.join([path_t, "[", key_t, "]"])
        contents = tf.io.read_file(path_t)
        return _decode(contents, key_t, label_t, dt, static, _ops.make_hint(dt, static))


# --- for npyio.dataset --------------------------------------------------------------------------
def read_npz_member(
    path: tf.Tensor, key: str, dt: np.dtype, shape: tf.TensorShape, hint: _ops.Hint | None = None
) -> tf.Tensor:
    """The per-element reader of ``npyio.dataset(..., key=...)``: `read_npz` of one path.

    ``hint`` is a `npyio._ops.Hint` for the member's header (from `inspect_npz_prefix`), or
    None for numpy's own header for ``dt`` and ``shape``.
    """
    key_t = _key_tensor(key)
    label_t = tf.strings.join([path, "[", key_t, "]"])
    return _decode(
        tf.io.read_file(path), key_t, label_t, dt, shape,
        hint if hint is not None else _ops.make_hint(dt, shape),
    )


def _member_info(zf: zipfile.ZipFile, key: str, where: str) -> zipfile.ZipInfo:
    names = zf.namelist()
    for candidate in (key, key + ".npy"):
        if candidate in names:
            info = zf.getinfo(candidate)
            break
    else:
        shown = ", ".join(repr(n) for n in names[:MAX_LISTED])
        shown += ", ..." if len(names) > MAX_LISTED else ""
        raise NpyFormatError(where, no_member(shown or "nothing", repr(key)))
    if info.flag_bits & 1:
        raise NpyFormatError(where, encrypted())
    if info.compress_type not in (STORED, DEFLATED):
        raise NpyFormatError(where, bad_method(method_text(info.compress_type)))
    return info


def inspect_npz_prefix(
    path: str | os.PathLike[str], key: str
) -> tuple[F.NpyHeader, bytes]:
    """The header of member ``key`` and its first ``data_offset`` bytes, read in Python through
    ``tf.io.gfile`` and ``zipfile`` (only the member's header is inflated).

    Raises:
        NpyFormatError: naming ``path[key]``, for a missing archive or member, an archive
            zipfile cannot read, an encrypted member, a compression method other than stored
            or deflated, or a bad ``.npy`` header.
    """
    path = os.fspath(path)
    where = label(path, key)
    try:
        with tf.io.gfile.GFile(path, "rb") as f, zipfile.ZipFile(f) as zf:
            info = _member_info(zf, key, where)
            with zf.open(info) as member:
                header = F.read_header(cast(BinaryIO, member), where)
            with zf.open(info) as member:
                raw = member.read(header.data_offset)
    except tf.errors.NotFoundError as e:
        raise NpyFormatError(path, "no such file") from e
    except (zipfile.BadZipFile, EOFError, OSError, tf.errors.OpError) as e:
        raise NpyFormatError(where, f"not a readable zip archive -- {e}") from e
    return header, raw


def inspect_npz(path: str | os.PathLike[str], key: str) -> F.NpyHeader:
    """The ``.npy`` header of member ``key`` of an ``.npz`` archive, read in Python (for the
    element spec when a dataset is built). See `inspect_npz_prefix` for the errors."""
    return inspect_npz_prefix(path, key)[0]
