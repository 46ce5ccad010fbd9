r"""``.npz`` archives with graph ops: find one member and inflate it if needed (`npz_member`,
`checked_member`); `npyio.decode_npz` decodes it. A member's header is read in Python by
`npyio._format.npz`, which holds the layout's constants and the error wording.

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

The directory is a chain: each entry's name, extra field and comment lengths give where the
next one starts. The member is looked up along that chain as a walk of the entries would do it
(it stops at the first unsound entry, and at an exact name), but not a step per entry: the
candidates, the positions where the entry signature stands, are found in one pass over the
directory's bytes, and which of them the chain reaches from the directory's start is found by
pointer doubling, in log2(entries) rounds of gathers (a signature can also stand inside a name,
an extra field or a comment, so not every candidate is an entry).

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

Safety, as in ``npyio._graph.parser``: every op that runs before the archive is known valid is
total (positions are clamped into the archive before ``tf.strings.substr`` sees them, integer
fields are read from zero-padded copies), and the ops that slice or inflate the member run only
in the ``tf.cond`` branch taken when every check passed. The checks end in a verdict, ``(ok,
message)``, that `npz_member` asserts (eagerly, it raises the message itself) and that
`checked_member` returns, for ``npyio.dataset(..., ignore_errors=True)`` to report.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import NamedTuple

import tensorflow as tf

from npyio._format.npz import (
    CENTRAL_LEN,
    CENTRAL_SIG,
    DEFLATED,
    EOCD64_LEN,
    EOCD64_SIG,
    EOCD_LEN,
    EOCD_SIG,
    GZIP_HEADER,
    LOCAL_LEN,
    LOCAL_SIG,
    LOCATOR_LEN,
    LOCATOR_SIG,
    MAX_COMMENT,
    MAX_LISTED,
    METHOD_NAMES,
    STORED,
    ZIP64_EXTRA,
    bad_entry,
    bad_local,
    bad_method,
    bad_zip64_extra,
    bad_zip64_record,
    data_past_end,
    directory_past_end,
    encrypted,
    inflated_size,
    local_name,
    no_member,
    not_a_zip,
    stored_sizes,
)
from npyio._graph.ops import (
    Consts,
    as_str,
    assert_verdict,
    clamped_substr,
    first_index,
    fmt,
    le_field,
    le_field8,
    padded_bytes,
    require_tf2,
)
from npyio._tf import function_reason, lower_bound

__all__ = ["checked_member", "key_tensor", "npz_member"]


def _quote(x: tf.Tensor) -> tf.Tensor:
    return tf.strings.join(["'", x, "'"])


def _method_text(method: tf.Tensor) -> tf.Tensor:
    names = list(METHOD_NAMES.items())
    text = tf.strings.join([as_str(method), ""])
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


class Lookup(NamedTuple):
    """Where the central directory names the member, and whether its entries are sound."""

    at: tf.Tensor  # the member's entry (-1: none)
    ok: tf.Tensor  # every entry read was sound
    bad_at: tf.Tensor  # where the first unsound one is
    names: tf.Tensor  # the first names, quoted, for the missing-member message


#: The bytes of a candidate entry read after its first: the signature's others, then the name,
#: extra field and comment lengths (2 bytes each, at 28).
_CANDIDATE_BYTES = (1, 2, 3, *range(28, 34))


class Candidates(NamedTuple):
    """The positions in the central directory where an entry's signature stands, and what
    each would be as an entry. Signature bytes can also stand inside a name, an extra field
    or a comment: which candidates are entries, the chain says."""

    at: tf.Tensor  # [C] the positions, ascending
    #: [C + 1, 4] int64, a row per candidate: its position, where the entry after it would
    #: start (at + 46 + the three lengths), its name's length, and 1 if it ends within the
    #: directory; then a row for "no entry": (-1, 0, 0, 0).
    rows: tf.Tensor


def _candidates(
    contents: tf.Tensor, size: tf.Tensor, start: tf.Tensor, end: tf.Tensor, k: Consts
) -> Candidates:
    """Every position of the directory [start, end) (clamped into the archive) where the entry
    signature stands: the directory is decoded once, the positions of the signature's first
    byte found in it, and the signature's other bytes and the lengths gathered there."""
    lo = tf.clip_by_value(start, k(0), size)
    n = tf.clip_by_value(end, lo, size) - lo
    b = tf.io.decode_raw(
        tf.strings.join([tf.strings.substr(contents, lo, n), k.str(b"\0" * CENTRAL_LEN)]),
        tf.uint8,
    )  # the directory, then zeros: the fixed fields of a candidate are there to read
    first = tf.where(tf.equal(b, k(CENTRAL_SIG[0], tf.uint8)))[:, 0]
    rows = tf.gather(b, tf.expand_dims(first, 1) + k(_CANDIDATE_BYTES))
    signed = tf.equal(rows[:, :3], k(list(CENTRAL_SIG[1:]), tf.uint8))
    hit = tf.where(tf.reduce_all(signed, axis=k.i32(1)))[:, 0]
    fields = tf.reshape(tf.cast(tf.gather(rows, hit)[:, 3:], tf.int64), k([-1, 3, 2]))
    lengths = tf.reduce_sum(fields * k([1, 256]), axis=k.i32(2))  # name, extra, comment
    at = lo + tf.gather(first, hit)
    nxt = at + k(CENTRAL_LEN) + tf.reduce_sum(lengths, axis=k.i32(1))
    sound = tf.cast(nxt <= end, tf.int64)
    table = tf.stack([at, nxt, lengths[:, 0], sound], axis=1)
    return Candidates(at, tf.concat([table, k([[-1, 0, 0, 0]])], k.i32(0)))


