"""The graph parser of ``.npy`` headers: a batch of whole files in, checked payload bytes out.

One graph function (`parser`) serves every dtype, shape and call site: the declared dtype and
shape come in as tensors. It works in named steps: read each file's fixed-size prefix
(`Prefix`), parse its header text (`Header`), parse the dims once, from the first file
(`Dims`), check, then read the payload. Its checks are one table, `CHECKS`, in the reference
parser's order (`npyio._format.npy.read_header`): each has a name, a condition over the
parser's `Values`, and the reason function of `npyio._format.npy` that words its failure, with
fields of `Words` (the failing file's values, as strings) spliced into that message. The stack
of conditions, the message templates and the gathers that pick a failure's words are all
derived from the table.

Safety: every op that runs *before* the validity assertion is total (positions are clamped,
numbers are converted only after a regex accepted them, the fixed-size fields are read from a
zero-padded copy of the first 12 bytes). The caller asserts ``ok`` before it uses the payload.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import tensorflow as tf

from npyio._format import npy
from npyio._format.spec import Spec
from npyio._graph.ops import (
    HEX,
    NATIVE_LE,
    Consts,
    as_str,
    first_index,
    fmt,
    full_match,
    group,
    reason_words,
)
from npyio._tf import split_values

__all__ = [
    "CHECKS",
    "GRAMMAR",
    "PARSE_SIGNATURE",
    "Check",
    "Dims",
    "Files",
    "Header",
    "Prefix",
    "SpecTensors",
    "Values",
    "Words",
    "parse_headers",
    "parser",
    "spec_tensors",
]

_PREFIX = npy.MAGIC_LEN + 4  # magic, version and the longest header-length field
_ITEMSIZES = [np.dtype(name).itemsize for name in npy.CODES.values()]


# --- the values the checks read --------------------------------------------------------------
class Files(NamedTuple):
    """The batch to parse: whole files ([B] strings) and the names their errors use ([B])."""

    contents: tf.Tensor
    names: tf.Tensor


class SpecTensors(NamedTuple):
    """A part's `npyio._format.spec.Spec` as the parser takes it (scalars, and dims
    ``[rank]``): what every file must hold, and the limits it is read under. Made by
    `spec_tensors`, from the spec alone."""

    code: tf.Tensor  # the dtype's code without byte order, e.g. "f4"
    name: tf.Tensor  # the dtype's name, e.g. "float32"
    itemsize: tf.Tensor
    dims: tf.Tensor  # int64, -1 for a None dim
    rank: tf.Tensor  # -1 for an unknown rank (then dims is empty)
    text: tf.Tensor  # the shape as messages show it, e.g. "(2, None)"
    max_header_size: tf.Tensor
    max_file_size: tf.Tensor  # -1 for no limit
    origin: tf.Tensor  # where a dataset's spec came from ("": the caller's own dtype/shape)


def spec_tensors(spec: Spec) -> SpecTensors:
    """The tensors that give the parser ``spec``: its file layout (``None`` dims, unknown
    rank) and its limits."""
    dt, shape, limits = spec.file.dtype, spec.file.shape, spec.limits
    dims = [] if shape is None else [-1 if d is None else d for d in shape]
    most = limits.max_file_size
    return SpecTensors(
        tf.constant(npy.dtype_code(dt)),
        tf.constant(dt.name),
        tf.constant(dt.itemsize, tf.int64),
        tf.constant(dims, tf.int64, shape=[len(dims)]),
        tf.constant(-1 if shape is None else len(shape), tf.int64),
        tf.constant("" if shape is None else npy.show_shape(shape)),
        tf.constant(limits.max_header_size, tf.int64),
        tf.constant(-1 if most is None else most, tf.int64),
        tf.constant(os.fsencode(spec.origin)),  # bytes: a file name need not be UTF-8
    )


class Prefix(NamedTuple):
    """The fixed-size fields at the start of each file ([B] each), read from a zero-padded copy
    of its first 12 bytes, and where the header text lies."""

    size: tf.Tensor  # int64 file sizes
    bytes: tf.Tensor  # [B, 12] int64: the first 12 bytes, 0 past the end
    magic: tf.Tensor  # the first 6 bytes, as a string
    major: tf.Tensor  # the version's major number
    v1: tf.Tensor  # version 1.0 (a 2-byte header length)
    v23: tf.Tensor  # version 2.0 or 3.0 (a 4-byte header length)
    hstart: tf.Tensor  # where the header text starts
    hlen: tf.Tensor  # the header length field
    offset: tf.Tensor  # where the payload starts: hstart + hlen


class Header(NamedTuple):
    """What each file's header text says ([B] each); meaningful where ``grammar_ok``."""

    text: tf.Tensor
    grammar_ok: tf.Tensor  # the text is a header of the grammar (versions 1.0 and 2.0)
    v3_trail: tf.Tensor  # not version 3.0, or nothing after the dict but its whitespace
    v3_long: tf.Tensor  # not version 3.0, or no Python 2 long suffix
    order: tf.Tensor  # the descr's byte order character, or ""
    code: tf.Tensor  # the descr's type code, e.g. "f4"
    fortran: tf.Tensor  # fortran_order is True
    canon: tf.Tensor  # the shape text, canonical: "2,3", "" for ()


