r"""The ``.npy`` format as npyio reads it, and a pure-Python reference parser.

This module imports no TensorFlow. It is the single source of the grammar and of the error
wording: the graph parser in ``npyio._graph.parser`` compiles the very same regular expressions into
``tf.strings`` ops and builds its messages from the same reason functions, and a property test
keeps the two parsers in agreement.

Byte layout (numpy's ``numpy/lib/_format_impl.py``)::

    offset    size       field
    0         6          magic string b"\x93NUMPY"
    6         1          major version: 1, 2 or 3
    7         1          minor version: 0
    8         2 or 4     HLEN, the header length, little-endian unsigned:
                         2 bytes in version 1.0, 4 bytes in versions 2.0 and 3.0
    10 or 12  HLEN       the header, a Python dict literal (latin-1 in 1.0 and 2.0, UTF-8 in 3.0)
    ...       the rest   the payload: prod(shape) * itemsize bytes, in C or Fortran order

``data_offset`` is ``8 + len(HLEN field) + HLEN``. numpy pads the header with spaces and a final
``\n`` so that ``data_offset`` is a multiple of 64 (16 in older numpy releases); npyio accepts any
padding, including none.

Header grammar. ``WS`` is any run of space, tab, ``\n``, ``\r`` and ``\f`` (what Python's
tokenizer skips there). Around the dict only what ``np.load`` takes in every Python version:
``LEAD`` is any run of space and tab (``ast.literal_eval`` strips them; a line break followed by
indentation is an ``IndentationError``), and ``TRAIL_V3`` is any run of space, tab and ``\f``,
optionally followed by a line break and then ``WS`` that ends in a line break. That is all a
version 3.0 header may have after the dict (an indented last line is refused there, as numpy
refuses it). In versions 1.0 and 2.0 numpy retries a header that ``ast.literal_eval`` refuses
after its Python 2 filter (``_filter_header``: a tokenize and untokenize pass that drops an
``L`` after a number), and so also reads a last line of spaces, tabs and ``\f`` after a ``\n``,
which older writers pad with (``{...}\n`` and spaces up to the alignment): ``TRAIL`` is
``TRAIL_V3`` or that, and ``long`` below is only for versions 1.0 and 2.0 too::

    header  := LEAD "{" WS entry WS "," WS entry WS "," WS entry WS [","] WS "}" TRAIL
    entry   := key("descr") WS ":" WS descr
             | key("fortran_order") WS ":" WS ("True" | "False")
             | key("shape") WS ":" WS shape        -- each key exactly once, in any order
    key(k)  := "'" k "'" | '"' k '"'
    descr   := quoted( ["<" | ">" | "|" | "="] code )
    code    := b1 | i1 | i2 | i4 | i8 | u1 | u2 | u4 | u8 | f2 | f4 | f8 | c8 | c16
    shape   := "(" WS ")" | "(" WS dim WS "," WS ")" | "(" WS dim (WS "," WS dim)+ WS [","] WS ")"
    dim     := int [long]
    int     := ["-"] ("0" | [1-9][0-9]*)
    long    := HWS "L" (HWS1 "L")*     -- HWS: any run of space, tab and \f; HWS1: at least one

A Python 2 long suffix (``(2L, 3L)``, ``(2L,)``) is what numpy wrote under Python 2 on Windows;
like numpy's filter, npyio takes it with spaces before it and repeated (``2 L L``), but not in
lowercase (``2l``), run together (``2LL``) or anywhere but after a dim.

Every header numpy's writer produces matches this grammar, and ``np.load`` accepts every header
that matches it (in version 3.0, with no ``long`` and ``TRAIL_V3`` for ``TRAIL``). What numpy would
also accept but npyio refuses: comments, line continuations, line breaks before the dict, integers
with leading zeros or underscores, unary ``+``, and dims of more than 18 digits; also string
literals other than a plain quoted key or descr (prefixes, triple quotes, escapes, implicit
concatenation); redundant parentheses (around a key, a value, a dim or the shape); a unary minus
apart from its number (``- 0``); repeated keys (numpy keeps the last); descrs numpy reads but never
writes (``'float32'``, ``'<f'``, ``'d'``, a ``(descr, ())`` tuple); hexadecimal, octal and binary
integers; and zero-size shapes whose other dims reach 2**62 bytes. Of what numpy's Python 2 filter
also lets through in versions 1.0 and 2.0, npyio refuses what no writer produces: a form feed and
indentation before the dict (``\f {``). Byte order ``"|"`` or ``"="`` on a multi-byte type means
the reading machine's order, as in numpy.

Refused outright: object (pickle), string, unicode, datetime, timedelta, void, structured and
sub-array dtypes; negative dims; shapes whose byte count reaches 2**62; headers larger than
``max_header_size`` (10,000 bytes by default, as in numpy); and payloads whose size is not
exactly ``prod(shape) * itemsize`` -- a short payload and trailing bytes after the payload are
both errors (numpy ignores trailing bytes; npyio treats them as a sign that the header lies).
Bool bytes other than 0 and 1 decode as ``True``.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, BinaryIO

import numpy as np

from npyio.errors import NpyFormatError

MAGIC_PREFIX = b"\x93NUMPY"
MAGIC_LEN = len(MAGIC_PREFIX) + 2
MAGIC_HEX = MAGIC_PREFIX.hex(" ")
#: version -> size in bytes of the little-endian header-length field.
HEADER_LEN_SIZE = {(1, 0): 2, (2, 0): 4, (3, 0): 4}
MAX_HEADER_SIZE = 10_000
#: A shape whose byte count reaches this is refused (it cannot be a real file).
MAX_NBYTES = 2**62
#: Longest accepted dim, in decimal digits (keeps every dim within int64).
MAX_DIM_DIGITS = 18
NATIVE_ORDER = "<" if sys.byteorder == "little" else ">"

#: descr type code -> numpy dtype name, in the order npyio's graph tables use.
CODES: dict[str, str] = {
    "b1": "bool",
    "i1": "int8",
    "i2": "int16",
    "i4": "int32",
    "i8": "int64",
    "u1": "uint8",
    "u2": "uint16",
    "u4": "uint32",
    "u8": "uint64",
    "f2": "float16",
    "f4": "float32",
    "f8": "float64",
    "c8": "complex64",
    "c16": "complex128",
}
SUPPORTED = ", ".join(CODES.values())

# --- the grammar, as regular expressions understood alike by Python's re and by RE2 ------------
# ASCII-only character classes throughout: RE2 does not match invalid UTF-8 with a class or ".",
# Python does, so non-ASCII bytes must be excluded explicitly for the two engines to agree.
WS = r"[ \t\n\r\f]*"


def _key(name: str) -> str:
    return f"(?:'{name}'|\"{name}\")"


KEY_DESCR, KEY_FORTRAN, KEY_SHAPE = _key("descr"), _key("fortran_order"), _key("shape")
_CODE = "(?:" + "|".join(sorted(CODES, key=len, reverse=True)) + ")"
_DESCR_BODY = f"[<>|=]?{_CODE}"
DESCR_VALUE = f"(?:'{_DESCR_BODY}'|\"{_DESCR_BODY}\")"
BOOL_VALUE = "(?:True|False)"
INT = "-?(?:0|[1-9][0-9]*)"
# Python 2 long suffixes, as numpy's filter drops them (versions 1.0 and 2.0): an ``L`` token
# right after a number token (Python's tokenizer skips space, tab and \f between tokens); the
# filter goes on dropping ``L`` tokens until another token comes, so ``2 L L`` is 2, while
# ``2LL`` is one name and ``2l`` is not dropped. A line break between them is a token (NL), so
# the ``L`` stays and numpy refuses the header.
LONG = r"(?:[ \t\f]*L(?:[ \t\f]+L)*)?"
DIM = INT + LONG
SHAPE_VALUE = rf"\({WS}(?:{DIM}{WS},{WS}|{DIM}(?:{WS},{WS}{DIM})+{WS},?{WS})?\)"
_ENTRIES = (
    f"{KEY_DESCR}{WS}:{WS}{DESCR_VALUE}",
    f"{KEY_FORTRAN}{WS}:{WS}{BOOL_VALUE}",
    f"{KEY_SHAPE}{WS}:{WS}{SHAPE_VALUE}",
)
_SEP = f"{WS},{WS}"
_PERMS = "|".join(
    _SEP.join(_ENTRIES[i] for i in order)
    for order in ((0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0))
)
LEAD = r"[ \t]*"
#: After the dict, in every version: what np.load takes without its Python 2 filter, in every
#: Python version (the module docstring says what else numpy takes and why npyio does not).
TRAIL_V3 = r"[ \t\f]*(?:[\n\r](?:[ \t\n\r\f]*[\n\r])?)?"
#: ... or, in versions 1.0 and 2.0, a last line of spaces, tabs and \f after a \n, which the
#: filter's untokenize drops (checked against numpy for every run of up to 4 whitespace
#: characters: tests/format/test_header_styles.py, test_whitespace_around_python2_forms_*).
TRAIL = r"[ \t\f]*(?:[\n\r](?:[ \t\n\r\f]*[\n\r])?|(?:[\n\r][ \t\n\r\f]*)?\n[ \t\f]+)?"
#: The whole accepted grammar (full match) of versions 1.0 and 2.0. A version 3.0 header must
#: also match `V3_TRAIL_RE` and `V3_NO_LONG_RE`: numpy reads no Python 2 forms there.
HEADER_RE = rf"{LEAD}\{{{WS}(?:{_PERMS}){WS},?{WS}\}}{TRAIL}"
# Full matches, each meaningful only for a header that matched HEADER_RE: after its last "}" (the
# dict's, since TRAIL holds none) only TRAIL_V3; and no "L" at all (no key, descr, bool or
# whitespace of the grammar holds one, so any "L" is a long suffix).
V3_TRAIL_RE = rf"(?s).*\}}{TRAIL_V3}"
V3_NO_LONG_RE = r"[^L]*"

# Layered checks, used only to word the error once HEADER_RE has failed (full match each).
DICT_RE = rf"{LEAD}\{{[ -~\t\n\r\f]*\}}{TRAIL}"


def _has_key(key: str) -> str:
    return rf"(?s).*[{{,]{WS}{key}{WS}:.*"


def _has_entry(entry: str) -> str:
    return rf"(?s).*[{{,]{WS}{entry}{WS}[,}}].*"


def _snippet(key: str) -> str:
    # group 1: the text of key's value, for an error message
    return rf"(?s).*?[{{,]{WS}{key}{WS}:{WS}(\([^)]*\)?|\[[^\]]*\]?|[^,}}]*).*"


LAYERS = (  # (key, has-key pattern, good-entry pattern, snippet pattern, reason function name)
    (KEY_DESCR, _has_key(KEY_DESCR), _has_entry(_ENTRIES[0]), _snippet(KEY_DESCR), "bad_descr"),
    (
        KEY_FORTRAN,
        _has_key(KEY_FORTRAN),
        _has_entry(_ENTRIES[1]),
        _snippet(KEY_FORTRAN),
        "bad_fortran",
    ),
    (KEY_SHAPE, _has_key(KEY_SHAPE), _has_entry(_ENTRIES[2]), _snippet(KEY_SHAPE), "bad_shape"),
)
SNIPPET_LEN = 60

# Extraction from a header that matched HEADER_RE (full match; group 1 / groups 1-2).
DESCR_EXTRACT = rf"(?s).*{KEY_DESCR}{WS}:{WS}['\"]([<>|=]?)([a-z0-9]+)['\"].*"
FORTRAN_EXTRACT = rf"(?s).*{KEY_FORTRAN}{WS}:{WS}(True|False).*"
SHAPE_EXTRACT = rf"(?s).*{KEY_SHAPE}{WS}:{WS}\(([^)]*)\).*"
#: What the shape text drops to become canonical ("2, 3L" -> "2,3"): whitespace and long suffixes.
SHAPE_NOISE = r"[ \t\n\r\fL]*"


# --- error wording, shared with the graph parser ---------------------------------------------
# Each function returns the reason (the message without "{path}: "). The graph parser calls them
# with placeholder strings and splices tensors in, so both sides use the same words.
def file_too_large(limit: str, got: str) -> str:
    return f"file is too large -- expected at most {limit} bytes (max_file_size), got {got}"


def bad_magic(got: str) -> str:
    return f"not a .npy file: bad magic string -- expected {MAGIC_HEX}, got {got}"


def too_short(need: str, got: str) -> str:
    return f"file is too short for a .npy header -- expected at least {need} bytes, got {got}"


def bad_version(got: str) -> str:
    return f"unsupported .npy format version -- expected 1.0, 2.0 or 3.0, got {got}"


def header_too_large(limit: str, got: str) -> str:
    return f"header is too large -- expected at most {limit} bytes (max_header_size), got {got}"


def header_past_end(need: str, got: str) -> str:
    return f"header runs past the end of the file -- expected at least {need} bytes, got {got}"


def not_a_dict() -> str:
    return (
        "header is not an ASCII dict literal -- expected "
        "{'descr': ..., 'fortran_order': ..., 'shape': ...}"
    )


def bad_keys() -> str:
    return "header keys are wrong -- expected 'descr', 'fortran_order' and 'shape', each once"


def bad_descr(got: str) -> str:
    return f"unsupported dtype -- expected a numeric descr such as '<f4' ({SUPPORTED}), got {got}"


def bad_fortran(got: str) -> str:
    return f"fortran_order is not a bool -- expected True or False, got {got}"


def bad_shape(got: str) -> str:
    return f"shape is not a tuple of ints -- expected a tuple such as (64, 64, 3), got {got}"


def negative_dim(got: str) -> str:
    return f"shape has a negative dimension -- expected dims >= 0, got {got}"


def too_large(got: str) -> str:
    return f"shape is too large -- expected fewer than 2**62 bytes in all, got {got}"


def dtype_mismatch(expected: str, got: str) -> str:
    return f"dtype mismatch -- expected {expected}, got {got}"


def shape_mismatch(expected: str, got: str) -> str:
    return f"shape mismatch -- expected {expected}, got {got}"


def vary_hint(shape: str) -> str:
    """What follows a `shape_mismatch` between shapes of one rank: the declared shape with
    ``None`` where the two differ (`varying_shape`), so that arrays of varying size load."""
    return f"; to read arrays whose dims vary, pass shape={shape}"


def spec_origin(origin: str) -> str:
    """What follows a dtype or shape mismatch that a dataset finds as it reads a file: where
    its spec came from (``origin``: the file whose header set it, or the arguments), and how
    to find or skip the files unlike it. Not `vary_hint`: the files sampled when the dataset
    was built agreed, so this is more likely an odd file than sizes that vary."""
    return (
        f"; the spec came from {origin} -- `npyio verify` lists every file that differs, "
        "and ignore_errors=True skips them"
    )


def payload_short(expected: str, got: str) -> str:
    return f"payload is shorter than the header says -- expected {expected} bytes, got {got}"


def payload_trailing(expected: str, got: str) -> str:
    return (
        f"trailing bytes after the payload (refused: the header may lie) -- "
        f"expected {expected} bytes, got {got}"
    )


REASONS: dict[str, Callable[..., str]] = {
    f.__name__: f for f in (bad_descr, bad_fortran, bad_shape)
}


def varying_shape(
    expected: tuple[int | None, ...], got: tuple[int, ...] | tuple[int | None, ...]
) -> tuple[int | None, ...] | None:
    """``expected`` with ``None`` where ``got`` differs from it; None for another rank (no
    ``None`` dim makes shapes of two ranks agree). The graph parser computes the same from the
    shapes' text."""
    if len(expected) != len(got):
        return None
    return tuple(e if e == g else None for e, g in zip(expected, got))