def _index_at(at: tf.Tensor, positions: tf.Tensor, k: Consts) -> tf.Tensor:
    """For each of ``positions`` [N], the index in the ascending ``at`` [C] that holds it, or
    C where none does."""
    count = tf.size(at, out_type=tf.int64)
    i = lower_bound(at, positions)
    return tf.where(tf.gather(tf.concat([at, k([-1])], k.i32(0)), i) == positions, i, count)


def _successors(c: Candidates, past: tf.Tensor, k: Consts) -> tf.Tensor:
    """[C + 1]: for each candidate that ends within the directory, the index of the candidate
    where the entry after it would start; ``past`` (C, "no entry") for any other, and for
    ``past`` itself."""
    _, nexts, _, fits = tf.unstack(c.rows[:-1], num=4, axis=1)
    successor = tf.where(fits > k(0), _index_at(c.at, nexts, k), past)
    return tf.concat([successor, tf.expand_dims(past, 0)], k.i32(0))


def _chain(successor: tf.Tensor, first: tf.Tensor, count: tf.Tensor, k: Consts) -> tf.Tensor:
    """``[s_0, ..., s_{count-1}]`` with ``s_0 = first`` and ``s_{i+1} = successor[s_i]``, by
    pointer doubling: round r follows the jumps of 2**r steps where bit r of i is set, then
    doubles them, so the loop runs log2(count) times, not count times. ``successor`` must map
    [0, len(successor)) into itself, so that every gather stays in bounds."""
    i = tf.range(k(0), count, k(1))

    def cond(step: tf.Tensor, jump: tf.Tensor, path: tf.Tensor) -> tf.Tensor:
        return step < count

    def body(step: tf.Tensor, jump: tf.Tensor, path: tf.Tensor) -> tuple[tf.Tensor, ...]:
        path = tf.where(tf.bitwise.bitwise_and(i, step) > 0, tf.gather(jump, path), path)
        return step * 2, tf.gather(jump, jump), path

    return tf.while_loop(cond, body, [k(1), successor, tf.fill([count], first)])[2]


