"""Graph ops that decode ``.npy`` bytes: ``decode_npy`` and ``read_npy``.

Everything here is built from TensorFlow ops (``tf.strings``, ``tf.io.decode_raw``, ...), so it
runs eagerly, inside ``tf.function`` and inside ``tf.data`` with no Python per element, and the
graphs it builds serialize. The grammar and the error wording come from ``npyio._format``.

Safety: every op that runs *before* the validity assertion is total (it cannot fail whatever the
bytes are: positions are clamped, numbers are converted only after a regex accepted them, the
fixed-size fields are read from a zero-padded copy of the first 12 bytes). The ops that read the
payload run under a control dependency on the assertion, so a lying header never causes an
allocation or an op error of its own: the first error is always npyio's, and it names the file.
"""

from __future__ import annotations

import functools
import io
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import tensorflow as tf

from npyio import _format as F

__all__ = ["decode_npy", "read_npy"]

_TF_DTYPES: dict[str, tf.DType] = {name: tf.as_dtype(name) for name in F.CODES.values()}
# decode_raw has no uint32/uint64: read them as int32/int64 and bitcast; bool is read as uint8.
_RAW_DTYPES: dict[str, tf.DType] = {
    **_TF_DTYPES,
    "bool": tf.uint8,
    "uint32": tf.int32,
    "uint64": tf.int64,
}
_HEX = [f"{i:02x}" for i in range(256)]
_ITEMSIZES = [np.dtype(name).itemsize for name in F.CODES.values()]
_PREFIX = F.MAGIC_LEN + 4  # magic, version and the longest header-length field
_NATIVE_LE = F.NATIVE_ORDER == "<"
_SENTINEL = "\x00"

DtypeLike = object
ShapeLike = object


def _fmt(reason: Callable[..., str], *args: tf.Tensor | str) -> tf.Tensor:
    """Builds the message ``reason(*args)`` with tensors spliced in for the arguments."""
    parts = reason(*([_SENTINEL] * len(args))).split(_SENTINEL)
    pieces: list[tf.Tensor | str] = [parts[0]]
    for arg, part in zip(args, parts[1:]):
        pieces += [arg, part]
    return tf.strings.join(pieces)


def _str(x: tf.Tensor) -> tf.Tensor:
    return tf.strings.as_string(x)


def _show_canon(canon: tf.Tensor, k: _Consts | None = None) -> tf.Tensor:
    """'64,64,3' -> '(64, 64, 3)', '3' -> '(3,)', '' -> '()', like F.show_shape."""
    k = k or _Consts()
    blank = k.str("")
    one = tf.logical_and(canon != blank, tf.logical_not(_full(canon, ".*,.*")))
    comma = tf.where(one, k.str(","), blank)
    return tf.strings.join(
        [k.str("("), tf.strings.regex_replace(canon, ",", ", "), comma, k.str(")")]
    )


def _full(text: tf.Tensor, pattern: str) -> tf.Tensor:
    return tf.strings.regex_full_match(text, pattern)


def _group(text: tf.Tensor, pattern: str, group: int = 1) -> tf.Tensor:
    return tf.strings.regex_replace(text, pattern, f"\\{group}")


def _template(reason: Callable[..., str], nargs: int) -> list[str]:
    parts = reason(*([_SENTINEL] * nargs)).split(_SENTINEL)
    return parts + [""] * (3 - len(parts))


# Reason k's message is PRE[k] + a[k] + MID[k] + b[k] + POST[k]; the order matches the checks
# in _parse_headers, with the grammar check expanded into its five layered reasons (7-11).
_TEMPLATES = [
    list(part)
    for part in zip(
        *(
            _template(reason, nargs)
            for reason, nargs in (
                (F.file_too_large, 2), (F.bad_magic, 1), (F.too_short, 2), (F.bad_version, 1),
                (F.too_short, 2),
                (F.header_too_large, 2), (F.header_past_end, 2), (F.not_a_dict, 0),
                (F.bad_keys, 0), (F.bad_descr, 1), (F.bad_fortran, 1), (F.bad_shape, 1),
                (F.shape_mismatch, 2), (F.negative_dim, 1), (F.too_large, 1),
                (F.dtype_mismatch, 2), (F.shape_mismatch, 2), (F.payload_short, 2),
                (F.payload_trailing, 2),
            )
        ),
        strict=True,
    )
]
# The layered grammar checks, in F.parse_header_text's order, and the reason each one's failure
# gives (a final "always fails" entry gives bad_keys).
_GRAMMAR_LAYERS = [F.DICT_RE] + [p for layer in F.LAYERS for p in (layer[1], layer[2])]
_GRAMMAR_REASON = [7, 8, 9, 8, 10, 8, 11, 8]