def shape_mismatch_reason(
    expected: tuple[int | None, ...], got: tuple[int, ...] | tuple[int | None, ...]
) -> str:
    """`shape_mismatch`, with `vary_hint` when the shapes have one rank."""
    reason = shape_mismatch(show_shape(expected), show_shape(got))
    varying = varying_shape(expected, got)
    return reason if varying is None else reason + vary_hint(show_shape(varying))


def show_text(text: str) -> str:
    """Header text as an error message shows it, the same on the graph side."""
    return text[:SNIPPET_LEN] or "nothing"


def show_shape(shape: tuple[int, ...] | tuple[int | None, ...]) -> str:
    return "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


# --- the reference parser ---------------------------------------------------------------------
@dataclass(frozen=True)
class NpyHeader:
    """What a ``.npy`` header says.

    Attributes:
        version: The format version, ``(1, 0)``, ``(2, 0)`` or ``(3, 0)``.
        dtype: The stored dtype, with its byte order (for example ``dtype('>f8')``).
        shape: The array's shape, a tuple of ints (``()`` for a 0-d array).
        fortran_order: Whether the payload is stored in Fortran (column-major) order.
        data_offset: Where the payload starts, in bytes from the start of the file.
    """

    version: tuple[int, int]
    dtype: np.dtype
    shape: tuple[int, ...]
    fortran_order: bool
    data_offset: int

    @property
    def count(self) -> int:
        """Number of items in the array."""
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        """Payload size in bytes that the header declares."""
        return self.count * self.dtype.itemsize