def _listing(names: tf.Tensor, count: tf.Tensor, k: Consts) -> tf.Tensor:
    """The first `MAX_LISTED` of ``names``, quoted, then ", ..." if there are more."""
    shown = tf.gather(names, tf.range(k(0), tf.minimum(count, k(MAX_LISTED)), k(1)))
    more = tf.where(count > k(MAX_LISTED), k.str(", ..."), k.str(""))
    return tf.strings.join([tf.strings.reduce_join(_quote(shown), separator=", "), more])


def _find_entry(
    contents: tf.Tensor,
    size: tf.Tensor,
    start: tf.Tensor,
    end: tf.Tensor,
    entries: tf.Tensor,
    key: tf.Tensor,
) -> Lookup:
    """Finds ``key`` (an exact name first, else ``key.npy``) in the central directory
    [start, end), the way a walk of its entries would: from the entry at ``start``, each
    entry's lengths give the next one's position, for at most ``entries`` entries; it stops at
    the first entry that is not sound (no signature, or past ``end``) and at an exact name
    (entries after it are not read). The chain is found over the signature's candidates at
    once (`_candidates`, `_chain`), so the cost grows with the directory's size, not with a
    loop step per entry."""
    k = Consts()
    c = _candidates(contents, size, start, end, k)
    past = tf.size(c.at, out_type=tf.int64)  # the index of the "no entry" row
    count = tf.minimum(entries, past + k(1))  # a chain has at most C sound entries
    first = _index_at(c.at, tf.expand_dims(start, 0), k)[0]
    path = _chain(_successors(c, past, k), first, count, k)
    at, nexts, name_len, sound = tf.unstack(tf.gather(c.rows, path), num=4, axis=1)
    sound = sound > k(0)  # true, then false
    names = clamped_substr(contents, size, at + k(CENTRAL_LEN), name_len)
    first_bad = first_index(tf.logical_not(sound), k)
    exact = first_index(tf.logical_and(sound, names == key), k)
    npy = first_index(tf.logical_and(sound, names == tf.strings.join([key, ".npy"])), k)
    at = tf.concat([at, k([-1])], k.i32(0))
    return Lookup(
        at=tf.where(exact < count, tf.gather(at, exact), tf.gather(at, npy)),
        ok=tf.logical_or(exact < count, tf.equal(first_bad, count)),
        bad_at=tf.gather(tf.concat([tf.expand_dims(start, 0), nexts], k.i32(0)), first_bad),
        names=_listing(names, count, k),
    )


def _zip64_extra(
    contents: tf.Tensor, size: tf.Tensor, start: tf.Tensor, length: tf.Tensor
) -> tuple[tf.Tensor, tf.Tensor]:
    """(position, size) of the zip64 extra field's data in the extra field [start, +length),
    or (-1, 0) if there is none."""
    end = start + length

    def cond(r: tf.Tensor, found: tf.Tensor, data_size: tf.Tensor) -> tf.Tensor:
        return tf.logical_and(r + 4 <= end, found < 0)

    def body(r: tf.Tensor, found: tf.Tensor, data_size: tf.Tensor) -> tuple[tf.Tensor, ...]:
        b = padded_bytes(contents, r, 4, size)
        tag, n = le_field(b, 0, 2), le_field(b, 2, 2)
        hit = tf.logical_and(tf.equal(tag, ZIP64_EXTRA), r + 4 + n <= end)
        return r + 4 + n, tf.where(hit, r + 4, found), tf.where(hit, n, data_size)

    _, found, data_size = tf.while_loop(
        cond, body, [start, tf.constant(-1, tf.int64), tf.constant(0, tf.int64)]
    )
    return found, data_size


class EndRecord(NamedTuple):
    """The end of central directory record, or the zip64 one where a locator precedes it."""

    found: tf.Tensor  # an end record is there
    has_locator: tf.Tensor  # a zip64 locator precedes it
    zip64_at: tf.Tensor  # where the locator says the zip64 record is
    zip64_ok: tf.Tensor  # that record is there, before the locator
    entries: tf.Tensor  # the entry count
    start: tf.Tensor  # where the central directory starts
    end: tf.Tensor  # where it ends, by its size
    limit: tf.Tensor  # where it must end by: the (zip64) end record