class Dims(NamedTuple):
    """The dims, parsed once, from the first file's shape text."""

    canon0: tf.Tensor  # the first file's canonical shape text (every file must have it)
    ndim: tf.Tensor
    tokens: tf.Tensor  # [ndim] its dims, as text
    values: tf.Tensor  # [ndim] int64 (0 where a token is not a number)
    nonnegative: tf.Tensor  # no dim is negative (decided from the text)
    small: tf.Tensor  # [B] every dim is a number and the array has under MAX_NBYTES bytes
    nbytes: tf.Tensor  # the payload size the dims and the declared item size give


class Values(NamedTuple):
    """Everything a check's condition reads."""

    spec: SpecTensors
    prefix: Prefix
    header: Header
    dims: Dims
    shape_ok: tf.Tensor  # the dims match the declared shape (scalar)
    payload_len: tf.Tensor  # [B] the bytes after the header
    everyone: tf.Tensor  # [B] of True: broadcasts a per-batch check to every file


class Words(NamedTuple):
    """The values a failure message names (string scalars), for the failing file."""

    size: tf.Tensor
    hstart: tf.Tensor
    hlen: tf.Tensor
    offset: tf.Tensor
    payload_len: tf.Tensor
    snip_descr: tf.Tensor  # the text of each key's value (`npy.SNIPPET_LEN` at most)
    snip_fortran: tf.Tensor
    snip_shape: tf.Tensor
    nbytes: tf.Tensor
    max_file_size: tf.Tensor
    max_header_size: tf.Tensor
    magic_len: tf.Tensor
    declared_name: tf.Tensor
    declared_text: tf.Tensor
    magic: tf.Tensor  # the first bytes in hex, "0 bytes" for an empty file
    version: tf.Tensor  # "major.minor"
    code: tf.Tensor  # the file's dtype name
    first_shape: tf.Tensor  # the first file's shape, as shown: "(2, 3)"
    this_shape: tf.Tensor  # the failing file's shape


# --- the table of checks ---------------------------------------------------------------------
@dataclass(frozen=True)
class Check:
    """One check of the parser: ``condition(values, k)`` is a [B] (or broadcastable) bool
    tensor over the parser's `Values`, with ``k`` its literals; on failure the message is
    ``reason(*(getattr(words, arg) for arg in args))`` with ``words`` the failing file's
    `Words`."""

    name: str
    condition: Callable[[Values, Consts], tf.Tensor]
    reason: Callable[..., str] | None  # None: the grammar check, worded by `GRAMMAR`
    args: tuple[str, ...] = ()  # fields of `Words`

    def __post_init__(self) -> None:
        _check_args(self.name, self.args)


def _check_args(what: str, args: tuple[str, ...]) -> None:
    unknown = [arg for arg in args if arg not in Words._fields]
    if unknown:
        raise ValueError(f"{what}: {unknown} are not fields of Words")


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
for _, _reason, _args in GRAMMAR:
    _check_args(_reason.__name__, _args)

