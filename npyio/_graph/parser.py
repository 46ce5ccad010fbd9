"""The graph parser of ``.npy`` headers: a batch of whole files in, checked payload bytes out.

One graph function (`parser`) serves every dtype, shape and call site: the declared dtype and
shape come in as tensors. Its checks are one table, `CHECKS`, in the reference parser's order
(`npyio._format.npy.read_header`): each has a name, a condition over the values the parser
computes, and the reason function of `npyio._format.npy` that words its failure, with the names
of the values spliced into that message. The stack of conditions, the message templates and the
gathers that pick a failure's words are all derived from the table.

Safety: every op that runs *before* the validity assertion is total (positions are clamped,
numbers are converted only after a regex accepted them, the fixed-size fields are read from a
zero-padded copy of the first 12 bytes). The caller asserts ``ok`` before it uses the payload.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np
import tensorflow as tf

from npyio._format import npy
from npyio._graph.ops import (
    HEX,
    NATIVE_LE,
    Consts,
    as_str,
    first_index,
    full_match,
    group,
    reason_words,
)

__all__ = ["CHECKS", "GRAMMAR", "PARSE_SIGNATURE", "Check", "parser"]

_PREFIX = npy.MAGIC_LEN + 4  # magic, version and the longest header-length field
_ITEMSIZES = [np.dtype(name).itemsize for name in npy.CODES.values()]


@dataclass(frozen=True)
class Check:
    """One check of the parser: ``condition(v)`` is a [B] (or broadcastable) bool tensor over
    the parser's values ``v``; on failure the message is ``reason(*(m.<arg> for arg in args))``
    with ``m`` the message values (strings) of the failing file."""

    name: str
    condition: Callable[[SimpleNamespace], tf.Tensor]
    reason: Callable[..., str] | None  # None: the grammar check, worded by `GRAMMAR`
    args: tuple[str, ...] = ()


#: The grammar check's layered wording, in `npy.parse_header_text`'s order: the first pattern
#: that does not fully match the header text gives the reason (an "always fails" end gives
#: bad_keys). Each entry: (pattern, reason, args).
GRAMMAR: tuple[tuple[str | None, Callable[..., str], tuple[str, ...]], ...] = (
    (npy.DICT_RE, npy.not_a_dict, ()),
    *(
        entry
        for (_key, has_key, has_entry, _snippet, reason), snippet in zip(
            npy.LAYERS, ("snip_descr", "snip_fortran", "snip_shape"), strict=True
        )
        for entry in ((has_key, npy.bad_keys, ()), (has_entry, npy.REASONS[reason], (snippet,)))
    ),
    (None, npy.bad_keys, ()),
)

CHECKS: tuple[Check, ...] = (
    Check(
        "file_size",
        lambda v: (v.max_file_size < v.k(0)) | (v.size <= v.max_file_size),
        npy.file_too_large,
        ("max_file_size", "size"),
    ),
    Check("magic", lambda v: v.magic == v.k.str(npy.MAGIC_PREFIX), npy.bad_magic, ("magic",)),
    Check(
        "magic_length", lambda v: v.size >= v.k(npy.MAGIC_LEN), npy.too_short, ("magic_len", "size")
    ),
    Check("version", lambda v: v.v1 | v.v23, npy.bad_version, ("version",)),
    Check("length_field", lambda v: v.size >= v.hstart, npy.too_short, ("hstart", "size")),
    Check(
        "header_size",
        lambda v: v.hlen <= v.max_header_size,
        npy.header_too_large,
        ("max_header_size", "hlen"),
    ),
    Check("header_end", lambda v: v.offset <= v.size, npy.header_past_end, ("offset", "size")),
    Check("grammar", lambda v: v.grammar_ok, None),
    # a 3.0 header gets no Python 2 forms (numpy's filter reads versions 1.0 and 2.0 only)
    Check("v3_trail", lambda v: v.v3_trail, npy.not_a_dict),
    Check("v3_long", lambda v: v.v3_long, npy.bad_shape, ("snip_shape",)),
    # dims are parsed once, from the first file; the others must have the same shape text
    Check(
        "same_shape",
        lambda v: v.canon == v.canon0,
        npy.shape_mismatch,
        ("first_shape", "this_shape"),
    ),
    Check("nonnegative", lambda v: v.everyone & v.nonnegative, npy.negative_dim, ("first_shape",)),
    Check("small", lambda v: v.everyone & v.small, npy.too_large, ("first_shape",)),
    Check(
        "dtype", lambda v: v.code == v.declared_code, npy.dtype_mismatch, ("declared_name", "code")
    ),
    Check(
        "shape",
        lambda v: v.everyone & v.shape_ok,
        npy.shape_mismatch,
        ("declared_text", "this_shape"),
    ),
    Check(
        "payload_short",
        lambda v: v.payload_len >= v.nbytes,
        npy.payload_short,
        ("nbytes", "payload_len"),
    ),
    Check(
        "payload_trailing",
        lambda v: v.payload_len <= v.nbytes,
        npy.payload_trailing,
        ("nbytes", "payload_len"),
    ),
)

# Every way a check can be worded, in table order (the grammar check expanded into its layers):
# (reason, args). A failure's words are picked by index into this list.
_WORDINGS = [
    wording
    for check in CHECKS
    for wording in (
        [(reason, args) for _, reason, args in GRAMMAR]
        if check.reason is None
        else [(check.reason, check.args)]
    )
]
#: Index of each check's first wording in `_WORDINGS`.
_FIRST_WORDING = [
    sum(len(GRAMMAR) if c.reason is None else 1 for c in CHECKS[:i]) for i in range(len(CHECKS))
]
_GRAMMAR_CHECK = next(i for i, c in enumerate(CHECKS) if c.reason is None)
# Reason i's message is PRE[i] + a[i] + MID[i] + b[i] + POST[i].
_TEMPLATES = [
    list(part)
    for part in zip(*(reason_words(reason, len(args)) for reason, args in _WORDINGS), strict=True)
]
assert all(len(args) <= 2 for _, args in _WORDINGS), "a reason takes at most two values"


def _show_canon(canon: tf.Tensor, k: Consts) -> tf.Tensor:
    """'64,64,3' -> '(64, 64, 3)', '3' -> '(3,)', '' -> '()', like npy.show_shape."""
    blank = k.str("")
    one = tf.logical_and(canon != blank, tf.logical_not(full_match(canon, ".*,.*")))
    comma = tf.where(one, k.str(","), blank)
    return tf.strings.join(
        [k.str("("), tf.strings.regex_replace(canon, ",", ", "), comma, k.str(")")]
    )


def parse_headers(
    contents: tf.Tensor,
    names: tf.Tensor,
    declared_code: tf.Tensor,
    declared_name: tf.Tensor,
    itemsize: tf.Tensor,
    declared_dims: tf.Tensor,
    declared_rank: tf.Tensor,
    declared_text: tf.Tensor,
    max_header_size: tf.Tensor,
    max_file_size: tf.Tensor,
) -> tuple[tf.Tensor, ...]:
    """Parses and checks the headers of a [B] batch of whole files.

    Generic over dtype and shape (they come in as tensors): ``declared_dims`` holds -1 for a
    ``None`` dim and ``declared_rank`` is -1 for an unknown rank; ``max_file_size`` is -1 for
    no limit. ``names[row]`` is the file an error about element ``row`` names.

    Returns ``(payload [B, nbytes] uint8 in native byte order and C order, dims [ndim], ok,
    message)``: when ``ok`` is false the payload is empty and ``message`` names the first bad
    file and what is wrong; the caller must assert ``ok`` before using the payload.

    Written for a small graph (see `Consts`): every literal is shared, rows and columns are
    taken with ``gather``/``unstack`` rather than slicing.
    """
    k = Consts()
    axis0, axis1 = k.i32(0), k.i32(1)
    c0, c1 = k(0), k(1)

    def at(t: tf.Tensor, i: tf.Tensor) -> tf.Tensor:
        return tf.gather(t, i, axis=axis0)

    def upto(t: tf.Tensor, n: tf.Tensor) -> tf.Tensor:  # t[:n] of a rank-1 tensor
        return at(t, tf.range(c0, n, c1))

    v = SimpleNamespace(  # the values the checks' conditions read
        k=k,
        max_file_size=max_file_size,
        max_header_size=max_header_size,
        declared_code=declared_code,
    )
    v.size = size = tf.cast(tf.strings.length(contents), tf.int64)
    width = k.i32(_PREFIX)
    prefix = tf.strings.substr(
        tf.strings.join([tf.strings.substr(contents, axis0, width), k.str("\0" * _PREFIX)]),
        axis0,
        width,
    )
    pb = tf.cast(tf.io.decode_raw(prefix, tf.uint8), tf.int64)  # [B, 12]
    cols = tf.unstack(pb, num=_PREFIX, axis=1)
    major, minor = cols[6], cols[7]
    v.magic = tf.strings.substr(contents, axis0, k.i32(len(npy.MAGIC_PREFIX)))
    v.v1 = tf.logical_and(major == c1, minor == c0)
    v.v23 = tf.logical_and(tf.logical_or(major == k(2), major == k(3)), minor == c0)
    short = cols[8] + cols[9] * k(256)
    v.hlen = tf.where(v.v1, short, short + cols[10] * k(65536) + cols[11] * k(16777216))
    v.hstart = tf.where(v.v1, k(10), k(12))
    v.offset = v.hstart + v.hlen
    header = tf.strings.substr(
        contents, tf.minimum(v.hstart, size), tf.minimum(v.hlen, max_header_size)
    )

    v.grammar_ok = full_match(header, npy.HEADER_RE)
    py2 = major != k(3)  # versions 1.0 and 2.0 (any other fails the version check first)
    v.v3_trail = tf.logical_or(py2, full_match(header, npy.V3_TRAIL_RE))
    v.v3_long = tf.logical_or(py2, full_match(header, npy.V3_NO_LONG_RE))
    order = group(header, npy.DESCR_EXTRACT, 1)
    v.code = group(header, npy.DESCR_EXTRACT, 2)
    fortran = group(header, npy.FORTRAN_EXTRACT) == k.str("True")
    canon = tf.strings.regex_replace(
        tf.strings.regex_replace(group(header, npy.SHAPE_EXTRACT), npy.SHAPE_NOISE, ""), ",$", ""
    )
    for _ in range(2):  # "-0" is 0, as in F (twice: a match consumes the comma after it)
        canon = tf.strings.regex_replace(canon, "(^|,)-0(,|$)", "\\10\\2")  # RE2: \1, then 0
    v.canon = canon

    # Dims are parsed once, from the first element.
    v.canon0 = canon0 = at(canon, c0)
    # (the raw op: tf.strings.split of a scalar adds ~40 ops of ragged bookkeeping)
    tokens = tf.raw_ops.StringSplitV2(
        input=tf.expand_dims(canon0, axis0), sep=k.str(","), maxsplit=-1
    ).values
    ndim = tf.where(canon0 == k.str(""), c0, tf.size(tokens, out_type=tf.int64))
    tokens = upto(tokens, ndim)
    tokens_ok = full_match(tokens, f"-?[0-9]{{1,{npy.MAX_DIM_DIGITS}}}")
    dims = tf.strings.to_number(tf.where(tokens_ok, tokens, k.str("0")), tf.int64)
    # The size limit uses each file's own item size, as F does (the dtype is checked later).
    code_index = tf.argmax(
        tf.cast(tf.equal(tf.expand_dims(v.code, axis1), k.str(list(npy.CODES))), tf.int32), axis1
    )
    file_itemsize = at(k(_ITEMSIZES), code_index)
    some_dims = tf.maximum(dims, c1)
    fbytes = tf.reduce_prod(tf.cast(some_dims, tf.float64), axis0) * tf.cast(
        file_itemsize, tf.float64
    )
    # float64 rounds near 2**62, so decide there in int64 (exact: no overflow below 1.5 * 2**62)
    v.small = tf.reduce_all(tokens_ok, axis0) & tf.logical_and(
        fbytes < k(1.5 * npy.MAX_NBYTES, tf.float64),
        tf.reduce_prod(some_dims, axis0) * file_itemsize < k(npy.MAX_NBYTES),
    )
    v.nbytes = nbytes = tf.reduce_prod(dims, axis0) * itemsize
    v.payload_len = size - v.offset
    padded = upto(
        tf.concat([dims, tf.zeros_like(declared_dims)], axis0),
        tf.size(declared_dims, out_type=tf.int64),
    )
    v.shape_ok = tf.logical_or(
        declared_rank < c0,
        tf.logical_and(
            ndim == declared_rank,
            tf.reduce_all(tf.logical_or(declared_dims < c0, padded == declared_dims), axis0),
        ),
    )
    # from the text, as F does: a 19-digit negative dim is negative, not too large
    v.nonnegative = tf.reduce_all(
        tf.logical_or(tf.strings.substr(tokens, axis0, axis1) != k.str("-"), tokens == k.str("-0")),
        axis0,
    )
    v.everyone = tf.equal(size, size)  # [B] of True, to broadcast the per-batch checks
    ok = tf.stack([check.condition(v) for check in CHECKS], axis=1)
    all_ok = tf.reduce_all(ok, axis=k.i32([0, 1]))

    def failure() -> tf.Tensor:
        # Pick the row and the wording, then gather; few ops, because tf.data prepares this
        # branch at every iterator start.
        kf = Consts(k)
        bad = tf.logical_not(ok)
        row = first_index(tf.reduce_any(bad, axis=axis1), kf)
        check = first_index(at(bad, row), kf)
        text = at(header, row)
        layers = tf.logical_not(
            tf.stack(
                [
                    kf(False, tf.bool) if pattern is None else full_match(text, pattern)
                    for pattern, _, _ in GRAMMAR
                ]
            )
        )
        wording = at(kf(_FIRST_WORDING), check) + tf.where(
            check == kf(_GRAMMAR_CHECK), first_index(layers, kf), c0
        )
        snippets = tf.strings.substr(
            tf.stack([group(text, layer[3]) for layer in npy.LAYERS]),
            axis0,
            kf.i32(npy.SNIPPET_LEN),
        )
        numbers = at(tf.stack([size, v.hstart, v.hlen, v.offset, v.payload_len], 1), row)
        m = SimpleNamespace(
            **dict(
                zip(
                    ("size", "hstart", "hlen", "offset", "payload_len"),
                    tf.unstack(as_str(numbers), num=5),
                    strict=True,
                )
            )
        )
        m.snip_descr, m.snip_fortran, m.snip_shape = tf.unstack(
            tf.where(snippets == kf.str(""), kf.str("nothing"), snippets), num=3
        )
        m.nbytes = as_str(nbytes)
        m.max_file_size, m.max_header_size = as_str(max_file_size), as_str(max_header_size)
        m.magic_len = kf.str(str(npy.MAGIC_LEN))
        m.declared_name, m.declared_text = declared_name, declared_text
        row_bytes = at(pb, row)
        magic_len = kf(len(npy.MAGIC_PREFIX))
        m.magic = tf.where(
            at(numbers, c0) == c0,
            kf.str("0 bytes"),
            tf.strings.reduce_join(
                at(kf.str(HEX), upto(row_bytes, tf.minimum(at(numbers, c0), magic_len))),
                axis=axis0,
                separator=" ",
            ),
        )
        m.version = tf.strings.reduce_join(
            as_str(at(row_bytes, kf([6, 7]))), axis=axis0, separator="."
        )
        m.code = at(
            kf.str(list(npy.CODES.values())),
            tf.argmax(tf.cast(tf.equal(at(v.code, row), kf.str(list(npy.CODES))), tf.int32), axis0),
        )
        m.first_shape, m.this_shape = tf.unstack(
            _show_canon(tf.stack([canon0, at(canon, row)]), kf), num=2
        )
        blank = kf.str("")
        a = [getattr(m, args[0]) if args else blank for _, args in _WORDINGS]
        b = [getattr(m, args[1]) if len(args) > 1 else blank for _, args in _WORDINGS]
        pre, mid, post = (at(kf.str(t), wording) for t in _TEMPLATES)
        return tf.strings.join(
            [
                at(names, row),
                kf.str(": "),
                pre,
                at(tf.stack(a), wording),
                mid,
                at(tf.stack(b), wording),
                post,
            ]
        )

    message = tf.cond(all_ok, lambda: k.str(""), failure)
    # No assertion in here: TensorFlow keeps ~1 KiB for every error raised inside a called
    # function, so the caller asserts. Until it has, every op below must be total: a bad batch
    # decodes as empty arrays (nothing is allocated from a lying header).
    nbytes = tf.where(all_ok, nbytes, c0)
    dims = tf.where(all_ok, dims, tf.zeros_like(dims))
    payload = tf.strings.substr(
        contents, tf.where(all_ok, v.offset, c0), tf.broadcast_to(nbytes, tf.shape(v.offset))
    )
    raw = tf.io.decode_raw(payload, tf.uint8)  # [B, nbytes]: one copy of the payload
    count = at(tf.shape(raw, out_type=tf.int64), c0)
    # Byte order and Fortran order are undone here on bytes, generically: in native order a
    # swap reverses each item's bytes (each half's, for complex), whatever the dtype.
    is_le = tf.logical_or(
        order == k.str("<"), tf.logical_and(order != k.str(">"), k(NATIVE_LE, tf.bool))
    )
    swap = tf.logical_and(tf.not_equal(is_le, k(NATIVE_LE, tf.bool)), itemsize > c1)
    complex_ = tf.strings.substr(declared_code, axis0, axis1) == k.str("c")
    unit = tf.where(complex_, itemsize // k(2), itemsize)

    def reorder() -> tf.Tensor:
        # One branch for both steps (a tf.cond costs as much as ~25 ops at every iterator
        # start); each step keeps the rows that do not need it.
        kb = Consts(k)
        items = tf.reverse(tf.reshape(raw, tf.stack([count, kb(-1), unit])), kb.i32([2]))
        flat = tf.reshape(items, tf.stack([count, kb(-1)]))
        native = tf.where(tf.expand_dims(swap, axis1), flat, raw)
        ndim_ = tf.size(dims)
        shape = tf.concat([[count], tf.reverse(dims, kb.i32([0])), [itemsize]], axis0)
        perm = tf.concat([[0], tf.range(ndim_, 0, -1), [ndim_ + 1]], axis0)
        items = tf.transpose(tf.reshape(native, shape), perm)
        flat = tf.reshape(items, tf.stack([count, kb(-1)]))
        return tf.where(tf.expand_dims(fortran, axis1), flat, native)

    # Only a good batch is rearranged: a bad one's dims say nothing about its (empty) payload,
    # and a reshape error here would hide npyio's message.
    needed = tf.logical_or(tf.reduce_any(swap, axis0), tf.reduce_any(fortran, axis0))
    raw = tf.cond(tf.logical_and(all_ok, needed), reorder, lambda: raw)
    return raw, dims, all_ok, message


PARSE_SIGNATURE = [
    tf.TensorSpec([None], tf.string),  # contents
    tf.TensorSpec([None], tf.string),  # names
    tf.TensorSpec([], tf.string),  # declared_code
    tf.TensorSpec([], tf.string),  # declared_name
    tf.TensorSpec([], tf.int64),  # itemsize
    tf.TensorSpec([None], tf.int64),  # declared_dims
    tf.TensorSpec([], tf.int64),  # declared_rank
    tf.TensorSpec([], tf.string),  # declared_text
    tf.TensorSpec([], tf.int64),  # max_header_size
    tf.TensorSpec([], tf.int64),  # max_file_size, -1 for none
]


@functools.cache
def parser() -> tf.types.experimental.ConcreteFunction:
    """The header parser as one graph function, shared by every dtype, shape and call site.

    Sharing matters: tf.data prepares every function a map function refers to each time an
    iterator is created, taken branch or not, so each distinct parser would cost every epoch.
    """
    return tf.function(
        parse_headers, input_signature=PARSE_SIGNATURE, autograph=False
    ).get_concrete_function()