class Entry(NamedTuple):
    """A central directory entry's fields, with the zip64 extra field's values in place."""

    at: tf.Tensor  # its position (-1: none, then the fields are those of byte 0)
    flags: tf.Tensor
    method: tf.Tensor
    csize: tf.Tensor
    usize: tf.Tensor
    offset: tf.Tensor  # of the local header
    name: tf.Tensor
    need: tf.Tensor  # bytes the zip64 extra field must hold
    extra_len: tf.Tensor  # bytes it holds
    extra_ok: tf.Tensor  # it holds them
    isize_bytes: tf.Tensor  # the size mod 2**32, 4 bytes little-endian (the gzip trailer's)


class Local(NamedTuple):
    """The local header at an entry's offset: only its name and its lengths are used."""

    found: tf.Tensor  # its signature is there, with room for the header
    name: tf.Tensor
    data: tf.Tensor  # where the member's data starts


def _read_end_record(contents: tf.Tensor, size: tf.Tensor) -> EndRecord:
    """The end record, and the zip64 one if a locator precedes it (its values then count)."""
    found, e = _find_eocd(contents, size)
    eb = padded_bytes(contents, e, EOCD_LEN, size)
    entries, cd_size, cd_off = le_field(eb, 10, 2), le_field(eb, 12, 4), le_field(eb, 16, 4)
    has_locator = tf.logical_and(
        e >= LOCATOR_LEN, clamped_substr(contents, size, e - LOCATOR_LEN, 4) == LOCATOR_SIG
    )
    z = le_field8(padded_bytes(contents, e - LOCATOR_LEN, LOCATOR_LEN, size), 8)
    zb = padded_bytes(contents, z, EOCD64_LEN, size)
    zip64_ok = tf.logical_and(
        z + EOCD64_LEN <= e - LOCATOR_LEN, clamped_substr(contents, size, z, 4) == EOCD64_SIG
    )
    cd_size = tf.where(has_locator, le_field8(zb, 40), cd_size)
    cd_off = tf.where(has_locator, le_field8(zb, 48), cd_off)
    return EndRecord(
        found=found,
        has_locator=has_locator,
        zip64_at=z,
        zip64_ok=zip64_ok,
        entries=tf.where(has_locator, le_field8(zb, 32), entries),
        start=cd_off,
        end=cd_off + cd_size,
        limit=tf.where(has_locator, z, e),
    )


def _read_entry(contents: tf.Tensor, size: tf.Tensor, q: tf.Tensor) -> Entry:
    """The central directory entry at ``q``. Values of 0xFFFFFFFF are in its zip64 extra
    field, in this order: uncompressed size, compressed size, local header offset (8 bytes
    each)."""
    cb = padded_bytes(contents, q, CENTRAL_LEN, size)
    usize, csize, offset = le_field(cb, 24, 4), le_field(cb, 20, 4), le_field(cb, 42, 4)
    nlen, xlen = le_field(cb, 28, 2), le_field(cb, 30, 2)
    x_at, x_len = _zip64_extra(contents, size, q + CENTRAL_LEN + nlen, xlen)
    need_u, need_c, need_o = (tf.cast(v == 0xFFFFFFFF, tf.int64) for v in (usize, csize, offset))
    need = 8 * (need_u + need_c + need_o)
    xb = padded_bytes(contents, x_at, 24, size)
    return Entry(
        at=q,
        flags=le_field(cb, 8, 2),
        method=le_field(cb, 10, 2),
        csize=tf.where(need_c > 0, le_field8(xb, 8 * need_u), csize),
        usize=tf.where(need_u > 0, le_field8(xb, 0), usize),
        offset=tf.where(need_o > 0, le_field8(xb, 8 * (need_u + need_c)), offset),
        name=clamped_substr(contents, size, q + CENTRAL_LEN, nlen),
        need=need,
        extra_len=x_len,
        extra_ok=tf.logical_or(tf.equal(need, 0), tf.logical_and(x_at >= 0, x_len >= need)),
        isize_bytes=tf.where(
            need_u > 0,
            clamped_substr(contents, size, x_at, 4),
            clamped_substr(contents, size, q + 24, 4),
        ),
    )


