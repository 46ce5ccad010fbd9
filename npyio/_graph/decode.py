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
from dataclasses import dataclass, field

import numpy as np
import tensorflow as tf

from npyio._format import npy
from npyio._format.header import Hint, Limits, make_hint
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
from npyio._graph.parser import Declared, Files, SizeLimits, parser
from npyio._tf import print_to_stderr, stateless_call

__all__ = [
    "SKIP_PREFIX",
    "Part",
    "decode_group",
    "decode_npy",
    "decode_one",
    "report_then_assert",
]

DtypeLike = object
ShapeLike = object


def _parse(
    contents: tf.Tensor,
    names: tf.Tensor | None,
    dt: np.dtype,
    shape: tf.TensorShape,
    limits: Limits,
    batched: bool,
) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor, tf.Tensor]:
    """The parser's verdict on a [B] string tensor of whole files, unasserted:
    ``(payload, dims, ok, message)`` (see `npyio._graph.parser.parse_headers`)."""
    if names is None:
        if batched:
            count = tf.shape(contents, out_type=tf.int64)[0]
            names = tf.strings.join(["<bytes>[", as_str(tf.range(count)), "]"])
        else:
            names = tf.constant(["<bytes>"])
    args = (Files(contents, names), Declared.of(dt, shape), SizeLimits.of(limits))
    out_types = [tf.uint8, tf.int64, tf.bool, tf.string]
    raw, dims, ok, message = stateless_call(parser(), args, out_types)
    return raw, dims, ok, message


def _values(
    raw: tf.Tensor,
    dims: tf.Tensor,
    contents: tf.Tensor,
    dt: np.dtype,
    shape: tf.TensorShape,
    batched: bool,
) -> tf.Tensor:
    """The checked payload bytes of `_parse` as [B, *dims] values of ``dt`` (dims unbatched)."""
    raw_type = RAW_DTYPES[dt.name]
    if raw_type != tf.uint8:  # bitcast shares the buffer
        count = tf.shape(raw, out_type=tf.int64)[0]
        size = dt.itemsize if raw_type.size == dt.itemsize else raw_type.size
        raw = tf.bitcast(tf.reshape(raw, [count, -1, size]), raw_type)
    values = native(raw, dt)
    lead = tf.shape(values, out_type=tf.int64)[:1] if batched else tf.zeros([0], tf.int64)
    out = tf.reshape(values, tf.concat([lead, dims], 0))
    out.set_shape(tf.TensorShape([contents.shape[0]]).concatenate(shape) if batched else shape)
    return out


#: The start of the line printed to stderr for each file a ``report`` decode refuses.
SKIP_PREFIX = "npyio: skipping "


def report_then_assert(verdicts: Sequence[tuple[tf.Tensor, tf.Tensor]]) -> list[tf.Operation]:
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
    messages = tf.stack([message for _, message in verdicts])
    bad = tf.logical_not(oks)

    def report() -> tf.Tensor:
        # Once per element, in order: an .npz archive that holds both the inputs and the
        # labels would otherwise be named twice when it is missing.
        refused = tf.unique(tf.boolean_mask(messages, bad)).y
        lines = tf.strings.reduce_join(tf.strings.join([SKIP_PREFIX, refused, "\n"]))
        # One write for all the lines of an element, so that parallel calls do not mix them.
        printed = print_to_stderr(lines)
        with tf.control_dependencies([printed]):
            return tf.constant(False)

    reported = tf.cond(tf.reduce_any(bad), report, lambda: tf.constant(True))
    with tf.control_dependencies([reported]):
        return [tf.debugging.Assert(ok, [message], summarize=1) for ok, message in verdicts]


@dataclass(frozen=True)
class Part:
    """One tensor of a `decode_group`: [B] whole files of one dtype and static shape."""

    contents: tf.Tensor
    names: tf.Tensor | None
    dt: np.dtype
    shape: tf.TensorShape
    hint: Hint | None
    limits: Limits = field(default_factory=Limits)
    #: For a ``report`` decode (see `decode_group`): a check made before decoding, ``([B] ok,
    #: [B] message)`` (a missing file, a bad archive); where it fails, its message is the one
    #: reported, instead of the parser's verdict on the empty contents that stand in.
    precheck: tuple[tf.Tensor, tf.Tensor] | None = None

    def usable_hint(self) -> Hint | None:
        """The hint, unless files like it must be refused (then the full parser says why)."""
        return self.hint if self.hint is not None and self.hint.usable(self.limits) else None


def _spec(part: Part, batched: bool, lead: int | None) -> tf.TensorShape:
    """The static shape of ``part``'s output: ``[lead, *shape]``, or ``shape`` unbatched."""
    return tf.TensorShape([lead]).concatenate(part.shape) if batched else part.shape


def _matches(part: Part, hint: Hint) -> tf.Tensor:
    """[B]: whether each file starts with ``hint``'s header bytes and has its size."""
    return tf.logical_and(
        tf.strings.substr(part.contents, 0, len(hint.header)) == hint.header,
        tf.strings.length(part.contents) == hint.size,
    )