def _fullmatch(pattern: str, text: str) -> re.Match[str] | None:
    return re.fullmatch(pattern, text)


def parse_header_text(
    text: str, version: tuple[int, int] = (1, 0)
) -> tuple[np.dtype, tuple[int, ...], bool]:
    """Parses the header dict text of a file of format ``version``; raises
    ``ValueError(reason)`` if it breaks the grammar (a 3.0 header gets no Python 2 forms)."""
    if not _fullmatch(HEADER_RE, text):
        if not _fullmatch(DICT_RE, text):
            raise ValueError(not_a_dict())
        for _key_re, has_key, has_entry, snippet, reason in LAYERS:
            if not _fullmatch(has_key, text):
                raise ValueError(bad_keys())
            if not _fullmatch(has_entry, text):
                m = _fullmatch(snippet, text)
                raise ValueError(REASONS[reason](show_text(m.group(1) if m else "")))
        raise ValueError(bad_keys())
    if version == (3, 0):  # numpy runs its Python 2 filter on versions 1.0 and 2.0 only
        if not _fullmatch(V3_TRAIL_RE, text):
            raise ValueError(not_a_dict())
        if not _fullmatch(V3_NO_LONG_RE, text):
            m = _fullmatch(LAYERS[2][3], text)
            raise ValueError(bad_shape(show_text(m.group(1) if m else "")))
    descr = _fullmatch(DESCR_EXTRACT, text)
    fortran = _fullmatch(FORTRAN_EXTRACT, text)
    shape_m = _fullmatch(SHAPE_EXTRACT, text)
    assert descr and fortran and shape_m, "HEADER_RE guarantees the extractions match"
    order, code = descr.group(1), descr.group(2)
    if order in ("", "|", "="):
        order = NATIVE_ORDER
    dtype = np.dtype(CODES[code]).newbyteorder(order)  # type: ignore[arg-type]
    tokens = [
        "0" if t == "-0" else t for t in re.sub(SHAPE_NOISE, "", shape_m.group(1)).split(",") if t
    ]
    shown = "(" + ", ".join(tokens) + ("," if len(tokens) == 1 else "") + ")"
    if any(t.startswith("-") for t in tokens):
        raise ValueError(negative_dim(shown))
    if any(len(t.lstrip("-")) > MAX_DIM_DIGITS for t in tokens):
        raise ValueError(too_large(shown))
    shape = tuple(int(t) for t in tokens)
    if math.prod(max(d, 1) for d in shape) * dtype.itemsize >= MAX_NBYTES:
        raise ValueError(too_large(shown))
    return dtype, shape, fortran.group(1) == "True"