class _Consts:
    """One Const node per distinct literal in the graph being built.

    tf.data reads every node of the parser again at each iterator start (``Dataset.reduce``
    even rewrites the whole graph each time), and Python literals otherwise become a Const node
    at every use. A cache made for a ``tf.cond`` branch takes its parent's constants first
    (they enter the branch as inputs) and creates only the ones its parent lacks.
    """

    def __init__(self, parent: _Consts | None = None) -> None:
        self._parent = parent
        self._cache: dict[tuple[str, str], tf.Tensor] = {}

    def _find(self, key: tuple[str, str]) -> tf.Tensor | None:
        if key in self._cache:
            return self._cache[key]
        return None if self._parent is None else self._parent._find(key)

    def __call__(self, value: object, dtype: tf.DType = tf.int64) -> tf.Tensor:
        key = (repr(value), dtype.name)
        found = self._find(key)
        if found is None:
            found = self._cache[key] = tf.constant(value, dtype)
        return found

    def str(self, value: object) -> tf.Tensor:
        return self(value, tf.string)

    def i32(self, value: object) -> tf.Tensor:
        return self(value, tf.int32)


def _first_index(flags: tf.Tensor, k: _Consts | None = None) -> tf.Tensor:
    """The index of the first True in a rank-1 bool tensor (its size if none)."""
    k = k or _Consts()
    n = tf.size(flags, out_type=tf.int64)
    return tf.reduce_min(tf.where(flags, tf.range(k(0), n, k(1)), n), axis=k.i32(0))