def _decode_known(part: Part, hint: Hint, batched: bool) -> tf.Tensor:
    """The fast path: ``part``'s files, known to have ``hint``'s header, without the parser."""
    offset, dt, contents = len(hint.header), part.dt, part.contents
    dims = part.shape.as_list()
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
def _decode_full(part: Part, batched: bool) -> tf.Tensor:
    """``part``'s [B] files by the full parser, asserted: [B, *dims] values, or dims (one
    file) when not ``batched``. ``part.names[row]`` names element ``row`` in an error;
    without names it is ``<bytes>`` (``<bytes>[row]`` in a batch)."""
    contents, dt, shape = part.contents, part.dt, part.shape
    raw, dims, ok, message = _parse(contents, part.names, dt, shape, part.limits, batched)
    raw, dims = assert_verdict(ok, message, raw, dims)
    out = _values(raw, dims, contents, dt, shape, batched)
    out.set_shape(_spec(part, batched, None))
    return out


def _decode_strict(parts: Sequence[Part], batched: bool) -> list[tf.Tensor]:
    """Parts without a usable hint by the full parser; the others share one fast-path cond,
    whose other branch is the full parser for all of them."""
    hints = [part.usable_hint() for part in parts]
    outs = {i: _decode_full(parts[i], batched) for i, hint in enumerate(hints) if hint is None}
    fast = [(i, parts[i], hint) for i, hint in enumerate(hints) if hint is not None]
    if fast:
        decoded = _fast_path_cond(
            [_matches(part, hint) for _, part, hint in fast],
            lambda: [_decode_known(part, hint, batched) for _, part, hint in fast],
            lambda: [_decode_full(part, batched) for _, part, _ in fast],
        )
        outs.update(zip((i for i, _, _ in fast), decoded))
    return [outs[i] for i in range(len(parts))]


# --- reporting: every refusal is printed, then asserted --------------------------------------
def _with_precheck(part: Part, ok: tf.Tensor, message: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
    """The verdict ``(ok, message)`` on ``part``, its precheck's first refusal first."""
    if part.precheck is None:
        return ok, message
    pre_ok, pre_message = part.precheck
    passed = tf.reduce_all(pre_ok)
    first = tf.gather(tf.concat([pre_message, [""]], 0), first_index(tf.logical_not(pre_ok)))
    return tf.logical_and(ok, passed), tf.where(passed, message, first)


def _decode_full_reporting(parts: Sequence[Part], batched: bool) -> list[tf.Tensor]:
    """Every part by the full parser; every refusal printed before any assertion fails."""
    parsed = [_parse(p.contents, p.names, p.dt, p.shape, p.limits, batched) for p in parts]
    verdicts = [
        _with_precheck(part, ok, message) for part, (_, _, ok, message) in zip(parts, parsed)
    ]
    with tf.control_dependencies(report_then_assert(verdicts)):
        outs = [
            _values(tf.identity(raw), tf.identity(dims), p.contents, p.dt, p.shape, batched)
            for p, (raw, dims, _, _) in zip(parts, parsed)
        ]
    for part, out in zip(parts, outs):
        out.set_shape(_spec(part, batched, None))
    return outs


def _decode_reporting(parts: Sequence[Part], batched: bool) -> list[tf.Tensor]:
    """The fast path only when every part has a usable hint and passes its precheck (one
    refusing branch must see all the parts); else the full parser for all, reporting."""
    hints = [part.usable_hint() for part in parts]
    if any(hint is None for hint in hints):
        return _decode_full_reporting(parts, batched)
    same = [_matches(part, hint) for part, hint in zip(parts, hints) if hint is not None]
    same += [part.precheck[0] for part in parts if part.precheck is not None]
    return _fast_path_cond(
        same,
        lambda: [_decode_known(p, h, batched) for p, h in zip(parts, hints) if h is not None],
        lambda: _decode_full_reporting(parts, batched),
    )


def decode_group(parts: Sequence[Part], batched: bool, report: bool = False) -> list[tf.Tensor]:
    """Decodes several [B] file tensors (a dataset's inputs and labels, say).

    Parts with a usable hint share one ``tf.cond``: when every file of every such part starts
    with its hint's header bytes and has its size, the fast path decodes them all; otherwise
    the full parser decodes them all. One cond, not one per part, because tf.data prepares
    each again at every iterator start.

    With ``report`` (graph mode, for ``ignore_errors``), the full parser checks every part
    first and prints each refusal to stderr before any assertion fails (`report_then_assert`);
    the fast path is then taken only when every part has a usable hint and passes its
    ``precheck``, since one refusing branch must see all the parts.

    Returns:
        Per part, [B, *dims] (or dims when not batched) values of its dtype.

    Raises:
        RuntimeError: When built in a TF1-style graph.
        tf.errors.InvalidArgumentError: When it runs (eagerly: at once), for a file that is
            not a valid ``.npy`` file of its part's dtype and shape, naming the file.
    """
    require_tf2()
    outs = (_decode_reporting if report else _decode_strict)(parts, batched)
    for part, out in zip(parts, outs):
        out.set_shape(_spec(part, batched, part.contents.shape[0]))
    return outs


def decode_one(
    contents: tf.Tensor,
    name: tf.Tensor | None,
    dt: np.dtype,
    shape: tf.TensorShape,
    hint: Hint | None,
    limits: Limits,
    report: bool = False,
) -> tf.Tensor:
    """Decodes one whole file (a scalar string tensor): the fast path for a file whose header
    bytes are ``hint``'s, the full parser for any other. ``name`` (a scalar) names it in errors;
    ``report`` as in `decode_group`."""
    names = None if name is None else name[None]
    part = Part(contents[None], names, dt, shape, hint, limits)
    return decode_group([part], False, report=report and not tf.executing_eagerly())[0]


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
        hint = make_hint(dt, static)
        if contents.shape.rank == 1:
            return decode_group([Part(contents, None, dt, static, hint, limits)], True)[0]
        return decode_one(contents, None, dt, static, hint, limits)