def read_header(f: BinaryIO, path: str, *, max_header_size: int = MAX_HEADER_SIZE) -> NpyHeader:
    """Reads and checks the header of an open ``.npy`` file positioned at its start.

    Raises:
        NpyFormatError: naming ``path`` and what is wrong.
    """
    start = f.read(MAGIC_LEN)
    if start[: len(MAGIC_PREFIX)] != MAGIC_PREFIX:
        raise NpyFormatError(path, bad_magic(start[: len(MAGIC_PREFIX)].hex(" ") or "0 bytes"))
    if len(start) < MAGIC_LEN:
        raise NpyFormatError(path, too_short(str(MAGIC_LEN), str(len(start))))
    version = (start[6], start[7])
    if version not in HEADER_LEN_SIZE:
        raise NpyFormatError(path, bad_version(f"{version[0]}.{version[1]}"))
    len_size = HEADER_LEN_SIZE[version]
    len_field = f.read(len_size)
    if len(len_field) < len_size:
        raise NpyFormatError(
            path, too_short(str(MAGIC_LEN + len_size), str(MAGIC_LEN + len(len_field)))
        )
    hlen = int.from_bytes(len_field, "little")
    if hlen > max_header_size:
        raise NpyFormatError(path, header_too_large(str(max_header_size), str(hlen)))
    data_offset = MAGIC_LEN + len_size + hlen
    raw = f.read(hlen)
    if len(raw) < hlen:
        got = MAGIC_LEN + len_size + len(raw)
        raise NpyFormatError(path, header_past_end(str(data_offset), str(got)))
    try:
        dtype, shape, fortran_order = parse_header_text(raw.decode("latin-1"), version)
    except ValueError as e:
        raise NpyFormatError(path, str(e)) from e
    return NpyHeader(version, dtype, shape, fortran_order, data_offset)


