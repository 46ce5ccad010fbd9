"""Graph ops that decode ``.npy`` bytes: the header fast path, the batch decoder, `decode_npy`.

Everything here is built from TensorFlow ops (``tf.strings``, ``tf.io.decode_raw``, ...), so it
runs eagerly, inside ``tf.function`` and inside ``tf.data`` with no Python per element, and the
graphs it builds serialize. Headers are parsed and checked by `npyio._graph.parser`; this module
asserts the parser's verdict and turns the checked payload bytes into a tensor. Eagerly, a
refusal raises with npyio's message itself, ``"PATH: reason"``; in a graph, through
``tf.debugging.Assert``. For ``ignore_errors``, `decode_group`'s ``report`` mode also prints
each refusal to stderr before asserting (`report_then_assert`).

Safety: the ops that read the payload run under a control dependency on the parser's
assertion, so a lying header never causes an allocation or an op error of its own: the first
error is always npyio's, and it names the file.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np
import tensorflow as tf

from npyio._format import npy
from npyio._format.header import Hint, Limits, make_hint
from npyio._format.spec import Spec
from npyio._graph.ops import (
    RAW_DTYPES,
    as_str,
    assert_verdict,
    decode_values,
    first_index,
    native,
    require_tf2,
    static_shape,
)
from npyio._graph.parser import Files, parse_headers, parser, spec_tensors
from npyio._tf import print_to_stderr, stateless_call

__all__ = [
    "SKIP_PREFIX",
    "Fetched",
    "check_group",
    "decode_group",
    "decode_npy",
    "decode_one",
    "report_then_assert",
    "skip_lines",
]

DtypeLike = object
ShapeLike = object


def _parse(
    f: Fetched, spec: Spec, batched: bool, inline: bool = False
) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor, tf.Tensor]:
    """The parser's verdict on ``f``'s [B] whole files, unasserted: ``(payload, dims, ok,
    message)`` (see `npyio._graph.parser.parse_headers`). By a call of the shared parser
    function, or with ``inline`` its ops in the caller's graph: a single-device function (as
    `npyio._pipeline.map` makes them) that calls the parser grew resident memory by about 6 MiB
    over 4,000 calls, and by some 0.3 MiB with it inline (TF 2.21)."""
    contents, names = f.contents, f.name
    if names is None:
        if batched:
            count = tf.shape(contents, out_type=tf.int64)[0]
            names = tf.strings.join(["<bytes>[", as_str(tf.range(count)), "]"])
        else:
            names = tf.constant(["<bytes>"])
    args = (Files(contents, names), spec_tensors(spec))
    if inline:
        return parse_headers(*args)
    out_types = [tf.uint8, tf.int64, tf.bool, tf.string]
    raw, dims, ok, message = stateless_call(parser(), args, out_types)
    return raw, dims, ok, message


def _values(raw: tf.Tensor, dims: tf.Tensor, f: Fetched, spec: Spec, batched: bool) -> tf.Tensor:
    """The checked payload bytes of `_parse` as [B, *dims] values of the spec's dtype (dims
    unbatched)."""
    dt, shape = spec.file.dtype, _file_shape(spec)
    raw_type = RAW_DTYPES[dt.name]
    if raw_type != tf.uint8:  # bitcast shares the buffer
        count = tf.shape(raw, out_type=tf.int64)[0]
        size = dt.itemsize if raw_type.size == dt.itemsize else raw_type.size
        raw = tf.bitcast(tf.reshape(raw, [count, -1, size]), raw_type)
    values = native(raw, dt)
    lead = tf.shape(values, out_type=tf.int64)[:1] if batched else tf.zeros([0], tf.int64)
    out = tf.reshape(values, tf.concat([lead, dims], 0))
    out.set_shape(tf.TensorShape([f.contents.shape[0]]).concatenate(shape) if batched else shape)
    return out


#: The start of the line printed to stderr for each file a ``report`` decode refuses.
SKIP_PREFIX = "npyio: skipping "


def report_then_assert(verdicts: Sequence[tuple[tf.Tensor, ...]]) -> list[tf.Operation]:
    """Prints ``SKIP_PREFIX + message`` to stderr for each ``(ok, message)`` (scalars) that
    failed, then asserts them all; returns the assertions, for control dependencies.

    For ``npyio.dataset(..., ignore_errors=True)``: TensorFlow logs the errors it skips only
    through its C++ logger, which ``TF_CPP_MIN_LOG_LEVEL`` >= 2 silences, while a PrintV2 op
    (`npyio._tf.print_to_stderr`: no Python, serializable) writes to stderr whatever the log
    level. Every
    assertion waits for every print, so a pair whose input and label are both bad names both.
    Graph mode only (a dataset function).
    """
    oks = tf.stack([ok for ok, _ in verdicts])

    def report() -> tf.Tensor:
        # One write for all the lines of an element, so that parallel calls do not mix them.
        printed = print_to_stderr(skip_lines(verdicts))
        with tf.control_dependencies([printed]):
            return tf.constant(False)

    reported = tf.cond(tf.reduce_all(oks), lambda: tf.constant(True), report)
    with tf.control_dependencies([reported]):
        return [tf.debugging.Assert(ok, [message], summarize=1) for ok, message in verdicts]


def skip_lines(verdicts: Sequence[tuple[tf.Tensor, ...]]) -> tf.Tensor:
    """The lines `report_then_assert` prints for one element's ``(ok, message)`` verdicts
    (scalars): ``SKIP_PREFIX + message`` and a newline for each refusal; "" for none."""
    oks = tf.stack([ok for ok, _ in verdicts])
    messages = tf.stack([message for _, message in verdicts])
    # Once per element, in order: an .npz archive that holds both the inputs and the labels
    # would otherwise be named twice when it is missing.
    refused = tf.unique(tf.boolean_mask(messages, tf.logical_not(oks))).y
    return tf.strings.reduce_join(tf.strings.join([SKIP_PREFIX, refused, "\n"]))


class Fetched(NamedTuple):
    """One part of an element (or of a batch of elements), fetched: what a reader's fetch
    gives, what ``npyio.dataset`` batches, and what `decode_group` decodes under the part's
    `npyio._format.spec.Spec`.

    Attributes:
        name: The name errors use: the path, or ``path[key]`` for an ``.npz`` member; None for
            bytes that come from no file (`decode_npy`: errors say ``<bytes>``).
        contents: The part's ``.npy`` bytes (the path itself for backends that read it).
        verdict: In a reporting read, ``(ok, message)``: whether fetching succeeded (the file
            exists, the archive is sound) and, if not, why; ``()`` otherwise (empty, not None,
            so that a fetched element is all tensors, as ``npyio.dataset``'s maps need). In a
            ``report`` decode (see `decode_group`), where it fails its message is the one
            reported, instead of the parser's verdict on the empty contents that stand in.
    """

    name: tf.Tensor | None
    contents: tf.Tensor
    verdict: tuple[tf.Tensor, ...] = ()


def _as_rows(f: Fetched) -> Fetched:
    """One fetched file as a batch of one (what the parser takes)."""
    verdict = tuple(t[None] for t in f.verdict)
    return Fetched(None if f.name is None else f.name[None], f.contents[None], verdict)


def _file_shape(spec: Spec) -> tf.TensorShape:
    """The static shape every file of ``spec``'s part has (its arrays, not the output's)."""
    return tf.TensorShape(spec.file.shape)


def _spec(spec: Spec, batched: bool, lead: int | None) -> tf.TensorShape:
    """The static shape of a decoded part: ``[lead, *shape]``, or ``shape`` unbatched."""
    shape = _file_shape(spec)
    return tf.TensorShape([lead]).concatenate(shape) if batched else shape


def _matches(f: Fetched, hint: Hint) -> tf.Tensor:
    """[B]: whether each file starts with ``hint``'s header bytes and has its size."""
    return tf.logical_and(
        tf.strings.substr(f.contents, 0, len(hint.header)) == hint.header,
        tf.strings.length(f.contents) == hint.size,
    )