def _read_local(contents: tf.Tensor, size: tf.Tensor, offset: tf.Tensor) -> Local:
    """The local header at ``offset``."""
    lb = padded_bytes(contents, offset, LOCAL_LEN, size)
    lnlen, lxlen = le_field(lb, 26, 2), le_field(lb, 28, 2)
    found = tf.logical_and(
        offset + LOCAL_LEN <= size, clamped_substr(contents, size, offset, 4) == LOCAL_SIG
    )
    name = clamped_substr(contents, size, offset + LOCAL_LEN, lnlen)
    return Local(found, name, offset + LOCAL_LEN + lnlen + lxlen)


Checks = list[tuple[tf.Tensor, Callable[[], tf.Tensor]]]


def _checks(
    size: tf.Tensor, end: EndRecord, lookup: Lookup, entry: Entry, local: Local, key: tf.Tensor
) -> Checks:
    """The checks in order, each (condition, its message when it fails)."""
    data_end, method = local.data + entry.csize, entry.method
    listed = tf.where(lookup.names == "", "nothing", lookup.names)
    return [
        (end.found, lambda: tf.constant(not_a_zip())),
        (
            tf.logical_or(tf.logical_not(end.has_locator), end.zip64_ok),
            lambda: fmt(bad_zip64_record, as_str(end.zip64_at), as_str(size)),
        ),
        (end.end <= end.limit, lambda: fmt(directory_past_end, as_str(end.end), as_str(end.limit))),
        (lookup.ok, lambda: fmt(bad_entry, as_str(lookup.bad_at))),
        (lookup.at >= 0, lambda: fmt(no_member, listed, _quote(key))),
        (tf.equal(entry.flags % 2, 0), lambda: tf.constant(encrypted())),
        (
            tf.logical_or(tf.equal(method, STORED), tf.equal(method, DEFLATED)),
            lambda: fmt(bad_method, _method_text(method)),
        ),
        (entry.extra_ok, lambda: fmt(bad_zip64_extra, as_str(entry.need), as_str(entry.extra_len))),
        (local.found, lambda: fmt(bad_local, as_str(entry.offset))),
        (
            local.name == entry.name,
            lambda: fmt(local_name, _quote(entry.name), _quote(local.name)),
        ),
        (data_end <= size, lambda: fmt(data_past_end, as_str(data_end), as_str(size))),
        (
            tf.logical_or(tf.equal(method, DEFLATED), tf.equal(entry.csize, entry.usize)),
            lambda: fmt(stored_sizes, as_str(entry.csize), as_str(entry.usize)),
        ),
    ]


def _member(contents: tf.Tensor, size: tf.Tensor, entry: Entry, local: Local) -> tf.Tensor:
    """The member's bytes, inflated if deflated (run only once every check has passed)."""
    data = tf.strings.substr(contents, local.data, entry.csize)

    def inflate() -> tf.Tensor:
        crc = clamped_substr(contents, size, entry.at + 16, 4)
        return tf.io.decode_compressed(
            tf.strings.join([GZIP_HEADER, data, crc, entry.isize_bytes]), compression_type="GZIP"
        )

    return tf.cond(tf.equal(entry.method, DEFLATED), inflate, lambda: tf.identity(data))