def check_file_size(file_size: int, max_file_size: int | None, path: str) -> None:
    """Refuses a file larger than ``max_file_size`` bytes (``None``: no limit).

    Raises:
        NpyFormatError: naming ``path``.
    """
    if max_file_size is not None and file_size > max_file_size:
        raise NpyFormatError(path, file_too_large(str(max_file_size), str(file_size)))


def parse_limit(value: Any, name: str, *, allow_none: bool = True) -> Any:
    """Checks a size limit argument: a non-negative int (or ``None`` where that means none)."""
    if value is None and allow_none:
        return value
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        expected = "None or a non-negative int" if allow_none else "a non-negative int"
        raise ValueError(f"{name} must be {expected}, got {value!r}")
    return value


def check_payload(header: NpyHeader, file_size: int, path: str) -> None:
    """Checks that a file of ``file_size`` bytes holds exactly the payload ``header`` declares.

    Raises:
        NpyFormatError: naming ``path``, for a short payload or trailing bytes.
    """
    got = file_size - header.data_offset
    if got < header.nbytes:
        raise NpyFormatError(path, payload_short(str(header.nbytes), str(got)))
    if got > header.nbytes:
        raise NpyFormatError(path, payload_trailing(str(header.nbytes), str(got)))


def payload_array(header: NpyHeader, data: bytes) -> np.ndarray:
    """The array that ``data``, a payload of ``header``'s size, holds: numpy's reading of it
    (``np.load``), a view in its stored byte order; bools as the graph decodes them (any
    nonzero byte is True), where numpy would keep the byte.
    """
    stored = np.dtype(np.uint8) if header.dtype.kind == "b" else header.dtype
    flat = np.frombuffer(data, stored, count=header.count)
    if header.dtype.kind == "b":
        flat = flat != 0
    if header.fortran_order:
        return flat.reshape(header.shape[::-1]).transpose()
    return flat.reshape(header.shape)


