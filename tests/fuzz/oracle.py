"""The differential oracle: one file through the graph decoder, the reference parser and
``np.load(allow_pickle=False)``, and the invariants that must hold between them.

Invariants checked by `check` (each failure says which one broke):

1. *Only npyio's errors.* The graph decoder raises nothing but
   ``tf.errors.InvalidArgumentError`` (exactly that class) and the reference parser nothing but
   ``npyio.NpyFormatError``; every message starts with the file's name (``<bytes>`` or the
   path) and its reason is one of the reason functions of ``npyio._format.npy``.
2. *One grammar.* The graph decoder and the reference parser accept the same files, and refuse
   the others with the same words.
3. *Nothing decoded wrongly.* Whatever the graph decoder accepts, ``np.load`` accepts, with the
   same dtype, shape and bits (``tests._npy_testing.assert_same``; bool bytes other than 0 and 1 are
   ``True``).
4. *No undocumented refusal.* Whatever ``np.load`` accepts, the graph decoder accepts, or it
   refuses under a clause of the documented policy (`CLAUSES`) that applies to this file and
   that allows the reason it gave.

``np.load`` is run only after numpy's own header reader has said how many bytes the payload
takes and the file holds them, so a lying header cannot make the oracle allocate.
"""

from __future__ import annotations

import ast
import functools
import inspect
import io
import itertools
import math
import re
import tokenize
import warnings
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import tensorflow as tf

try:  # numpy >= 2
    from numpy.lib import _format_impl as numpy_format
except ImportError:  # numpy 1.x, as in the tfio venv
    from numpy.lib import format as numpy_format  # type: ignore[no-redef]

import npyio
from npyio._format import npy
from tests._npy_testing import assert_same, decoder, reader, reference, tf_message, write_gfile

BYTES = "<bytes>"
SUPPORTED = frozenset(npy.CODES.values())
_GOOD_DESCR = re.compile(r"[<>|=]?(?:{})".format("|".join(npy.CODES)))

#: How many cases `check` has run, and what became of them (for the fuzz driver's report).
STATS: Counter[str] = Counter()


# --- reasons ---------------------------------------------------------------------------------
def _template(fn: Callable[..., str]) -> re.Pattern[str]:
    parts = fn(*["\x00"] * len(inspect.signature(fn).parameters)).split("\x00")
    return re.compile(".*".join(re.escape(p) for p in parts), re.DOTALL)


#: reason function name -> pattern of its messages. Later reason functions (a ``file_too_large``
#: for ``max_file_size``, say) are picked up by name when npyio grows them.
REASONS: dict[str, re.Pattern[str]] = {
    name: _template(getattr(npy, name))
    for name in (
        "bad_magic",
        "too_short",
        "bad_version",
        "header_too_large",
        "header_past_end",
        "not_a_dict",
        "bad_keys",
        "bad_descr",
        "bad_fortran",
        "bad_shape",
        "negative_dim",
        "too_large",
        "dtype_mismatch",
        "shape_mismatch",
        "payload_short",
        "payload_trailing",
        "file_too_large",
    )
    if hasattr(npy, name)
}
#: The reasons a header that breaks the grammar can get.
HEADER_KINDS = frozenset(
    {"not_a_dict", "bad_keys", "bad_descr", "bad_fortran", "bad_shape", "negative_dim", "too_large"}
)


def reason_kind(reason: str) -> str:
    """The name of the reason function that wrote ``reason``; fails if none did."""
    for name, pattern in REASONS.items():
        if pattern.fullmatch(reason):
            return name
    raise AssertionError(f"invariant 1 (only npyio's errors): unknown reason {reason!r}")


# --- the three readers -----------------------------------------------------------------------
@dataclass(frozen=True)
class Case:
    """One file and how it is read.

    Attributes:
        data: The whole file.
        dtype: The declared dtype (a native dtype name such as ``"float32"``).
        shape: The declared shape (``None`` dims match any size), or ``None`` for any shape.
        via_path: Also read the file with ``read_npy`` from a ``ram://`` path, which must give
            the same verdict with the path in place of ``<bytes>``.
        max_header_size: The ``max_header_size=`` the file is read with.
        max_file_size: The ``max_file_size=`` the file is read with (``None``: no limit).
    """

    data: bytes
    dtype: str
    shape: tuple[int | None, ...] | None = None
    via_path: bool = False
    max_header_size: int = npy.MAX_HEADER_SIZE
    max_file_size: int | None = None

    def limits(self) -> dict[str, int | None]:
        return {"max_header_size": self.max_header_size, "max_file_size": self.max_file_size}