def _extract(
    contents: tf.Tensor, key: tf.Tensor, name: tf.Tensor
) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
    """The verdict on member ``key`` (or ``key.npy``) of the zip archive ``contents``:
    ``(its bytes, inflated if deflated; ok; message)``, the bytes empty unless ``ok``.

    ``name`` (``path[key]``) starts the message.
    """
    size = tf.cast(tf.strings.length(contents), tf.int64)
    end = _read_end_record(contents, size)
    lookup = _find_entry(
        contents, size, end.start, tf.minimum(end.end, end.limit), end.entries, key
    )
    entry = _read_entry(contents, size, lookup.at)
    local = _read_local(contents, size, entry.offset)
    checks = _checks(size, end, lookup, entry, local, key)
    ok = tf.stack([condition for condition, _ in checks])
    all_ok = tf.reduce_all(ok)

    def failure() -> tf.Tensor:
        messages = tf.stack([message() for _, message in checks])
        return tf.strings.join([name, ": ", tf.gather(messages, first_index(tf.logical_not(ok)))])

    # The member is sliced and inflated only in the branch taken when every check passed.
    out = tf.cond(all_ok, lambda: _member(contents, size, entry, local), lambda: tf.constant(""))
    got = tf.cast(tf.strings.length(out), tf.int64)
    whole = tf.logical_or(tf.logical_not(all_ok), tf.equal(got, entry.usize))
    usize = entry.usize
    message = tf.cond(
        all_ok,
        lambda: tf.cond(
            whole,
            lambda: tf.constant(""),
            lambda: tf.strings.join([name, ": ", fmt(inflated_size, as_str(usize), as_str(got))]),
        ),
        failure,
    )
    return out, tf.logical_and(all_ok, whole), message


@functools.lru_cache(maxsize=1)
def _extractor() -> Callable[..., tuple[tf.Tensor, tf.Tensor, tf.Tensor]]:
    """`_extract` as one graph function (eagerly it then runs as a graph, not op by op)."""
    return tf.function(
        _extract,
        input_signature=[tf.TensorSpec([], tf.string)] * 3,
        autograph=False,
    )


def key_tensor(key: tf.Tensor | str) -> tf.Tensor:
    if isinstance(key, (str, bytes)) and not key:
        raise ValueError("key must be a non-empty member name")
    key = tf.convert_to_tensor(key, tf.string, name="key")
    if key.shape.rank != 0:
        raise ValueError(f"key must be a scalar string, got shape {key.shape}")
    return key


def checked_member(
    contents: tf.Tensor, key: tf.Tensor | str, name: tf.Tensor
) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
    """``(member bytes, ok, message)`` for member ``key`` of the archive ``contents``, without
    asserting: when ``ok`` is false the bytes are empty and ``message`` (``name: reason``) says
    why. Graph mode only; `npz_member` asserts."""
    require_tf2()
    return _extractor()(contents, key_tensor(key), name)


def _extract_eagerly(
    contents: tf.Tensor, key: tf.Tensor, name: tf.Tensor
) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
    """`_extractor`'s verdict, run eagerly: zlib's refusal of corrupt deflated data, raised
    inside the graph function, is re-raised as ``"PATH[key]: reason"``, not TensorFlow's
    ``"Graph execution error: ... Detected at"``."""
    try:
        return _extractor()(contents, key, name)
    except tf.errors.OpError as e:
        reason = function_reason(e.message) or type(e).__name__
        label = name.numpy().decode("utf-8", "replace")
        raise type(e)(None, None, f"{label}: {reason}") from None


def npz_member(contents: tf.Tensor, key: tf.Tensor | str, name: tf.Tensor) -> tf.Tensor:
    """The ``.npy`` bytes of member ``key`` of the archive ``contents`` (scalar string tensors).

    Errors (``tf.errors.InvalidArgumentError`` when it runs) start with ``name``, which should
    be ``path[key]``. For `npyio.dataset`'s batched path: read with ``tf.io.read_file``, take
    the member with this, then batch and decode the ``.npy`` bytes.
    """
    require_tf2()
    key = key_tensor(key)
    if tf.executing_eagerly():
        data, ok, message = _extract_eagerly(contents, key, name)
    else:
        data, ok, message = _extractor()(contents, key, name)
    # Asserted here, outside the graph function, so that an error is not wrapped in
    # "{{function_node __inference__extract}}" twice.
    return assert_verdict(ok, message, data)[0]