def parse_dtype(dtype: object) -> np.dtype:
    """Normalises a dtype given as a ``tf.DType``, ``numpy.dtype``, type or string.

    Returns the native-order numpy dtype. Byte order in the argument is ignored: a file's byte
    order is read from its header, and the output is always in native order.

    Raises:
        TypeError: if the dtype is not one of the numeric types npyio decodes.
    """
    try:
        as_numpy = getattr(dtype, "as_numpy_dtype", None)  # tf.DType, without importing TF
    except KeyError as e:  # a tf.DType with no numpy counterpart: tf.resource, tf.variant
        raise TypeError(f"unsupported dtype {dtype!r} -- expected one of {SUPPORTED}") from e
    candidate = as_numpy if as_numpy is not None else dtype
    if candidate is None:  # np.dtype(None) would mean float64
        raise TypeError(f"unsupported dtype None -- expected one of {SUPPORTED}")
    try:
        dt = np.dtype(candidate)  # type: ignore[arg-type]
    except TypeError as e:
        raise TypeError(f"unsupported dtype {dtype!r} -- expected one of {SUPPORTED}") from e
    if dt.name not in CODES.values() or dt.fields is not None or dt.subdtype is not None:
        raise TypeError(f"unsupported dtype {dtype!r} -- expected one of {SUPPORTED}")
    return dt.newbyteorder("=")