@dataclass(frozen=True)
class NumpyView:
    """What numpy makes of a file: its header (if numpy's reader takes it) and the array (if
    ``np.load`` takes the whole file)."""

    array: np.ndarray | None = None
    error: str | None = None
    version: tuple[int, int] | None = None
    text: str | None = None  # the header as numpy decoded it
    hlen: int | None = None  # the header-length field
    shape: tuple[int, ...] | None = None
    fortran_order: bool | None = None
    dtype: np.dtype | None = None
    data_offset: int | None = None

    @property
    def nbytes(self) -> int:
        assert self.shape is not None and self.dtype is not None
        return math.prod(self.shape) * self.dtype.itemsize


def numpy_view(data: bytes, max_header_size: int = npy.MAX_HEADER_SIZE) -> NumpyView:
    """Reads ``data`` with numpy: header first, then ``np.load`` only if the payload is there."""
    f = io.BytesIO(data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numpy warns on Python 2 headers, and reads them
        try:
            version = np.lib.format.read_magic(f)
            numpy_format._check_version(version)
        except Exception as e:
            return NumpyView(error=f"magic/version: {e!r}")
        len_size = npy.HEADER_LEN_SIZE[version]
        hlen = int.from_bytes(data[npy.MAGIC_LEN : npy.MAGIC_LEN + len_size], "little")
        raw = data[npy.MAGIC_LEN + len_size : npy.MAGIC_LEN + len_size + hlen]
        try:
            text = raw.decode("utf8" if version == (3, 0) else "latin1")
        except UnicodeDecodeError as e:
            return NumpyView(error=f"header encoding: {e!r}", version=version, hlen=hlen)
        try:
            shape, fortran_order, dtype = numpy_format._read_array_header(
                f, version, max_header_size=max_header_size
            )
        except Exception as e:
            return NumpyView(error=f"header: {e!r}", version=version, text=text, hlen=hlen)
        view = NumpyView(
            version=version,
            text=text,
            hlen=hlen,
            shape=shape,
            fortran_order=fortran_order,
            dtype=dtype,
            data_offset=f.tell(),
        )
        if dtype.hasobject:
            return _replace(view, error="object dtype (allow_pickle=False)")
        if view.nbytes > len(data) - f.tell():
            return _replace(view, error="payload shorter than the header says")
        try:
            array = np.load(io.BytesIO(data), allow_pickle=False)
        except Exception as e:
            return _replace(view, error=f"np.load: {e!r}")
    return _replace(view, array=array)


def _replace(view: NumpyView, **changes: object) -> NumpyView:
    return NumpyView(**{**view.__dict__, **changes})


@functools.cache
def batch_decoder(dtype: str, shape: tuple[int | None, ...] | None = None) -> Callable:
    """One traced ``decode_npy`` over a rank-1 batch per (dtype, shape)."""
    return tf.function(
        lambda b: npyio.decode_npy(b, dtype, shape),
        input_signature=[tf.TensorSpec([None], tf.string)],
        autograph=False,
    )


def _graph(run: Callable[[], tf.Tensor]) -> tuple[np.ndarray | None, str | None]:
    """(value, None) or (None, message); any error but InvalidArgumentError propagates."""
    try:
        return run().numpy(), None
    except tf.errors.OpError as e:
        assert type(e) is tf.errors.InvalidArgumentError, (
            f"invariant 1 (only npyio's errors): graph decoder raised {e!r}"
        )
        return None, tf_message(e)


def graph_verdict(case: Case) -> tuple[np.ndarray | None, str | None]:
    """The graph decoder's verdict: (value, None) or (None, full message). Traced once per
    dtype, shape and header limit; eager when a file-size limit is set (it varies per file)."""
    if case.max_file_size is not None:
        return _graph(lambda: npyio.decode_npy(case.data, case.dtype, case.shape, **case.limits()))
    fn = decoder(case.dtype, case.shape, case.max_header_size)
    return _graph(lambda: fn(tf.constant(case.data)))


def reference_verdict(case: Case, path: str = BYTES) -> tuple[npy.NpyHeader | None, str | None]:
    """The reference parser's verdict: (header, None) or (None, reason)."""
    try:
        npy.check_file_size(len(case.data), case.max_file_size, path)
        return reference(
            case.data, case.dtype, case.shape, path=path, max_header_size=case.max_header_size
        ), None
    except npyio.NpyFormatError as e:
        assert e.path == path and str(e) == f"{path}: {e.reason}", e
        return None, e.reason


_path_counter = iter(range(10**12))


def path_verdict(case: Case) -> tuple[np.ndarray | None, str | None, str]:
    """``read_npy`` on a ``ram://`` copy of the file: (value, message, path)."""
    path = f"ram://npyio-fuzz/{next(_path_counter)}.npy"
    write_gfile(path, case.data)
    if case.max_file_size is not None:

        def read() -> tf.Tensor:
            return npyio.read_npy(path, case.dtype, case.shape, **case.limits())
    else:

        def read() -> tf.Tensor:
            return reader(case.dtype, case.shape, case.max_header_size)(tf.constant(path))

    try:
        value, message = _graph(read)
    finally:
        tf.io.gfile.remove(path)
    return value, message, path


# --- the documented policy, as a predicate ---------------------------------------------------
@dataclass(frozen=True)
class Context:
    """A file numpy accepts and npyio refuses, with numpy's reading of it."""

    case: Case
    view: NumpyView
    tokens: tuple[tokenize.TokenInfo, ...]  # the header's Python tokens ((), if untokenizable)
    literal: ast.expr | None  # the header's expression (after numpy's Python 2 filter)


@dataclass(frozen=True)
class Clause:
    """One documented reason to refuse a file that ``np.load`` accepts.

    Attributes:
        name: A short id.
        phrase: The words that document it, found (whitespace aside) in ``source.__doc__``.
        kinds: The reasons npyio may give for it (reason function names).
        applies: Whether the clause applies to a file (given as a `Context`).
        source: Where the phrase is documented: ``npyio._format.npy`` (the policy list) by default.
        pending: Observed and reported, but not yet documented: ``test_policy`` marks the check
            that its phrase is in the docs as an expected failure until it is there.
    """

    name: str
    phrase: str
    kinds: frozenset[str]
    applies: Callable[[Context], bool]
    source: object = npy
    pending: bool = False

    def documented(self) -> bool:
        doc = " ".join((self.source.__doc__ or "").split())
        return " ".join(self.phrase.split()) in doc


def _numbers(ctx: Context) -> list[str]:
    return [t.string for t in ctx.tokens if t.type == tokenize.NUMBER]


def _ops(ctx: Context, op: str) -> int:
    return sum(1 for t in ctx.tokens if t.type == tokenize.OP and t.string == op)


def _outside_dict(ctx: Context) -> bool:
    """The text around the dict is more than LEAD before it and TRAIL after it (TRAIL_V3 in
    version 3.0, where numpy reads no indented last line)."""
    text = ctx.view.text or ""
    braces = [t for t in ctx.tokens if t.type == tokenize.OP and t.string in "{}"]
    if not braces:
        return True
    lines = re.split(r"(?<=\n)", text)  # as io.StringIO.readline splits it for tokenize

    def offset(pos: tuple[int, int]) -> int:
        return sum(len(line) for line in lines[: pos[0] - 1]) + pos[1]

    before, after = text[: offset(braces[0].start)], text[offset(braces[-1].end) :]
    trail = npy.TRAIL_V3 if ctx.view.version == (3, 0) else npy.TRAIL
    return not (re.fullmatch(npy.LEAD, before) and re.fullmatch(trail, after))


def _continuation(ctx: Context) -> bool:
    # a backslash outside every string literal (tokenize yields no token for a continuation)
    text = ctx.view.text or ""
    strings = [t.string for t in ctx.tokens if t.type == tokenize.STRING]
    for s in strings:
        text = text.replace(s, "", 1)
    return "\\" in text


def _string_forms(ctx: Context) -> bool:
    significant = [
        t
        for t in ctx.tokens
        if t.type
        not in (
            tokenize.NL,
            tokenize.NEWLINE,
            tokenize.COMMENT,
            tokenize.INDENT,
            tokenize.DEDENT,
            tokenize.ENDMARKER,
        )
    ]
    for a, b in itertools.pairwise(significant):
        if a.type == tokenize.STRING and b.type == tokenize.STRING:
            return True  # implicit concatenation
    return any(
        t.type == tokenize.STRING and not re.fullmatch(r"'[^'\\]*'|\"[^\"\\]*\"", t.string)
        for t in ctx.tokens
    )


def _minus_spacing(ctx: Context) -> bool:
    tokens = list(ctx.tokens)
    return any(
        t.type == tokenize.OP
        and t.string == "-"
        and (
            i + 1 == len(tokens)
            or tokens[i + 1].type != tokenize.NUMBER
            or tokens[i + 1].start != t.end
        )
        for i, t in enumerate(tokens)
    )


def _dict_node(ctx: Context) -> ast.Dict | None:
    return ctx.literal if isinstance(ctx.literal, ast.Dict) else None


def _duplicate_keys(ctx: Context) -> bool:
    node = _dict_node(ctx)
    return node is not None and len(node.keys) > 3


def _descr_alias(ctx: Context) -> bool:
    node = _dict_node(ctx)
    if node is None:
        return False
    descrs = [
        v
        for k, v in zip(node.keys, node.values)
        if isinstance(k, ast.Constant) and k.value == "descr"
    ]
    if not descrs:
        return False
    try:
        value = ast.literal_eval(descrs[-1])
    except ValueError:
        return False
    return not (isinstance(value, str) and _GOOD_DESCR.fullmatch(value))


def _huge(ctx: Context) -> bool:
    view = ctx.view
    return math.prod(view.shape or ()) * view.dtype.itemsize >= npy.MAX_NBYTES  # type: ignore


def _huge_zero_size(ctx: Context) -> bool:
    view = ctx.view
    return (
        math.prod(max(d, 1) for d in view.shape or ()) * view.dtype.itemsize  # type: ignore
        >= npy.MAX_NBYTES
    )


def _unsupported(ctx: Context) -> bool:
    dt = ctx.view.dtype
    assert dt is not None
    return dt.fields is not None or dt.subdtype is not None or dt.name not in SUPPORTED


def _declared_dtype(ctx: Context) -> bool:
    dt = ctx.view.dtype
    assert dt is not None
    return dt.newbyteorder("=") != np.dtype(ctx.case.dtype)


def _declared_shape(ctx: Context) -> bool:
    shape, got = ctx.case.shape, ctx.view.shape or ()
    return shape is not None and (
        len(shape) != len(got) or any(d is not None and d != g for d, g in zip(shape, got))
    )


def _trailing(ctx: Context) -> bool:
    view = ctx.view
    return len(ctx.case.data) - view.data_offset > view.nbytes  # type: ignore[operator]


_DECLARED = " ".join((npy.check_declared.__doc__ or "").split()[:8])

CLAUSES: tuple[Clause, ...] = (
    # -- documented in npyio/_format/npy.py ---------------------------------------------------
    Clause(
        "trailing-bytes",
        "a short payload and trailing bytes after the payload are both errors",
        frozenset({"payload_trailing"}),
        _trailing,
    ),
    Clause(
        "around-the-dict",
        "Around the dict only what ``np.load`` takes in every Python version",
        HEADER_KINDS,
        _outside_dict,
    ),
    Clause(
        "comments",
        "What numpy would also accept but npyio refuses: comments",
        HEADER_KINDS,
        lambda c: any(t.type == tokenize.COMMENT for t in c.tokens),
    ),
    Clause("line-continuations", "line continuations", HEADER_KINDS, _continuation),
    Clause(
        "leading-zeros",
        "integers with leading zeros",
        HEADER_KINDS,
        lambda c: any(re.fullmatch(r"0[0-9_]+", n) for n in _numbers(c)),
    ),
    Clause(
        "underscores",
        "integers with leading zeros or underscores",
        HEADER_KINDS,
        lambda c: any("_" in n for n in _numbers(c)),
    ),
    Clause("unary-plus", "unary ``+``", HEADER_KINDS, lambda c: _ops(c, "+") > 0),
    Clause(
        "long-dims",
        "dims of more than 18 digits",
        frozenset({"too_large"}),
        lambda c: any(len(n.replace("_", "")) > npy.MAX_DIM_DIGITS for n in _numbers(c)),
    ),
    Clause("huge-shapes", "shapes whose byte count reaches 2**62", frozenset({"too_large"}), _huge),
    Clause(
        "large-headers",
        "headers larger than ``max_header_size``",
        frozenset({"header_too_large"}),
        lambda c: (c.view.hlen or 0) > c.case.max_header_size,
    ),
    Clause(
        "large-files",
        "Refuses a file larger than ``max_file_size`` bytes",
        frozenset({"file_too_large"}),
        source=npy.check_file_size,
        applies=lambda c: (
            c.case.max_file_size is not None and len(c.case.data) > c.case.max_file_size
        ),
    ),
    Clause(
        "unsupported-dtypes",
        "code := b1 | i1 | i2 | i4 | i8 | u1 | u2 | u4 | u8 | f2 | f4 | f8 | c8 | c16",
        frozenset({"bad_descr"}),
        _unsupported,
    ),
    Clause(
        "declared-dtype",
        _DECLARED,
        frozenset({"dtype_mismatch"}),
        _declared_dtype,
        source=npy.check_declared,
    ),
    Clause(
        "declared-shape",
        _DECLARED,
        frozenset({"shape_mismatch"}),
        _declared_shape,
        source=npy.check_declared,
    ),
    # -- refusals the fuzzers found that the policy list does not name (yet) ---------------------
    # Each phrase is the wording proposed for the list in npyio/_format/npy.py.
    Clause(
        "string-forms",
        "string literals other than a plain quoted key or descr (prefixes, "
        "triple quotes, escapes, implicit concatenation)",
        HEADER_KINDS,
        _string_forms,
        pending=False,
    ),
    Clause(
        "redundant-parentheses",
        "redundant parentheses (around a key, a value, a dim or the shape)",
        HEADER_KINDS,
        lambda c: _ops(c, "(") > 1,
        pending=False,
    ),
    Clause(
        "minus-spacing",
        "a unary minus apart from its number (``- 0``)",
        HEADER_KINDS,
        _minus_spacing,
        pending=False,
    ),
    Clause(
        "duplicate-keys",
        "repeated keys (numpy keeps the last)",
        HEADER_KINDS,
        _duplicate_keys,
        pending=False,
    ),
    Clause(
        "descr-aliases",
        "descrs numpy reads but never writes (``'float32'``, ``'<f'``, "
        "``'d'``, a ``(descr, ())`` tuple)",
        HEADER_KINDS,
        _descr_alias,
        pending=False,
    ),
    Clause(
        "non-decimal-ints",
        "hexadecimal, octal and binary integers",
        HEADER_KINDS,
        lambda c: any(re.match(r"0[xXoObB]", n) for n in _numbers(c)),
        pending=False,
    ),
    Clause(
        "huge-zero-size-shapes",
        "zero-size shapes whose other dims reach 2**62 bytes",
        frozenset({"too_large"}),
        _huge_zero_size,
        pending=False,
    ),
)


def _context(case: Case, view: NumpyView) -> Context:
    text = view.text or ""
    try:
        tokens = tuple(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        tokens = ()
    literal = None
    for candidate in (text, _filtered(text)):
        try:
            literal = ast.parse(candidate.lstrip(" \t"), mode="eval").body
            break
        except (SyntaxError, ValueError):
            continue
    return Context(case, view, tokens, literal)


def _filtered(text: str) -> str:
    try:
        return numpy_format._filter_header(text)
    except Exception:
        return text


def policy(case: Case, view: NumpyView, reason: str) -> list[Clause]:
    """The clauses that allow npyio to refuse, with ``reason``, a file numpy accepts."""
    kind = reason_kind(reason)
    ctx = _context(case, view)
    return [c for c in CLAUSES if kind in c.kinds and c.applies(ctx)]


# --- the invariants ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Outcome:
    """What became of one case."""

    value: np.ndarray | None  # the graph decoder's value, if it accepted the file
    reason: str | None  # its reason, if it refused (without "<bytes>: ")
    view: NumpyView
    clauses: tuple[str, ...] = ()  # the policy clauses that allowed a refusal numpy would not make
    said: str | None = None  # what the graph decoder said, where a known bug made it differ

    @property
    def accepted(self) -> bool:
        return self.reason is None


# --- known bugs ------------------------------------------------------------------------------
# Each is reported (with a fix) and kept as an expected failure in tests/fuzz/regressions/ (the
# regression test checks with known_bugs=False). The fuzzers pass known_bugs=True so that a
# long run keeps looking for new bugs instead of finding these again. When npyio is fixed the
# regression case passes, its strict xfail fails, and both it and the entry here go.
KNOWN_BUGS: dict[str, str] = {}  # none open: "declared-itemsize" and "minus-zero" were fixed


def check(case: Case, *, known_bugs: bool = False) -> Outcome:
    """Runs ``case`` through all three readers and asserts the invariants (module docstring).

    With ``known_bugs``, a broken invariant that is one of `KNOWN_BUGS` is counted, not raised.
    """
    STATS["cases"] += 1
    said = None
    value, message = graph_verdict(case)
    header, ref_reason = reference_verdict(case)

    # 1. only npyio's errors, naming the file
    reason = None
    if message is not None:
        assert message.startswith(f"{BYTES}: "), f"invariant 1: message without name: {message!r}"
        reason = message[len(BYTES) + 2 :]
        reason_kind(reason)
    if ref_reason is not None:
        reason_kind(ref_reason)

    # 2. one grammar
    if ref_reason is None:
        assert reason is None, f"invariant 2: graph refused what the reference accepts: {reason}"
        assert header is not None and value is not None
        assert value.shape == header.shape, ("invariant 2: shapes differ", value.shape, header)
    elif reason != ref_reason:
        raise AssertionError(
            f"invariant 2: reference refused with {ref_reason!r}, graph said {reason!r}"
        )

    if case.via_path:
        p_value, p_message, path = path_verdict(case)
        if message is None:
            assert p_message is None, f"invariant 2: read_npy refused: {p_message}"
            assert_same(p_value, value, "read_npy")  # type: ignore[arg-type]
        else:
            graph_said = message[len(BYTES) + 2 :]
            assert p_message == f"{path}: {graph_said}", ("invariant 1: read_npy said", p_message)

    # 3. nothing decoded wrongly
    view = numpy_view(case.data, case.max_header_size)
    if reason is None:
        assert view.array is not None, (
            f"invariant 3: npyio accepted a file np.load refuses ({view.error})"
        )
        assert_same(value, view.array, "invariant 3: npyio and np.load differ")  # type: ignore
        if case.shape is not None:
            assert len(value.shape) == len(case.shape) and all(  # type: ignore[union-attr]
                d is None or d == g
                for d, g in zip(case.shape, value.shape)  # type: ignore
            ), ("invariant 3: shape differs from the declared one", value.shape, case.shape)
        STATS["accepted"] += 1
        return Outcome(value, None, view)

    # 4. no undocumented refusal
    if view.array is None:
        STATS["refused by both"] += 1
        return Outcome(None, reason, view, said=said)
    clauses = policy(case, view, reason)
    assert clauses, (
        f"invariant 4: undocumented refusal -- np.load accepts this file "
        f"(dtype {view.array.dtype}, shape {view.array.shape}) but npyio says {reason!r}; "
        f"header {view.text!r}"
    )
    for c in clauses:
        STATS[f"policy: {c.name}"] += 1
    return Outcome(None, reason, view, tuple(c.name for c in clauses), said)


_ROW = re.compile(r"<bytes>\[(\d+)\]: (.*)", re.DOTALL)


def check_batch(
    files: Sequence[bytes], dtype: str, shape=None, *, known_bugs: bool = False
) -> list[Outcome]:
    """Each file alone (`check`), then all of them as one rank-1 batch, which must agree.

    The batch decodes iff every file decodes alone and all have the same shape; its values are
    the files' own; a refusal names the first bad row (``<bytes>[i]``) with that row's own
    reason, or a shape mismatch against row 0.
    """
    singles = [check(Case(d, dtype, shape), known_bugs=known_bugs) for d in files]
    STATS["batches"] += 1
    value, message = _graph(lambda: batch_decoder(dtype, shape)(tf.constant(list(files))))
    shapes = {o.value.shape for o in singles if o.accepted}  # type: ignore[union-attr]
    if all(o.accepted for o in singles) and len(shapes) == 1:
        assert message is None, (
            f"batch: every file decodes alone, with shape {shapes}, but the batch says {message}"
        )
    if message is None:
        assert all(o.accepted for o in singles), "batch: accepted a batch with a bad file"
        assert value is not None and len(value) == len(files)
        for row, o in zip(value, singles):
            assert_same(row, o.value, "batch row differs from the file alone")  # type: ignore
        return singles
    m = _ROW.fullmatch(message)
    assert m, f"batch: message does not name a row: {message!r}"
    row, reason = int(m.group(1)), m.group(2)
    assert row < len(files), message
    first_bad = next((i for i, o in enumerate(singles) if not o.accepted), len(files))
    assert row <= first_bad, f"batch: named row {row}, but row {first_bad} is bad: {message}"
    kind = reason_kind(reason)
    if row == first_bad and kind != "shape_mismatch":
        assert reason in (singles[row].reason, singles[row].said), (
            f"batch: row {row} refused with {reason!r}, alone with {singles[row].reason!r}"
        )
    else:
        assert kind == "shape_mismatch", f"batch: good row {row} refused with {reason!r}"
    return singles