def _decode_known(f: Fetched, spec: Spec, hint: Hint, batched: bool) -> tf.Tensor:
    """The fast path: ``f``'s files, known to have ``hint``'s header, without the parser."""
    offset, dt, contents = len(hint.header), spec.file.dtype, f.contents
    dims = list(hint.shape)  # the spec's, or, where its sizes vary, the first file's
    if not batched and offset % dt.itemsize == 0:
        # Decode the whole file and drop the header's items: slicing the front of a 1-d
        # tensor at an aligned offset shares its buffer, so the payload is copied once.
        raw = tf.io.decode_raw(
            tf.reshape(contents, []), RAW_DTYPES[dt.name], little_endian=hint.little_endian
        )
        values = tf.expand_dims(native(raw[offset // dt.itemsize :], dt), 0)
    else:
        payload = tf.strings.substr(contents, offset, hint.size - offset)
        values = decode_values(payload, dt, hint.little_endian)
    # The batch dim is given, not -1: for arrays of no elements (a dim of 0) tf.reshape would
    # infer it as 1, and a batch of five such files would decode as one. (Unbatched, the one
    # file's values have a leading dim of 1.)
    count = tf.shape(contents)[0] if batched else 1
    if hint.fortran_order:
        values = tf.reshape(values, [count, *dims[::-1]])
        values = tf.transpose(values, [0, *range(len(dims), 0, -1)])
    return tf.reshape(values, [count, *dims] if batched else dims)


def _fast_path_cond(
    same: Sequence[tf.Tensor],
    fast: Callable[[], list[tf.Tensor]],
    full: Callable[[], list[tf.Tensor]],
) -> list[tf.Tensor]:
    """One ``tf.cond`` for all the hinted parts: ``fast()`` when every [B] bool tensor of
    ``same`` is all true, else ``full()``. One, not one per part, because tf.data prepares
    each cond again at every iterator start."""
    return tf.nest.flatten(tf.cond(tf.reduce_all(tf.concat(list(same), 0)), fast, full))


# --- strict: the first refusal raises ------------------------------------------------------
def _decode_full(f: Fetched, spec: Spec, batched: bool) -> tf.Tensor:
    """``f``'s [B] files by the full parser, asserted: [B, *dims] values, or dims (one file)
    when not ``batched``. ``f.name[row]`` names element ``row`` in an error; without names it
    is ``<bytes>`` (``<bytes>[row]`` in a batch)."""
    raw, dims, ok, message = _parse(f, spec, batched)
    raw, dims = assert_verdict(ok, message, raw, dims)
    out = _values(raw, dims, f, spec, batched)
    out.set_shape(_spec(spec, batched, None))
    return out


def _decode_strict(
    fetched: Sequence[Fetched], specs: Sequence[Spec], batched: bool
) -> list[tf.Tensor]:
    """Parts without a usable hint by the full parser; the others share one fast-path cond,
    whose other branch is the full parser for all of them."""
    hints = [spec.usable_hint() for spec in specs]
    outs = {
        i: _decode_full(fetched[i], specs[i], batched)
        for i, hint in enumerate(hints)
        if hint is None
    }
    fast = [(i, fetched[i], specs[i], hint) for i, hint in enumerate(hints) if hint is not None]
    if fast:
        decoded = _fast_path_cond(
            [_matches(f, hint) for _, f, _, hint in fast],
            lambda: [_decode_known(f, spec, hint, batched) for _, f, spec, hint in fast],
            lambda: [_decode_full(f, spec, batched) for _, f, spec, _ in fast],
        )
        outs.update(zip((i for i, _, _, _ in fast), decoded))
    return [outs[i] for i in range(len(specs))]


# --- reporting: every refusal is printed, then asserted --------------------------------------
def _with_verdict(f: Fetched, ok: tf.Tensor, message: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
    """The verdict ``(ok, message)`` on ``f``, its fetch's first refusal first."""
    if not f.verdict:
        return ok, message
    pre_ok, pre_message = f.verdict
    passed = tf.reduce_all(pre_ok)
    first = tf.gather(tf.concat([pre_message, [""]], 0), first_index(tf.logical_not(pre_ok)))
    return tf.logical_and(ok, passed), tf.where(passed, message, first)


def _decode_full_reporting(
    fetched: Sequence[Fetched], specs: Sequence[Spec], batched: bool
) -> list[tf.Tensor]:
    """Every part by the full parser; every refusal printed before any assertion fails."""
    parsed = [_parse(f, spec, batched) for f, spec in zip(fetched, specs)]
    verdicts = [_with_verdict(f, ok, message) for f, (_, _, ok, message) in zip(fetched, parsed)]
    with tf.control_dependencies(report_then_assert(verdicts)):
        outs = [
            _values(tf.identity(raw), tf.identity(dims), f, spec, batched)
            for f, spec, (raw, dims, _, _) in zip(fetched, specs, parsed)
        ]
    for spec, out in zip(specs, outs):
        out.set_shape(_spec(spec, batched, None))
    return outs


def _decode_reporting(
    fetched: Sequence[Fetched], specs: Sequence[Spec], batched: bool
) -> list[tf.Tensor]:
    """The fast path only when every part has a usable hint and its fetch's verdict passes (one
    refusing branch must see all the parts); else the full parser for all, reporting."""
    hints = [spec.usable_hint() for spec in specs]
    if any(hint is None for hint in hints):
        return _decode_full_reporting(fetched, specs, batched)
    same = [_matches(f, hint) for f, hint in zip(fetched, hints) if hint is not None]
    same += [f.verdict[0] for f in fetched if f.verdict]
    return _fast_path_cond(
        same,
        lambda: [
            _decode_known(f, spec, h, batched)
            for f, spec, h in zip(fetched, specs, hints)
            if h is not None
        ],
        lambda: _decode_full_reporting(fetched, specs, batched),
    )


def check_group(fetched: Sequence[Fetched], specs: Sequence[Spec]) -> tuple[tf.Tensor, tf.Tensor]:
    """The verdict of a reporting decode on one element's parts (each a scalar file, with its
    fetch's ``verdict``), raising nothing: whether the full parser accepts every part, and the
    skip lines a ``report`` `decode_group` would print for the others, word for word ("" for
    none). For ``ignore_errors`` where an error per refused file would cost
    (`npyio._sources.dataset.build_skipping`): only accepted elements are then decoded. The
    parser runs inline (`_parse`), as this runs in single-device functions."""
    rows = [_as_rows(f) for f in fetched]
    verdicts = [
        _with_verdict(f, ok, message)
        for f, (_, _, ok, message) in (
            (f, _parse(f, spec, True, inline=True)) for f, spec in zip(rows, specs)
        )
    ]
    ok = tf.reduce_all(tf.stack([ok for ok, _ in verdicts]))
    return ok, tf.cond(ok, lambda: tf.constant(""), lambda: skip_lines(verdicts))


def decode_group(
    fetched: Sequence[Fetched], specs: Sequence[Spec], batched: bool, report: bool = False
) -> list[tf.Tensor]:
    """Decodes several fetched parts (a dataset's inputs and labels, say), each under its
    spec: [B] files each with ``batched``, else one file each.

    Parts with a usable hint share one ``tf.cond``: when every file of every such part starts
    with its hint's header bytes and has its size, the fast path decodes them all; otherwise
    the full parser decodes them all. One cond, not one per part, because tf.data prepares
    each again at every iterator start.

    With ``report`` (graph mode, for ``ignore_errors``), the full parser checks every part
    first and prints each refusal to stderr before any assertion fails (`report_then_assert`);
    the fast path is then taken only when every part has a usable hint and its fetch's
    ``verdict`` passes, since one refusing branch must see all the parts.

    Returns:
        Per part, [B, *dims] (or dims when not batched) values of its dtype.

    Raises:
        RuntimeError: When built in a TF1-style graph.
        tf.errors.InvalidArgumentError: When it runs (eagerly: at once), for a file that is
            not a valid ``.npy`` file of its part's dtype and shape, naming the file.
    """
    require_tf2()
    rows = list(fetched) if batched else [_as_rows(f) for f in fetched]
    outs = (_decode_reporting if report else _decode_strict)(rows, specs, batched)
    for f, spec, out in zip(rows, specs, outs):
        out.set_shape(_spec(spec, batched, f.contents.shape[0]))
    return outs


def decode_one(f: Fetched, spec: Spec, report: bool = False) -> tf.Tensor:
    """Decodes one whole file (``f.contents``: a scalar string tensor): the fast path for a
    file whose header bytes are the spec's hint, the full parser for any other; ``report`` as
    in `decode_group`."""
    return decode_group([f], [spec], False, report=report and not tf.executing_eagerly())[0]


def parse_args(
    dtype: DtypeLike, shape: ShapeLike, max_header_size: int, max_file_size: int | None
) -> tuple[np.dtype, tf.TensorShape, Limits]:
    """The common arguments of the public ops, checked: dtype, static shape, limits."""
    return npy.parse_dtype(dtype), static_shape(shape), Limits(max_header_size, max_file_size)


@tf.autograph.experimental.do_not_convert
def decode_npy(
    contents: tf.Tensor | bytes | Sequence[bytes],
    dtype: DtypeLike,
    shape: ShapeLike = None,
    *,
    name: str | None = None,
    max_header_size: int = npy.MAX_HEADER_SIZE,
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
    dt, static, limits = parse_args(dtype, shape, max_header_size, max_file_size)
    with tf.name_scope(name or "decode_npy"):
        contents = tf.convert_to_tensor(contents, tf.string, name="contents")
        if contents.shape.rank not in (0, 1):
            raise ValueError(
                f"contents must be a scalar or a rank-1 string tensor, got shape {contents.shape}"
            )
        dims = None if static.rank is None else tuple(static.as_list())
        spec = Spec.whole(dt, dims, make_hint(dt, static), None, limits)
        if contents.shape.rank == 1:
            return decode_group([Fetched(None, contents)], [spec], True)[0]
        return decode_one(Fetched(None, contents), spec)