def _parse_headers(
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

    Generic over dtype and shape (they come in as tensors), so one graph function serves every
    call site: ``declared_dims`` holds -1 for a ``None`` dim and ``declared_rank`` is -1 for an
    unknown rank; ``max_file_size`` is -1 for no limit. ``names[row]`` is the file an error
    about element ``row`` names.

    Returns ``(payload [B, nbytes] uint8 in native byte order and C order, dims [ndim], ok,
    message)``: when ``ok`` is false the payload is empty and ``message`` names the first bad
    file and what is wrong; the caller must assert ``ok`` before using the payload.

    Written for a small graph (see `_Consts`): every literal is shared, rows and columns are
    taken with ``gather``/``unstack`` rather than slicing.
    """
    k = _Consts()
    axis0, axis1 = k.i32(0), k.i32(1)
    c0, c1 = k(0), k(1)

    def at(t: tf.Tensor, i: tf.Tensor) -> tf.Tensor:
        return tf.gather(t, i, axis=axis0)

    def upto(t: tf.Tensor, n: tf.Tensor) -> tf.Tensor:  # t[:n] of a rank-1 tensor
        return at(t, tf.range(c0, n, c1))

    size = tf.cast(tf.strings.length(contents), tf.int64)
    width = k.i32(_PREFIX)
    prefix = tf.strings.substr(
        tf.strings.join([tf.strings.substr(contents, axis0, width), k.str("\0" * _PREFIX)]),
        axis0,
        width,
    )
    pb = tf.cast(tf.io.decode_raw(prefix, tf.uint8), tf.int64)  # [B, 12]
    cols = tf.unstack(pb, num=_PREFIX, axis=1)
    major, minor = cols[6], cols[7]
    v1 = tf.logical_and(major == c1, minor == c0)
    v23 = tf.logical_and(tf.logical_or(major == k(2), major == k(3)), minor == c0)
    short = cols[8] + cols[9] * k(256)
    hlen = tf.where(v1, short, short + cols[10] * k(65536) + cols[11] * k(16777216))
    hstart = tf.where(v1, k(10), k(12))
    offset = hstart + hlen
    header = tf.strings.substr(
        contents, tf.minimum(hstart, size), tf.minimum(hlen, max_header_size)
    )

    grammar_ok = _full(header, F.HEADER_RE)
    order = _group(header, F.DESCR_EXTRACT, 1)
    code = _group(header, F.DESCR_EXTRACT, 2)
    fortran = _group(header, F.FORTRAN_EXTRACT) == k.str("True")
    canon = tf.strings.regex_replace(
        tf.strings.regex_replace(_group(header, F.SHAPE_EXTRACT), F.WS, ""), ",$", ""
    )
    for _ in range(2):  # "-0" is 0, as in F (twice: a match consumes the comma after it)
        canon = tf.strings.regex_replace(canon, "(^|,)-0(,|$)", "\\1" "0" "\\2")  # RE2: \1, then 0

    # Dims are parsed once, from the first element; the others must have the same shape text.
    canon0 = at(canon, c0)
    # (the raw op: tf.strings.split of a scalar adds ~40 ops of ragged bookkeeping)
    tokens = tf.raw_ops.StringSplitV2(
        input=tf.expand_dims(canon0, axis0), sep=k.str(","), maxsplit=-1
    ).values
    ndim = tf.where(canon0 == k.str(""), c0, tf.size(tokens, out_type=tf.int64))
    tokens = upto(tokens, ndim)
    tokens_ok = _full(tokens, f"-?[0-9]{{1,{F.MAX_DIM_DIGITS}}}")
    dims = tf.strings.to_number(tf.where(tokens_ok, tokens, k.str("0")), tf.int64)
    # The size limit uses each file's own item size, as F does (the dtype is checked later).
    code_index = tf.argmax(
        tf.cast(tf.equal(tf.expand_dims(code, axis1), k.str(list(F.CODES))), tf.int32), axis1
    )
    file_itemsize = at(k(_ITEMSIZES), code_index)
    some_dims = tf.maximum(dims, c1)
    fbytes = tf.reduce_prod(tf.cast(some_dims, tf.float64), axis0) * tf.cast(
        file_itemsize, tf.float64
    )
    # float64 rounds near 2**62, so decide there in int64 (exact: no overflow below 1.5 * 2**62)
    small = tf.logical_and(
        fbytes < k(1.5 * F.MAX_NBYTES, tf.float64),
        tf.reduce_prod(some_dims, axis0) * file_itemsize < k(F.MAX_NBYTES),
    )
    nbytes = tf.reduce_prod(dims, axis0) * itemsize
    payload_len = size - offset
    padded = upto(
        tf.concat([dims, tf.zeros_like(declared_dims)], axis0),
        tf.size(declared_dims, out_type=tf.int64),
    )
    shape_ok = tf.logical_or(
        declared_rank < c0,
        tf.logical_and(
            ndim == declared_rank,
            tf.reduce_all(tf.logical_or(declared_dims < c0, padded == declared_dims), axis0),
        ),
    )
    # from the text, as F does: a 19-digit negative dim is negative, not too large
    nonnegative = tf.reduce_all(
        tf.logical_or(
            tf.strings.substr(tokens, axis0, axis1) != k.str("-"), tokens == k.str("-0")
        ),
        axis0,
    )
    everyone = tf.equal(size, size)  # [B] of True, to broadcast the per-batch checks
    ok = tf.stack(  # in the reference parser's order; the messages below follow it
        [
            tf.logical_or(max_file_size < c0, size <= max_file_size),
            tf.strings.substr(contents, axis0, k.i32(len(F.MAGIC_PREFIX)))
            == k.str(F.MAGIC_PREFIX),
            size >= k(F.MAGIC_LEN),
            tf.logical_or(v1, v23),
            size >= hstart,
            hlen <= max_header_size,
            offset <= size,
            grammar_ok,
            canon == canon0,
            everyone & nonnegative,
            tf.reduce_all(tokens_ok, axis0) & small,
            code == declared_code,
            everyone & shape_ok,
            payload_len >= nbytes,
            payload_len <= nbytes,
        ],
        axis=1,
    )
    all_ok = tf.reduce_all(ok, axis=k.i32([0, 1]))

    def failure() -> tf.Tensor:
        # Every reason is PRE + a + MID + b + POST (see _TEMPLATES): pick the row and reason,
        # then gather; few ops, because tf.data prepares this branch at every iterator start.
        kf = _Consts(k)
        magic = len(F.MAGIC_PREFIX)
        bad = tf.logical_not(ok)
        row = _first_index(tf.reduce_any(bad, axis=axis1), kf)
        check = _first_index(at(bad, row), kf)
        text = at(header, row)
        layers = tf.logical_not(
            tf.stack([_full(text, p) for p in _GRAMMAR_LAYERS] + [kf(False, tf.bool)])
        )
        snippets = tf.strings.substr(
            tf.stack([_group(text, layer[3]) for layer in F.LAYERS]),
            axis0,
            kf.i32(F.SNIPPET_LEN),
        )
        snip_d, snip_f, snip_s = tf.unstack(
            tf.where(snippets == kf.str(""), kf.str("nothing"), snippets), num=3
        )
        reason = tf.where(
            check < kf(7),
            check,
            tf.where(
                check == kf(7),
                at(kf(_GRAMMAR_REASON), _first_index(layers, kf)),
                check + kf(4),
            ),
        )
        numbers = at(tf.stack([size, hstart, hlen, offset, payload_len], 1), row)
        n_size, n_hstart, n_hlen, n_offset, n_payload = tf.unstack(_str(numbers), num=5)
        n_nbytes = _str(nbytes)
        row_bytes = at(pb, row)
        got_magic = tf.where(
            at(numbers, c0) == c0,
            kf.str("0 bytes"),
            tf.strings.reduce_join(
                at(kf.str(_HEX), upto(row_bytes, tf.minimum(at(numbers, c0), kf(magic)))),
                axis=axis0,
                separator=" ",
            ),
        )
        got_version = tf.strings.reduce_join(
            _str(at(row_bytes, kf([6, 7]))), axis=axis0, separator="."
        )
        got_code = at(
            kf.str(list(F.CODES.values())),
            tf.argmax(tf.cast(tf.equal(at(code, row), kf.str(list(F.CODES))), tf.int32), axis0),
        )
        first, this = tf.unstack(_show_canon(tf.stack([canon0, at(canon, row)]), kf), num=2)
        blank = kf.str("")
        a = [_str(max_file_size), got_magic, kf.str(str(F.MAGIC_LEN)), got_version, n_hstart,
             _str(max_header_size), n_offset, blank, blank, snip_d, snip_f, snip_s, first, first,
             first, declared_name, declared_text, n_nbytes, n_nbytes]
        b = [n_size, blank, n_size, blank, n_size, n_hlen, n_size, blank, blank, blank, blank,
             blank, this, blank, blank, got_code, this, n_payload, n_payload]
        pre, mid, post = (at(kf.str(t), reason) for t in _TEMPLATES)
        return tf.strings.join([
            at(names, row), kf.str(": "), pre, at(tf.stack(a), reason), mid,
            at(tf.stack(b), reason), post,
        ])

    message = tf.cond(all_ok, lambda: k.str(""), failure)
    # No assertion in here: TensorFlow keeps ~1 KiB for every error raised inside a called
    # function, so the caller asserts. Until it has, every op below must be total: a bad batch
    # decodes as empty arrays (nothing is allocated from a lying header).
    nbytes = tf.where(all_ok, nbytes, c0)
    dims = tf.where(all_ok, dims, tf.zeros_like(dims))
    payload = tf.strings.substr(
        contents, tf.where(all_ok, offset, c0), tf.broadcast_to(nbytes, tf.shape(offset))
    )
    raw = tf.io.decode_raw(payload, tf.uint8)  # [B, nbytes]: one copy of the payload
    count = at(tf.shape(raw, out_type=tf.int64), c0)
    # Byte order and Fortran order are undone here on bytes, generically: in native order a
    # swap reverses each item's bytes (each half's, for complex), whatever the dtype.
    is_le = tf.logical_or(
        order == k.str("<"), tf.logical_and(order != k.str(">"), k(_NATIVE_LE, tf.bool))
    )
    swap = tf.logical_and(tf.not_equal(is_le, k(_NATIVE_LE, tf.bool)), itemsize > c1)
    complex_ = tf.strings.substr(declared_code, axis0, axis1) == k.str("c")
    unit = tf.where(complex_, itemsize // k(2), itemsize)

    def reorder() -> tf.Tensor:
        # One branch for both steps (a tf.cond costs as much as ~25 ops at every iterator
        # start); each step keeps the rows that do not need it.
        kb = _Consts(k)
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


_PARSE_SIGNATURE = [
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
def _parser() -> tf.types.experimental.ConcreteFunction:
    """The header parser as one graph function, shared by every dtype, shape and call site.

    Sharing matters: tf.data prepares every function a map function refers to each time an
    iterator is created, taken branch or not, so each distinct parser would cost every epoch.
    """
    return tf.function(
        _parse_headers, input_signature=_PARSE_SIGNATURE, autograph=False
    ).get_concrete_function()


def _decode_batch(
    contents: tf.Tensor,
    names: tf.Tensor | None,
    dt: np.dtype,
    shape: tf.TensorShape,
    max_header_size: int,
    batched: bool,
    max_file_size: int | None = None,
) -> tf.Tensor:
    """Decodes a [B] string tensor of whole files; returns [B, *dims] (or dims when not batched).

    ``names[row]`` is the file named in an error about element ``row``; without ``names`` it is
    ``<bytes>`` (``<bytes>[row]`` in a batch).
    """
    if names is None:
        if batched:
            count = tf.shape(contents, out_type=tf.int64)[0]
            names = tf.strings.join(["<bytes>[", _str(tf.range(count)), "]"])
        else:
            names = tf.constant(["<bytes>"])
    declared = [] if shape.rank is None else [-1 if d is None else d for d in shape.as_list()]
    args = [
        contents,
        names,
        tf.constant(F.dtype_code(dt)),
        tf.constant(dt.name),
        tf.constant(dt.itemsize, tf.int64),
        tf.constant(declared, tf.int64, shape=[len(declared)]),
        tf.constant(-1 if shape.rank is None else shape.rank, tf.int64),
        tf.constant("" if shape.rank is None else F.show_shape(tuple(shape.as_list()))),
        tf.constant(max_header_size, tf.int64),
        tf.constant(-1 if max_file_size is None else max_file_size, tf.int64),
    ]
    parser = _parser()
    if tf.executing_eagerly():
        raw, dims, ok, message = parser(*args)
    else:
        raw, dims, ok, message = tf.raw_ops.PartitionedCall(
            args=[*args, *parser.captured_inputs],
            Tout=[tf.uint8, tf.int64, tf.bool, tf.string],
            f=parser,
        )
    assertion = tf.debugging.Assert(ok, [message], summarize=1)
    with tf.control_dependencies([] if assertion is None else [assertion]):
        raw, dims = tf.identity(raw), tf.identity(dims)
    raw_type = _RAW_DTYPES[dt.name]
    if raw_type != tf.uint8:  # bitcast shares the buffer
        count = tf.shape(raw, out_type=tf.int64)[0]
        size = dt.itemsize if raw_type.size == dt.itemsize else raw_type.size
        raw = tf.bitcast(tf.reshape(raw, [count, -1, size]), raw_type)
    values = _native(raw, dt)
    lead = tf.shape(values, out_type=tf.int64)[:1] if batched else tf.zeros([0], tf.int64)
    out = tf.reshape(values, tf.concat([lead, dims], 0))
    out.set_shape(tf.TensorShape([contents.shape[0]]).concatenate(shape) if batched else shape)
    return out


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


def make_hint(dt: np.dtype, shape: tf.TensorShape, header: bytes | None = None) -> Hint | None:
    """A `Hint` for files of ``dt`` and fully static ``shape``.

    ``header`` is a file's first ``data_offset`` bytes (the dataset passes its first file's);
    by default the header numpy's ``np.save`` writes for ``dt`` and ``shape``. Returns None if
    the shape is not static or the header does not describe exactly ``dt`` and ``shape``.
    """
    if not shape.is_fully_defined():
        return None
    dims = tuple(int(d) for d in shape.as_list())
    if header is None:
        buf = io.BytesIO()
        descr = dt.newbyteorder(F.NATIVE_ORDER).str  # type: ignore[arg-type]
        d = {"descr": descr, "fortran_order": False, "shape": dims}
        np.lib.format.write_array_header_1_0(buf, d)
        header = buf.getvalue()
    try:
        parsed = F.read_header(io.BytesIO(header), "<hint>")
        F.check_declared(parsed, dt, dims, "<hint>")
    except F.NpyFormatError:
        return None
    if parsed.data_offset != len(header):
        return None
    order = parsed.dtype.byteorder
    little = order == "<" or (order in "|=" and _NATIVE_LE)
    return Hint(header, len(header) + parsed.nbytes, little, parsed.fortran_order)


def require_tf2() -> None:
    """Refuses to build graph ops in a TF1-style graph (``tf.Graph().as_default()``, a session,
    ``disable_eager_execution``), where ``tensor == value`` compares identities, not values:
    the checks would be wrong there, so npyio says so instead of failing obscurely."""
    if not tf.compat.v1.executing_eagerly_outside_functions():
        raise RuntimeError(
            "npyio builds its ops for TensorFlow 2 (eager execution, tf.function, tf.data); "
            "it does not support TF1-style graphs (tf.Graph().as_default(), tf.compat.v1 "
            "sessions, disable_eager_execution)"
        )


@dataclass(frozen=True)
class Part:
    """One tensor of a `_decode_group`: [B] whole files of one dtype and static shape."""

    contents: tf.Tensor
    names: tf.Tensor | None
    dt: np.dtype
    shape: tf.TensorShape
    hint: Hint | None
    max_header_size: int = F.MAX_HEADER_SIZE
    max_file_size: int | None = None

    def usable_hint(self) -> Hint | None:
        """The hint, unless files like it must be refused (then the full parser says why)."""
        hint = self.hint
        if hint is None or len(hint.header) > self.max_header_size:
            return None
        if self.max_file_size is not None and hint.size > self.max_file_size:
            return None
        return hint


def _decode_group(parts: Sequence[Part], batched: bool) -> list[tf.Tensor]:
    """Decodes several [B] file tensors (a dataset's inputs and labels, say).

    Parts with a usable hint share one ``tf.cond``: when every file of every such part starts
    with its hint's header bytes and has its size, the fast path decodes them all; otherwise
    the full parser decodes them all. One cond, not one per part, because tf.data prepares
    each again at every iterator start. Returns [B, *dims] (or dims when not batched) per part.
    """

    def spec(part: Part, lead: int | None) -> tf.TensorShape:
        return tf.TensorShape([lead]).concatenate(part.shape) if batched else part.shape

    def full(part: Part) -> tf.Tensor:
        out = _decode_batch(
            part.contents, part.names, part.dt, part.shape, part.max_header_size, batched,
            part.max_file_size,
        )
        out.set_shape(spec(part, None))
        return out

    def known(part: Part, hint: Hint) -> tf.Tensor:
        offset, dt, contents = len(hint.header), part.dt, part.contents
        dims = part.shape.as_list()
        if not batched and offset % dt.itemsize == 0:
            # Decode the whole file and drop the header's items: slicing the front of a 1-d
            # tensor at an aligned offset shares its buffer, so the payload is copied once.
            raw = tf.io.decode_raw(
                tf.reshape(contents, []), _RAW_DTYPES[dt.name], little_endian=hint.little_endian
            )
            values = tf.expand_dims(_native(raw[offset // dt.itemsize :], dt), 0)
        else:
            payload = tf.strings.substr(contents, offset, hint.size - offset)
            values = _decode_payload(payload, dt, hint.little_endian)
        if hint.fortran_order:
            values = tf.reshape(values, [-1, *dims[::-1]])
            values = tf.transpose(values, [0, *range(len(dims), 0, -1)])
        return tf.reshape(values, [-1, *dims] if batched else dims)

    require_tf2()
    hints = [part.usable_hint() for part in parts]
    out = {i: full(part) for i, (part, hint) in enumerate(zip(parts, hints)) if hint is None}
    fast = {i: hint for i, hint in enumerate(hints) if hint is not None}
    if fast:
        same = [
            tf.logical_and(
                tf.strings.substr(parts[i].contents, 0, len(hint.header)) == hint.header,
                tf.strings.length(parts[i].contents) == hint.size,
            )
            for i, hint in fast.items()
        ]
        decoded = tf.cond(
            tf.reduce_all(tf.concat(same, 0)),
            lambda: [known(parts[i], hint) for i, hint in fast.items()],
            lambda: [full(parts[i]) for i in fast],
        )
        out.update(zip(fast, tf.nest.flatten(decoded)))
    for i, tensor in out.items():
        tensor.set_shape(spec(parts[i], parts[i].contents.shape[0]))
    return [out[i] for i in range(len(parts))]


def _decode_hinted(
    contents: tf.Tensor,
    names: tf.Tensor | None,
    dt: np.dtype,
    shape: tf.TensorShape,
    max_header_size: int,
    batched: bool,
    hint: Hint | None,
    max_file_size: int | None = None,
) -> tf.Tensor:
    """Decodes [B] files: a fast path for files whose header bytes equal ``hint``'s, the full
    parser for any other (returns [B, *dims], or dims when not batched)."""
    part = Part(contents, names, dt, shape, hint, max_header_size, max_file_size)
    return _decode_group([part], batched)[0]


def _decode_payload(payload: tf.Tensor, dt: np.dtype, little_endian: bool) -> tf.Tensor:
    """[B] equal-length payloads, all in one known byte order -> [B, count] native values."""
    values = tf.io.decode_raw(payload, _RAW_DTYPES[dt.name], little_endian=little_endian)
    return _native(values, dt)


def _native(values: tf.Tensor, dt: np.dtype) -> tf.Tensor:
    """decode_raw's output (see _RAW_DTYPES) as ``dt``: bool is nonzero, uint32/64 bitcast."""
    if dt.name == "bool":
        return tf.not_equal(values, 0)
    if values.dtype != _TF_DTYPES[dt.name]:
        return tf.bitcast(values, _TF_DTYPES[dt.name])
    return values


def _static_shape(shape: ShapeLike) -> tf.TensorShape:
    try:
        return tf.TensorShape(shape)
    except (TypeError, ValueError) as e:
        raise TypeError(f"shape must be None or a sequence of ints and None, got {shape!r}") from e


@tf.autograph.experimental.do_not_convert
def decode_npy(
    contents: tf.Tensor | bytes | Sequence[bytes],
    dtype: DtypeLike,
    shape: ShapeLike = None,
    *,
    name: str | None = None,
    max_header_size: int = F.MAX_HEADER_SIZE,
    max_file_size: int | None = None,
) -> tf.Tensor:
    """Decodes the bytes of a whole ``.npy`` file into a tensor, with graph ops only.

    Args:
        contents: A scalar string tensor holding one whole file, or a rank-1 string tensor
            holding a batch of files that share dtype and shape.
        dtype: The dtype the files must have: a ``tf.DType``, a ``numpy.dtype`` or a string
            such as ``"float32"`` or ``"<f4"``. Byte order is read from each file's header
            (the output is in native order), so ``"<f4"`` and ``">f4"`` mean the same here.
        shape: Optional static shape the files must have; ``None`` dims match any size. With
            ``None`` (the default) any shape is accepted and the result's rank is unknown.
        name: Optional name for the op's name scope.
        max_header_size: Refuse headers longer than this many bytes.
        max_file_size: Refuse files larger than this many bytes (``None``: no limit).

    Returns:
        A tensor of ``dtype`` with the file's shape (``[batch, *shape]`` for a batch), in C
        order whatever the file's ``fortran_order``.

    Raises:
        TypeError: When the op is built, for a dtype npyio does not decode or a bad ``shape``.
        tf.errors.InvalidArgumentError: When the op runs, for bytes that are not a valid
            ``.npy`` file of ``dtype`` and ``shape``. The message starts with ``<bytes>``
            (``<bytes>[i]`` for element ``i`` of a batch) and says what is wrong.

    Example:
        >>> import io, numpy as np, npyio
        >>> buf = io.BytesIO(); np.save(buf, np.arange(6, dtype="<i4").reshape(2, 3))
        >>> npyio.decode_npy(buf.getvalue(), "int32").numpy()
        array([[0, 1, 2],
               [3, 4, 5]], dtype=int32)
    """
    dt = F.parse_dtype(dtype)
    static = _static_shape(shape)
    max_file_size = F.parse_limit(max_file_size, "max_file_size")
    max_header_size = F.parse_limit(max_header_size, "max_header_size", allow_none=False)
    with tf.name_scope(name or "decode_npy"):
        contents = tf.convert_to_tensor(contents, tf.string, name="contents")
        if contents.shape.rank not in (0, 1):
            raise ValueError(
                f"contents must be a scalar or a rank-1 string tensor, got shape {contents.shape}"
            )
        hint = make_hint(dt, static)
        batched = contents.shape.rank == 1
        return _decode_hinted(
            contents if batched else contents[None], None, dt, static, max_header_size,
            batched, hint, max_file_size,
        )


@tf.autograph.experimental.do_not_convert
def read_npy(
    path: tf.Tensor | str,
    dtype: DtypeLike,
    shape: ShapeLike = None,
    *,
    name: str | None = None,
    max_header_size: int = F.MAX_HEADER_SIZE,
    max_file_size: int | None = None,
    backend: str = "graph",
    _hint_header: bytes | None = None,
) -> tf.Tensor:
    """Reads a ``.npy`` file with ``tf.io.read_file`` and decodes it with graph ops only.

    Any TensorFlow filesystem path works (local, ``gs://``, ``ram://``, ...).

    Args:
        path: A scalar string tensor (or str): the file to read.
        dtype: The dtype the file must have; see `decode_npy`.
        shape: Optional static shape the file must have; ``None`` dims match any size.
        name: Optional name for the op's name scope.
        max_header_size: Refuse headers longer than this many bytes.
        max_file_size: Refuse files larger than this many bytes (``None``: no limit). The file
            is read before it is refused: to avoid reading huge files, check sizes first
            (``npyio verify``).
        backend: ``"graph"`` (npyio's parser, the default), ``"tfio"`` (tensorflow-io's numpy
            op where it decodes correctly, else the graph parser) or ``"py_function"``
            (``np.load`` in a ``tf.py_function``: not serializable).

    Returns:
        A tensor of ``dtype`` and the file's shape, in C order.

    Raises:
        TypeError: When the op is built, for a dtype npyio does not decode or a bad ``shape``.
        ValueError: When the op is built, for an unknown backend.
        BackendUnavailableError: When the op is built, for ``backend="tfio"`` without
            tensorflow-io ops that load with the installed TensorFlow.
        tf.errors.NotFoundError: When the op runs, if the file does not exist (TensorFlow's
            message names the path).
        tf.errors.InvalidArgumentError: When the op runs, for a file that is not a valid
            ``.npy`` file of ``dtype`` and ``shape``; the message starts with the path.

    Example:
        >>> import numpy as np, npyio, tensorflow as tf
        >>> with tf.io.gfile.GFile("ram://doc/a.npy", "wb") as f:
        ...     np.save(f, np.eye(2, dtype=np.float32))
        >>> npyio.read_npy("ram://doc/a.npy", tf.float32, shape=(2, 2)).numpy()
        array([[1., 0.],
               [0., 1.]], dtype=float32)
    """
    dt = F.parse_dtype(dtype)
    static = _static_shape(shape)
    if backend != "graph":
        from npyio import _backends

        hint = None if _hint_header is None else make_hint(dt, static, _hint_header)
        with tf.name_scope(name or "read_npy"):
            path = tf.convert_to_tensor(path, tf.string)
            return _backends.reader(backend)(path, dt, static, hint)
    with tf.name_scope(name or "read_npy"):
        path = tf.convert_to_tensor(path, tf.string, name="path")
        if path.shape.rank != 0:
            raise ValueError(f"path must be a scalar string, got shape {path.shape}")
        contents = tf.io.read_file(path)
        return _decode_hinted(
            contents[None], path[None], dt, static, max_header_size, False,
            make_hint(dt, static, _hint_header), max_file_size,
        )