def parse_shape(shape: object) -> tuple[int | None, ...] | None:
    """Normalises a shape argument: ``None`` (any shape, unknown rank), a sequence of ints and
    ``None``, or a ``tf.TensorShape`` (read without importing TensorFlow).

    Raises:
        TypeError: for anything else, or a negative dim.
    """
    if shape is None:
        return None
    if hasattr(shape, "as_list") and hasattr(shape, "rank"):  # tf.TensorShape
        if shape.rank is None:
            return None
        shape = shape.as_list()
    bad = TypeError(f"shape must be None or a sequence of ints and None, got {shape!r}")
    if isinstance(shape, (str, bytes)) or not hasattr(shape, "__iter__"):
        raise bad
    dims: list[int | None] = []
    for d in shape:
        d = getattr(d, "value", d)  # a tf.compat.v1.Dimension
        if d is None:
            dims.append(None)
        elif isinstance(d, (int, np.integer)) and not isinstance(d, bool) and d >= 0:
            dims.append(int(d))
        elif isinstance(d, (int, np.integer)) and d == -1:  # TensorFlow's "unknown"
            dims.append(None)
        else:
            raise bad
    return tuple(dims)


def dtype_code(dt: np.dtype) -> str:
    """The descr type code (``"f4"``, ``"c16"``, ...) of a supported dtype."""
    return f"{dt.kind}{dt.itemsize}"


def check_declared(
    header: NpyHeader, dtype: np.dtype, shape: tuple[int | None, ...] | None, path: str
) -> None:
    """Checks a header against a declared dtype and (possibly partial) shape.

    ``shape`` is ``None`` for any shape, or a tuple whose ``None`` entries match any size.

    Raises:
        NpyFormatError: naming ``path``, for a dtype or shape that differs.
    """
    if header.dtype.newbyteorder("=") != dtype.newbyteorder("="):
        raise NpyFormatError(path, dtype_mismatch(dtype.name, header.dtype.name))
    if shape is not None and (
        len(shape) != len(header.shape)
        or any(d is not None and d != h for d, h in zip(shape, header.shape))
    ):
        raise NpyFormatError(path, shape_mismatch_reason(shape, header.shape))