CHECKS: tuple[Check, ...] = (
    Check(
        "file_size",
        lambda v, k: (v.spec.max_file_size < k(0)) | (v.prefix.size <= v.spec.max_file_size),
        npy.file_too_large,
        ("max_file_size", "size"),
    ),
    Check(
        "magic",
        lambda v, k: v.prefix.magic == k.str(npy.MAGIC_PREFIX),
        npy.bad_magic,
        ("magic",),
    ),
    Check(
        "magic_length",
        lambda v, k: v.prefix.size >= k(npy.MAGIC_LEN),
        npy.too_short,
        ("magic_len", "size"),
    ),
    Check("version", lambda v, k: v.prefix.v1 | v.prefix.v23, npy.bad_version, ("version",)),
    Check(
        "length_field",
        lambda v, k: v.prefix.size >= v.prefix.hstart,
        npy.too_short,
        ("hstart", "size"),
    ),
    Check(
        "header_size",
        lambda v, k: v.prefix.hlen <= v.spec.max_header_size,
        npy.header_too_large,
        ("max_header_size", "hlen"),
    ),
    Check(
        "header_end",
        lambda v, k: v.prefix.offset <= v.prefix.size,
        npy.header_past_end,
        ("offset", "size"),
    ),
    Check("grammar", lambda v, k: v.header.grammar_ok, None),
    # a 3.0 header gets no Python 2 forms (numpy's filter reads versions 1.0 and 2.0 only)
    Check("v3_trail", lambda v, k: v.header.v3_trail, npy.not_a_dict),
    Check("v3_long", lambda v, k: v.header.v3_long, npy.bad_shape, ("snip_shape",)),
    # dims are parsed once, from the first file; the others must have the same shape text
    Check(
        "same_shape",
        lambda v, k: v.header.canon == v.dims.canon0,
        npy.shape_mismatch,
        ("first_shape", "this_shape"),
    ),
    Check(
        "nonnegative",
        lambda v, k: v.everyone & v.dims.nonnegative,
        npy.negative_dim,
        ("first_shape",),
    ),
    Check("small", lambda v, k: v.everyone & v.dims.small, npy.too_large, ("first_shape",)),
    Check(
        "dtype",
        lambda v, k: v.header.code == v.spec.code,
        npy.dtype_mismatch,
        ("declared_name", "code"),
    ),
    Check(
        "shape",
        lambda v, k: v.everyone & v.shape_ok,
        npy.shape_mismatch,
        ("declared_text", "this_shape"),
    ),
    Check(
        "payload_short",
        lambda v, k: v.payload_len >= v.dims.nbytes,
        npy.payload_short,
        ("nbytes", "payload_len"),
    ),
    Check(
        "payload_trailing",
        lambda v, k: v.payload_len <= v.dims.nbytes,
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
#: The checks worded by `npy.shape_mismatch`: the first file's shape, then the declared one.
_SAME_SHAPE_CHECK = next(i for i, c in enumerate(CHECKS) if c.name == "same_shape")
_SHAPE_CHECK = next(i for i, c in enumerate(CHECKS) if c.name == "shape")
_DTYPE_CHECK = next(i for i, c in enumerate(CHECKS) if c.name == "dtype")
#: The checks after which a dataset's error says where its spec came from.
_MISMATCH_CHECKS = [i for i, c in enumerate(CHECKS) if c.name in ("same_shape", "dtype", "shape")]
# Reason i's message is PRE[i] + a[i] + MID[i] + b[i] + POST[i].
_TEMPLATES = [
    list(part)
    for part in zip(*(reason_words(reason, len(args)) for reason, args in _WORDINGS), strict=True)
]
assert all(len(args) <= 2 for _, args in _WORDINGS), "a reason takes at most two values"


# --- small graph helpers ---------------------------------------------------------------------
def _at(t: tf.Tensor, i: tf.Tensor, k: Consts) -> tf.Tensor:
    """``t[i]`` along axis 0, as a gather (a strided slice takes four nodes)."""
    return tf.gather(t, i, axis=k.i32(0))


def _upto(t: tf.Tensor, n: tf.Tensor, k: Consts) -> tf.Tensor:
    """``t[:n]`` of a rank-1 tensor."""
    return _at(t, tf.range(k(0), n, k(1)), k)


def _show_canon(canon: tf.Tensor, k: Consts) -> tf.Tensor:
    """'64,64,3' -> '(64, 64, 3)', '3' -> '(3,)', '' -> '()', like npy.show_shape."""
    blank = k.str("")
    one = tf.logical_and(canon != blank, tf.logical_not(full_match(canon, ".*,.*")))
    comma = tf.where(one, k.str(","), blank)
    return tf.strings.join(
        [k.str("("), tf.strings.regex_replace(canon, ",", ", "), comma, k.str(")")]
    )


def _show_magic(first: tf.Tensor, size: tf.Tensor, k: Consts) -> tf.Tensor:
    """The magic bytes a file has (of its ``first`` bytes, ``size`` in all) in hex, as
    `npy.bad_magic` shows them: "93 4e 55", or "0 bytes"."""
    shown = _upto(first, tf.minimum(size, k(len(npy.MAGIC_PREFIX))), k)
    hex_ = tf.strings.reduce_join(_at(k.str(HEX), shown, k), axis=k.i32(0), separator=" ")
    return tf.where(size == k(0), k.str("0 bytes"), hex_)


def _type_index(code: tf.Tensor, k: Consts, per_file: bool) -> tf.Tensor:
    """The index in `npy.CODES` of each type code (0 for one that is not there): of a [B]
    ``code`` if ``per_file``, else of a scalar one."""
    codes = k.str(list(npy.CODES))
    if per_file:
        hits = tf.equal(tf.expand_dims(code, k.i32(1)), codes)
        return tf.argmax(tf.cast(hits, tf.int32), k.i32(1))
    return tf.argmax(tf.cast(tf.equal(code, codes), tf.int32), k.i32(0))


# --- the steps ---------------------------------------------------------------------------------
def _read_prefix(contents: tf.Tensor, k: Consts) -> Prefix:
    """The magic, the version and the header length of each file, from its first 12 bytes."""
    size = tf.cast(tf.strings.length(contents), tf.int64)
    axis0, width = k.i32(0), k.i32(_PREFIX)
    first = tf.strings.substr(contents, axis0, width)
    padded = tf.strings.substr(tf.strings.join([first, k.str("\0" * _PREFIX)]), axis0, width)
    pb = tf.cast(tf.io.decode_raw(padded, tf.uint8), tf.int64)  # [B, 12]
    cols = tf.unstack(pb, num=_PREFIX, axis=1)
    major, minor = cols[6], cols[7]
    v1 = tf.logical_and(major == k(1), minor == k(0))
    v23 = tf.logical_and(tf.logical_or(major == k(2), major == k(3)), minor == k(0))
    short = cols[8] + cols[9] * k(256)
    hlen = tf.where(v1, short, short + cols[10] * k(65536) + cols[11] * k(16777216))
    hstart = tf.where(v1, k(10), k(12))
    magic = tf.strings.substr(contents, axis0, k.i32(len(npy.MAGIC_PREFIX)))
    return Prefix(size, pb, magic, major, v1, v23, hstart, hlen, hstart + hlen)


def _parse_header(contents: tf.Tensor, prefix: Prefix, spec: SpecTensors, k: Consts) -> Header:
    """Each file's header text (at most ``max_header_size`` bytes of it) against the grammar,
    and the values it gives."""
    text = tf.strings.substr(
        contents,
        tf.minimum(prefix.hstart, prefix.size),
        tf.minimum(prefix.hlen, spec.max_header_size),
    )
    py2 = prefix.major != k(3)  # versions 1.0 and 2.0 (any other fails the version check first)
    shape = group(text, npy.SHAPE_EXTRACT)
    canon = tf.strings.regex_replace(tf.strings.regex_replace(shape, npy.SHAPE_NOISE, ""), ",$", "")
    for _ in range(2):  # "-0" is 0, as in F (twice: a match consumes the comma after it)
        canon = tf.strings.regex_replace(canon, "(^|,)-0(,|$)", "\\10\\2")  # RE2: \1, then 0
    return Header(
        text=text,
        grammar_ok=full_match(text, npy.HEADER_RE),
        v3_trail=tf.logical_or(py2, full_match(text, npy.V3_TRAIL_RE)),
        v3_long=tf.logical_or(py2, full_match(text, npy.V3_NO_LONG_RE)),
        order=group(text, npy.DESCR_EXTRACT, 1),
        code=group(text, npy.DESCR_EXTRACT, 2),
        fortran=group(text, npy.FORTRAN_EXTRACT) == k.str("True"),
        canon=canon,
    )


def _parse_dims(header: Header, spec: SpecTensors, k: Consts) -> Dims:
    """The dims of the first file's shape text, and whether the array they make is small
    enough (with each file's own item size, as the reference parser does: the dtype is
    checked later)."""
    axis0, c1 = k.i32(0), k(1)
    canon0 = _at(header.canon, k(0), k)
    tokens = split_values(tf.expand_dims(canon0, axis0), k.str(","))
    ndim = tf.where(canon0 == k.str(""), k(0), tf.size(tokens, out_type=tf.int64))
    tokens = _upto(tokens, ndim, k)
    tokens_ok = full_match(tokens, f"-?[0-9]{{1,{npy.MAX_DIM_DIGITS}}}")
    dims = tf.strings.to_number(tf.where(tokens_ok, tokens, k.str("0")), tf.int64)
    file_itemsize = _at(k(_ITEMSIZES), _type_index(header.code, k, per_file=True), k)
    some_dims = tf.maximum(dims, c1)
    fbytes = tf.reduce_prod(tf.cast(some_dims, tf.float64), axis0) * tf.cast(
        file_itemsize, tf.float64
    )
    # float64 rounds near 2**62, so decide there in int64 (exact: no overflow below 1.5 * 2**62)
    small = tf.reduce_all(tokens_ok, axis0) & tf.logical_and(
        fbytes < k(1.5 * npy.MAX_NBYTES, tf.float64),
        tf.reduce_prod(some_dims, axis0) * file_itemsize < k(npy.MAX_NBYTES),
    )
    # from the text, as F does: a 19-digit negative dim is negative, not too large
    nonnegative = tf.reduce_all(
        tf.logical_or(
            tf.strings.substr(tokens, axis0, k.i32(1)) != k.str("-"), tokens == k.str("-0")
        ),
        axis0,
    )
    nbytes = tf.reduce_prod(dims, axis0) * spec.itemsize
    return Dims(canon0, ndim, tokens, dims, nonnegative, small, nbytes)


def _match_shape(dims: Dims, spec: SpecTensors, k: Consts) -> tf.Tensor:
    """Whether the dims match the declared shape (``None`` dims match any size)."""
    axis0, c0 = k.i32(0), k(0)
    padded = _upto(
        tf.concat([dims.values, tf.zeros_like(spec.dims)], axis0),
        tf.size(spec.dims, out_type=tf.int64),
        k,
    )
    return tf.logical_or(
        spec.rank < c0,
        tf.logical_and(
            dims.ndim == spec.rank,
            tf.reduce_all(tf.logical_or(spec.dims < c0, padded == spec.dims), axis0),
        ),
    )


def _first_failure(ok: tf.Tensor, k: Consts) -> tuple[tf.Tensor, tf.Tensor]:
    """``(row, check)``: the first file with a failing check, and its first failing check."""
    bad = tf.logical_not(ok)
    row = first_index(tf.reduce_any(bad, axis=k.i32(1)), k)
    return row, first_index(_at(bad, row, k), k)


def _wording_of(check: tf.Tensor, text: tf.Tensor, k: Consts) -> tf.Tensor:
    """The index in `_WORDINGS` of the words of ``check`` for a file of header text ``text``:
    for the grammar check, the first of its layers (`GRAMMAR`) that the text fails."""
    matched = tf.stack(
        [
            k(False, tf.bool) if pattern is None else full_match(text, pattern)
            for pattern, _, _ in GRAMMAR
        ]
    )
    layer = tf.where(check == k(_GRAMMAR_CHECK), first_index(tf.logical_not(matched), k), k(0))
    return _at(k(_FIRST_WORDING), check, k) + layer


def _failure_words(v: Values, row: tf.Tensor, text: tf.Tensor, k: Consts) -> Words:
    """The values the messages name, for file ``row`` (of header text ``text``), as strings."""
    snippets = tf.strings.substr(
        tf.stack([group(text, layer[3]) for layer in npy.LAYERS]),
        k.i32(0),
        k.i32(npy.SNIPPET_LEN),
    )
    snip_descr, snip_fortran, snip_shape = tf.unstack(
        tf.where(snippets == k.str(""), k.str("nothing"), snippets), num=3
    )
    p = v.prefix
    numbers = _at(tf.stack([p.size, p.hstart, p.hlen, p.offset, v.payload_len], 1), row, k)
    size, hstart, hlen, offset, payload_len = tf.unstack(as_str(numbers), num=5)
    row_bytes = _at(p.bytes, row, k)
    first_shape, this_shape = tf.unstack(
        _show_canon(tf.stack([v.dims.canon0, _at(v.header.canon, row, k)]), k), num=2
    )
    return Words(
        size=size,
        hstart=hstart,
        hlen=hlen,
        offset=offset,
        payload_len=payload_len,
        snip_descr=snip_descr,
        snip_fortran=snip_fortran,
        snip_shape=snip_shape,
        nbytes=as_str(v.dims.nbytes),
        max_file_size=as_str(v.spec.max_file_size),
        max_header_size=as_str(v.spec.max_header_size),
        magic_len=k.str(str(npy.MAGIC_LEN)),
        declared_name=v.spec.name,
        declared_text=v.spec.text,
        magic=_show_magic(row_bytes, _at(numbers, k(0), k), k),
        version=tf.strings.reduce_join(
            as_str(_at(row_bytes, k([6, 7]), k)), axis=k.i32(0), separator="."
        ),
        code=_at(
            k.str(list(npy.CODES.values())),
            _type_index(_at(v.header.code, row, k), k, per_file=False),
            k,
        ),
        first_shape=first_shape,
        this_shape=this_shape,
    )


def _splice_message(name: tf.Tensor, wording: tf.Tensor, words: Words, k: Consts) -> tf.Tensor:
    """``"NAME: reason"``, with wording ``wording``'s words around its values from ``words``."""
    blank = k.str("")
    a = [getattr(words, args[0]) if args else blank for _, args in _WORDINGS]
    b = [getattr(words, args[1]) if len(args) > 1 else blank for _, args in _WORDINGS]
    pre, mid, post = (_at(k.str(t), wording, k) for t in _TEMPLATES)
    first, second = _at(tf.stack(a), wording, k), _at(tf.stack(b), wording, k)
    return tf.strings.join([name, k.str(": "), pre, first, mid, second, post])


def _canon_dims(canon: tf.Tensor, k: Consts) -> tuple[tf.Tensor, tf.Tensor]:
    """``(tokens, rank)`` of a canonical shape text: "52,20" -> (["52", "20"], 2)."""
    tokens = split_values(tf.expand_dims(canon, k.i32(0)), k.str(","))
    return tokens, tf.where(canon == k.str(""), k(0), tf.size(tokens, out_type=tf.int64))


def _vary_hint(check: tf.Tensor, v: Values, row: tf.Tensor, k: Consts) -> tf.Tensor:
    """`npy.vary_hint` after a shape mismatch between shapes of one rank (as
    `npy.shape_mismatch_reason` adds it), else "": the expected shape (the first file's, or
    the declared one) with "None" where the failing file's differs."""
    declared = tf.where(v.spec.dims < k(0), k.str("None"), as_str(v.spec.dims))
    expected = tf.where(
        check == k(_SAME_SHAPE_CHECK),
        v.dims.canon0,
        tf.strings.reduce_join(declared, axis=k.i32(0), separator=","),
    )
    want, want_rank = _canon_dims(expected, k)
    got, got_rank = _canon_dims(_at(v.header.canon, row, k), k)
    # (got's tokens cut or padded to want's count: they are compared only for one rank)
    got = _at(tf.concat([got, want], k.i32(0)), tf.range(k(0), tf.size(want, out_type=tf.int64)), k)
    varying = tf.strings.reduce_join(
        tf.where(want == got, want, k.str("None")), axis=k.i32(0), separator=", "
    )
    shown = tf.strings.join(
        [k.str("("), varying, tf.where(want_rank == k(1), k.str(","), k.str("")), k.str(")")]
    )
    mismatch = (check == k(_SAME_SHAPE_CHECK)) | (check == k(_SHAPE_CHECK))
    return tf.where(mismatch & (want_rank == got_rank), fmt(npy.vary_hint, shown), k.str(""))


def _mismatch_hint(check: tf.Tensor, v: Values, row: tf.Tensor, k: Consts) -> tf.Tensor:
    """What follows a failure: for a dtype or shape mismatch under a dataset's spec, where the
    spec came from (`npy.spec_origin`); under the caller's own ``dtype``/``shape`` (no
    origin), `_vary_hint`."""
    mismatch = (
        (check == k(_SAME_SHAPE_CHECK)) | (check == k(_SHAPE_CHECK)) | (check == k(_DTYPE_CHECK))
    )
    origin = tf.where(mismatch, fmt(npy.spec_origin, v.spec.origin), k.str(""))
    return tf.where(v.spec.origin == k.str(""), _vary_hint(check, v, row, k), origin)


def _failure_message(ok: tf.Tensor, v: Values, names: tf.Tensor, k: Consts) -> tf.Tensor:
    """The message of the first failing check of the first bad file. Built in the branch taken
    only on failure, with few ops: tf.data prepares that branch at every iterator start."""
    kf = Consts(k)
    row, check = _first_failure(ok, kf)
    text = _at(v.header.text, row, kf)
    words = _failure_words(v, row, text, kf)
    message = _splice_message(_at(names, row, kf), _wording_of(check, text, kf), words, kf)
    return tf.strings.join([message, _mismatch_hint(check, v, row, kf)])


def _to_c_order(
    raw: tf.Tensor,
    count: tf.Tensor,
    dims: tf.Tensor,
    swap: tf.Tensor,
    fortran: tf.Tensor,
    unit: tf.Tensor,
    itemsize: tf.Tensor,
    k: Consts,
) -> tf.Tensor:
    """``raw`` [B, nbytes] with each item's bytes reversed where ``swap`` (each half's, for
    complex: ``unit`` bytes at a time) and Fortran-order rows transposed where ``fortran``:
    native byte order and C order, whatever the dtype. Each step keeps the rows that do not
    need it."""
    axis0, axis1 = k.i32(0), k.i32(1)
    items = tf.reverse(tf.reshape(raw, tf.stack([count, k(-1), unit])), k.i32([2]))
    flat = tf.reshape(items, tf.stack([count, k(-1)]))
    native = tf.where(tf.expand_dims(swap, axis1), flat, raw)
    ndim = tf.size(dims)
    shape = tf.concat([[count], tf.reverse(dims, k.i32([0])), [itemsize]], axis0)
    perm = tf.concat([[0], tf.range(ndim, 0, -1), [ndim + 1]], axis0)
    items = tf.transpose(tf.reshape(native, shape), perm)
    flat = tf.reshape(items, tf.stack([count, k(-1)]))
    return tf.where(tf.expand_dims(fortran, axis1), flat, native)


def _read_payload(
    contents: tf.Tensor, v: Values, all_ok: tf.Tensor, k: Consts
) -> tuple[tf.Tensor, tf.Tensor]:
    """``(payload [B, nbytes] uint8 in native byte order and C order, dims)``; empty unless
    ``all_ok``, so that nothing is allocated from a lying header."""
    c0, c1 = k(0), k(1)
    nbytes = tf.where(all_ok, v.dims.nbytes, c0)
    dims = tf.where(all_ok, v.dims.values, tf.zeros_like(v.dims.values))
    offset = tf.where(all_ok, v.prefix.offset, c0)
    payload = tf.strings.substr(contents, offset, tf.broadcast_to(nbytes, tf.shape(offset)))
    raw = tf.io.decode_raw(payload, tf.uint8)  # [B, nbytes]: one copy of the payload
    count = _at(tf.shape(raw, out_type=tf.int64), c0, k)
    itemsize, order, fortran = v.spec.itemsize, v.header.order, v.header.fortran
    is_le = tf.logical_or(
        order == k.str("<"), tf.logical_and(order != k.str(">"), k(NATIVE_LE, tf.bool))
    )
    swap = tf.logical_and(tf.not_equal(is_le, k(NATIVE_LE, tf.bool)), itemsize > c1)
    complex_ = tf.strings.substr(v.spec.code, k.i32(0), k.i32(1)) == k.str("c")
    unit = tf.where(complex_, itemsize // k(2), itemsize)
    # Only a good batch is rearranged: a bad one's dims say nothing about its (empty) payload,
    # and a reshape error here would hide npyio's message. One branch for both steps: each
    # tf.cond is prepared again at every iterator start.
    needed = tf.logical_or(tf.reduce_any(swap, k.i32(0)), tf.reduce_any(fortran, k.i32(0)))
    raw = tf.cond(
        tf.logical_and(all_ok, needed),
        lambda: _to_c_order(raw, count, dims, swap, fortran, unit, itemsize, Consts(k)),
        lambda: raw,
    )
    return raw, dims


def parse_headers(
    files: Files, spec: SpecTensors
) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor, tf.Tensor]:
    """Parses and checks the headers of a [B] batch of whole files.

    Generic over dtype and shape (they come in as tensors, see `SpecTensors` and
    `PARSE_SIGNATURE`): ``spec.dims`` holds -1 for a ``None`` dim and ``spec.rank`` is -1 for
    an unknown rank; ``spec.max_file_size`` is -1 for no limit. ``files.names[row]`` is the
    file an error about element ``row`` names.
    Returns:
        ``(payload [B, nbytes] uint8 in native byte order and C order, dims [ndim], ok,
        message)``: when ``ok`` is false the payload is empty and ``message`` names the first
        bad file and what is wrong; the caller must assert ``ok`` before using the payload.

    Written for a small graph (see `Consts`): every literal is shared, rows and columns are
    taken with ``gather``/``unstack`` rather than slicing.
    """
    k = Consts()
    contents, names = files
    prefix = _read_prefix(contents, k)
    header = _parse_header(contents, prefix, spec, k)
    dims = _parse_dims(header, spec, k)
    v = Values(
        spec=spec,
        prefix=prefix,
        header=header,
        dims=dims,
        shape_ok=_match_shape(dims, spec, k),
        payload_len=prefix.size - prefix.offset,
        everyone=tf.equal(prefix.size, prefix.size),
    )
    ok = tf.stack([check.condition(v, k) for check in CHECKS], axis=1)
    all_ok = tf.reduce_all(ok, axis=k.i32([0, 1]))
    message = tf.cond(all_ok, lambda: k.str(""), lambda: _failure_message(ok, v, names, k))
    # No assertion in here: TensorFlow keeps about 1 KiB for every error raised inside a
    # called function, so the caller asserts. Until it has, every op below must be total: a
    # bad batch decodes as empty arrays (nothing is allocated from a lying header).
    raw, dims_out = _read_payload(contents, v, all_ok, k)
    return raw, dims_out, all_ok, message


#: The parser's input signature: `Files` and `SpecTensors` of tensors.
PARSE_SIGNATURE = (
    Files(tf.TensorSpec([None], tf.string), tf.TensorSpec([None], tf.string)),
    SpecTensors(
        code=tf.TensorSpec([], tf.string),
        name=tf.TensorSpec([], tf.string),
        itemsize=tf.TensorSpec([], tf.int64),
        dims=tf.TensorSpec([None], tf.int64),
        rank=tf.TensorSpec([], tf.int64),
        text=tf.TensorSpec([], tf.string),
        max_header_size=tf.TensorSpec([], tf.int64),
        max_file_size=tf.TensorSpec([], tf.int64),
        origin=tf.TensorSpec([], tf.string),
    ),
)


@functools.cache
def parser() -> tf.types.experimental.ConcreteFunction:
    """The header parser as one graph function, shared by every dtype, shape and call site.

    Sharing matters: tf.data prepares every function a map function refers to each time an
    iterator is created, taken branch or not, so each distinct parser would cost every epoch.
    """
    return tf.function(
        parse_headers, input_signature=list(PARSE_SIGNATURE), autograph=False
    ).get_concrete_function()
